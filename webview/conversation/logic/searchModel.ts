/**
 * The state of the conversation view's search box: the query whose hits are shown, the hits (from `search/session`,
 * the whole session), which one is current, and what the counter says. No DOM: the bar (components/searchBar.ts)
 * draws it.
 *
 * Order: the hits on the branch shown when the search ran (its shared turns included) first, in turn order, then each
 * other branch's, branches in creation order (oldest first, as they were made), each in turn order. Stepping past the
 * shown branch's last hit goes on to the next branch's, so Enter walks the whole session and wraps around.
 */
import type { SessionSearchHitView, SessionSearchView } from '../../../src/shared/protocol/conversation';
import type { BranchView } from '../../../src/shared/protocol/conversationViews';

export type SearchStatus =
  | { kind: 'idle' }
  | { kind: 'searching' }
  /** `elsewhere`: how many hits are on branches other than the searched one. */
  | { kind: 'hits'; index: number; count: number; elsewhere: number; truncated: boolean }
  | { kind: 'none' }
  | { kind: 'error'; message: string };

export class SearchModel {
  private hits: SessionSearchHitView[] = [];
  private index = -1;
  private truncated = false;
  private elsewhere = 0;
  /**
   * The query the hits belong to (a new query needs a new search; showing another branch does not, as the hits cover
   * the session and stepping to a hit on another branch shows that branch).
   */
  private key: string | null = null;
  status: SearchStatus = { kind: 'idle' };

  /** Whether `query` is what the hits were found for. */
  has(query: string): boolean {
    return this.key === query;
  }

  searching(): void {
    this.status = { kind: 'searching' };
  }

  /**
   * New hits of a search run on `branchId` (`branches`: the session's, for their creation order). The current one is
   * the first on `branchId` at or after `fromTurn` (the selected turn), else the first.
   */
  found(
    query: string,
    branchId: string,
    view: SessionSearchView,
    fromTurn: number | null,
    branches: readonly BranchView[],
  ): SessionSearchHitView | null {
    this.key = query;
    this.hits = orderHits(view.hits, branchId, branches);
    this.truncated = view.truncated;
    this.elsewhere = this.hits.filter((h) => h.branchId !== branchId).length;
    if (this.hits.length === 0) {
      this.index = -1;
      this.status = { kind: 'none' };
      return null;
    }
    const at = fromTurn === null ? 0 : this.hits.findIndex((h) => h.branchId === branchId && h.turn >= fromTurn);
    this.index = at < 0 ? 0 : at;
    return this.current();
  }

  failed(message: string): void {
    this.key = null;
    this.hits = [];
    this.index = -1;
    this.status = { kind: 'error', message };
  }

  /** Moves to the next (`+1`) or previous (`-1`) hit, wrapping around; null without hits. */
  step(direction: 1 | -1): SessionSearchHitView | null {
    if (this.hits.length === 0) return null;
    this.index = (this.index + direction + this.hits.length) % this.hits.length;
    return this.current();
  }

  clear(): void {
    this.key = null;
    this.elsewhere = 0;
    this.hits = [];
    this.index = -1;
    this.status = { kind: 'idle' };
  }

  private current(): SessionSearchHitView | null {
    const hit = this.hits[this.index] ?? null;
    this.status = { kind: 'hits', index: this.index, count: this.hits.length, elsewhere: this.elsewhere, truncated: this.truncated };
    return hit;
  }
}

/**
 * `branchId`'s hits, then the other branches' in creation order (`createdAt`, then the session's order; a branch the
 * session does not list, e.g. made since, last), each branch's in turn order. Stable otherwise.
 */
export function orderHits(
  hits: readonly SessionSearchHitView[],
  branchId: string,
  branches: readonly BranchView[],
): SessionSearchHitView[] {
  const created = branches
    .map((b, i) => ({ id: b.branchId, at: b.createdAt ?? '', i }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.i - b.i));
  const rank = new Map(created.map((b, i) => [b.id, i + 1]));
  rank.set(branchId, 0);
  const rankOf = (id: string): number => rank.get(id) ?? rank.size + 1;
  return hits
    .map((h, i) => ({ h, i }))
    .sort(
      (a, b) => rankOf(a.h.branchId) - rankOf(b.h.branchId) || a.h.turn - b.h.turn || a.h.sequenceNumber - b.h.sequenceNumber || a.i - b.i,
    )
    .map((x) => x.h);
}
