/**
 * What a caller gives `runOnBranch` (branchRun.ts): the options its three steps (runPreparation.ts, branchRun.ts,
 * runSettlement.ts) all read. Kept apart from branchRun.ts so those steps depend on the options, not on the module
 * that runs them (branchRun.ts re-exports these types for its callers).
 */
import type { RunTracingOptions } from './runTracing';
import type { Agent, AgentInputItem, ModelProvider } from '@openai/agents';
import type { RunStore } from './runSession';
import type { TableNames } from '../store';
import type { RunEvent } from '../shared/protocol/runEvents';
import type { ConfiguredAgent } from './agentConfig';
import type { ToolsMode } from '../shared/protocol/replay';

/** What a run sends as the new user turn. */
export type RunInput = string | AgentInputItem[];

/** Where the agent comes from: an agent, a configured agent, or a factory run first (its errors become failures). */
export type AgentSource = Agent | ConfiguredAgent | (() => Agent | ConfiguredAgent | Promise<Agent | ConfiguredAgent>);

export interface RunOnBranchOptions {
  dbPath: string;
  sessionId: string;
  /**
   * The branch to continue; default `main`. It must have items unless it is `main` (a branch made from turn 1 has
   * none until its first message: make it with `fork` instead, in the same run).
   */
  branchId?: string;
  /**
   * Start a new branch from `branchId` at `fromTurn` (its turns before `fromTurn` are shared) and run on it: "edit
   * the message of turn N and send". The new branch's id is in `run/started`. A run that is rolled back leaves the
   * branch empty (and its name used, as every branch name is used once).
   */
  fork?: { fromTurn: number; name?: string };
  /** The base tables' names, when they are not the default ones (the structure tables have fixed names). */
  tables?: TableNames;
  /** The agent. The caller owns it: `runOnBranch` never closes a configured agent (its MCP servers). */
  agent: AgentSource;
  /** Resolves model names; a `ConfiguredAgent` brings its own. Without one, string model names use the SDK default. */
  modelProvider?: ModelProvider;
  /**
   * The user's message: text, or items in the SDK's shape (a what-if retry re-sends a stored user message with its
   * content parts, images included, as `fromStoredItems` reads it).
   */
  input: RunInput;
  /** Aborting cancels the run: the stream stops, and the branch is settled as for a failure (`cancelled`). */
  signal?: AbortSignal;
  /** Receives every event, in order; the last one is also the returned outcome. Exceptions it throws are ignored. */
  onEvent?: (event: RunEvent) => void;
  /** Strings never to show (the API key); a `ConfiguredAgent`'s are added. */
  secrets?: string[];
  /** The model server, for messages (a `ConfiguredAgent` brings it). */
  endpoint?: string;
  /** How long to wait for another writer's lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /** Create the session tables in a new file (default false: the database must exist and hold session tables). */
  createTables?: boolean;
  /** Model calls per run before it stops (the SDK's default, 10). */
  maxTurns?: number;
  /** An id for the run's events; default a random UUID. */
  runId?: string;
  /** Where problems that do not fail the run go (already redacted). Default: nowhere. */
  log?: (line: string) => void;
  /** Where the run's session lives: this thread by default; the extension's store worker (runSession.ts). */
  store?: RunStore;
  /** Trace the run into a trace store (runTracing.ts); without it the run is not traced at all. */
  tracing?: RunTracingOptions;
  /**
   * The history guard store (docs/history-guard.md): when the SDK compacts the run's branch, the items it replaces are
   * recorded there first. Unset: they are not.
   */
  guardStorePath?: string;
  /**
   * What the run does with its tool calls (docs/replay.md). Default: `replay` when it re-runs a recorded turn (a
   * fork), `live` when it continues past the recording.
   */
  tools?: ToolsOptions;
}

export interface ToolsOptions {
  mode?: ToolsMode;
  /** Tools matched by name alone (arguments that carry a timestamp or a random id). */
  nameOnly?: readonly string[];
}

/** The mode a run uses: the one asked for, else `replay` for a re-run of a recorded turn and `live` past it. */
export function toolsModeOf(tools: ToolsOptions | undefined, fork: unknown): ToolsMode {
  return tools?.mode ?? (fork ? 'replay' : 'live');
}
