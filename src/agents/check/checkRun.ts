/**
 * Running a check (docs/check.md): each case re-run as a what-if of its turn through the user's agent command or URL
 * (../command/commandRun.ts, with the recorded tool results replayed by default), in scratch storage unless the
 * branches are kept (scratchStore.ts), graded by every grader, and reported as soon as it finishes. At most
 * `concurrency` cases run at once, and of a finished case only its `CaseRun` is kept (never its run's events), so
 * memory grows with the concurrency, not with the number of cases. Aborting stops every running case (their runs are
 * stopped as a Stop stops them) and starts no other; what finished is kept.
 */
import { performance } from 'node:perf_hooks';
import { runCommandOnBranch, type CommandAgent, type CommandRunOptions } from '../command/commandRun';
import { useLauncherThread } from '../command/launcher';
import { IN_THREAD_STORE, type RunStore } from '../runSession';
import { redactDeep, redactSecrets, redactableSecrets } from '../apiKey';
import type { SessionDatabase } from '../../store/inspector/sessionDatabase';
import type { SessionReader } from '../../store/inspector/sessionReader';
import type { ToolsMode, ReplaySummary } from '../../shared/protocol/replay';
import type { RunOutcome } from '../../shared/protocol/runEvents';
import { errorMessage } from '../../shared/errorMessage';
import type { OrphanedCase } from './checkCases';
import type { CaseResult, CaseRun, CheckCase, CheckReport, Grader, GraderResult } from './checkTypes';
import { ScratchFolder, type ScratchCase } from './scratchStore';
import { trajectorySteps } from './trajectorySteps';
import { notRejectedResult, withRejectedRedacted } from './graders/notRejected';

/** Cases run at once by default, and the bounds of `--concurrency`. */
export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 32;

/**
 * The options of the agent runs the check passes through (the CLI's environment and timeout; tests' grace; the
 * extension's `store`, so the runs' sessions live in its store worker, off the host's thread).
 */
export type CaseRunPassThrough = Pick<CommandRunOptions, 'env' | 'graceMs' | 'apiKey' | 'timeoutMs' | 'model' | 'maxEventChars' | 'store'>;

/** One case's run as the check asks for it: a what-if of the case's turn, where the check says (command options). */
export type CaseRunRequest = Omit<CommandRunOptions, 'agent'>;

/**
 * An agent the check does not start itself: the extension's built-in agent (the `@openai/agents` runner, which the
 * check's engine does not load, so the CLI bundles no agent SDK). `run` runs one case as asked — the scratch file, the
 * fork, the input, the tools mode, `store` (the scratch file's sessions: no syncs), the signal — and resolves with
 * its outcome; `onStored` may go unheard (the check then reads the new turn back).
 */
export interface RunnerAgent {
  kind: 'runner';
  /** Shown in the report and the log. */
  name: string;
  run(request: CaseRunRequest): Promise<RunOutcome>;
}

/** The agent a check re-runs the cases through. */
export type CheckAgent = CommandAgent | RunnerAgent;

export interface CheckRunOptions {
  /** The user's session file (read for the scratch copies; written only with `keepBranches`). */
  file: string;
  /**
   * The user's file opened read-only (the scratch copies' source; the kept branches' names). Its pages may come as
   * promises: the extension reads them through its store worker.
   */
  db: Pick<SessionReader, 'getItemsPage'> & Pick<SessionDatabase, 'usedBranchIds' | 'tables'>;
  cases: readonly CheckCase[];
  /** Reported first, as results of their own (never run). */
  orphaned?: readonly OrphanedCase[];
  agent: CheckAgent;
  graders: readonly Grader[];
  tools?: { mode?: ToolsMode; nameOnly?: readonly string[] };
  /** 1…32; default 4. */
  concurrency?: number;
  /** Run each case on a new branch `check-<n>` of the user's file (kept), instead of in scratch storage. */
  keepBranches?: boolean;
  /** Where the scratch folder goes (default: the system's temporary folder). */
  scratchParent?: string;
  run?: CaseRunPassThrough;
  signal?: AbortSignal;
  /** Each case's result as it finishes (orphaned cases first). */
  onResult?: (result: CaseResult) => void;
  /** The agents' stderr lines and problems, each prefixed with its case. */
  log?: (line: string) => void;
}

