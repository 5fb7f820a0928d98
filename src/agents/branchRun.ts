/**
 * Running an agent on one branch of a session in a session database: the new turn streams out as events while it
 * is produced, and when the run ends the branch is left consistent and the run's usage recorded. See
 * runPersistence.ts for exactly what is stored when a run completes, fails or is cancelled.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  Runner,
  type Agent,
  type AgentInputItem,
  type AgentOutputType,
  type ModelProvider,
  type RunStreamEvent,
  type StreamedRunResult,
} from '@openai/agents';
import { AdvancedSQLiteSession, BranchError, type SessionLogger, type TableNames } from '../store';
import {
  failedBeforeWriting,
  type RunEvent,
  type RunFailureKind,
  type RunOutcome,
  type RunPersistenceView,
  type RunUsageView,
} from '../shared/runEvents';
import { callArguments, itemLabel, itemPreview, runValueText, toolName } from '../shared/itemText';
import { redactSecrets } from './apiKey';
import type { ConfiguredAgent } from './agentConfig';
import { classify } from './runFailures';
import { RecordingSession, callIdOf, itemKey, plain, settleRun, type SettleResult } from './runPersistence';
import { errorMessage } from '../shared/errorMessage';

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
  /** The user's message. */
  input: string;
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
}

type StreamResult = StreamedRunResult<unknown, Agent<unknown, AgentOutputType>>;

/** Runs in flight, by database, session and branch: two runs on one branch would interleave their turns. */
const inFlight = new Set<string>();

/**
 * Runs the agent on `sessionId`/`branchId` of `dbPath` with `input`, streaming. Never throws for a run's failure:
 * the returned outcome (also the last event) says what happened and what is stored.
 */
export async function runOnBranch(options: RunOnBranchOptions): Promise<RunOutcome> {
  const runId = options.runId ?? randomUUID();
  const sourceBranch = options.branchId ?? 'main';
  // The branch the run writes to: the source, or the fork once it is made.
  let branchId = options.fork?.name ?? sourceBranch;
  const secrets = [...(options.secrets ?? [])];
  const emit = (event: RunEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // A view that went away must not break the run, nor the cleanup after it.
    }
  };
  const log = (line: string): void => {
    try {
      options.log?.(redactSecrets(line, secrets));
    } catch {
      // ignore
    }
  };
  let started = false;
  const start = (agentName: string, warnings: string[]): void => {
    if (started) return;
    started = true;
    emit({
      kind: 'run/started',
      runId,
      sessionId: options.sessionId,
      branchId,
      ...(options.fork ? { forkedFrom: { branchId: sourceBranch, turn: options.fork.fromTurn } } : {}),
      input: options.input,
      agentName,
      warnings,
    });
  };
  const failEarly = (failure: RunFailureKind, message: string, status?: number): RunOutcome => {
    start('', []);
    const outcome = failedBeforeWriting(
      runId,
      failure,
      redactSecrets(message, secrets),
      `Nothing was written; branch '${branchId}' is as it was.`,
      status,
    );
    emit(outcome);
    return outcome;
  };

  // A fork without a name gets a new id, so nothing can be in flight on it.
  const key =
    options.fork && !options.fork.name ? `fork\u0000${runId}` : `${resolve(options.dbPath)}\u0000${options.sessionId}\u0000${branchId}`;
  if (inFlight.has(key)) {
    return failEarly(
      'other',
      `A run is already in progress on branch '${branchId}' of session '${options.sessionId}'. Stop it or wait for it to finish.`,
    );
  }
  inFlight.add(key);
  try {
    // 1. The agent. Building it may fail before anything is written (no key, untrusted, a module or MCP server).
    let agent: Agent;
    let modelProvider = options.modelProvider;
    let endpoint = options.endpoint;
    let warnings: string[] = [];
    try {
      const source = typeof options.agent === 'function' ? await options.agent() : options.agent;
      if (isConfiguredAgent(source)) {
        agent = source.agent;
        modelProvider = modelProvider ?? source.modelProvider;
        endpoint = endpoint ?? source.endpoint;
        secrets.push(...source.secrets);
        warnings = [...source.warnings];
      } else agent = source;
    } catch (err) {
      const c = classify(err, { endpoint, cancelled: false });
      return failEarly(c.failure, c.message, c.status);
    }
    if (options.signal?.aborted) return failEarly('cancelled', 'The run was cancelled before it started.');

    // 2. The session, on the branch.
    if (!options.createTables && !existsSync(options.dbPath)) return failEarly('other', `${options.dbPath} does not exist.`);
    const storeProblems: string[] = [];
    const logger: SessionLogger = {
      error: (message, err) => {
        const line = `${message}: ${errorMessage(err)}`;
        storeProblems.push(line);
        log(line);
      },
      warn: (message) => {
        storeProblems.push(message);
        log(message);
      },
    };
    let session: AdvancedSQLiteSession;
    try {
      session = new AdvancedSQLiteSession({
        sessionId: options.sessionId,
        dbPath: options.dbPath,
        sessionsTable: options.tables?.sessions,
        messagesTable: options.tables?.messages,
        busyTimeoutMs: options.busyTimeoutMs,
        createTables: options.createTables ?? false,
        logger,
      });
    } catch (err) {
      const c = classify(err, { endpoint, cancelled: false });
      return failEarly(c.failure, c.message, c.status);
    }
    try {
      if (session.getCurrentBranchId() !== sourceBranch) await session.switchToBranch(sourceBranch);
      if (options.fork) branchId = await session.createBranchFromTurn(options.fork.fromTurn, options.fork.name ?? null);
    } catch (err) {
      session.close();
      const c = classify(err, { endpoint, cancelled: false });
      const hint =
        err instanceof BranchError && /does not exist/.test(c.message) && sourceBranch !== 'main'
          ? '. A branch made from turn 1 has no items until its first message is stored; start it with the run (fork) instead.'
          : '';
      return failEarly(c.failure, c.message + hint, c.status);
    }

    start(agent.name, warnings);
    try {
      return await runAndSettle({ options, runId, branchId, agent, modelProvider, endpoint, secrets, session, storeProblems, emit });
    } finally {
      session.close();
    }
  } finally {
    inFlight.delete(key);
  }
}

