/**
 * Runs in flight, by database, session and branch, for every kind of run (the SDK runner's and agent commands'):
 * two runs on one branch would interleave their turns.
 */
import { resolve } from 'node:path';
import type { RunOutcome } from '../shared/protocol/runEvents';
import type { RunReporter } from './runReporter';

const inFlight = new Set<string>();

/** The lock key of a run; a fork without a name gets a new id, so nothing else can be in flight on it. */
function runLockKey(args: { dbPath: string; sessionId: string; branchId: string; runId: string; unnamedFork: boolean }): string {
  return args.unnamedFork ? `fork\u0000${args.runId}` : `${resolve(args.dbPath)}\u0000${args.sessionId}\u0000${args.branchId}`;
}

/** Takes the lock; false when a run already holds it. */
function takeRunLock(key: string): boolean {
  if (inFlight.has(key)) return false;
  inFlight.add(key);
  return true;
}

function releaseRunLock(key: string): void {
  inFlight.delete(key);
}

function busyMessage(branchId: string, sessionId: string): string {
  return `A run is already in progress on branch '${branchId}' of session '${sessionId}'. Stop it or wait for it to finish.`;
}

/**
 * Runs `run` holding the lock of the branch the run writes to (the fork's name when it has one), or fails early,
 * writing nothing, when another run holds it. Every kind of run takes its lock here, so they exclude each other.
 */
export async function withRunLock(
  options: { dbPath: string; sessionId: string; fork?: { name?: string } },
  reporter: RunReporter,
  run: () => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const key = runLockKey({
    dbPath: options.dbPath,
    sessionId: options.sessionId,
    branchId: reporter.branchId,
    runId: reporter.runId,
    unnamedFork: !!options.fork && !options.fork.name,
  });
  if (!takeRunLock(key)) return reporter.failEarly('other', busyMessage(reporter.branchId, options.sessionId));
  try {
    return await run();
  } finally {
    releaseRunLock(key);
  }
}