export interface CheckOutcome {
  /** The finished cases, in case order (orphaned cases first). */
  report: CheckReport;
  /** Aborted before every case finished: the report holds those that did. */
  interrupted: boolean;
  /** Cases stopped while running or never started (0 unless interrupted). */
  unfinished: number;
}

/** Checks `concurrency`: a whole number 1…32 (a RangeError otherwise, for the caller to word as its own). */
export function checkConcurrency(n: number | undefined): number {
  if (n === undefined) return DEFAULT_CONCURRENCY;
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY)
    throw new RangeError(`concurrency is a whole number from 1 to ${MAX_CONCURRENCY}, got ${String(n)}`);
  return n;
}

/** Runs every case; resolves when all finished or, after an abort, when the running ones stopped. */
export async function runCheck(options: CheckRunOptions): Promise<CheckOutcome> {
  const concurrency = checkConcurrency(options.concurrency);
  const started = Date.now();
  const t0 = performance.now();
  const signal = options.signal;
  const orphaned: CaseResult[] = (options.orphaned ?? []).map((o) => ({
    case: o.case,
    status: 'orphaned',
    graders: [],
    run: null,
    error: o.reason,
    ms: 0,
  }));
  for (const r of orphaned) options.onResult?.(r);
  // Up to `concurrency` agents start at once: each spawn off the check's thread, which would otherwise wait for
  // every child's fork and exec (launcher.ts). The thread boots while the first cases are prepared.
  if (options.agent.kind === 'command' && options.cases.length > 0) useLauncherThread();
  const finished: (CaseResult | undefined)[] = new Array(options.cases.length);
  const scratch = options.keepBranches ? undefined : ScratchFolder.create(options.scratchParent, options.run?.store);
  const names = new BranchNames(options.db);
  let next = 0;
  try {
    const worker = async (): Promise<void> => {
      while (!signal?.aborted && next < options.cases.length) {
        const i = next++;
        const result = await runCase(options, options.cases[i]!, i + 1, scratch, names);
        if (result === null) continue;
        finished[i] = result;
        options.onResult?.(result);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, options.cases.length) }, worker));
  } finally {
    await scratch?.dispose();
  }
  const results = [...orphaned, ...finished.filter((r): r is CaseResult => r !== undefined)];
  const unfinished = orphaned.length + options.cases.length - results.length;
  const interrupted = (signal?.aborted ?? false) && unfinished > 0;
  return {
    report: {
      file: options.file,
      graders: options.graders.map((g) => g.name),
      results,
      startedAt: new Date(started).toISOString(),
      ms: Math.round(performance.now() - t0),
    },
    interrupted,
    unfinished,
  };
}

/** `check-<n>` names for kept branches: the lowest numbers no branch of the session has used, one per case. */
class BranchNames {
  private readonly used = new Map<string, Set<string>>();
  constructor(private readonly db: Pick<SessionDatabase, 'usedBranchIds'>) {}

  next(sessionId: string): string {
    let used = this.used.get(sessionId);
    if (!used) this.used.set(sessionId, (used = new Set(this.db.usedBranchIds(sessionId))));
    let n = 1;
    while (used.has(`check-${n}`)) n++;
    used.add(`check-${n}`);
    return `check-${n}`;
  }
}

