/** The experiment store's errors: the file cannot be used as one, or a save or a comparison cannot be made. */
import { SessionError } from '../errors';

export type ExperimentStoreProblem =
  /** A file that is not an experiment store of ours (a session file, a review store, another program's database). */
  | 'not-experiment-store'
  /** An experiment store written by a newer version, in a format this one does not know. */
  | 'newer-format'
  /** An experiment name or a report that does not follow the rules (docs/check.md, "Experiments"). */
  | 'invalid'
  /** `--save NAME` where NAME is saved already, without `--force`. */
  | 'exists'
  /** An unknown experiment was asked for (`--baseline NAME`), or the store does not exist and was opened read-only. */
  | 'not-found';

export class ExperimentStoreError extends SessionError {
  override readonly pythonType = 'ValueError';
  constructor(
    readonly problem: ExperimentStoreProblem,
    message: string,
  ) {
    super(message);
  }
}
