/**
 * A run on a branch through the user's own agent (docs/agent-command.md): the lock, the branch and the fork prepared by
 * the steps every kind of run takes (../runLocks.ts, ../branchOpening.ts), the agent command started (or the agent URL
 * requested) with one AG-UI `RunAgentInput`, its AG-UI events forwarded as run events, and the run settled by the same
 * steps as ours once it ended (../branchSettlement.ts, ../runWrites.ts for what it wrote elsewhere). The command writes
 * through its own session; we only read what it wrote, and remove what a failed run left half-written.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
// The store's modules by path, not its index: the index evaluates the whole library (issue 43, run's start).
import { BranchError } from '../../store/errors';
import { fromStoredItems } from '../../store/format/itemShape';
import type { TableNames } from '../../store/format/schema';
import type { WriteMark } from '../../store/inspector/writesSince';
import type { CommandEndView, RunEvent, RunOutcome, RunUsageView } from '../../shared/protocol/runEvents';
import type { ReplayTable, ToolsMode } from '../../shared/protocol/replay';
import type { SpanRecord } from '../../store/traces/spanRecord';
import { storeCommandSpans } from './commandSpans';
import { errorMessage } from '../../shared/errorMessage';
import { runValueText } from '../../shared/itemText';
import { hideUrlPasswords, urlWithoutPassword } from '../../shared/urlPasswords';
import { storeFailure } from '../storeFailures';
import { redactDeep, redactableSecrets } from '../apiKey';
import { isUserMessage } from '../runPersistence';
import { RunReporter } from '../runReporter';
import { withRunLock } from '../runLocks';
import { elsewhereMessage, noteRunBranch, otherWritersNote, writesOfRun } from '../runWrites';
import { openOnBranch, type OpenedBranch } from '../branchOpening';
import { settleAndDescribe } from '../branchSettlement';
import { Produced, usageView } from '../runSummary';
import { AgUiTranslator, MAX_REPLAY_REPORTS, TOOL_REPLAY_EVENT, loadEventSchemas } from './agUiEvents';
import { buildCommandInput } from './commandInput';
import { runCommandProcess } from './commandProcess';
import { runOverHttp } from './sseTransport';
import { AFTER_RUN_END_MS, overlongEventText } from './commandLimits';
import { ShownStreams } from '../shownStreams';
import { IN_THREAD_STORE, type RunSession, type RunStore } from '../runSession';
import { toolsModeOf, type ToolsOptions } from '../runOptions';
import { buildReplayTable } from '../replay/replayTable';
import { checkWrittenCalls } from '../replay/writtenCalls';

/** The user's agent: a command line, or an agent served over AG-UI's HTTP transport. */
export type CommandAgent =
  | {
      kind: 'command';
      /** The name the user gave it (its key in `agentSessions.agent.command`), shown in every message. */
      name: string;
      command: string;
      cwd?: string;
    }
  | { kind: 'url'; url: string; name?: string };

export interface CommandRunOptions {
  dbPath: string;
  sessionId: string;
  /** The branch to continue (default `main`), or the one to fork from. */
  branchId?: string;
  /** Start a new branch at `fromTurn` and run on it (at turn 1 the command makes it: docs/agent-command.md §3). */
  fork?: { fromTurn: number; name?: string };
  tables?: TableNames;
  agent: CommandAgent;
  /** The user's message: text, or items in the SDK's shape. */
  input: string | readonly unknown[];
  /** The model the run asks for; null/undefined lets the agent use its own. */
  model?: string | null;
  /**
   * Put in the command's environment as OPENAI_API_KEY. Redacted from everything shown, as is the OPENAI_API_KEY of
   * the environment the command starts with (the CLI's own).
   */
  apiKey?: string;
  /** The environment the command starts with (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Stop the command after this long (ms; 0 or undefined: never). */
  timeoutMs?: number;
  /** How long each stop signal gets before the next (default 5000 ms). */
  graceMs?: number;
  /** The longest event line or server-sent event read (default `MAX_EVENT_LINE_CHARS`, commandLimits.ts). */
  maxEventChars?: number;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  /** Each stderr line and each problem, redacted. */
  log?: (line: string) => void;
  runId?: string;
  busyTimeoutMs?: number;
  /** Where the run's session lives: this thread by default; the extension's store worker (../runSession.ts). */
  store?: RunStore;
  /** Where the spans the command sends go (the trace store); without it they are ignored. */
  tracing?: { sink: (records: SpanRecord[]) => Promise<unknown> };
  /**
   * What the agent does with its tool calls (docs/agent-command.md §2, `tools`). Default: `replay` when the run re-runs
   * a recorded turn (a fork), `live` when it continues past the recording. The settlement checks what it wrote.
   */
  tools?: ToolsOptions;
  /**
   * Hears the run's own items exactly as stored, once a completed run was settled with nothing removed: what the
   * branch now holds of it, already read for settling, so a caller that grades it (a check) need not read it again.
   */
  onStored?: (items: readonly unknown[]) => void;
}