/** One case: its run, then its graders. Null when the check was aborted before it finished. */
async function runCase(
  options: CheckRunOptions,
  c: CheckCase,
  slot: number,
  scratch: ScratchFolder | undefined,
  names: BranchNames,
): Promise<CaseResult | null> {
  const t0 = performance.now();
  const signal = options.signal;
  // The run's secrets (docs/agent-command.md §5): what the run stored, what the graders said and every error are
  // redacted with them before they reach the lines, the reports or the experiment store.
  const secrets = redactableSecrets([options.run?.apiKey, (options.run?.env ?? process.env).OPENAI_API_KEY]);
  // The case as its result holds it: its rejected answer (a bad turn's recorded text, which no report prints, but
  // `--json` prints the whole case) redacted as the run is; the same case otherwise (a re-run of it is the same case).
  const shown = withRejectedRedacted(c, (text) => redactSecrets(text, secrets));
  const error = (message: string, run: CaseRun | null = null, graders: GraderResult[] = []): CaseResult => ({
    case: shown,
    status: 'error',
    graders: redactDeep(graders, secrets),
    run,
    error: redactSecrets(message, secrets),
    ms: Math.round(performance.now() - t0),
  });
  let place: ScratchCase | undefined;
  try {
    let where: { dbPath: string; branchId: string; turn: number; forkName: string };
    if (scratch) {
      place = await scratch.prepare(options.db, c, slot, signal, options.file);
      where = { dbPath: place.dbPath, branchId: place.branchId, turn: place.turn, forkName: 'check' };
    } else where = { dbPath: options.file, branchId: c.branchId, turn: c.turn, forkName: names.next(c.sessionId) };

    let forkId: string | null = null;
    let stored: readonly unknown[] | undefined;
    const runStart = performance.now();
    const request: CaseRunRequest = {
      ...options.run,
      dbPath: where.dbPath,
      sessionId: c.sessionId,
      branchId: where.branchId,
      fork: { fromTurn: where.turn, name: where.forkName },
      ...(place ? { store: place.store } : { tables: userTables(options.db) }),
      input: c.input,
      tools: { mode: options.tools?.mode ?? 'replay', nameOnly: [...(options.tools?.nameOnly ?? [])] },
      signal,
      onEvent: (e) => {
        if (e.kind === 'run/started') forkId = e.branchId;
      },
      log: (line) => options.log?.(`${c.id}: ${line}`),
      onStored: (items) => (stored = items),
    };
    const agent = options.agent;
    const outcome: RunOutcome = agent.kind === 'runner' ? await agent.run(request) : await runCommandOnBranch({ ...request, agent });
    const ms = Math.round(performance.now() - runStart);
    if (signal?.aborted) return null;
    if (outcome.kind === 'run/failed') return error(outcome.message);
    const trajectory =
      stored !== undefined && forkId !== null
        ? trajectoryOf(stored)
        : await writtenTrajectory(
            place?.store ?? options.run?.store ?? IN_THREAD_STORE,
            where.dbPath,
            c.sessionId,
            forkId,
            outcome.written.turn,
            scratch ? undefined : options.db,
          );
    // What the run wrote is read back from the file, and a key the agent put in its answer or its calls' arguments
    // would go on to the graders' reasons, the lines, the JUnit and Markdown reports and the experiment store: the
    // run is redacted once, here, as the text it streamed was (the same secrets as the run's: docs/agent-command.md §5).
    const run: CaseRun = redactDeep(
      {
        answer: outcome.finalOutput,
        trajectory,
        usage: outcome.usage,
        ms,
        replay: outcome.replay ? asRecordedOn(outcome.replay, c, !!scratch) : null,
        branchId: scratch ? null : forkId,
      },
      secrets,
    );
    // A run that stored no answer (its turn only the user message, or calls and no reply) gave nothing to judge:
    // a grader of the calls alone would pass it on a turn without calls. Unless the recorded turn itself ended
    // without an answer (expected answer null: a turn that ended on a call), it is an error, whatever the graders.
    if (run.answer.trim() === '' && c.expected.answer !== null)
      return error('The agent wrote no answer: its turn holds no assistant message with text (nothing to grade).', run);
    // A bad turn's run that gives again the answer reviewed as bad fails, whatever the graders (notRejected.ts): a
    // grader of the calls alone would pass an agent that was never fixed. The graders are not asked: nothing they say
    // could pass it (and a judge's call would be spent for nothing). Both texts are redacted alike, so they compare.
    // A run that does not repeat it has the rule's pass first among its results: a bad turn's case expects no calls,
    // so the trajectory graders give it none, and by `trajectory` alone this is all that judged it.
    const rule = notRejectedResult(shown, run.answer);
    if (rule && !rule.pass)
      return { case: shown, status: 'fail', graders: [rule], run, error: null, ms: Math.round(performance.now() - t0) };
    const graders: GraderResult[] = rule ? [rule] : [];
    for (const g of options.graders) {
      try {
        // Each grader redacts what it says before cutting it to a reason; this is the last line of defence. A grader
        // that does not judge the case (a trajectory grader on a bad turn's) gives no result.
        const result = await g.grade(c, run, signal ?? new AbortController().signal);
        if (result !== null) graders.push(redactDeep(result, secrets));
      } catch (err) {
        if (signal?.aborted) return null;
        return error(`grader ${g.name}: ${errorMessage(err)}`, run, graders);
      }
      if (signal?.aborted) return null;
    }
    // A case nothing judged (a bad turn's case whose corrected message held no text to compare, graded by the
    // trajectory graders alone) must not pass: nothing was learnt about the agent.
    if (graders.length === 0) return error(noJudgement(c, options.graders), run);
    return {
      case: shown,
      status: graders.every((g) => g.pass) ? 'pass' : 'fail',
      graders,
      run,
      error: null,
      ms: Math.round(performance.now() - t0),
    };
  } catch (err) {
    if (signal?.aborted) return null;
    return error(errorMessage(err));
  } finally {
    if (place) await scratch?.discard(place);
  }
}

