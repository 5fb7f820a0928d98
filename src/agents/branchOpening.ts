/**
 * The first step of every kind of run, before anything is written: the session opened on the branch the run
 * continues from, and the fork made when the run starts a new branch. Shared by the SDK runner's runs
 * (runPreparation.ts) and agent commands (command/commandRun.ts), so a run that cannot start fails the same way and
 * says that nothing was written. Loads no agent SDK: how an error is classified is the caller's.
 */
import { existsSync } from 'node:fs';
import { BranchError } from '../store/errors';
import { checkNewBranchName } from '../store/session/argumentChecks';
import type { TableNames } from '../store/format/schema';
import type { GuardedSessionOptions } from '../store/guard/guardStore';
import { problemLogger } from './runPersistence';
import type { RunOutcome } from '../shared/protocol/runEvents';
import type { ClassifiedFailure } from './storeFailures';
import type { RunReporter } from './runReporter';
import { IN_THREAD_STORE, type RunSession, type RunSessionOptions, type RunStore } from './runSession';

export interface BranchOpeningOptions {
  dbPath: string;
  sessionId: string;
  fork?: { fromTurn: number; name?: string };
  tables?: TableNames;
  busyTimeoutMs?: number;
  /** Create the session tables in a new file (default false: the file must exist). */
  createTables?: boolean;
  store?: RunStore;
  signal?: AbortSignal;
  /** Read the stored items of the forked turn with the fork (what a re-run replays: replay/replayTable.ts). */
  readRecordedTurn?: boolean;
  /** Where the session records what our compaction replaces (docs/history-guard.md); unset: nowhere. */
  guardStorePath?: string;
}

/** The source turn of a fork, as stored when the fork was made. */
export interface RecordedTurn {
  branchId: string;
  turn: number;
  items: unknown[];
}

/** A session on the run's branch: the caller closes `session` (and awaits it). */
export interface OpenedBranch {
  session: RunSession;
  /** What the store logged instead of throwing (`storeRunUsage`), to say the usage was not stored. */
  storeProblems: string[];
  /**
   * A fork at turn 1 left to the agent to make (`agentMakesTurnOneFork`), or null. It copies nothing, and no SDK can
   * switch to a branch without rows, so a writer of its own makes it with its first message (docs/agent-command.md §3).
   */
  agentMakesFork: { fromBranchId: string; fromTurn: number } | null;
  /** With `readRecordedTurn` and a fork: the turn the fork re-runs, read in the fork's transaction. */
  recordedTurn: RecordedTurn | null;
}

/**
 * Opens the session on the source branch and makes the fork, if any (the reporter's branch becomes the fork); else
 * the outcome of a run that failed before writing anything (already reported). `classify` sorts an error of the store
 * into the failure shown; `agentMakesTurnOneFork` leaves a fork at turn 1 to the agent, once its turn is checked.
 */
export async function openOnBranch(
  options: BranchOpeningOptions,
  reporter: RunReporter,
  how: { classify: (err: unknown) => ClassifiedFailure; agentMakesTurnOneFork: boolean },
): Promise<OpenedBranch | RunOutcome> {
  if (options.signal?.aborted) return reporter.failEarly('cancelled', 'The run was cancelled before it started.');
  if (!options.createTables && !existsSync(options.dbPath)) return reporter.failEarly('other', `${options.dbPath} does not exist.`);
  const storeProblems: string[] = [];
  const logger = problemLogger(storeProblems, (line) => reporter.log(line));
  let session: RunSession;
  try {
    // The session class takes `guardStorePath` as it is, in this thread or the store worker (plain data).
    const sessionOptions: RunSessionOptions & GuardedSessionOptions = {
      sessionId: options.sessionId,
      dbPath: options.dbPath,
      sessionsTable: options.tables?.sessions,
      messagesTable: options.tables?.messages,
      busyTimeoutMs: options.busyTimeoutMs,
      createTables: options.createTables ?? false,
      ...(options.guardStorePath !== undefined ? { guardStorePath: options.guardStorePath } : {}),
      logger,
    };
    session = await (options.store ?? IN_THREAD_STORE).openSession(sessionOptions);
  } catch (err) {
    const c = how.classify(err);
    return reporter.failEarly(c.failure, c.message, c.status);
  }
  try {
    return { session, storeProblems, ...(await makeFork(session, options, reporter, how.agentMakesTurnOneFork)) };
  } catch (err) {
    await session.close();
    const c = how.classify(err);
    const hint =
      err instanceof BranchError && /does not exist/.test(c.message) && reporter.sourceBranch !== 'main'
        ? '. A branch made from turn 1 has no items until its first message is stored; start it with the run (fork) instead.'
        : '';
    return reporter.failEarly(c.failure, c.message + hint, c.status);
  }
}

/** Moves to the source branch and makes the fork (or checks the one the agent makes); throws the store's errors. */
async function makeFork(
  session: RunSession,
  options: BranchOpeningOptions,
  reporter: RunReporter,
  agentMakesTurnOneFork: boolean,
): Promise<Pick<OpenedBranch, 'agentMakesFork' | 'recordedTurn'>> {
  if ((await session.getCurrentBranchId()) !== reporter.sourceBranch) await session.switchToBranch(reporter.sourceBranch);
  const { fork } = options;
  if (!fork) return { agentMakesFork: null, recordedTurn: null };
  const source = reporter.sourceBranch;
  if (!agentMakesTurnOneFork || fork.fromTurn > 1) {
    if (options.readRecordedTurn) {
      const made = await session.forkWithTurnItems(fork.fromTurn, fork.name ?? null);
      reporter.forkMade(made.branchId);
      return { agentMakesFork: null, recordedTurn: { branchId: source, turn: fork.fromTurn, items: made.turnItems } };
    }
    reporter.forkMade(await session.createBranchFromTurn(fork.fromTurn, fork.name ?? null));
    return { agentMakesFork: null, recordedTurn: null };
  }
  // The store's own checks and messages, as `createBranchFromTurn` would make them.
  const turns = await session.getConversationTurns();
  if (!turns.some((t) => t.turn === fork.fromTurn))
    throw new BranchError(`Turn ${fork.fromTurn} does not contain a user message in branch '${reporter.sourceBranch}'`);
  const name = await agentForkName(session, fork.name);
  // Nothing is written here (the agent makes the fork), so one read is the snapshot the agent's fork starts from.
  const recordedTurn = options.readRecordedTurn
    ? { branchId: source, turn: fork.fromTurn, items: await session.getTurnStoredItems(fork.fromTurn, source) }
    : null;
  reporter.forkMade(name);
  return { agentMakesFork: { fromBranchId: source, fromTurn: fork.fromTurn }, recordedTurn };
}

/**
 * The name of a fork the agent makes, checked before it starts as the store checks a name it is given: the agent's
 * `create_branch_from_turn` would refuse a blank or used one only once it ran, and the settlement, finding a branch of
 * that name, would then take it for the run's fork and delete it (an existing branch, `main` at worst). Without a
 * name, the store's auto id (`branch_from_turn_1_<time>`, then `_2`, …) that is free.
 */
async function agentForkName(session: RunSession, given: string | undefined): Promise<string> {
  if (given !== undefined) {
    checkNewBranchName(given);
    if (await session.isBranchIdUsed(given)) throw new BranchError(`Branch ID '${given}' has already been used. Choose a new branch ID.`);
    return given;
  }
  const base = `branch_from_turn_1_${Math.floor(Date.now() / 1000)}`;
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}_${n}`;
    if (!(await session.isBranchIdUsed(candidate))) return candidate;
  }
}