/** The run's replay: its mode, the recorded turn's table (empty past the recording) and the name-only tools. */
interface CommandReplay {
  mode: ToolsMode;
  nameOnly: readonly string[];
  table: ReplayTable;
  source: { branchId: string; turn: number } | null;
}

/** How the agent's side of the run ended. */
interface AgentEnd {
  completedByAgent: boolean;
  /**
   * The run's terminal event (RUN_FINISHED, RUN_ERROR) was read: what came after it (a Stop, the timeout, our stop of
   * a command or a stream still open after it, a connection that broke) does not change how the run ended.
   */
  endedByEvent: boolean;
  stopped: 'stop' | 'timeout' | undefined;
  /** Why the agent's side failed, for people (undefined when it completed). */
  failure: string | undefined;
  view: CommandEndView;
}

/** Runs the user's agent on the branch; never throws for a run's failure (the outcome says what happened). */
export async function runCommandOnBranch(options: CommandRunOptions): Promise<RunOutcome> {
  const runId = options.runId ?? randomUUID();
  const reporter = new RunReporter({ ...options, runId, secrets: runSecrets(options) });
  return withRunLock(options, reporter, () => prepareAndRun(options, reporter));
}

/** The environment the command starts with: ours, or the caller's, with the API key put in. */
function commandEnv(options: CommandRunOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env) };
  // Ours goes into the environment the command starts with; a command line or a program that sets its own wins.
  if (options.apiKey) env.OPENAI_API_KEY = options.apiKey;
  return env;
}

/** What is never shown: the key we pass, and the one the command inherits (the CLI passes none of its own). */
function runSecrets(options: CommandRunOptions): string[] {
  return redactableSecrets([options.apiKey, (options.env ?? process.env).OPENAI_API_KEY]);
}

// An agent URL is shown without its password (`user:***@`): in the run's header, every message and the view, whether
// it came from `--url` or from the settings. Fetch sends no such URL, but a user may still write one.
function agentLabel(agent: CommandAgent): string {
  return agent.kind === 'command' ? agent.name : (agent.name ?? urlWithoutPassword(agent.url));
}

function describe(agent: CommandAgent): string {
  return agent.kind === 'command' ? `The agent command '${agent.name}'` : `The agent at ${urlWithoutPassword(agent.url)}`;
}

