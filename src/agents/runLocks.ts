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

/**
 * The branches runs of this process wrote to, with when they ran, so that an agent command's check of where it wrote
 * (docs/agent-command.md §3) does not count what our other runs wrote meanwhile: *Retry with Several Models* runs
 * several at once in one session, each on its own branch. Ended runs are kept for a while (bounded).
 */
interface RunSpan {
  key: string;
  branchId: string;
  started: number;
  ended?: number;
}
const spans: RunSpan[] = [];
const MAX_ENDED_SPANS = 200;

function sessionKey(dbPath: string, sessionId: string): string {
  return `${resolve(dbPath)}\u0000${sessionId}`;
}

/** Notes that a run writes to `branchId` from now on; call the result when it has ended. */
export function noteRunBranch(dbPath: string, sessionId: string, branchId: string): () => void {
  const span: RunSpan = { key: sessionKey(dbPath, sessionId), branchId, started: Date.now() };
  spans.push(span);
  return () => {
    span.ended = Date.now();
    const ended = spans.filter((s) => s.ended !== undefined);
    if (ended.length > MAX_ENDED_SPANS) spans.splice(spans.indexOf(ended[0] as RunSpan), 1);
  };
}

/** The branches of the session that runs of this process wrote to at some time since `since`. */
export function branchesOfRunsSince(dbPath: string, sessionId: string, since: number): Set<string> {
  const key = sessionKey(dbPath, sessionId);
  return new Set(spans.filter((s) => s.key === key && (s.ended === undefined || s.ended >= since)).map((s) => s.branchId));
}
