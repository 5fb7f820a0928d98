/** The review store's errors: the file cannot be used as one, or what was asked for or imported is not valid. */
import { SessionError } from '../errors';

export type ReviewStoreProblem =
  /** A file that is not a review store of ours (a session file, another program's database). */
  | 'not-review-store'
  /** A review store written by a newer version, in a format this one does not know. */
  | 'newer-format'
  /** A verdict, tag, note or imported file that does not follow the review data's rules. */
  | 'invalid'
  /** An unknown review was asked for. */
  | 'not-found';

export class ReviewStoreError extends SessionError {
  override readonly pythonType = 'ValueError';
  constructor(
    readonly problem: ReviewStoreProblem,
    message: string,
  ) {
    super(message);
  }
}