async function prepareAndRun(options: CommandRunOptions, reporter: RunReporter): Promise<RunOutcome> {
  const dbPath = resolve(options.dbPath);
  const opened = await openOnBranch({ ...options, dbPath, createTables: false, readRecordedTurn: options.fork !== undefined }, reporter, {
    classify: storeFailure,
    agentMakesTurnOneFork: true,
  });
  if ('kind' in opened) return opened;
  const { session } = opened;
  try {
    const tables: TableNames = {
      sessions: options.tables?.sessions ?? 'agent_sessions',
      messages: options.tables?.messages ?? 'agent_messages',
    };
    const store = options.store ?? IN_THREAD_STORE;
    const mark = await store.markWrites(dbPath, tables);
    const since = Date.now();
    const endSpan = noteRunBranch(dbPath, options.sessionId, reporter.branchId);
    reporter.start(agentLabel(options.agent), []);
    const recorded = opened.recordedTurn;
    const replay: CommandReplay = {
      mode: toolsModeOf(options.tools, options.fork),
      nameOnly: [...(options.tools?.nameOnly ?? [])],
      table: recorded
        ? buildReplayTable(recorded.items, { branchId: recorded.branchId, turn: recorded.turn })
        : { branchId: '', turn: 0, calls: [], hosted: [] },
      source: recorded ? { branchId: recorded.branchId, turn: recorded.turn } : null,
    };
    const shown = new ShownStreams(reporter);
    // Aborted at the run's terminal event: the transport then closes the stream, or stops the command, shortly after.
    // Whether that event came before any Stop or timeout: one sent because of them (a RUN_ERROR "cancelled" on
    // SIGINT) does not make the stop come "after the run's end".
    const runEnded = new AbortController();
    let startedAt = Date.now();
    const endedFirst = { value: false };
    const translator = new AgUiTranslator(
      reporter.runId,
      (e) => shown.emit(e),
      (why, source) => shown.invalid(why, source),
      () => {
        const timedOut = (options.timeoutMs ?? 0) > 0 && Date.now() - startedAt >= (options.timeoutMs ?? 0);
        endedFirst.value = !(options.signal?.aborted ?? false) && !timedOut;
        runEnded.abort();
      },
    );
    const input = buildCommandInput({
      runId: reporter.runId,
      dbPath,
      tables,
      sessionId: options.sessionId,
      branchId: reporter.branchId,
      fork: opened.agentMakesFork,
      model: options.model ?? null,
      input: options.input,
      tools: replay,
    });
    try {
      startedAt = Date.now();
      const end = await runAgent(options, reporter, translator, shown, input, runEnded.signal, () => endedFirst.value);
      // A call streamed in chunks ends with the stream, and what the view held back is let out.
      translator.end();
      shown.end();
      const outcome = await settle({
        options,
        reporter,
        session,
        store,
        tables,
        dbPath,
        mark,
        since,
        agentMakesFork: opened.agentMakesFork,
        translator,
        shown,
        end,
        replay,
      });
      await storeCommandSpans({
        sink: options.tracing?.sink,
        translator,
        link: { sessionId: options.sessionId, branchId: reporter.branchId, turnNumber: outcome.written.turn },
        who: describe(options.agent),
        log: (line) => reporter.log(line),
      });
      return outcome;
    } finally {
      endSpan();
    }
  } finally {
    await session.close();
  }
}

