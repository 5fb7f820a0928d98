/**
 * A run on a branch through the user's own agent (docs/agent-command.md): the branch prepared as for the extension's
 * own runs, the agent command started (or the agent URL requested) with one AG-UI `RunAgentInput`, its AG-UI events
 * forwarded as run events, and the run settled by the same rules as ours once it ended (runPersistence.ts). The
 * command writes through its own session; we only read what it wrote, and remove what a failed run left half-written.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { BranchError, type TableNames, type WriteMark, type WritesByBranch } from '../../store';
import type { CommandEndView, RunEvent, RunOutcome, RunUsageView } from '../../shared/protocol/runEvents';
import type { SpanRecord } from '../../store/traces/spanRecord';
import { commandSpanRecords } from './commandSpans';
import { errorMessage } from '../../shared/errorMessage';
import { runValueText } from '../../shared/itemText';
import { storeFailure } from '../storeFailures';
import { redactableSecrets } from '../apiKey';
import { problemLogger, settleBranch } from '../runPersistence';
import { RunReporter } from '../runReporter';
import { branchesOfRunsSince, busyMessage, noteRunBranch, releaseRunLock, runLockKey, takeRunLock } from '../runLocks';
import { Produced, persistenceView, usageView } from '../runSummary';
import { AgUiTranslator, MAX_RUN_SPANS } from './agUiEvents';
import { buildCommandInput } from './commandInput';
import { runCommandProcess } from './commandProcess';
import { runOverHttp } from './sseTransport';
import { overlongEventText } from './commandLimits';
import { LineRedactor, StreamRedactor } from '../streamRedactor';
import { IN_THREAD_STORE, type RunSession, type RunStore } from '../runSession';

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
}

/** How the agent's side of the run ended. */
interface AgentEnd {
  completedByAgent: boolean;
  stopped: 'stop' | 'timeout' | undefined;
  /** Why the agent's side failed, for people (undefined when it completed). */
  failure: string | undefined;
  view: CommandEndView;
}

