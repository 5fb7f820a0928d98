/**
 * The extension's review data (docs/reviews.md): review stores held by the store worker, one per place. By default
 * one store in the extension's global storage for every session store (`agentSessions.reviews.location` =
 * `extension`): it works for read-only files and folders and for PostgreSQL and Redis sessions, and adds no file to
 * the user's folders unasked. With `beside-file`, a file's reviews go in `<file>.reviews.db` next to it, to commit or
 * share with it; server stores keep theirs in the global one. A review is found by its turn's content either way
 * (src/store/reviews/contentKey.ts), so moving between the two loses nothing once exported and imported.
 */
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { StoreClient, WorkerReviewStore } from '../../store/worker/storeClient';
import { reviewStoreOnDemand } from './reviewStoreOnDemand';
import { reviewTurnSet, type TurnSet } from '../../store/search/reviewTurns';
import type { ReviewQuery } from '../../store/search/searchQuery';
import { Setting } from '../core/contributions';
import { setting } from '../core/settings';

export class ReviewService implements vscode.Disposable {
  private readonly stores = new Map<string, WorkerReviewStore>();
  private readonly changeEmitter = new vscode.EventEmitter<string>();
  /** Fires with a session's id after its review data changed in this window. */
  readonly onDidChange = this.changeEmitter.event;

  constructor(
    private readonly client: StoreClient,
    /** The extension's global storage folder. */
    private readonly folder: string,
    /** Whether a session store is a PostgreSQL or Redis address (its reviews never go beside it). */
    private readonly isRemote: (dbPath: string) => boolean = () => false,
  ) {}

  /** Where the reviews of the session store at `dbPath` are kept (`remote`: a PostgreSQL or Redis address). */
  pathFor(dbPath: string, remote: boolean): string {
    if (!remote && setting(Setting.reviewsLocation) === 'beside-file') return `${dbPath}.reviews.db`;
    return join(this.folder, 'reviews.db');
  }

  /**
   * The review store for a session store. Reading never writes: until a review is written, a store that does not exist
   * answers as an empty one and is not created (reviewStoreOnDemand.ts); a failed open is tried again next time.
   */
  async storeFor(dbPath: string, remote = this.isRemote(dbPath)): Promise<WorkerReviewStore> {
    const path = this.pathFor(dbPath, remote);
    let store = this.stores.get(path);
    if (!store) {
      store = reviewStoreOnDemand(path, () => {
        // Only our own folder is made; a session file's folder is the user's and exists with the file.
        if (dirname(path) === this.folder) mkdirSync(this.folder, { recursive: true });
        return this.client.openReviewStore(path);
      });
      this.stores.set(path, store);
    }
    return store;
  }

  /**
   * A change to a session's review data: `write` gets the session store's review store and where the review is made
   * (kept with it); the session's views are told once it is written.
   */
  async write<T>(
    target: { dbPath: string; sessionId: string },
    write: (store: WorkerReviewStore, origin: { sessionId: string; source: string }) => Promise<T>,
  ): Promise<T> {
    const result = await write(await this.storeFor(target.dbPath), { sessionId: target.sessionId, source: basename(target.dbPath) });
    this.changed(target.sessionId);
    return result;
  }

  /** The turns of the session store at `dbPath` that a search's review filters allow. */
  async turnSet(dbPath: string, review: ReviewQuery): Promise<TurnSet> {
    const store = await this.storeFor(dbPath);
    return reviewTurnSet(review, await store.call('turnReviews', null));
  }

  /** Tells the views of `sessionId` that its review data changed. */
  changed(sessionId: string): void {
    this.changeEmitter.fire(sessionId);
  }

  dispose(): void {
    for (const store of this.stores.values()) void store.close().catch(() => undefined);
    this.stores.clear();
    this.changeEmitter.dispose();
  }
}
