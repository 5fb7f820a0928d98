/**
 * Review data against a session as it is now: a review whose turn still holds the content it was made on (the same
 * user message at that branch and turn) matches; one whose turn is gone or holds other content is **orphaned**, shown
 * as such and never dropped. The keys come from the decoded items (contentKey.ts), so a copied file, an imported
 * session or a server store with the same conversation matches the same reviews.
 */
import { contentKey } from './contentKey';
import type { TurnRef } from './reviewTypes';

/** A turn of the session now: its number and the content key of its user message (null: the message is unreadable). */
export interface TurnNow {
  branchId: string;
  turn: number;
  turnKey: string | null;
}

/** The key of a turn from its user message item. */
export function turnKeyOf(userMessage: unknown): string {
  return contentKey(userMessage);
}

export interface Matched<R extends TurnRef> {
  /** By `${branchId} ${turn}`. */
  matched: Map<string, R>;
  /** Reviews of turns that are gone or hold other content now. */
  orphaned: R[];
}

export const turnSlot = (branchId: string, turn: number): string => `${branchId} ${turn}`;

/** Splits reviews into those of turns that still hold their content and the orphaned rest. */
export function matchReviews<R extends TurnRef>(reviews: readonly R[], turns: readonly TurnNow[]): Matched<R> {
  const keys = new Map(turns.map((t) => [turnSlot(t.branchId, t.turn), t.turnKey]));
  const matched = new Map<string, R>();
  const orphaned: R[] = [];
  for (const r of reviews) {
    const slot = turnSlot(r.branchId, r.turn);
    if (keys.get(slot) === r.turnKey) matched.set(slot, r);
    else orphaned.push(r);
  }
  return { matched, orphaned };
}