/** Runs the user's agent on the branch; never throws for a run's failure (the outcome says what happened). */
export async function runCommandOnBranch(options: CommandRunOptions): Promise<RunOutcome> {
  const runId = options.runId ?? randomUUID();
  const reporter = new RunReporter({ ...options, runId, secrets: runSecrets(options) });
  const key = runLockKey({
    dbPath: options.dbPath,
    sessionId: options.sessionId,
    branchId: reporter.branchId,
    runId,
    unnamedFork: !!options.fork && !options.fork.name,
  });
  if (!takeRunLock(key)) return reporter.failEarly('other', busyMessage(reporter.branchId, options.sessionId));
  try {
    return await prepareAndRun(options, reporter);
  } finally {
    releaseRunLock(key);
  }
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

function agentLabel(agent: CommandAgent): string {
  return agent.kind === 'command' ? agent.name : (agent.name ?? agent.url);
}

function describe(agent: CommandAgent): string {
  return agent.kind === 'command' ? `The agent command '${agent.name}'` : `The agent at ${agent.url}`;
}

async function prepareAndRun(options: CommandRunOptions, reporter: RunReporter): Promise<RunOutcome> {
  const dbPath = resolve(options.dbPath);
  if (!existsSync(dbPath)) return reporter.failEarly('other', `${dbPath} does not exist.`);
  if (options.signal?.aborted) return reporter.failEarly('cancelled', 'The run was cancelled before it started.');
  const storeProblems: string[] = [];
  const logger = problemLogger(storeProblems, (line) => reporter.log(line));
  const store = options.store ?? IN_THREAD_STORE;
  let session: RunSession;
  try {
    session = await store.openSession({
      sessionId: options.sessionId,
      dbPath,
      sessionsTable: options.tables?.sessions,
      messagesTable: options.tables?.messages,
      busyTimeoutMs: options.busyTimeoutMs,
      logger,
    });
  } catch (err) {
    const c = storeFailure(err);
    return reporter.failEarly(c.failure, c.message);
  }
  try {
    const tables: TableNames = {
      sessions: options.tables?.sessions ?? 'agent_sessions',
      messages: options.tables?.messages ?? 'agent_messages',
    };
    // A fork at turn 1 copies nothing, and no SDK can switch to a branch without rows: the command makes it.
    let commandMakesFork: { fromBranchId: string; fromTurn: number } | null = null;
    try {
      if ((await session.getCurrentBranchId()) !== reporter.sourceBranch) await session.switchToBranch(reporter.sourceBranch);
      if (options.fork && options.fork.fromTurn <= 1) {
        const turns = await session.getConversationTurns();
        if (!turns.some((t) => t.turn === options.fork!.fromTurn))
          throw new BranchError(`Turn ${options.fork.fromTurn} does not contain a user message in branch '${reporter.sourceBranch}'`);
        commandMakesFork = { fromBranchId: reporter.sourceBranch, fromTurn: options.fork.fromTurn };
        reporter.forkMade(options.fork.name ?? `branch_from_turn_1_${Math.floor(Date.now() / 1000)}`);
      } else {
        if (options.fork) reporter.forkMade(await session.createBranchFromTurn(options.fork.fromTurn, options.fork.name ?? null));
      }
    } catch (err) {
      const c = storeFailure(err);
      return reporter.failEarly(c.failure, c.message);
    }
    const mark = await store.markWrites(dbPath, tables);
    const since = Date.now();
    const endSpan = noteRunBranch(dbPath, options.sessionId, reporter.branchId);
    reporter.start(agentLabel(options.agent), []);
    const shown = new ShownStreams(reporter);
    const translator = new AgUiTranslator(
      reporter.runId,
      (e) => shown.emit(e),
      (why, source) => shown.invalid(why, source),
    );
    const input = buildCommandInput({
      runId: reporter.runId,
      dbPath,
      tables,
      sessionId: options.sessionId,
      branchId: reporter.branchId,
      fork: commandMakesFork,
      model: options.model ?? null,
      input: options.input,
    });
    try {
      const end = await runAgent(options, reporter, translator, shown, input);
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
        commandMakesFork,
        translator,
        shown,
        end,
        storeProblems,
      });
      await storeCommandSpans(options, reporter, translator, outcome);
      return outcome;
    } finally {
      endSpan();
    }
  } finally {
    await session.close();
  }
}

/**
 * The spans the command sent, into the trace store, linked to the branch it ran on and the turn it wrote. A store that
 * cannot take them, or values that are not spans, are logged: the run's outcome stands.
 */
