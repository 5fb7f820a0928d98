/**
 * Runs in flight, by database, session and branch, for every kind of run (the SDK runner's and agent commands'):
 * two runs on one branch would interleave their turns.
 */
import { resolve } from 'node:path';

const inFlight = new Set<string>();

/** The lock key of a run; a fork without a name gets a new id, so nothing else can be in flight on it. */
export function runLockKey(args: { dbPath: string; sessionId: string; branchId: string; runId: string; unnamedFork: boolean }): string {
  return args.unnamedFork ? `fork\u0000${args.runId}` : `${resolve(args.dbPath)}\u0000${args.sessionId}\u0000${args.branchId}`;
}

/** Takes the lock; false when a run already holds it. */
export function takeRunLock(key: string): boolean {
  if (inFlight.has(key)) return false;
  inFlight.add(key);
  return true;
}

export function releaseRunLock(key: string): void {
  inFlight.delete(key);
}

export function busyMessage(branchId: string, sessionId: string): string {
  return `A run is already in progress on branch '${branchId}' of session '${sessionId}'. Stop it or wait for it to finish.`;
}
