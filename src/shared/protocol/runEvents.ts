/**
 * Events of one agent run on a session branch, as the host forwards them to the conversation view. Plain JSON
 * only (no class instances, no functions), so they cross `postMessage` unchanged. Every string in them may come
 * from a model, a tool or a database: render it as text. No event ever carries an API key (the runner redacts
 * error text before it builds an event).
 *
 * Order of one run: `run/started`, then any number of `text/delta`, `reasoning/delta`, `tool/called`, `tool/output`, `item/added`
 * as the model and tools produce them, then exactly one of `run/completed` or `run/failed`. A run the agent paused,
 * waiting for input (an agent command's AG-UI `interrupt` outcome), ends with `run/failed` of kind `paused`: it did not
 * complete, but it is no error, and its `interrupts` say what it waits for.
 */
import { itemPreview } from '../itemText';
import type { ReplayOutcome, ReplaySummary } from './replay';

/** Token counts of a run (or of what a failed run spent before it failed). */
export interface RunUsageView {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Sums over the run's requests of `input_tokens_details.cached_tokens`. */
  cachedTokens: number;
  /** Sums over the run's requests of `output_tokens_details.reasoning_tokens`. */
  reasoningTokens: number;
}

/**
 * Why a run failed; the view picks an icon and a remedy by it. `paused` is no error: the agent paused the run, waiting
 * for input (a tool approval, a value), and kept what it wrote for the run that resumes it (`RunFailedEvent.interrupts`).
 */
export type RunFailureKind = 'no-key' | 'unreachable' | 'http' | 'tool' | 'cancelled' | 'locked' | 'paused' | 'other';

/** One thing a paused run waits for: an interrupt of the agent's RUN_FINISHED `interrupt` outcome (AG-UI 1.0). */
export interface RunInterruptView {
  /** What it asks, for people: the interrupt's message, else its reason (at most 500 characters). */
  text: string;
  /** The tool call it waits on (the call the agent resumes from), or null when it names none. */
  toolCallId: string | null;
}

/**
 * What a run left in the database. `kept` and `removed` list items of *this run* (one line each, e.g.
 * `user: "What's the weather?"`, `function_call get_weather({"city":"Paris"})`); items written by others are
 * never touched.
 */
export interface RunPersistenceView {
  /** One sentence for people: what is stored now, what was rolled back, what was never stored. */
  summary: string;
  kept: string[];
  removed: string[];
  /** Produced during the run but never stored (the SDK stores a streamed run's outputs only when it completes). */
  notSaved: string[];
  /** The branch turn number the run's user message has now, or null when no turn of this run is stored. */
  turn: number | null;
  /** True when a usage row was written for `turn`. */
  usageStored: boolean;
}

export interface RunStartedEvent {
  kind: 'run/started';
  runId: string;
  sessionId: string;
  /** The branch the run writes to (for a fork, the new branch). */
  branchId: string;
  /** Set when the run started a new branch: where it forked (its turns before `turn` are shared). */
  forkedFrom?: { branchId: string; turn: number };
  /** The user message as sent. */
  input: string;
  /** Name of the agent that runs; '' for a run that failed before its agent started (`RunReporter.failEarly`). */
  agentName: string;
  /** Things the user should know before reading the output (e.g. MCP servers skipped in an untrusted workspace). */
  warnings: string[];
}

export interface TextDeltaEvent {
  kind: 'text/delta';
  runId: string;
  delta: string;
}

/**
 * A piece of the model's reasoning as it streams (an agent command's AG-UI reasoning messages): shown in the run's
 * live stream, apart from its answer, and not an item of the session unless the agent stores one.
 */
export interface ReasoningDeltaEvent {
  kind: 'reasoning/delta';
  runId: string;
  delta: string;
}

export interface ToolCalledEvent {
  kind: 'tool/called';
  runId: string;
  callId: string | null;
  name: string;
  /** The arguments as the model wrote them (a JSON text, usually). */
  arguments: string;
}

