/**
 * Review data as the views show it (docs/reviews.md): a branch's turn verdicts, matched to its turns as they are now.
 * Built by src/extension/reviews/turnReviews.ts. Notes and tags are user text: render them as text.
 */
import type { Verdict } from '../reviewVocabulary';

/** One turn's review: the turn by the branch that ran it (a shared turn's is its parent's). */
export interface TurnReviewView {
  branchId: string;
  turn: number;
  verdict: Verdict | null;
  tags: string[];
  note: string;
  updatedMs: number;
  reviewer: string | null;
}

/** A review whose turn is gone or holds other content now: shown, never dropped. */
export interface OrphanedReviewView extends TurnReviewView {
  /** Why it no longer matches. */
  reason: 'turn-gone' | 'content-changed';
}

/** The answer an assistant item should have given: the item by its place in its turn (the same on every copy). */
export interface CorrectionView {
  /** The branch that ran the turn. */
  branchId: string;
  turn: number;
  /** The item's index among the turn's items (`turn/items`), 0 being the user's message. */
  itemIndex: number;
  text: string;
  updatedMs: number;
}

/** The reviews of a branch's turns (`reviews/get`), and the tags to offer. */
export interface BranchReviewsView {
  branchId: string;
  turns: TurnReviewView[];
  orphaned: OrphanedReviewView[];
  corrections: CorrectionView[];
  /** Corrections whose turn or item is gone or changed: kept, not shown on an item. */
  orphanedCorrections: number;
  /** The default tags, then the others in use, most used first. */
  tags: string[];
}

/** A change to one turn's review (`review/set`): only the fields given change. */
export interface TurnReviewChangeView {
  verdict?: Verdict | null;
  addTags?: string[];
  removeTags?: string[];
  note?: string;
}
