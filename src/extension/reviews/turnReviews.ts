/**
 * Turn verdicts for the conversation view (docs/reviews.md): a branch's reviews matched to its turns as they are now,
 * and a change to one turn's review. A turn is named by the branch that ran it (a shared turn's is its parent's, as
 * for the Timeline), and its key is read again from the session store, never taken from the view.
 */
import type { SessionReader } from '../../store/inspector/sessionReader';
import type { ItemEntry } from '../../store/inspector/inspectorTypes';
import { turnKeyOf } from '../../store/reviews/reviewMatching';
import { DEFAULT_TAGS, type TurnReview, type TurnReviewChange } from '../../store/reviews/reviewTypes';
import type { WorkerReviewStore } from '../../store/worker/storeClient';
import type { BranchReviewsView, CorrectionView, OrphanedReviewView, TurnReviewView } from '../../shared/protocol/reviewViews';
import { contentKey } from '../../store/reviews/contentKey';
import { turnOrigin, type ForkFacts } from '../../shared/turnOrigin';
import { UserFacingError } from '../core/userError';
import * as l10n from '@vscode/l10n';

type ItemReader = Pick<SessionReader, 'getTurnItems'>;
/** A reader that also reads many turns in one request (`SessionDatabase.getTurnItemsMany`, and the worker's). */
type ManyReader = { getTurnItemsMany(sessionId: string, branchId: string, turns: readonly number[]): MaybePromise<ItemEntry[][]> };
type MaybePromise<T> = T | Promise<T>;

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
 * checked against the turn's content now: matching ones by turn, the others orphaned with the reason; and the
 * corrections by their item's place in its turn (one whose turn or item changed is counted, not shown).
 */
export async function branchReviews(
  reader: ItemReader,
  store: WorkerReviewStore,
  sessionId: string,
  branchId: string,
  branches: readonly ForkFacts[],
): Promise<BranchReviewsView> {
  const [all, inUse, allCorrections] = await Promise.all([
    store.call('turnReviews', sessionId),
    store.call('tagsInUse'),
    store.call('corrections', sessionId),
  ]);
  const mine = <T extends { branchId: string; turn: number }>(list: T[]): T[] =>
    list.filter((r) => turnOrigin(branches, branchId, r.turn) === r.branchId);
  // Each reviewed turn read once: its items' content keys (the user message's is the turn's key), null when it is
  // gone. A reader that can read many turns at once (a file, through the store worker) gets one request per branch:
  // a review queue reloads these after every verdict, and a read per review made that the slow part of a step.
  type Now = { turnKey: string | null; itemKeys: string[] } | null;
  const keysOf = (items: readonly ItemEntry[]): Now => {
    const user = items.find((i) => !i.corrupt && (i.item as { role?: unknown }).role === 'user');
    return {
      turnKey: user && !user.corrupt ? turnKeyOf(user.item) : null,
      itemKeys: items.map((i) => (i.corrupt ? '' : contentKey(i.item))),
    };
  };
  const read = new Map<string, Promise<Now>>();
  const wanted = [...mine(all), ...mine(allCorrections)];
  const many = (reader as Partial<ManyReader>).getTurnItemsMany?.bind(reader);
  if (many) {
    const byBranch = new Map<string, Set<number>>();
    for (const r of wanted) {
      let set = byBranch.get(r.branchId);
      if (!set) byBranch.set(r.branchId, (set = new Set()));
      set.add(r.turn);
    }
    for (const [b, set] of byBranch) {
      const turns = [...set];
      const all = Promise.resolve(many(sessionId, b, turns)).then(
        (lists) => lists,
        () => null,
      );
      turns.forEach((turn, i) =>
        read.set(
          `${b} ${turn}`,
          all.then((lists) => (lists ? keysOf(lists[i] ?? []) : null)),
        ),
      );
    }
  }
  const turnNow = (b: string, turn: number): Promise<Now> => {
    const slot = `${b} ${turn}`;
    let got = read.get(slot);
    if (!got) {
      got = Promise.resolve(reader.getTurnItems(sessionId, b, turn)).then(keysOf, () => null);
      read.set(slot, got);
    }
    return got;
  };
  const turns: TurnReviewView[] = [];
  const orphaned: OrphanedReviewView[] = [];
  for (const r of mine(all)) {
    const now = await turnNow(r.branchId, r.turn);
    if (now?.turnKey === r.turnKey) turns.push(reviewView(r));
    else orphaned.push({ ...reviewView(r), reason: now?.turnKey ? 'content-changed' : 'turn-gone' });
  }
  turns.sort((a, b) => a.turn - b.turn);
  const corrections: CorrectionView[] = [];
  let orphanedCorrections = 0;
  for (const c of mine(allCorrections)) {
    const now = await turnNow(c.branchId, c.turn);
    const itemIndex = now && now.turnKey === c.turnKey ? now.itemKeys.indexOf(c.itemKey) : -1;
    if (itemIndex < 0) orphanedCorrections++;
    else corrections.push({ branchId: c.branchId, turn: c.turn, itemIndex, text: c.text, updatedMs: c.updatedMs });
  }
  return {
    branchId,
    turns,
    orphaned,
    corrections,
    orphanedCorrections,
    tags: [...new Set([...DEFAULT_TAGS, ...inUse.map((t) => t.tag)])],
  };
}

/**
 * Keeps (or, `text` null, removes) the answer the assistant message at `itemIndex` of `turn` on `branchId` (the branch
 * that ran it) should have given, keyed by the turn's and the item's content read from the store.
 */
export async function setCorrection(
  reader: ItemReader,
  store: WorkerReviewStore,
  target: { sessionId: string; source: string },
  branchId: string,
  turn: number,
  itemIndex: number,
  text: string | null,
): Promise<CorrectionView | null> {
  const items = await reader.getTurnItems(target.sessionId, branchId, turn);
  const user = items.find((i) => !i.corrupt && (i.item as { role?: unknown }).role === 'user');
  const item = items[itemIndex];
  if (!user || user.corrupt || !item || item.corrupt || (item.item as { role?: unknown }).role !== 'assistant')
    throw new UserFacingError(l10n.t('Item {0} of turn {1} is not an assistant message to correct.', itemIndex + 1, turn));
  const ref = { sessionId: target.sessionId, branchId, turn, turnKey: turnKeyOf(user.item), itemKey: contentKey(item.item) };
  if (text === null) {
    await store.call('deleteCorrection', ref);
    return null;
  }
  const saved = await store.call('setCorrection', { ...ref, text }, { source: target.source });
  return { branchId, turn, itemIndex, text: saved.text, updatedMs: saved.updatedMs };
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