export interface ToolOutputEvent {
  kind: 'tool/output';
  runId: string;
  callId: string | null;
  name: string;
  /** The tool's output as text (non-text outputs as JSON). */
  output: string;
  /** What replay did with the call (docs/replay.md): its recorded output was used, or it ran live. */
  replay?: { outcome: ReplayOutcome; recordedCallId: string | null };
}

/** A produced item other than a tool call or output: an assistant message, reasoning, a handoff, … */
export interface ItemAddedEvent {
  kind: 'item/added';
  runId: string;
  /** The item's `type` (`message`, `reasoning`, `handoff_call`, …). */
  itemType: string;
  role: string | null;
  /** A one-line preview of the item. */
  preview: string;
  /** The raw item as plain JSON. */
  item: unknown;
}

/** How an agent command's process ended (docs/agent-command.md §5), on the outcome of a run made through one. */
export interface CommandEndView {
  /** The command's name (its key in `agentSessions.agent.command`), or the URL. */
  agent: string;
  /** The exit code; null when a signal ended it, it never started, or it was a URL. */
  exitCode: number | null;
  signal: string | null;
  /** The HTTP status, for a URL. */
  status?: number;
  /** The last lines of its stderr (secrets redacted). */
  stderrTail: string[];
  /** Lines it printed that were not AG-UI events. */
  invalidLines: number;
}

export interface RunCompletedEvent {
  kind: 'run/completed';
  runId: string;
  /** The final output as text (structured outputs as JSON). */
  finalOutput: string;
  /** Null when nothing recorded any: an agent command that stored no usage row and reported none. */
  usage: RunUsageView | null;
  written: RunPersistenceView;
  /** Set for a run made through an agent command or URL. */
  command?: CommandEndView;
  /** What the run did with its tool calls: replayed or live, and where it left the recording. */
  replay?: ReplaySummary;
}

export interface RunFailedEvent {
  kind: 'run/failed';
  runId: string;
  failure: RunFailureKind;
  /** What went wrong, with the remedy when there is one. Never contains a secret. */
  message: string;
  /** The HTTP status, for `http` failures. */
  status?: number;
  /** What a `paused` run waits for, in the agent's order (set for `paused` only; it may be empty). */
  interrupts?: RunInterruptView[];
  /** What the run spent before it failed (null when nothing was requested). */
  usage: RunUsageView | null;
  written: RunPersistenceView;
  /** Set for a run made through an agent command or URL. */
  command?: CommandEndView;
  /** What the run did with its tool calls before it failed. */
  replay?: ReplaySummary;
}

/** The `item/added` event of a produced item (its type, role and one-line preview read from the item itself). */
export function itemAddedEvent(runId: string, item: Record<string, unknown>): ItemAddedEvent {
  return {
    kind: 'item/added',
    runId,
    itemType: typeof item.type === 'string' ? item.type : 'message',
    role: typeof item.role === 'string' ? item.role : null,
    preview: itemPreview(item),
    item,
  };
}

/** Every event of a run. */
export type RunEvent =
  | RunStartedEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | ToolCalledEvent
  | ToolOutputEvent
  | ItemAddedEvent
  | RunCompletedEvent
  | RunFailedEvent;

/** The event that ends a run. */
export type RunOutcome = RunCompletedEvent | RunFailedEvent;

/** The `run/failed` event of a run that ended before it wrote anything; `summary` says so for people. */
export function failedBeforeWriting(
  runId: string,
  failure: RunFailureKind,
  message: string,
  summary: string,
  status?: number,
): RunFailedEvent {
  return {
    kind: 'run/failed',
    runId,
    failure,
    message,
    ...(status !== undefined ? { status } : {}),
    usage: null,
    written: { summary, kept: [], removed: [], notSaved: [], turn: null, usageStored: false },
  };
}
