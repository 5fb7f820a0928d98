/**
 * The graders' two errors. A spec that cannot become a grader (a typo, a model grader without a key, a rubric file
 * that cannot be read) is refused before any case runs, so a check never spends a run on a grader that cannot judge
 * it; the CLI answers it with exit code 2. A grader that could not judge one case (a command that hung, crashed or
 * printed garbage; a judge model that did not answer) makes that case an error, not a failure: nothing was learnt
 * about the agent.
 */

/** A `--grader` spec that names no grader we can build (docs/check.md, "Graders"). */
export class GraderSpecError extends Error {
  constructor(
    readonly spec: string,
    message: string,
  ) {
    super(message);
    this.name = 'GraderSpecError';
  }
}

/** A grader could not judge a case; the case is reported as an error with this message. */
export class GraderError extends Error {
  constructor(
    readonly grader: string,
    message: string,
  ) {
    super(message);
    this.name = 'GraderError';
  }
}
