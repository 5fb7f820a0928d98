/**
 * *Search Sessions…*: asks for a query, searches every open session file in a worker thread (dist/searchWorker.js,
 * so the extension host never waits on SQLite) and every connected PostgreSQL and Redis store through its browser
 * (network reads, awaited a page at a time: they do not block the host either), streams the hits into the "Search
 * Results" view with progress and a Cancel button, and opens a hit's turn in the conversation view.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  parseSearchQuery,
  RemoteSessionSource,
  SearchQueryError,
  searchRemoteStore,
  startWorkerSearch,
  DEFAULT_MAX_HITS,
  type SearchQuery,
  type WorkerSearchEnd,
} from '../../store';
import { WorkerSessionDatabase } from '../../store/worker/storeClient';
import { CommandId, ViewId } from '../core/contributions';
import type { ConversationPanels } from '../conversation/conversationPanel';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { UserFacingError } from '../core/userError';
import { errorMessage } from '../../shared/errorMessage';
import { SearchResultsProvider, hitsText, type HitNode, type SearchNode } from './searchResults';
import type { TurnSet } from '../../store/search/reviewTurns';
import type { ReviewQuery } from '../../store/search/searchQuery';
import { withNoticeProgress } from '../core/notices';

/**
 * Where the review filters (`is:bad`, `tag:`, `reviewed:`) read the turns they allow: the review service, named by
 * what the search calls, since reviews/ drives this view (Review Next) and importing it back would tie the two.
 */
export interface ReviewTurns {
  turnSet(dbPath: string, review: ReviewQuery): Promise<TurnSet>;
}

/** What a search reports when it ends (the command's return value, for tests and scripts). */
export interface SearchOutcome {
  query: string;
  hits: number;
  /** Session files and server stores searched. */
  files: number;
  cancelled: boolean;
  errors: string[];
  elapsedMs: number;
  /** Stopped at the hit limit: more hits may exist (the Search Results view offers them). */
  capped: boolean;
  /** Files not searched because the limit was reached before them. */
  notSearched: string[];
}

/** The most hits one search keeps (each is a tree row): "search for more" multiplies the limit up to this. */
export const MAX_SEARCH_HITS = 200_000;

/** A search in progress: the worker over the files and the scans of the server stores, stopped together. */
interface RunningSearch {
  cancel(): void;
}

const SEARCHING_CONTEXT = 'agentSessions.searching';
const HAS_RESULTS_CONTEXT = 'agentSessions.hasSearchResults';
/**
 * Shows the Search Results view (package.json `when`): it stays out of the sidebar until the first search, where empty
 * it took half the room the sessions tree needs, and then appears with a fair share of it.
 */
const SEARCH_USED_CONTEXT = 'agentSessions.searchUsed';