/** Starts the command (or requests the URL) and waits for its end. */
async function runAgent(
  options: CommandRunOptions,
  reporter: RunReporter,
  translator: AgUiTranslator,
  shown: ShownStreams,
  input: Record<string, unknown>,
  runEnded: AbortSignal,
  endedFirst: () => boolean,
): Promise<AgentEnd> {
  const { agent } = options;
  const who = describe(agent);
  if (agent.kind === 'url') {
    const ending = runOverHttp({
      url: agent.url,
      input,
      onEvent: (value, source) => translator.event(value, source),
      onInvalid: (text) => translator.line(text),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      maxEventChars: options.maxEventChars,
      runEnded,
    });
    loadSchemasBeside();
    const end = await ending;
    // Fetch's errors quote the URL (the one it refused for its credentials too), password and all.
    if (end.error !== undefined) end.error = hideUrlPasswords(end.error);
    // AG-UI 1.0: RUN_FINISHED and RUN_ERROR end the run. A stream closed by us after it, or broken after it (a worker
    // recycled, a proxy closing idle upstreams), or a timeout or Stop meanwhile, does not undo a run that had ended.
    const endedByEvent = translator.ended && endedFirst();
    if (endedByEvent && end.closedAfterRunEnd && end.error !== undefined)
      reporter.log(`${who}'s event stream broke off after the run's end (${end.error}); the run had ended.`);
    const view: CommandEndView = {
      agent: agentLabel(agent),
      exitCode: null,
      signal: null,
      ...(end.status !== undefined ? { status: end.status } : {}),
      stderrTail: [],
      invalidLines: translator.invalid,
    };
    let failure: string | undefined;
    if (end.stoppedBy === 'timeout' && !endedByEvent)
      failure = `${who} ran past the ${seconds(options.timeoutMs)} s timeout; the request was aborted.`;
    else if (end.error !== undefined && end.status === undefined) failure = `${who} could not be reached (${end.error}).`;
    else if (end.status !== undefined && (end.status < 200 || end.status > 299))
      failure = `${who} answered HTTP ${end.status}${end.body ? `: ${end.body}` : ''}.`;
    else if (end.notEventStream !== undefined)
      failure =
        `${who} answered HTTP ${end.status ?? 200} with content type '${end.notEventStream}', not an event stream ` +
        `(text/event-stream), so no event was read${end.body ? `; it began: ${end.body}` : ''}.`;
    else if (end.error !== undefined && !endedByEvent) failure = `${who}'s event stream broke off (${end.error}).`;
    else if (end.overlongEvents > 0) failure = overlongEventText(who, end.overlongEvents, 'event', options.maxEventChars);
    else if (translator.error) failure = `${who} reported an error: ${translator.error.message}`;
    // Over HTTP there is no exit code: RUN_FINISHED is the only word that the run completed, and a stream that ends
    // without it (a server that crashed mid-run, a proxy that cut it) did not.
    else if (!end.stoppedBy && !translator.finished) failure = `${who}'s event stream ended before RUN_FINISHED; the run did not complete.`;
    const stopped = endedByEvent ? undefined : end.stoppedBy;
    return { completedByAgent: failure === undefined && !stopped, endedByEvent, stopped, failure, view };
  }

  const ending = runCommandProcess({
    command: agent.command,
    cwd: agent.cwd,
    env: commandEnv(options),
    stdin: JSON.stringify(input),
    onLine: (line) => translator.line(line),
    onStderr: (line) => shown.stderr(line, (l) => reporter.log(`[${agent.name}] ${l}`)),
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    graceMs: options.graceMs,
    maxLineChars: options.maxEventChars,
    runEnded,
  });
  loadSchemasBeside();
  const end = await ending;
  // As over HTTP: a command that lingered after its run's end (and was stopped then, or by the timeout or a Stop
  // meanwhile) completed the run it ended; its exit code is then ours, not its word.
  const endedByEvent = translator.ended && endedFirst();
  const stoppedAfterEnd = endedByEvent && (end.stoppedBy !== undefined || end.stoppedAfterRunEnd === true);
  if (end.stoppedAfterRunEnd)
    reporter.log(`${who} was still running ${seconds(AFTER_RUN_END_MS)} s after its run's end, so it was stopped.`);
  shown.endStderr((l) => reporter.log(`[${agent.name}] ${l}`));
  const view: CommandEndView = {
    agent: agent.name,
    exitCode: end.code,
    signal: end.signal,
    stderrTail: [...shown.stderrTail],
    invalidLines: translator.invalid,
  };
  let failure: string | undefined;
  if (end.spawnError !== undefined) failure = `${who} could not be started (${end.spawnError}).`;
  else if (stoppedAfterEnd)
    failure =
      end.overlongLines > 0
        ? overlongEventText(who, end.overlongLines, 'line', options.maxEventChars)
        : translator.error
          ? `${who} reported an error: ${translator.error.message}`
          : undefined;
  else if (end.stoppedBy === 'timeout') failure = `${who} ran past the ${seconds(options.timeoutMs)} s timeout and was stopped.`;
  else if (end.stoppedBy === 'stop') failure = undefined;
  else if (end.overlongLines > 0) failure = overlongEventText(who, end.overlongLines, 'line', options.maxEventChars);
  else if (end.code === 127) failure = `${who} could not be started: its program was not found (exit code 127).`;
  else if (end.code === 126) failure = `${who} could not be started: its program is not executable (exit code 126).`;
  else if (translator.error) failure = `${who} reported an error: ${translator.error.message}`;
  else if (end.code !== 0)
    failure =
      translator.valid === 0
        ? `${who} exited with ${end.code === null ? `signal ${end.signal}` : `code ${end.code}`} before sending any event.`
        : `${who} exited with ${end.code === null ? `signal ${end.signal}` : `code ${end.code}`}.`;
  const stopped = stoppedAfterEnd ? undefined : end.stoppedBy;
  return { completedByAgent: failure === undefined && !stopped, endedByEvent, stopped, failure, view };
}

