/** The replay marks store's errors: the file cannot be used as one, or what a caller asked to record is not valid. */
import { SessionError } from '../errors';

export type ReplayStoreProblem =
  /** A file that is not a replay marks store of ours (a session file, another program's database). */
  | 'not-replay-store'
  /** A replay marks store written by a newer version, in a format this one does not know. */
  | 'newer-format'
  /** A run or mark that does not follow the store's rules (an empty id, too many marks, an unknown outcome). */
  | 'invalid'
  /** The store does not exist and was opened read-only. */
  | 'not-found';

export class ReplayStoreError extends SessionError {
  override readonly pythonType = 'ValueError';
  constructor(
    readonly problem: ReplayStoreProblem,
    message: string,
  ) {
    super(message);
  }
}