async function storeCommandSpans(
  options: CommandRunOptions,
  reporter: RunReporter,
  translator: AgUiTranslator,
  outcome: RunOutcome,
): Promise<void> {
  if (!options.tracing || translator.sdkSpans.length + translator.otlp.length === 0) return;
  const { records, rejected } = commandSpanRecords(translator.sdkSpans, translator.otlp, {
    sessionId: options.sessionId,
    branchId: reporter.branchId,
    turnNumber: outcome.written.turn,
  });
  if (rejected.length > 0)
    reporter.log(`${describe(options.agent)} sent ${rejected.length} span value(s) that were left out: ${rejected.slice(0, 3).join('; ')}`);
  if (translator.droppedSpans > 0)
    reporter.log(`${describe(options.agent)} sent more than ${MAX_RUN_SPANS} spans; ${translator.droppedSpans} were left out.`);
  if (records.length === 0) return;
  try {
    await options.tracing.sink(records);
  } catch (err) {
    reporter.log(`The run's spans could not be stored: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Starts the command (or requests the URL) and waits for its end. */
async function runAgent(
  options: CommandRunOptions,
  reporter: RunReporter,
  translator: AgUiTranslator,
  shown: ShownStreams,
  input: Record<string, unknown>,
): Promise<AgentEnd> {
  const { agent } = options;
  const who = describe(agent);
  if (agent.kind === 'url') {
    const end = await runOverHttp({
      url: agent.url,
      input,
      onEvent: (value, source) => translator.event(value, source),
      onInvalid: (text) => translator.line(text),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      maxEventChars: options.maxEventChars,
    });
    const view: CommandEndView = {
      agent: agentLabel(agent),
      exitCode: null,
      signal: null,
      ...(end.status !== undefined ? { status: end.status } : {}),
      stderrTail: [],
      invalidLines: translator.invalid,
    };
    let failure: string | undefined;
    if (end.stoppedBy === 'timeout') failure = `${who} ran past the ${seconds(options.timeoutMs)} s timeout; the request was aborted.`;
    else if (end.error !== undefined && end.status === undefined) failure = `${who} could not be reached (${end.error}).`;
    else if (end.status !== undefined && (end.status < 200 || end.status > 299))
      failure = `${who} answered HTTP ${end.status}${end.body ? `: ${end.body}` : ''}.`;
    else if (end.error !== undefined) failure = `${who}'s event stream broke off (${end.error}).`;
    else if (end.overlongEvents > 0) failure = overlongEventText(who, end.overlongEvents, 'event', options.maxEventChars);
    else if (translator.error) failure = `${who} reported an error: ${translator.error.message}`;
    // Over HTTP there is no exit code: RUN_FINISHED is the only word that the run completed, and a stream that ends
    // without it (a server that crashed mid-run, a proxy that cut it) did not.
    else if (!end.stoppedBy && !translator.finished) failure = `${who}'s event stream ended before RUN_FINISHED; the run did not complete.`;
    return { completedByAgent: failure === undefined && !end.stoppedBy, stopped: end.stoppedBy, failure, view };
  }

  const end = await runCommandProcess({
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
  });
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
  return { completedByAgent: failure === undefined && !end.stoppedBy, stopped: end.stoppedBy, failure, view };
}

function seconds(ms: number | undefined): number {
  return Math.round((ms ?? 0) / 1000);
}

/** How many stderr lines a run keeps for its outcome and the command's status. */
const STDERR_TAIL_LINES = 20;
/** How many lines that are not events are quoted in the log. */
const INVALID_SAMPLES = 3;

/**
 * Everything the agent sent that people see, redacted as streams (../streamRedactor.ts): its text deltas (the view,
 * the CLI), its stderr (the log, the tail on the outcome) and the lines that were not events (the log). A secret
 * split across two deltas, chunks or lines is found as a whole; what could be the start of one waits for what
 * follows it.
 */
class ShownStreams {
  private readonly text: StreamRedactor;
  private readonly reasoning: StreamRedactor;
  private readonly stderrLines: LineRedactor;
  private readonly invalidLines: LineRedactor;
  /** Why each line given to `invalidLines` and not yet out of it was rejected, in order. */
  private readonly invalidWhys: string[] = [];
  private invalidSeen = 0;
  readonly stderrTail: string[] = [];
  readonly invalidSamples: string[] = [];
  private runId = '';

  constructor(private readonly reporter: RunReporter) {
    const secrets = reporter.secrets;
    this.text = new StreamRedactor(secrets);
    this.reasoning = new StreamRedactor(secrets);
    this.stderrLines = new LineRedactor(secrets);
    this.invalidLines = new LineRedactor(secrets);
  }

  /** An event from the translator, redacted, to the reporter. */
  emit(e: RunEvent): void {
    this.runId = e.runId;
    if (e.kind === 'text/delta') {
      const delta = this.text.push(e.delta);
      if (delta !== '') this.reporter.emit({ ...e, delta });
      return;
    }
    if (e.kind === 'reasoning/delta') {
      const delta = this.reasoning.push(e.delta);
      if (delta !== '') this.reporter.emit({ ...e, delta });
      return;
    }
    // Text held back belongs before whatever comes next: a secret does not span two events of different kinds.
    this.flushText();
    this.reporter.emit(this.redactWhole(e));
  }

  private flushText(): void {
    const text = this.text.end();
    if (text !== '') this.reporter.emit({ kind: 'text/delta', runId: this.runId, delta: text });
    const reasoning = this.reasoning.end();
    if (reasoning !== '') this.reporter.emit({ kind: 'reasoning/delta', runId: this.runId, delta: reasoning });
  }

  /** Events that arrive whole (tool calls with their joined arguments, outputs, items) are redacted whole. */
  private redactWhole(e: RunEvent): RunEvent {
    const r = (t: string) => this.text.redact(t);
    switch (e.kind) {
      case 'tool/called':
        return { ...e, name: r(e.name), arguments: r(e.arguments) };
      case 'tool/output':
        return { ...e, name: r(e.name), output: r(e.output) };
      case 'item/added': {
        const item = r(JSON.stringify(e.item ?? null));
        let parsed: unknown;
        try {
          parsed = JSON.parse(item);
        } catch {
          // A marker put where the JSON needed an escape (a secret containing a quote): keep the text.
          parsed = item;
        }
        return { ...e, preview: r(e.preview), item: parsed };
      }
      default:
        return e;
    }
  }

  /** One stderr line in; the lines that can be shown now go to `log` and the tail. */
  stderr(line: string, log: (line: string) => void): void {
    for (const l of this.stderrLines.push(line)) this.stderrOut(l, log);
  }

  endStderr(log: (line: string) => void): void {
    for (const l of this.stderrLines.end()) this.stderrOut(l, log);
  }

  private stderrOut(line: string, log: (line: string) => void): void {
    this.stderrTail.push(line);
    if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    log(line);
  }

  /** A line that was not an event: the first few are quoted in the log (redacted across lines, as stderr is). */
  invalid(why: string, source: string): void {
    if (this.invalidSeen > INVALID_SAMPLES) return;
    this.invalidSeen++;
    this.invalidWhys.push(why);
    // One line in, one line out (a line break a secret swallowed is kept), so each reason stays with its line.
    this.invalidOut(this.invalidLines.push(source.replace(/\r?\n/g, ' ')));
    // The line after the last sample was read only to settle its end.
    if (this.invalidSeen > INVALID_SAMPLES) this.invalidOut(this.invalidLines.end());
  }

  private invalidOut(lines: string[]): void {
    for (const line of lines) {
      const why = this.invalidWhys.shift() ?? 'not an AG-UI event';
      if (this.invalidSamples.length < INVALID_SAMPLES)
        this.invalidSamples.push(`${why}: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`);
    }
  }

  /** The stream ended: what was held back is let out, redacted. */
  end(): void {
    this.flushText();
    this.invalidOut(this.invalidLines.end());
  }
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
  commandMakesFork: { fromBranchId: string; fromTurn: number } | null;
  translator: AgUiTranslator;
  shown: ShownStreams;
  end: AgentEnd;
  storeProblems: string[];
}

/** Reads what landed, puts the branch right by our runs' rules, and reports the outcome. */
async function settle(args: SettleArgs): Promise<RunOutcome> {
  const { options, reporter, session, translator, end } = args;
  const who = describe(options.agent);
  const branchId = reporter.branchId;

  // Where the command wrote, from the messages added since it started: its branch's are the run's, our other runs'
  // (a what-if on several models) are theirs, anything else is reported and left.
  let ownItems = 0;
  /** The user turn of the run's message (from its structure row: no read of the branch's turns). */
  let ownTurn: number | null = null;
  const elsewhere: WritesByBranch[] = [];
  try {
    const ours = branchesOfRunsSince(args.dbPath, options.sessionId, args.since);
    for (const w of await args.store.writesSince(args.dbPath, args.tables, args.mark)) {
      if (w.sessionId === options.sessionId && w.branchId === branchId) {
        ownItems += w.items;
        ownTurn = w.lastUserTurn;
      } else if (!(w.sessionId === options.sessionId && w.branchId !== null && ours.has(w.branchId))) elsewhere.push(w);
    }
  } catch (err) {
    reporter.log(`Checking where the command wrote failed: ${errorMessage(err)}`);
  }

  // The run's items: the newest `ownItems` of the branch (read with a limit, so a long branch costs nothing).
  let written: AgentInputItem[] = [];
  let branchExists = true;
  try {
    if (args.commandMakesFork) {
      try {
        await session.switchToBranch(branchId);
      } catch (err) {
        if (!(err instanceof BranchError)) throw err;
        branchExists = false;
      }
    }
    if (branchExists && ownItems > 0) written = await session.getItems(ownItems);
  } catch (err) {
    reporter.log(`Reading the branch after the run failed: ${errorMessage(err)}`);
  }

  // A run the agent cancelled (RUN_FINISHED with outcome `cancelled`) is settled as a Stop: nothing was produced.
  const cancelledByAgent = translator.cancelled && end.failure === undefined;
  const cancelled = end.stopped === 'stop' || (options.signal?.aborted ?? false) || cancelledByAgent;
  const failure = end.failure ?? (elsewhere.length > 0 ? elsewhereMessage(who, elsewhere, branchId, options.sessionId) : undefined);
  const completed = end.completedByAgent && failure === undefined && !cancelled;

  // Usage: the row the command stored for its turn; else what its events reported.
  const storedUsage = ownTurn !== null && written.some(isUserMessage) ? await readTurnUsage(session, ownTurn) : undefined;
  const spent =
    storedUsage !== undefined || (translator.usage !== undefined && (translator.usage.requests > 0 || translator.usage.totalTokens > 0));

  const { forkDeleted, ...settled } = await settleBranch(
    session,
    written,
    { completed, spent },
    options.fork ? { branchId, exists: branchExists } : undefined,
  );
  const keptUser = settled.kept.some(isUserMessage);
  const turn = keptUser ? ownTurn : null;
  const usageStored = turn !== null && (await readTurnUsage(session, turn)) !== undefined;
  const usage = (usageStored ? storedUsage : undefined) ?? translator.usage ?? null;
  const view: CommandEndView = { ...end.view, invalidLines: translator.invalid };
  if (translator.invalid > 0) {
    for (const sample of args.shown.invalidSamples) reporter.log(`[${view.agent}] ignored a line that is ${sample}`);
  }
  const persistence = persistenceView({
    reporter,
    storeProblems: [],
    settled,
    produced: new Produced(),
    turn,
    usageStored,
    completed,
    usage,
    spent,
    writeFailed: false,
    forkDeleted,
  });
  const notes: string[] = [];
  if (completed && keptUser && !usageStored) notes.push('It stored no usage for the turn (no usage recorded).');
  if (translator.invalid > 0) notes.push(`${who} printed ${translator.invalid} line(s) that are not AG-UI events; they were ignored.`);
  if (translator.afterEnd > 0)
    notes.push(
      `${who} sent ${translator.afterEnd} event(s) after the run's end (the first: ${translator.afterEndSample}); AG-UI allows none, so they were ignored.`,
    );
  if (elsewhere.length > 0 && end.failure !== undefined) notes.push(elsewhereMessage(who, elsewhere, branchId, options.sessionId));
  if (notes.length > 0) persistence.summary = reporter.redact(`${persistence.summary} ${notes.join(' ')}`);

  if (completed) {
    const outcome: RunOutcome = {
      kind: 'run/completed',
      runId: reporter.runId,
      finalOutput: finalText(settled.kept),
      usage,
      written: persistence,
      command: view,
    };
    reporter.emit(outcome);
    return outcome;
  }
  const message = cancelled
    ? end.stopped === 'stop' || options.signal?.aborted || !cancelledByAgent
      ? 'The run was stopped.'
      : `${who} cancelled the run.`
    : (failure ?? `${who} ended without completing the run.`);
  const outcome: RunOutcome = {
    kind: 'run/failed',
    runId: reporter.runId,
    failure: cancelled ? 'cancelled' : 'other',
    message: reporter.redact(message + stderrNote(view)),
    usage: spent ? usage : null,
    written: persistence,
    command: view,
  };
  reporter.emit(outcome);
  return outcome;
}

function elsewhereMessage(who: string, elsewhere: readonly WritesByBranch[], branchId: string, sessionId: string): string {
  const places = elsewhere
    .map((w) =>
      w.branchId === null
        ? `${w.items} item(s) without a branch to session '${w.sessionId}'`
        : `${w.items} item(s) to branch '${w.branchId}' of session '${w.sessionId}'`,
    )
    .join(', ');
  return `${who} wrote ${places}, not to branch '${branchId}' of session '${sessionId}' it was given; they were left there.`;
}

function stderrNote(view: CommandEndView): string {
  if (view.stderrTail.length === 0) return '';
  return `\nstderr (last lines):\n${view.stderrTail.join('\n')}`;
}

function isUserMessage(item: AgentInputItem): boolean {
  return 'role' in item && item.role === 'user';
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
