/**
 * `not-rejected`: the check's own rule for a bad turn's case (docs/check.md, "Cases"). The case expects the
 * reviewer's correction, and no calls: the turn's recorded ones were part of the answer rejected, so the trajectory
 * graders give it no result. A check graded by the calls alone (`trajectory`) would then judge nothing of it, and
 * must not pass an agent that still gives the very answer the reviewer marked bad: a "fix" that was never made. So a
 * run whose answer repeats the rejected answer (the text of the assistant message the correction was made on) fails,
 * whatever graders were chosen, and one that does not passes this rule; either way its result is reported on every
 * bad turn's case that has a rejected answer, as one more grader result named `not-rejected`, first (so the lines,
 * the JUnit and Markdown reports, `--json`, the experiment store and the Check Results view all name it, and a bad
 * case graded by `trajectory` alone reads `not-rejected ✓`, never no result at all). It is no grader a spec can pick,
 * and only says whether the run repeated the answer, never quoting it.
 *
 * "Repeats" means the same text once both are put in `rejectedAnswerKey`'s form: Unicode NFC, lower case, every run
 * of whitespace (line breaks included) one space, trimmed. Punctuation and everything else count: it catches an
 * agent that gives the same words again, not one that says the same thing otherwise (a judge's work: `model`).
 */
import type { CheckCase, GraderResult } from '../checkTypes';
import { graderResult } from './graderResult';

/** The name the rule's result is reported under. */
export const NOT_REJECTED = 'not-rejected';

/** What the rule compares: NFC, lower case, whitespace runs as one space, no whitespace at the ends. */
export function rejectedAnswerKey(text: string): string {
  return text.normalize('NFC').toLowerCase().replace(/\s+/gu, ' ').trim();
}

/**
 * Whether `answer` repeats the rejected answer. Never for a case without one (a good turn's, or a bad turn whose
 * corrected message holds no text), nor for an empty answer: a run that wrote none is an error of its own.
 */
export function repeatsRejected(rejected: string | null | undefined, answer: string): boolean {
  if (rejected === null || rejected === undefined) return false;
  const key = rejectedAnswerKey(rejected);
  return key !== '' && key === rejectedAnswerKey(answer);
}

/** The failing result of a run that repeated the rejected answer. */
export function repeatedRejectedResult(): GraderResult {
  return graderResult(NOT_REJECTED, false, 0, 'repeats the answer reviewed as bad (the same text, ignoring case and whitespace)');
}

/** The passing result of a run that did not. */
export function keptRejectedResult(): GraderResult {
  return graderResult(NOT_REJECTED, true, 1, 'the answer differs from the one reviewed as bad');
}

/**
 * The rule's result for a run of `c` that answered `answer`: failing when it repeats the rejected answer, passing
 * otherwise; null for a case it does not apply to (no rejected answer: a good turn's case, a bad turn whose corrected
 * message holds no text, a case made by hand), and for an empty answer (a run that wrote none is an error of its own).
 */
export function notRejectedResult(c: CheckCase, answer: string): GraderResult | null {
  const rejected = c.expected.rejected;
  if (rejected === null || rejected === undefined || rejectedAnswerKey(rejected) === '' || answer.trim() === '') return null;
  return repeatsRejected(rejected, answer) ? repeatedRejectedResult() : keptRejectedResult();
}

/** `c` with its rejected answer passed through `redact` (the case itself when there is none, or nothing changed). */
export function withRejectedRedacted(c: CheckCase, redact: (text: string) => string): CheckCase {
  const rejected = c.expected.rejected;
  if (rejected === null || rejected === undefined) return c;
  const shown = redact(rejected);
  return shown === rejected ? c : { ...c, expected: { ...c.expected, rejected: shown } };
}