interface RunContext {
  options: RunOnBranchOptions;
  runId: string;
  branchId: string;
  agent: Agent;
  modelProvider: ModelProvider | undefined;
  endpoint: string | undefined;
  secrets: string[];
  session: AdvancedSQLiteSession;
  storeProblems: string[];
  emit: (event: RunEvent) => void;
}

/** What the run produced, tracked from its events (to say what was not saved). */
class Produced {
  items: AgentInputItem[] = [];
  /** Text of the response being streamed, not yet part of a message item. */
  pendingText = '';
  toolNames = new Map<string, string>();
}

async function runAndSettle(ctx: RunContext): Promise<RunOutcome> {
  const { options, runId, emit, session } = ctx;
  const recording = new RecordingSession(session);
  // Tracing would export spans to OpenAI with the environment's key; the inspector never does.
  const runner = new Runner({ ...(ctx.modelProvider ? { modelProvider: ctx.modelProvider } : {}), tracingDisabled: true });
  const produced = new Produced();
  let result: StreamResult | undefined;
  let error: unknown;
  try {
    result = (await runner.run(ctx.agent, options.input, {
      session: recording,
      stream: true,
      signal: options.signal,
      ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    })) as StreamResult;
    for await (const event of result) forward(event, ctx, produced);
    await result.completed;
  } catch (err) {
    error = err;
  }
  // The runner writes the user input in its loop's `finally`; wait for it before looking at the database.
  if (result) {
    await result.completed.catch(() => undefined);
    if (error === undefined && result.error !== undefined && result.error !== null) error = result.error;
  }

  const cancelled = (options.signal?.aborted ?? false) || (result?.cancelled ?? false);
  const interruptions = result && error === undefined ? result.interruptions : [];
  const completed = error === undefined && !!result && interruptions.length === 0 && (!cancelled || result.finalOutput !== undefined);
  const usage = result ? usageView(result.state.usage) : null;
  const spent = usage !== null && (usage.requests > 0 || usage.totalTokens > 0);

  const written = recording.writtenItems();
  let settled: SettleResult;
  try {
    settled = await settleRun(session, written, { completed, spent });
  } catch (err) {
    settled = { kept: written, removed: [], problem: `checking the branch failed (${errorMessage(err)})` };
  }
  // A branch forked for this run that ends up with nothing of it goes too: it was part of the run. (Its name
  // stays used, as every branch name does; a branch forked at turn 1 has no rows left to delete.)
  let forkDeleted = false;
  if (options.fork && settled.kept.length === 0 && !settled.problem) {
    try {
      await session.deleteBranch(ctx.branchId, true);
      forkDeleted = true;
    } catch (err) {
      if (!(err instanceof BranchError && /does not exist/.test(err.message))) {
        settled = { ...settled, problem: `deleting the branch made for this run failed (${errorMessage(err)})` };
      } else forkDeleted = true;
    }
  }

  // Usage goes on the branch's latest user turn: only call it when that turn is this run's, or it would replace
  // the usage of the turn before.
  const keptUser = settled.kept.some((i) => 'role' in i && i.role === 'user');
  let usageStored = false;
  if (result && keptUser) {
    const before = ctx.storeProblems.length;
    await session.storeRunUsage(result);
    usageStored = ctx.storeProblems.length === before;
  }
  let turn: number | null = null;
  if (keptUser) {
    try {
      const turns = await session.getConversationTurns();
      turn = turns[turns.length - 1]?.turn ?? null;
    } catch {
      turn = null;
    }
  }

  const persistence = persistenceView({
    ctx,
    settled,
    produced,
    turn,
    usageStored,
    completed,
    usage,
    spent,
    writeFailed: recording.failedWrites.length > 0,
    forkDeleted,
  });
  if (completed && result) {
    const outcome: RunOutcome = {
      kind: 'run/completed',
      runId,
      finalOutput: runValueText(result.finalOutput),
      usage: usage ?? usageView(undefined),
      written: persistence,
    };
    emit(outcome);
    return outcome;
  }
  const c =
    error !== undefined
      ? classify(error, { endpoint: ctx.endpoint, cancelled })
      : interruptions.length > 0
        ? {
            failure: 'tool' as const,
            message: `The tool ${interruptions.map((i) => `'${toolName(i.rawItem)}'`).join(', ')} asks for approval before it runs, and approving tool calls is not supported here yet, so the run stopped before calling it.`,
          }
        : { failure: 'cancelled' as const, message: 'The run was cancelled.' };
  const outcome: RunOutcome = {
    kind: 'run/failed',
    runId,
    failure: c.failure,
    message: redactSecrets(c.message, ctx.secrets),
    ...(c.status !== undefined ? { status: c.status } : {}),
    usage: spent ? usage : null,
    written: persistence,
  };
  emit(outcome);
  return outcome;
}

