/**
 * A check's totals, counted one way for every report: the CLI's closing line, the JUnit file's counts and the
 * Markdown summary's first line say the same numbers.
 */
import type { CaseResult } from '../checkTypes';

export interface CheckTotals {
  cases: number;
  passed: number;
  failed: number;
  errors: number;
  orphaned: number;
}

export function checkTotals(results: readonly CaseResult[]): CheckTotals {
  const count = (s: CaseResult['status']) => results.filter((r) => r.status === s).length;
  return { cases: results.length, passed: count('pass'), failed: count('fail'), errors: count('error'), orphaned: count('orphaned') };
}

/** `8 passed, 2 failed`, then `, 1 error(s)` and `, 1 orphaned` when there are any: the plain closing line. */
export function totalsLine(t: CheckTotals): string {
  let line = `${t.passed} passed, ${t.failed} failed`;
  if (t.errors > 0) line += `, ${t.errors} error${t.errors === 1 ? '' : 's'}`;
  if (t.orphaned > 0) line += `, ${t.orphaned} orphaned`;
  return line;
}

/**
 * Whether the check passed, as its exit code says: every case that ran passed, and at least one ran. A check whose
 * every case is orphaned passed nothing, so its reports must not read green either.
 */
export function checkPassed(t: CheckTotals): boolean {
  return t.failed === 0 && t.errors === 0 && t.passed > 0;
}

/** Whether no case ran at all (every case orphaned): a failed check with nothing failing in it. */
export function nothingRan(t: CheckTotals): boolean {
  return t.passed + t.failed + t.errors === 0;
}

/** What a report says of a check in which no case ran. */
export function nothingRanLine(t: CheckTotals): string {
  return `no case ran: ${t.orphaned === 1 ? 'the one case is' : `all ${t.orphaned} cases are`} orphaned (the reviewed turn is gone or changed)`;
}

/** The reasons a case did not pass, one per failing grader (`grader: reason`), or its error. */
export function caseReasons(r: CaseResult): string[] {
  if (r.status === 'error') return [r.error ?? 'error'];
  if (r.status === 'orphaned') return [r.error ?? 'the turn no longer exists, or now holds another message: not run'];
  return r.graders.filter((g) => !g.pass).map((g) => `${g.grader}: ${g.reason}`);
}

/** A check stopped before every case finished (Ctrl+C, a CI job's timeout): how many did, of how many. */
export interface Interruption {
  finished: number;
  total: number;
}

/** What a report says of an interrupted check, so a partial one never reads as the whole. */
export function interruptionLine(i: Interruption): string {
  const unfinished = i.total - i.finished;
  return `the check was interrupted: ${unfinished} of ${i.total} case${i.total === 1 ? '' : 's'} did not finish`;
}
