/**
 * The review filters of a query (`is:good`, `is:bad`, `tag:`, `reviewed:`) as a set of turns. Review data lives in a
 * store of our own, not in the session store a scan reads, so whoever starts a search (the extension, the CLI) reads
 * the reviews and hands the scan the turns they allow; the scan then only looks the turn up.
 */
import type { TurnReview } from '../reviews/reviewTypes';
import type { ReviewQuery } from './searchQuery';

/** Turns a scan keeps (`only`) or leaves out (`except`), as `turnSetKey`s. Plain data: it crosses to the worker. */
export interface TurnSet {
  mode: 'only' | 'except';
  keys: string[];
}

/** A turn as the branch that ran it names it (a review's `branchId`, a hit's `branchId`). */
export function turnSetKey(sessionId: string, branchId: string, turn: number): string {
  return `${sessionId}\u0000${branchId}\u0000${turn}`;
}

type ReviewFacts = Pick<TurnReview, 'sessionId' | 'branchId' | 'turn' | 'verdict' | 'tags'>;

/** The turns `q` allows, given every turn review of the store searched. */
export function reviewTurnSet(q: ReviewQuery, reviews: readonly ReviewFacts[]): TurnSet {
  if (q.reviewed === false) return { mode: 'except', keys: reviews.map((r) => turnSetKey(r.sessionId, r.branchId, r.turn)) };
  const keep = reviews.filter(
    (r) =>
      (q.verdicts.length === 0 || (r.verdict !== null && q.verdicts.includes(r.verdict))) &&
      (q.tags.length === 0 || r.tags.some((t) => q.tags.includes(t))),
  );
  return { mode: 'only', keys: keep.map((r) => turnSetKey(r.sessionId, r.branchId, r.turn)) };
}

/** The test a scan makes: whether the turn is in the set (always, without one). */
export function turnFilter(set: TurnSet | undefined): (sessionId: string, branchId: string, turn: number) => boolean {
  if (!set) return () => true;
  const keys = new Set(set.keys);
  return set.mode === 'only' ? (s, b, t) => keys.has(turnSetKey(s, b, t)) : (s, b, t) => !keys.has(turnSetKey(s, b, t));
}
