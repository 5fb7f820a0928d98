/**
 * The compare view's part of the protocol: its own requests map (a compare panel answers only these), carried by the
 * envelope every view shares (`request`/`response`, `session/didChange`; envelope.ts), so one messenger and one
 * request checker serve both views.
 */
import type { CompareRowsView, CompareSummaryView, CompareVerdictsView, CompareView } from './compareViews';
import type { PairwiseOutcome } from '../reviewVocabulary';

export interface CompareRequests {
  /** The columns and where the rows start; re-requested after a change notice. */
  'compare/get': { params: Record<string, never>; result: CompareView };
  /** Each column's usage, cost and tools (asked for once the first rows are drawn). */
  'compare/summary': { params: Record<string, never>; result: CompareSummaryView };
  /** Rows `offset`… (at most `limit`; the host clamps it to `MAX_COMPARE_ROWS`). */
  'compare/rows': { params: { offset: number; limit: number }; result: CompareRowsView };
  /** Opens a column's turn in the conversation view. */
  'compare/openTurn': { params: { column: number; turn: number }; result: null };
  /** The pairwise verdicts on the comparison's rows and each column's tally against the baseline. */
  'compare/verdicts': { params: Record<string, never>; result: CompareVerdictsView };
  /**
   * Sets the verdict on one row between the baseline and `column` (`outcome` null removes it); answers with all of them.
   * `left` means the baseline's answer was better.
   */
  'compare/verdict': {
    params: { column: number; turn: number; outcome: PairwiseOutcome | null; reason: string };
    result: CompareVerdictsView;
  };
  /** Asks for another branch to compare column `column` with (a quick pick in the host); false when dismissed. */
  'compare/pickBranch': { params: { column: number }; result: { changed: boolean } };
}
export type CompareMethod = keyof CompareRequests;

/** Rows per `compare/rows` request at most: a row reads one turn's items per column. */
export const MAX_COMPARE_ROWS = 50;
/** Columns a comparison can have: the original and up to four retries. */
export const MAX_COMPARE_COLUMNS = 5;
