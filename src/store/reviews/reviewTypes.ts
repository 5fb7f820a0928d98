/**
 * Review data (docs/reviews.md): verdicts on turns, pairwise verdicts on compared turns, corrections. Plain JSON, so
 * the same shapes are the store's rows, the worker's answers and the export file's records.
 */

export { VERDICTS, DEFAULT_TAGS, PAIRWISE_OUTCOMES, type Verdict, type PairwiseOutcome } from '../../shared/reviewVocabulary';
import type { PairwiseOutcome, Verdict } from '../../shared/reviewVocabulary';

/** Limits on what one review holds (the store refuses more with a clear error). */
export const REVIEW_LIMITS = { noteChars: 10_000, tags: 20, tagChars: 40, correctionChars: 100_000 } as const;

/** A turn as review data names it: where it is and what its user message holds (`contentKey`). */
export interface TurnRef {
  sessionId: string;
  branchId: string;
  turn: number;
  /** The content key of the turn's user message. */
  turnKey: string;
}

/** Who and where, kept with each review (informational: the review is found by its turn, not by these). */
export interface ReviewOrigin {
  /** The session store it was made on (a file name, a server address without its password). */
  source?: string | null;
  reviewer?: string | null;
}

export interface TurnReview extends TurnRef, ReviewOrigin {
  verdict: Verdict | null;
  /** Sorted, each once. */
  tags: string[];
  note: string;
  createdMs: number;
  updatedMs: number;
}

/** A change to a turn's review: only the fields given change (another window's change to the others is kept). */
export interface TurnReviewChange {
  verdict?: Verdict | null;
  /** Replaces the tags. */
  tags?: string[];
  addTags?: string[];
  removeTags?: string[];
  note?: string;
}

/** A pairwise verdict on one aligned turn of two branches of a session. */
export interface PairwiseReview extends ReviewOrigin {
  sessionId: string;
  leftBranch: string;
  rightBranch: string;
  turn: number;
  leftKey: string;
  rightKey: string;
  outcome: PairwiseOutcome;
  reason: string;
  /** The models that ran each side (a multi-model retry's), for the per-model summary. */
  leftModel: string | null;
  rightModel: string | null;
  createdMs: number;
  updatedMs: number;
}

/** The answer an assistant message should have given; the history itself is never rewritten. */
export interface Correction extends TurnRef, ReviewOrigin {
  /** The content key of the assistant item it corrects. */
  itemKey: string;
  text: string;
  createdMs: number;
  updatedMs: number;
}

/** Review data on its own, as exported and imported (`agent-sessions review export|import`). */
export interface ReviewData {
  format: 'agent-session-inspector/reviews';
  version: 1;
  turnReviews: TurnReview[];
  pairwise: PairwiseReview[];
  corrections: Correction[];
}
