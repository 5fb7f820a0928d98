/**
 * The state of the conversation view's search box: the query whose hits are shown, the hits (from `search/session`),
 * which one is current, and what the counter says. No DOM: the bar (components/searchBar.ts) draws it.
 */
import type { SessionSearchHitView, SessionSearchView } from '../../src/shared/protocol';

export type SearchStatus =
  | { kind: 'idle' }
  | { kind: 'searching' }
  | { kind: 'hits'; index: number; count: number; truncated: boolean }
  | { kind: 'none' }
  | { kind: 'error'; message: string };

export class SearchModel {
  private hits: SessionSearchHitView[] = [];
  private index = -1;
  private truncated = false;
  /** The query and branch the hits belong to (a new query or another branch needs a new search). */
  private key: string | null = null;
  status: SearchStatus = { kind: 'idle' };

  /** Whether `query` on `branchId` is what the hits were found for. */
  has(query: string, branchId: string): boolean {
    return this.key === JSON.stringify([query, branchId]);
  }

  searching(): void {
    this.status = { kind: 'searching' };
  }

  /** New hits: the current one is the first at or after `fromTurn` (the selected turn), else the first. */
  found(query: string, branchId: string, view: SessionSearchView, fromTurn: number | null): SessionSearchHitView | null {
    this.key = JSON.stringify([query, branchId]);
    this.hits = view.hits;
    this.truncated = view.truncated;
    if (this.hits.length === 0) {
      this.index = -1;
      this.status = { kind: 'none' };
      return null;
    }
    const at = fromTurn === null ? 0 : this.hits.findIndex((h) => h.turn >= fromTurn);
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
    this.hits = [];
    this.index = -1;
    this.status = { kind: 'idle' };
  }

  private current(): SessionSearchHitView | null {
    const hit = this.hits[this.index] ?? null;
    this.status = { kind: 'hits', index: this.index, count: this.hits.length, truncated: this.truncated };
    return hit;
  }
}