/** The error of a case that no grader judged, with why. */
function noJudgement(c: CheckCase, graders: readonly Grader[]): string {
  if (graders.length === 0) return 'No grader judged this case: none was given.';
  if (c.expected.trajectory === null)
    return (
      `No grader judged this case: a bad turn's case expects no calls (its recorded ones were part of the answer ` +
      `rejected), so ${graders.map((g) => g.name).join(', ')} gave it no result, and its corrected message holds no ` +
      `text for not-rejected to compare. Grade its answer too (answer:…, model, command:…).`
    );
  return `No grader judged this case: ${graders.map((g) => g.name).join(', ')} gave it no result.`;
}

/** The user's file's table names, so a kept branch's run writes where the file's sessions are. */
function userTables(db: Pick<SessionDatabase, 'tables'>): { sessions: string; messages: string } | undefined {
  const t = db.tables;
  return t.sessions === null ? undefined : { sessions: t.sessions, messages: t.messages };
}

/**
 * The new turn's calls with the outputs they got, from the run's items as stored: every call, hosted and MCP ones
 * too, as the case's expected trajectory is read (trajectorySteps.ts).
 */
function trajectoryOf(items: readonly unknown[]): CaseRun['trajectory'] {
  return trajectorySteps(items);
}

/**
 * The new turn's calls read back from the branch, when the run could not hand over what it stored (its
 * settling removed some of its items): what is graded is what is stored.
 */
async function writtenTrajectory(
  store: RunStore,
  dbPath: string,
  sessionId: string,
  branchId: string | null,
  turn: number | null,
  user: Pick<SessionDatabase, 'tables'> | undefined,
): Promise<CaseRun['trajectory']> {
  if (branchId === null || turn === null) return [];
  const tables = user ? userTables(user) : undefined;
  const session = await store.openSession({
    sessionId,
    dbPath,
    ...(tables ? { sessionsTable: tables.sessions, messagesTable: tables.messages } : {}),
    logger: { error: () => undefined, warn: () => undefined },
  });
  try {
    return trajectoryOf(await session.getTurnStoredItems(turn, branchId));
  } finally {
    await session.close();
  }
}

/** A scratch run's summary names the case's own branch and turn as its source (the scratch file's are nobody's). */
function asRecordedOn(summary: ReplaySummary, c: CheckCase, scratch: boolean): ReplaySummary {
  if (!scratch || summary.source === null) return summary;
  return { ...summary, source: { branchId: c.branchId, turn: c.turn } };
}
