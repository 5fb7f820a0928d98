/**
 * Errors across the thread boundary. A worker's error reaches the host as data (`SerializedError`) and is rebuilt as
 * the same class, so the host's `instanceof SessionDatabaseError` checks, its `problem`s and `sqliteCodeOf` see what
 * they would have seen in-thread. The worker's stack is kept below the host's, since that is where it failed.
 */
import {
  BranchError,
  InvalidArgumentError,
  SessionClosedError,
  SessionDatabaseError,
  SessionError,
  TableOwnershipError,
  type SessionDatabaseProblem,
} from '../errors';
import { HistoryConflictError } from '../session/historyTransactions';
import { TransferError, type TransferProblem } from '../export/exportErrors';
import type { SerializedError } from './storeWorkerProtocol';
import { TraceInputError, TraceStoreError, type TraceInputProblem, type TraceStoreProblem } from '../traces/traceErrors';
import { ReviewStoreError, type ReviewStoreProblem } from '../reviews/reviewErrors';
import { ReplayStoreError, type ReplayStoreProblem } from '../replay/replayErrors';
import { HistoryGuardError, type HistoryGuardProblem } from '../guard/guardErrors';
import { OutputFileError, type OutputFileProblem } from '../files/outputFileError';

/**
 * The store worker stopped (a crash, out of memory, a native fault) while a request was in flight, or a handle opened
 * in a worker that has since stopped was used, or the worker stopped `MAX_WORKER_RESTARTS_IN_A_ROW` times in a row
 * and is not started again. A `SessionDatabaseError` (`io`), so whoever shows a file's errors shows this one too.
 * Made on the host (it never crosses the thread): the worker that would have sent it is gone.
 */
export class StoreWorkerStoppedError extends SessionDatabaseError {
  constructor(
    message: string,
    /** True when the client gave up restarting the worker (see `MAX_WORKER_RESTARTS_IN_A_ROW`). */
    readonly final = false,
  ) {
    super('io', message);
  }
}

/** The store's error classes by the name that crosses; subclasses before their base. */
const CLASSES = [
  ['TraceInputError', TraceInputError],
  ['TraceStoreError', TraceStoreError],
  ['ReviewStoreError', ReviewStoreError],
  ['ReplayStoreError', ReplayStoreError],
  ['HistoryGuardError', HistoryGuardError],
  ['OutputFileError', OutputFileError],
  ['TransferError', TransferError],
  ['HistoryConflictError', HistoryConflictError],
  ['SessionDatabaseError', SessionDatabaseError],
  ['SessionClosedError', SessionClosedError],
  ['BranchError', BranchError],
  ['TableOwnershipError', TableOwnershipError],
  ['InvalidArgumentError', InvalidArgumentError],
  ['SessionError', SessionError],
] as const;

export function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & { problem?: unknown; code?: unknown; errcode?: unknown; line?: unknown; jsonPath?: unknown };
  const known = CLASSES.find(([, cls]) => err instanceof cls);
  return {
    name: known ? known[0] : err.name,
    message: err.message,
    ...(typeof e.problem === 'string' ? { problem: e.problem } : {}),
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.errcode === 'number' ? { errcode: e.errcode } : {}),
    ...(typeof e.line === 'number' ? { line: e.line } : {}),
    ...(typeof e.jsonPath === 'string' ? { jsonPath: e.jsonPath } : {}),
    ...(err.stack ? { stack: err.stack } : {}),
  };
}

export function deserializeError(e: SerializedError): Error {
  const cls = CLASSES.find(([name]) => name === e.name)?.[1];
  let err: Error;
  if (cls === SessionDatabaseError) err = new SessionDatabaseError(e.problem as SessionDatabaseProblem, e.message);
  else if (cls === TransferError) err = new TransferError(e.problem as TransferProblem, e.message, e.line, e.jsonPath);
  else if (cls === SessionClosedError) err = new SessionClosedError();
  else if (cls === TraceInputError) err = new TraceInputError(e.problem as TraceInputProblem, e.message);
  else if (cls === TraceStoreError) err = new TraceStoreError(e.problem as TraceStoreProblem, e.message);
  else if (cls === ReviewStoreError) err = new ReviewStoreError(e.problem as ReviewStoreProblem, e.message);
  else if (cls === ReplayStoreError) err = new ReplayStoreError(e.problem as ReplayStoreProblem, e.message);
  else if (cls === HistoryGuardError) err = new HistoryGuardError(e.problem as HistoryGuardProblem, e.message);
  else if (cls === OutputFileError) err = new OutputFileError(e.problem as OutputFileProblem, e.message);
  else if (cls) err = new (cls as new (message: string) => Error)(e.message);
  else if (e.name === 'TypeError') err = new TypeError(e.message);
  else if (e.name === 'RangeError') err = new RangeError(e.message);
  else {
    err = new Error(e.message);
    // A driver error keeps its name (SqliteError) and codes, which sqliteCodeOf and describeDatabaseError read.
    err.name = e.name;
  }
  const fields = err as Error & { code?: string; errcode?: number };
  if (e.code !== undefined) fields.code = e.code;
  if (e.errcode !== undefined) fields.errcode = e.errcode;
  if (e.stack) err.stack = `${err.stack ?? ''}\n    --- in the store worker ---\n${e.stack}`;
  return err;
}