/**
 * AG-UI's event schemas, loaded once the agent is spawned (or its request sent), so they compile while it starts
 * rather than before (issue 43). After a turn of the event loop: the input on its way to the agent's stdin goes out
 * first. A failure here is left for the first event to report.
 */
function loadSchemasBeside(): void {
  setImmediate(() => {
    try {
      loadEventSchemas();
    } catch {
      // See above: the first event loads them again.
    }
  });
}

function seconds(ms: number | undefined): number {
  return Math.round((ms ?? 0) / 1000);
}

interface SettleArgs {
  options: CommandRunOptions;
  reporter: RunReporter;
  session: RunSession;
  store: RunStore;
  tables: TableNames;
  dbPath: string;
  mark: WriteMark;
  /** When the command started: our other runs' branches since then are not "elsewhere". */
  since: number;
  agentMakesFork: OpenedBranch['agentMakesFork'];
  translator: AgUiTranslator;
  shown: ShownStreams;
  end: AgentEnd;
  replay: CommandReplay;
}

/** Reads what landed, puts the branch right by every run's rules, and reports the outcome. */
async function settle(args: SettleArgs): Promise<RunOutcome> {
  const { options, reporter, session, translator, end } = args;
  const who = describe(options.agent);
  const branchId = reporter.branchId;
  let branchExists = true;
  let readable = true;
  if (args.agentMakesFork) {
    try {
      await session.switchToBranch(branchId);
    } catch (err) {
      if (err instanceof BranchError) branchExists = false;
      else {
        readable = false;
        reporter.log(`Reading the branch after the run failed: ${errorMessage(err)}`);
      }
    }
  }
  // The run's items: its turn among the branch's new items (read with a limit, so a long branch costs nothing), as
  // stored (replay compares outputs exactly as stored) and in the SDK's shape (what settling reads). The branch's other
  // new items, and what was written elsewhere once the turn is there, are another writer's (../runWrites.ts).
  const writes = await writesOfRun({
    ...args,
    sessionId: options.sessionId,
    branchId,
    input: options.input,
    readBranch: branchExists && readable ? (limit) => session.getStoredItems(limit) : undefined,
    log: (line) => reporter.log(line),
  });
  const { ownTurn, elsewhere, othersOnBranch } = writes;
  const stored: unknown[] = writes.own;
  const written: AgentInputItem[] = fromStoredItems(stored);
  const hasTurn = written.some(isUserMessage);

  // A run the agent cancelled (RUN_FINISHED with outcome `cancelled`) is settled as a Stop: nothing was produced.
  const cancelledByAgent = translator.cancelled && end.failure === undefined;
  // A Stop that came after the run's terminal event stopped only what lingered: the run had ended by then.
  const stoppedByUs = !end.endedByEvent && (end.stopped === 'stop' || (options.signal?.aborted ?? false));
  const cancelled = stoppedByUs || cancelledByAgent;
  // "Done" means a turn was saved: an agent that ends well without writing its turn (its session pointed elsewhere, a
  // bug in its store calls) has answered nothing the view can show, and the user's message exists nowhere but the
  // composer, so the run fails and says so.
  const noTurn = hasTurn ? undefined : `${who} ${options.agent.kind === 'command' ? 'exited' : 'finished'} without writing a turn.`;
  // Our own marks of what it wrote, whatever it reported (replay/writtenCalls.ts). A strict run that ran a tool live
  // fails, and is rolled back whole as a run that spent nothing: nothing of it is kept, as if the tool had been refused.
  const checked = checkWrittenCalls({ ...args.replay, written: stored, reports: translator.replayReports });
  const strictFailure = checked.strictFailure ?? undefined;
  // A strict agent that refused a call as it should (reported `unmatched`, then failed) is rolled back whole too, as
  // our own runs' strict refusals are, whatever it had written and spent before it.
  const refusedByAgent = args.replay.mode === 'strict' && translator.replayReports.some((r) => r.outcome === 'unmatched');
  const failure =
    end.failure ??
    strictFailure ??
    // Written elsewhere and not on its branch: the agent's mistake, most likely (with its turn on its branch, the writes
    // elsewhere are another writer's: a note below).
    (!hasTurn && elsewhere.length > 0 ? elsewhereMessage(who, elsewhere, branchId, options.sessionId) : undefined) ??
    noTurn;
  // RUN_FINISHED with outcome `interrupt`: the run is paused, waiting for something outside it (AG-UI 1.0). The call it
  // waits on is what the agent resumes from (its SDK's next run answers it), so it is kept, and so is the turn, as
  // written: the run neither completed nor failed, and is settled keeping everything (runPersistence.ts).
  const paused = translator.interrupts !== undefined && failure === undefined && !cancelled;
  const completed = end.completedByAgent && failure === undefined && !cancelled && !paused;

  // Usage: the row the command stored for its turn; else what its events reported.
  const storedUsage = ownTurn !== null && hasTurn ? await readTurnUsage(session, ownTurn) : undefined;
  const spent =
    strictFailure === undefined &&
    !(refusedByAgent && end.failure !== undefined) &&
    (storedUsage !== undefined || (translator.usage !== undefined && (translator.usage.requests > 0 || translator.usage.totalTokens > 0)));

  const { settled, record, persistence } = await settleAndDescribe(
    session,
    reporter,
    {
      completed,
      spent,
      written,
      unproven: writes.unproven,
      fork: options.fork ? { branchId, exists: branchExists } : undefined,
      paused,
      // The command's items are known only from the branch, and its usage is its own to store: nothing to add.
      produced: new Produced(),
      storeProblems: [],
      writeFailed: false,
    },
    async (keptUser) => {
      const turn = keptUser ? ownTurn : null;
      const usageStored = turn !== null && (await readTurnUsage(session, turn)) !== undefined;
      return { turn, usageStored, usage: (usageStored ? storedUsage : undefined) ?? translator.usage ?? null };
    },
  );
  const { usage, usageStored } = record;
  if (completed && settled.removed.length === 0 && !settled.problem) options.onStored?.(stored);
  const view: CommandEndView = { ...end.view, invalidLines: translator.invalid };
  if (translator.invalid > 0) {
    for (const sample of args.shown.invalidSamples) reporter.log(`[${view.agent}] ignored a line that is ${sample}`);
  }
  const notes: string[] = [];
  if (completed && settled.kept.some(isUserMessage) && !usageStored) notes.push('It stored no usage for the turn (no usage recorded).');
  if (translator.invalid > 0) notes.push(`${who} printed ${translator.invalid} line(s) that are not AG-UI events; they were ignored.`);
  if (translator.afterEnd > 0)
    notes.push(
      `${who} sent ${translator.afterEnd} event(s) after the run's end (the first: ${translator.afterEndSample}); AG-UI allows none, so they were ignored.`,
    );
  if (!hasTurn && elsewhere.length > 0 && end.failure !== undefined)
    notes.push(elsewhereMessage(who, elsewhere, branchId, options.sessionId));
  const others = otherWritersNote(othersOnBranch, elsewhere, branchId, hasTurn);
  if (others !== undefined) notes.push(others);
  notes.push(...replayNotes(who, translator), ...boundNotes(who, translator));
  if (notes.length > 0) persistence.summary = reporter.redact(`${persistence.summary} ${notes.join(' ')}`);

  // The answer and the calls' arguments are read back from the file, not from the redacted stream: a key the agent
  // wrote into them would reach the CLI's lines, --json, the replay summary and a check's reports.
  const replay = redactDeep(checked.summary, reporter.secrets);
  if (completed)
    return reporter.finish({
      kind: 'run/completed',
      runId: reporter.runId,
      finalOutput: reporter.redact(finalText(settled.kept)),
      usage,
      written: persistence,
      command: view,
      replay,
    });
  const message = cancelled
    ? stoppedByUs || !cancelledByAgent
      ? 'The run was stopped.'
      : `${who} cancelled the run.`
    : paused
      ? pausedMessage(who, translator.interrupts ?? [])
      : (failure ?? `${who} ended without completing the run.`);
  // Paused is no error (`paused`, with what it waits for as data): the view, the CLI (exit 7) and a check tell it apart.
  const interrupts = paused
    ? redactDeep(
        (translator.interrupts ?? []).map((i) => ({ text: i.text, toolCallId: i.toolCallId ?? null })),
        reporter.secrets,
      )
    : undefined;
  return reporter.finish({
    kind: 'run/failed',
    runId: reporter.runId,
    failure: cancelled ? 'cancelled' : paused ? 'paused' : 'other',
    ...(interrupts ? { interrupts } : {}),
    message: reporter.redact(message + stderrNote(view)),
    usage: spent ? usage : null,
    written: persistence,
    command: view,
    replay,
  });
}

