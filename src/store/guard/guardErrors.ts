/** The history guard store's errors: the file cannot be used as one, or what a caller asked for is not there. */
import { SessionError } from '../errors';

export type HistoryGuardProblem =
  /** A file that is not a history guard store of ours (a session file, another program's database). */
  | 'not-guard-store'
  /** A guard store written by a newer version, in a format this one does not know. */
  | 'newer-format'
  /** The store does not exist and was opened read-only. */
  | 'not-found'
  /** The store's folder (or the file) cannot be written: the guard is off until another place is chosen. */
  | 'read-only'
  /** A layer or item that is not in the store (another store, or removed since). */
  | 'unknown-layer'
  /** An argument that breaks the store's rules (an empty id, an item that is not text, a bound passed). */
  | 'invalid';

export class HistoryGuardError extends SessionError {
  override readonly pythonType = 'ValueError';
  constructor(
    readonly problem: HistoryGuardProblem,
    message: string,
  ) {
    super(message);
  }
}