/** Forwards one SDK stream event as a run event, and notes what was produced. */
function forward(event: RunStreamEvent, ctx: RunContext, produced: Produced): void {
  const runId = ctx.runId;
  if (event.type === 'raw_model_stream_event') {
    const data = event.data as { type: string; delta?: unknown };
    if (data.type === 'response_started') produced.pendingText = '';
    if (data.type === 'output_text_delta' && typeof data.delta === 'string') {
      produced.pendingText += data.delta;
      ctx.emit({ kind: 'text/delta', runId, delta: data.delta });
    }
    return;
  }
  if (event.type !== 'run_item_stream_event') return;
  const raw = plain(event.item.rawItem) as AgentInputItem & Record<string, unknown>;
  produced.items.push(raw);
  const callId = callIdOf(raw) ?? null;
  switch (event.name) {
    case 'tool_called': {
      const name = toolName(raw);
      if (callId) produced.toolNames.set(callId, name);
      const args = callArguments(raw) ?? JSON.stringify(raw.arguments ?? raw.action ?? {});
      ctx.emit({ kind: 'tool/called', runId, callId, name, arguments: args });
      return;
    }
    case 'tool_output': {
      const name = (callId && produced.toolNames.get(callId)) || toolName(raw);
      const output = 'output' in event.item ? (event.item as { output: unknown }).output : raw.output;
      ctx.emit({ kind: 'tool/output', runId, callId, name, output: redactSecrets(runValueText(output), ctx.secrets) });
      return;
    }
    case 'tool_approval_requested':
      // Reported by the outcome (the run stops there).
      return;
    default:
      if (event.name === 'message_output_created') produced.pendingText = '';
      ctx.emit({
        kind: 'item/added',
        runId,
        itemType: typeof raw.type === 'string' ? raw.type : 'message',
        role: typeof raw.role === 'string' ? raw.role : null,
        preview: itemPreview(raw),
        item: raw,
      });
  }
}