/** A paused run's outcome (RUN_FINISHED with outcome `interrupt`): what it waits for, and what was kept. */
function pausedMessage(who: string, interrupts: readonly { text: string; toolCallId?: string }[]): string {
  const what = interrupts.map((i) => (i.toolCallId ? `${i.text} (tool call ${i.toolCallId})` : i.text)).join('; ');
  const call = interrupts.some((i) => i.toolCallId) ? ', with the call it waits on,' : '';
  return (
    `${who} paused the run, waiting for input: ${what || 'an interrupt'}. The run did not complete; its turn is kept as ` +
    `written${call} for the agent to resume from.`
  );
}

/** What the outcome says of tool calls past the run's bounds (docs/agent-command.md §6). */
function boundNotes(who: string, translator: AgUiTranslator): string[] {
  const notes: string[] = [];
  if (translator.cutToolCalls > 0)
    notes.push(
      `${who} sent ${translator.cutToolCalls} tool call(s) whose arguments went past the bound of what a run keeps (MAX_TOOL_CALL_ARGS_CHARS, MAX_RUN_TOOL_CALL_CHARS); they were shown cut.`,
    );
  if (translator.droppedToolCalls > 0)
    notes.push(
      `${who} began ${translator.droppedToolCalls} tool call(s) past the bound of what a run keeps (MAX_RUN_TOOL_CALL_CHARS); they were not shown.`,
    );
  return notes;
}

