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
  const has = keyTest(set.keys);
  return set.mode === 'only' ? has : (s, b, t) => !has(s, b, t);
}

/**
 * Whether a turn's key is among `keys`, without making the key: the scan asks once per row it tests (100,000 times for
 * `reviewed:no` on the bench's file A), and joining three strings to look one up was a twelfth of that scan. The keys
 * are split once into session, branch and turn; a key that does not split into three (an id holding U+0000, which
 * `turnSetKey` cannot tell apart) makes the lookup by whole keys again.
 */
function keyTest(keys: readonly string[]): (sessionId: string, branchId: string, turn: number) => boolean {
  const bySession = new Map<string, Map<string, Set<string>>>();
  for (const key of keys) {
    const parts = key.split('\u0000');
    if (parts.length !== 3) {
      const whole = new Set(keys);
      return (s, b, t) => whole.has(turnSetKey(s, b, t));
    }
    const [s, b, t] = parts as [string, string, string];
    let byBranch = bySession.get(s);
    if (!byBranch) bySession.set(s, (byBranch = new Map()));
    let turns = byBranch.get(b);
    if (!turns) byBranch.set(b, (turns = new Set()));
    turns.add(t);
  }
  // No key holds U+0000 in a part, so a session or branch id holding one is in no key, as in the whole keys' set.
  return (s, b, t) => bySession.get(s)?.get(b)?.has(String(t)) ?? false;
}
