/**
 * Turn verdicts for the conversation view (docs/reviews.md): a branch's reviews matched to its turns as they are now,
 * and a change to one turn's review. A turn is named by the branch that ran it (a shared turn's is its parent's, as
 * for the Timeline), and its key is read again from the session store, never taken from the view.
 */
import type { SessionReader } from '../../store/inspector/sessionReader';
import { turnKeyOf } from '../../store/reviews/reviewMatching';
import { DEFAULT_TAGS, type TurnReview, type TurnReviewChange } from '../../store/reviews/reviewTypes';
import type { WorkerReviewStore } from '../../store/worker/storeClient';
import type { BranchReviewsView, OrphanedReviewView, TurnReviewView } from '../../shared/protocol/reviewViews';
import { turnOrigin, type ForkFacts } from '../../shared/turnOrigin';
import { UserFacingError } from '../core/userError';
import * as l10n from '@vscode/l10n';

type ItemReader = Pick<SessionReader, 'getTurnItems'>;

/** The content key of a turn's user message, or null when the turn is gone or its message cannot be read. */
export async function turnKey(reader: ItemReader, sessionId: string, branchId: string, turn: number): Promise<string | null> {
  if (turn < 1) return null;
  const items = await reader.getTurnItems(sessionId, branchId, turn);
  const user = items.find((i) => !i.corrupt && (i.item as { role?: unknown }).role === 'user');
  return user && !user.corrupt ? turnKeyOf(user.item) : null;
}

export function reviewView(r: TurnReview): TurnReviewView {
  return {
    branchId: r.branchId,
    turn: r.turn,
    verdict: r.verdict,
    tags: r.tags,
    note: r.note,
    updatedMs: r.updatedMs,
    reviewer: r.reviewer ?? null,
  };
}

/**
 * The reviews that concern `branchId`'s turns (its own, and its shared turns' on the branches that ran them), each
 * checked against the turn's content now: matching ones by turn, the others orphaned with the reason.
 */
export async function branchReviews(
  reader: ItemReader,
  store: WorkerReviewStore,
  sessionId: string,
  branchId: string,
  branches: readonly ForkFacts[],
): Promise<BranchReviewsView> {
  const [all, inUse] = await Promise.all([store.call('turnReviews', sessionId), store.call('tagsInUse')]);
  const mine = all.filter((r) => turnOrigin(branches, branchId, r.turn) === r.branchId);
  const turns: TurnReviewView[] = [];
  const orphaned: OrphanedReviewView[] = [];
  const keys = new Map<string, Promise<string | null>>();
  for (const r of mine) {
    const slot = `${r.branchId} ${r.turn}`;
    let key = keys.get(slot);
    if (!key) keys.set(slot, (key = Promise.resolve(turnKey(reader, sessionId, r.branchId, r.turn)).catch(() => null)));
    const now = await key;
    if (now === r.turnKey) turns.push(reviewView(r));
    else orphaned.push({ ...reviewView(r), reason: now === null ? 'turn-gone' : 'content-changed' });
  }
  turns.sort((a, b) => a.turn - b.turn);
  return {
    branchId,
    turns,
    orphaned,
    tags: [...new Set([...DEFAULT_TAGS, ...inUse.map((t) => t.tag)])],
  };
}

/** Changes the review of `turn` on `branchId` (the branch that ran it); null when the change left it empty. */
export async function setTurnReview(
  reader: ItemReader,
  store: WorkerReviewStore,
  target: { sessionId: string; source: string },
  branchId: string,
  turn: number,
  change: TurnReviewChange,
): Promise<TurnReviewView | null> {
  const key = await turnKey(reader, target.sessionId, branchId, turn);
  if (key === null) throw new UserFacingError(l10n.t('Turn {0} of {1} has no readable user message to review.', turn, branchId));
  const saved = await store.call('setTurnReview', { sessionId: target.sessionId, branchId, turn, turnKey: key }, change, {
    source: target.source,
  });
  return saved ? reviewView(saved) : null;
}