function persistenceView(args: {
  ctx: RunContext;
  settled: SettleResult;
  produced: Produced;
  turn: number | null;
  usageStored: boolean;
  completed: boolean;
  usage: RunUsageView | null;
  spent: boolean;
  writeFailed: boolean;
  forkDeleted: boolean;
}): RunPersistenceView {
  const { ctx, settled, produced, turn, usageStored, completed, usage, spent, writeFailed, forkDeleted } = args;
  const keptKeys = new Set(settled.kept.map(itemKey));
  const notSaved = produced.items.filter((i) => !keptKeys.has(itemKey(i))).map(itemLabel);
  if (produced.pendingText !== '')
    notSaved.push(`${Array.from(produced.pendingText).length} characters of streamed text (the answer was cut off)`);
  const kept = settled.kept.map(itemLabel);
  const removed = settled.removed.map(itemLabel);
  const branch = `branch '${ctx.branchId}'`;
  const parts: string[] = [];
  if (completed) {
    parts.push(`Saved turn ${turn ?? '?'} on ${branch}: ${kept.length} item(s)${usageStored ? ' and its usage' : ''}.`);
    if (removed.length > 0) parts.push(`Removed ${removed.length} item(s) left without an output: ${removed.join('; ')}.`);
  } else if (settled.kept.length > 0) {
    const tokens = usage ? `${usage.totalTokens} tokens in ${usage.requests} request(s)` : 'its usage';
    parts.push(
      `Kept your message as turn ${turn ?? '?'} on ${branch}${usageStored ? `, with the usage spent (${tokens})` : ''}${kept.length > 1 ? ` and ${kept.length - 1} more item(s)` : ''}.`,
    );
    if (removed.length > 0) parts.push(`Removed ${removed.length} item(s) that would leave the turn half-written: ${removed.join('; ')}.`);
  } else if (removed.length > 0) {
    parts.push(
      `Nothing is stored: the SDK had saved your message before calling the model, and it was removed${forkDeleted ? '' : `, so ${branch} is as it was`}.`,
    );
  } else if (writeFailed) {
    parts.push(
      `Nothing was stored: saving the turn failed, so ${branch} is as it was${spent ? ` (the ${usage?.totalTokens ?? 0} tokens spent are not recorded)` : ''}.`,
    );
  } else {
    parts.push(`Nothing was written; ${branch} is as it was.`);
  }
  if (forkDeleted) {
    parts.push(`The new ${branch} made for this run was deleted again.`);
    removed.push(`branch '${ctx.branchId}' (made for this run)`);
  }
  if (notSaved.length > 0 && !completed) parts.push(`Not saved: ${notSaved.join('; ')}.`);
  if (settled.problem) parts.push(`Could not finish cleaning up: ${settled.problem}.`);
  if (!usageStored && settled.kept.some((i) => 'role' in i && i.role === 'user') && ctx.storeProblems.length > 0)
    parts.push('The usage could not be stored.');
  return {
    summary: redactSecrets(parts.join(' '), ctx.secrets),
    kept: kept.map((l) => redactSecrets(l, ctx.secrets)),
    removed: removed.map((l) => redactSecrets(l, ctx.secrets)),
    notSaved: notSaved.map((l) => redactSecrets(l, ctx.secrets)),
    turn,
    usageStored,
  };
}

function isConfiguredAgent(value: Agent | ConfiguredAgent): value is ConfiguredAgent {
  return typeof value === 'object' && value !== null && 'modelProvider' in value && 'agent' in value && 'close' in value;
}

/** Sums a run's usage into the view (details are one record per request, with the API's snake_case keys). */
export function usageView(
  usage:
    | {
        requests?: number;
        inputTokens?: number;
        outputTokens?: number;
        totalTokens?: number;
        inputTokensDetails?: unknown;
        outputTokensDetails?: unknown;
      }
    | undefined,
): RunUsageView {
  const sum = (details: unknown, key: string): number =>
    (Array.isArray(details) ? details : details ? [details] : []).reduce((n: number, d: unknown) => {
      const v = typeof d === 'object' && d !== null ? (d as Record<string, unknown>)[key] : undefined;
      return n + (typeof v === 'number' ? v : 0);
    }, 0);
  return {
    requests: usage?.requests ?? 0,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    totalTokens: usage?.totalTokens ?? 0,
    cachedTokens: sum(usage?.inputTokensDetails, 'cached_tokens'),
    reasoningTokens: sum(usage?.outputTokensDetails, 'reasoning_tokens'),
  };
}