/** What the outcome says of tool-replay reports that were not read (invalid, or past the bound). */
function replayNotes(who: string, translator: AgUiTranslator): string[] {
  const notes: string[] = [];
  if (translator.invalidReplayReports > 0)
    notes.push(
      `${who} sent ${translator.invalidReplayReports} ${TOOL_REPLAY_EVENT} event(s) whose value is not { callId, name, outcome, recordedCallId }; they were ignored.`,
    );
  if (translator.droppedReplayReports > 0)
    notes.push(
      `${who} sent more than ${MAX_REPLAY_REPORTS} ${TOOL_REPLAY_EVENT} events; the ${translator.droppedReplayReports} after them were ignored.`,
    );
  return notes;
}

function stderrNote(view: CommandEndView): string {
  if (view.stderrTail.length === 0) return '';
  return `\nstderr (last lines):\n${view.stderrTail.join('\n')}`;
}

/** The usage row of the current branch's user turn `turn`, if the command stored one. */
async function readTurnUsage(session: RunSession, turn: number): Promise<RunUsageView | undefined> {
  try {
    const row = await session.getTurnUsage(turn);
    if (!('requests' in row)) return undefined;
    return usageView({
      requests: row.requests ?? 0,
      inputTokens: row.inputTokens ?? 0,
      outputTokens: row.outputTokens ?? 0,
      totalTokens: row.totalTokens ?? 0,
      inputTokensDetails: row.inputTokensDetails,
      outputTokensDetails: row.outputTokensDetails,
    });
  } catch {
    return undefined;
  }
}

/** The text of the newest assistant message the run kept (the view's "final output"). */
function finalText(items: readonly AgentInputItem[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as { role?: unknown; content?: unknown };
    if (item.role !== 'assistant') continue;
    if (typeof item.content === 'string') return item.content;
    if (Array.isArray(item.content))
      return item.content
        .map((p) =>
          typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '',
        )
        .join('');
    return runValueText(item.content);
  }
  return '';
}
