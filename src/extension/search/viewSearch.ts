/**
 * The conversation view's search box (`search/session`): the same query syntax and matching as *Search Sessions…*,
 * restricted to the shown session and run in the search worker, so even a large file never blocks the host. The view
 * gets every branch's hits, each item once: first those on the shown branch, in order (its own turns, and the turns it
 * shares with its parent, which the search reports under the branch that ran them), then the other branches' hits,
 * each under the branch that ran its turn. The view orders the other branches (webview/logic/searchModel.ts).
 * A PostgreSQL or Redis session (one branch) is read through its store's browser, a page at a time, in the host.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  RemoteSessionSource,
  SearchQueryError,
  parseSearchQuery,
  searchRemoteStore,
  startWorkerSearch,
  type SearchHit,
  type SearchQuery,
} from '../../store';
import { WorkerSessionDatabase } from '../../store/worker/storeClient';
import type { SessionSearchView } from '../../shared/protocol/conversation';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import { UserFacingError } from '../core/userError';
import type { TurnSet } from '../../store/search/reviewTurns';
import type { ReviewQuery } from '../../store/search/searchQuery';

/** The view lists at most this many hits (a search box is for stepping through, not for reading them all). */
const MAX_VIEW_HITS = 2000;

/**
 * The running search of each shown session (file and id). A new query in the view supersedes the one before, whose
 * answer the view drops anyway: its worker is stopped rather than left scanning a large file to the end.
 */
const running = new Map<string, { cancel(): void }>();

export async function searchShownSession(
  extensionUri: vscode.Uri,
  registry: DatabaseRegistry,
  target: SessionRef,
  branchId: string,
  text: string,
  /** The turns a query's review filters allow in this session store. */
  reviewTurns?: (review: ReviewQuery) => Promise<TurnSet>,
): Promise<SessionSearchView> {
  let query;
  try {
    query = parseSearchQuery(text);
  } catch (err) {
    throw err instanceof SearchQueryError ? new UserFacingError(err.message) : err;
  }
  const entry = registry.require(target.dbPath);
  const turns = query.review ? await (reviewTurns?.(query.review) ?? Promise.resolve({ mode: 'only' as const, keys: [] })) : undefined;
  const hits: SearchHit[] = [];
  const key = JSON.stringify([target.dbPath, target.sessionId]);
  const end =
    entry.db instanceof RemoteSessionSource
      ? await searchStoreSession(entry.db, query, target.sessionId, key, hits, turns)
      : entry.db instanceof WorkerSessionDatabase
        ? await searchFileSession(extensionUri, entry.db, query, target, key, hits, turns)
        : undefined;
  if (!end) throw new UserFacingError(entry.problem ?? vscode.l10n.t('{0} cannot be read.', target.dbPath));
  if (end.cancelled) throw new UserFacingError(vscode.l10n.t('A newer search replaced this one.'));
  if (end.error) throw new UserFacingError(end.error);
  const onShown = (h: SearchHit): boolean => h.branchId === branchId || h.sharedWith.includes(branchId);
  const inTurnOrder = (a: SearchHit, b: SearchHit): number => a.turn - b.turn || a.sequenceNumber - b.sequenceNumber;
  const mine = hits.filter(onShown).sort(inTurnOrder);
  const others = hits
    .filter((h) => !onShown(h))
    .sort((a, b) => (a.branchId < b.branchId ? -1 : a.branchId > b.branchId ? 1 : inTurnOrder(a, b)));
  // A shared turn's hit carries the sequence number of the branch that ran it; the shown branch's copy of the item has
  // its own (branching renumbers the copies), which is what the view marks. One turn read per shared turn with hits.
  const db = entry.db;
  const copies = new Map<number, Map<number, number>>();
  // Only a session file has branches (a server store's hits are all on main, the shown branch).
  if (db instanceof WorkerSessionDatabase) {
    for (const turn of new Set(mine.filter((h) => h.branchId !== branchId).map((h) => h.turn))) {
      const items = await db.getTurnItems(target.sessionId, branchId, turn);
      copies.set(turn, new Map(items.map((e) => [e.messageId, e.sequenceNumber])));
    }
  }
  const sequenceOnBranch = (h: SearchHit): number =>
    h.branchId === branchId ? h.sequenceNumber : (copies.get(h.turn)?.get(h.messageId) ?? h.sequenceNumber);
  return {
    hits: [
      ...mine.map((h) => ({ branchId, turn: h.turn, sequenceNumber: sequenceOnBranch(h), itemType: h.itemType, snippet: h.snippet })),
      ...others.map((h) => ({
        branchId: h.branchId,
        turn: h.turn,
        sequenceNumber: h.sequenceNumber,
        itemType: h.itemType,
        snippet: h.snippet,
      })),
    ].slice(0, MAX_VIEW_HITS),
    truncated: hits.length > MAX_VIEW_HITS,
  };
}

/** The shown session of a file, searched in the worker; its hits are added to `hits`. */
async function searchFileSession(
  extensionUri: vscode.Uri,
  db: WorkerSessionDatabase,
  query: SearchQuery,
  target: SessionRef,
  key: string,
  hits: SearchHit[],
  turns: TurnSet | undefined,
): Promise<{ cancelled: boolean; error?: string }> {
  let failure: string | undefined;
  const worker = startWorkerSearch(
    join(extensionUri.fsPath, 'dist', 'searchWorker.js'),
    // One more than the view shows, to know there were more.
    {
      paths: [target.dbPath],
      query,
      driver: db.driver,
      sessionId: target.sessionId,
      maxHits: MAX_VIEW_HITS + 1,
      ...(turns ? { turns: { [target.dbPath]: turns } } : {}),
    },
    {
      onHits: (_p, h) => hits.push(...h),
      onError: (_p, message) => (failure = message),
    },
  );
  running.get(key)?.cancel();
  running.set(key, worker);
  const end = await worker.finished.finally(() => {
    if (running.get(key) === worker) running.delete(key);
  });
  return { cancelled: end.cancelled, error: failure ?? end.error };
}

/** The shown session of a PostgreSQL or Redis store, read through its browser; its hits are added to `hits`. */
async function searchStoreSession(
  source: RemoteSessionSource,
  query: SearchQuery,
  sessionId: string,
  key: string,
  hits: SearchHit[],
  turns: TurnSet | undefined,
): Promise<{ cancelled: boolean; error?: string }> {
  const abort = new AbortController();
  const run = { cancel: () => abort.abort() };
  running.get(key)?.cancel();
  running.set(key, run);
  try {
    const summary = await searchRemoteStore(source.browser, query, {
      sessionId,
      signal: abort.signal,
      maxHits: MAX_VIEW_HITS + 1,
      turns,
      onHits: (h) => hits.push(...h),
    });
    return { cancelled: summary.cancelled };
  } catch (err) {
    return { cancelled: abort.signal.aborted, error: err instanceof Error ? err.message : String(err) };
  } finally {
    if (running.get(key) === run) running.delete(key);
  }
}