export class SessionSearch implements vscode.Disposable {
  readonly results: SearchResultsProvider;
  readonly view: vscode.TreeView<SearchNode>;
  private current: RunningSearch | undefined;
  private lastQuery = '';

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly registry: DatabaseRegistry,
    private readonly panels: ConversationPanels,
    private readonly reviews?: ReviewTurns,
  ) {
    this.results = new SearchResultsProvider(CommandId.openSearchHit, CommandId.searchSessions);
    this.view = vscode.window.createTreeView(ViewId.searchResults, { treeDataProvider: this.results, showCollapseAll: true });
  }

  /** Runs a search (replacing the one running) for up to `maxHits` hits per source; resolves when it ends. */
  async search(text: string, maxHits: number = DEFAULT_MAX_HITS): Promise<SearchOutcome> {
    if (!Number.isInteger(maxHits) || maxHits < 1 || maxHits > MAX_SEARCH_HITS)
      throw new UserFacingError(vscode.l10n.t('The hit limit must be a whole number from 1 to {0}.', MAX_SEARCH_HITS.toLocaleString()));
    let query: SearchQuery;
    try {
      query = parseSearchQuery(text);
    } catch (err) {
      if (err instanceof SearchQueryError) throw new UserFacingError(err.message);
      throw err;
    }
    this.cancel();
    this.lastQuery = text;
    const entries = this.registry.list();
    const files = entries.filter((e) => e.db instanceof WorkerSessionDatabase);
    const stores = entries.flatMap((e) => (e.db instanceof RemoteSessionSource ? [{ path: e.path, source: e.db }] : []));
    const notes: string[] = [];
    // A server store that could not be reached (or whose password is not known yet) has no browser to search.
    const unreachable = entries.filter((e) => e.remote && !(e.db instanceof RemoteSessionSource)).length;
    if (unreachable > 0) notes.push(vscode.l10n.t('{0} server store(s) not connected: not searched.', unreachable));
    if (files.length + stores.length === 0)
      throw new UserFacingError(vscode.l10n.t('Nothing is open to search. Run "Open Session Database…" or "Open Session Store…" first.'));
    const started = performance.now();
    // Review filters: each session store's reviews, read before the scan starts, name the turns it may find.
    const turns = query.review
      ? await this.turnSets(
          query,
          [...files, ...stores].map((e) => e.path),
          notes,
        )
      : undefined;
    this.results.reset(notes);
    const errors: string[] = [];
    const abort = new AbortController();
    const run: RunningSearch = { cancel: () => abort.abort() };
    const showProgress = (): void => {
      this.view.message = vscode.l10n.t('Searching for "{0}"… {1}', text, hitsText(this.results.hitCount));
    };
    const worker =
      files.length === 0
        ? undefined
        : startWorkerSearch(
            join(this.extensionUri.fsPath, 'dist', 'searchWorker.js'),
            { paths: files.map((e) => e.path), query, driver: (files[0]!.db as WorkerSessionDatabase).driver, maxHits, turns },
            {
              onHits: (path, hits) => {
                // A search replaced by a newer one may still deliver a batch: it must not land in the new results.
                if (this.current !== run) return;
                this.results.add(path, hits);
                showProgress();
              },
              onError: (path, message) => {
                if (this.current !== run) return;
                errors.push(`${path}: ${message}`);
                this.results.fail(path, message);
              },
            },
          );
    if (worker) abort.signal.addEventListener('abort', () => worker.cancel(), { once: true });
    let remoteCapped = false;
    const remoteRuns = stores.map(({ path, source }) =>
      searchRemoteStore(source.browser, query, {
        signal: abort.signal,
        maxHits,
        turns: turns?.[path],
        onHits: (hits) => {
          if (this.current !== run) return;
          this.results.add(path, hits, source.label);
          showProgress();
        },
      }).then(
        (summary) => void (remoteCapped ||= summary.truncated),
        (err: unknown) => {
          if (this.current !== run) return;
          const message = err instanceof Error ? err.message : String(err);
          errors.push(`${source.label}: ${message}`);
          this.results.fail(path, message, source.label);
        },
      ),
    );
    const noWorker: WorkerSearchEnd = { cancelled: false, capped: false, notSearched: [] };
    const finished = Promise.all([worker?.finished ?? Promise.resolve(noWorker), ...remoteRuns]).then(([end]) => ({
      ...end,
      cancelled: end.cancelled || abort.signal.aborted,
      capped: end.capped || remoteCapped,
    }));
    this.current = run;
    void vscode.commands.executeCommand('setContext', SEARCHING_CONTEXT, true);
    await vscode.commands.executeCommand('setContext', SEARCH_USED_CONTEXT, true);
    this.view.message = vscode.l10n.t('Searching for "{0}"…', text);
    void vscode.commands.executeCommand(`${ViewId.searchResults}.focus`);
    const searched = files.length + stores.length;
    const end = await withNoticeProgress({ location: { viewId: ViewId.searchResults } }, () => finished);
    // What a search replaced by a newer one reports: the newer one owns the view (and its results) now.
    const replaced = (): SearchOutcome => ({
      query: text,
      hits: 0,
      files: searched,
      cancelled: true,
      errors,
      elapsedMs: performance.now() - started,
      capped: false,
      notSearched: [],
    });
    if (this.current !== run) return replaced();
    this.current = undefined;
    void vscode.commands.executeCommand('setContext', SEARCHING_CONTEXT, false);
    if (end.error) errors.push(end.error);
    const capped = end.capped && !end.cancelled && !end.error;
    if (capped) this.results.capped(text, end.notSearched, maxHits < MAX_SEARCH_HITS ? Math.min(MAX_SEARCH_HITS, maxHits * 5) : undefined);
    const drawn = this.results.hitCount > 0 ? this.results.drawn() : Promise.resolve();
    this.results.refreshNow();
    await drawn;
    // A newer search may have started while this one's list was drawn.
    if (this.current !== undefined) return replaced();
    const hits = this.results.hitCount;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    this.view.message = end.error
      ? vscode.l10n.t('Search for "{0}" failed: {1}', text, end.error)
      : end.cancelled
        ? vscode.l10n.t('Search for "{0}" cancelled: {1} so far.', text, hitsText(hits))
        : capped
          ? end.notSearched.length > 0
            ? vscode.l10n.t(
                '{0} for "{1}" — stopped at the limit of {2}; more may exist, and {3} file(s) were not searched ({4} s).',
                hitsText(hits),
                text,
                maxHits.toLocaleString(),
                end.notSearched.length,
                seconds,
              )
            : vscode.l10n.t(
                '{0} for "{1}" — stopped at the limit of {2}; more may exist ({3} s).',
                hitsText(hits),
                text,
                maxHits.toLocaleString(),
                seconds,
              )
          : hits === 0
            ? vscode.l10n.t('No results for "{0}" in {1} file(s) and store(s) ({2} s).', text, searched, seconds)
            : vscode.l10n.t('{0} for "{1}" in {2} file(s) and store(s) ({3} s).', hitsText(hits), text, searched, seconds);
    void vscode.commands.executeCommand('setContext', HAS_RESULTS_CONTEXT, hits > 0);
    return {
      query: text,
      hits,
      files: searched,
      cancelled: end.cancelled,
      errors,
      elapsedMs: performance.now() - started,
      capped,
      notSearched: capped ? end.notSearched : [],
    };
  }

  cancel(): void {
    this.current?.cancel();
  }

  /** The turns the query's review filters allow in each session store; a store whose reviews cannot be read allows none. */
  private async turnSets(query: SearchQuery, paths: string[], notes: string[]): Promise<Record<string, TurnSet>> {
    const sets: Record<string, TurnSet> = {};
    for (const path of paths) {
      try {
        if (!this.reviews) throw new Error(vscode.l10n.t('no review store'));
        sets[path] = await this.reviews.turnSet(path, query.review!);
      } catch (err) {
        sets[path] = { mode: 'only', keys: [] };
        notes.push(
          vscode.l10n.t('{0}: its reviews could not be read ({1}); no turn of it matches the review filters.', path, errorMessage(err)),
        );
      }
    }
    return sets;
  }

  clear(): void {
    this.cancel();
    // The cancelled search's last batches and its end are dropped (see `search`).
    this.current = undefined;
    void vscode.commands.executeCommand('setContext', SEARCHING_CONTEXT, false);
    this.results.clear();
    this.view.message = undefined;
    void vscode.commands.executeCommand('setContext', HAS_RESULTS_CONTEXT, false);
  }

  /** Opens the hit's turn, on the branch that ran it, in the session's conversation view. */
  async open(node: HitNode): Promise<void> {
    const { hit } = node;
    const entry = this.registry.require(node.dbPath);
    if (!entry.db) throw new UserFacingError(entry.problem ?? vscode.l10n.t('{0} cannot be read.', node.dbPath));
    const panel = this.panels.open({
      dbPath: node.dbPath,
      sessionId: hit.sessionId,
      branchId: hit.branchId,
      // Turn 0 (items before the first user message) is listed too: "Before the first turn".
      turn: hit.turn,
    });
    await this.panels.whenReady(panel);
  }

  get query(): string {
    return this.lastQuery;
  }

  dispose(): void {
    this.cancel();
    this.view.dispose();
    this.results.dispose();
  }
}
