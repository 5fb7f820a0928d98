/**
 * The typed errors of export and import. A malformed file names where it is wrong (the JSONL line, or the JSON path
 * such as `$.messages[3].message_data`); in every case nothing was written.
 */
import { SessionError } from '../errors';

/** What went wrong, for callers that act on it (the CLI's exit codes, the extension's messages). */
export type TransferProblem =
  /** The file is not a valid export: bad JSON, a wrong shape, an unknown format or version. */
  | 'malformed'
  /** The session id to import into is already used in the target database. */
  | 'session-exists'
  /** The target database has no session tables (or no structure tables for a branched session); pass createTables. */
  | 'missing-tables'
  /** The session or branch to export does not exist. */
  | 'not-found'
  /** The caller's AbortSignal fired; nothing was written (import) or the output is incomplete (export). */
  | 'cancelled';

export class TransferError extends SessionError {
  constructor(
    readonly problem: TransferProblem,
    message: string,
    /** For `malformed`: the 1-based line of a JSONL file, or undefined. */
    readonly line?: number,
    /** For `malformed`: the JSON path of the bad value (`$.structure[2].branch_id`), or undefined. */
    readonly jsonPath?: string,
  ) {
    super(message);
  }
}

/** Throws `cancelled` when `signal` has fired. */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new TransferError('cancelled', 'Cancelled.');
}
