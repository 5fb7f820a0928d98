/**
 * What the query tools read in the extension (docs/mcp.md, "In VS Code"): the stores open in the Sessions view (the
 * `DatabaseRegistry`'s session files, held by the store worker, and its connected PostgreSQL and Redis stores), the
 * session files a tool call names by path (opened read-only in the store worker too, and kept with their counts for
 * later calls), and the extension's trace store for `turn_timeline`. Nothing here runs SQLite on the extension host's
 * thread: reads go to the store worker, a file's search to the search worker (dist/searchWorker.js), and a server
 * store's reads and search are network reads the host awaits.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type * as vscode from 'vscode';
import { RemoteSessionSource } from '../../store/remote/remoteSessionSource';
import { remoteKindOf } from '../../store/remote/remoteStore';
import type { QueryAnswer } from '../../store/query/queryAnswer';
import { serverQueryStore, type QueryStore } from '../../store/query/queryStore';
import { runQueryTool, type QueryToolHost } from '../../store/query/queryTools';
import { StoreSet, type StoreOpener } from '../../store/query/storeSet';
import type { SearchOptions, SearchSummary } from '../../store/search/searchHits';
import { startWorkerSearch } from '../../store/search/searchInWorker';
import type { SearchQuery } from '../../store/search/searchQuery';
import type { TurnSpanSource } from '../../store/query/turnTimeline';
import type { WorkerSessionDatabase, WorkerTraceStore } from '../../store/worker/storeClient';
import type { DatabaseRegistry } from '../databases/databaseRegistry';

/** What the tools need of the trace service: where the store is, and the store (opened on first use). */
export interface TraceSource {
  readonly path: string;
  traces(): Promise<WorkerTraceStore>;
}

/** The stores the query tools answer about, in the extension; one per window. */
export class ExtensionStores implements vscode.Disposable {
  /** Session files calls named that are not open in the view, by absolute path: opened on first use, kept. */
  private readonly others = new Map<string, Promise<WorkerSessionDatabase>>();

  constructor(
    private readonly registry: DatabaseRegistry,
    /** dist/searchWorker.js */
    private readonly searchWorkerFile: string,
    private readonly traceSource: TraceSource | undefined,
    /** The folder a relative path in a call is taken from (the first workspace folder), if any. */
    private readonly baseFolder: () => string | undefined,
  ) {}

  /** The stores served now: the view's, in its order, then the files calls have named. */
  private targets(): string[] {
    const open = this.registry.list().map((e) => e.path);
    return [...open, ...[...this.others.keys()].filter((p) => !open.includes(p))];
  }

  /**
   * The absolute path of a session file a `store` argument names that is neither open in the view nor read before,
   * or undefined (a store's name, an open file, a server address, nothing). Such a file is read only after the user
   * agrees (the tool's confirmation).
   */
  unopenedFile(store: unknown): string | undefined {
    if (typeof store !== 'string' || store.trim() === '' || remoteKindOf(store) !== undefined) return undefined;
    const set = new StoreSet(async () => Promise.reject(new Error('not opened')), this.targets());
    if (set.list().some((s) => s.name === store || s.location === store)) return undefined;
    const path = this.absolute(store);
    // A file that does not exist is not read at all: the call fails with the stores there are.
    return this.targets().includes(path) || !existsSync(path) ? undefined : path;
  }

  private absolute(path: string): string {
    const base = this.baseFolder();
    return isAbsolute(path) || !base ? resolve(path) : resolve(base, path);
  }

  /**
   * Runs query tool `name` with `args`; `signal` stops its reads (queued worker reads are dropped, a search stops after
   * its batch). Throws the query surface's `QueryError`s.
   */
  async run(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<QueryAnswer> {
    return runQueryTool(this.host(signal), name, args, signal);
  }

  private host(signal: AbortSignal): QueryToolHost {
    const source = this.traceSource;
    // The trace store lives in the store worker: a timeline's spans are one awaited read there.
    const spans: TurnSpanSource | undefined = source && {
      path: source.path,
      spansOfTurn: async (q) => (await source.traces()).call('spansOfTurn', q),
    };
    const opener: StoreOpener = async (target, name) => ({ store: await this.open(target, name, signal), close: () => undefined });
    const set = new StoreSet(opener, this.targets());
    return {
      store: (arg, tool) => {
        // A relative path is the workspace's, not the extension host's working directory.
        const named = typeof arg === 'string' && set.list().some((s) => s.name === arg || s.location === arg);
        const relative = typeof arg === 'string' && arg !== '' && !named && remoteKindOf(arg) === undefined && !isAbsolute(arg);
        return set.resolve(relative ? this.absolute(arg) : arg, tool);
      },
      stores: () => set.list(),
      ...(spans ? { traces: spans } : {}),
    };
  }

  private async open(target: string, name: string, signal: AbortSignal): Promise<QueryStore> {
    const entry = this.registry.get(target);
    if (entry) {
      const db = entry.db;
      if (!db) throw new Error(entry.problem ?? (entry.remote ? 'the server store is not connected' : 'the file cannot be read'));
      if (db instanceof RemoteSessionSource) return serverQueryStore(db, name, target);
      return this.fileStore(db.withSignal(signal), name);
    }
    let opened = this.others.get(target);
    if (!opened) {
      opened = this.registry.store.openDatabase(target, { readonly: true, keepTotals: true });
      this.others.set(target, opened);
      // Not kept when it failed: the next call tries again (the file may have been written meanwhile).
      opened.catch(() => this.others.get(target) === opened && this.others.delete(target));
    }
    return this.fileStore((await opened).withSignal(signal), name);
  }

  /** A session file in the store worker as a query store; its search runs in the search worker. */
  private fileStore(db: WorkerSessionDatabase, name: string): QueryStore {
    return {
      name,
      location: db.path,
      kind: 'file',
      reader: db,
      listSessions: () => db.listSessions(),
      hasSession: async (sessionId) => (await db.listSessions()).some((s) => s.sessionId === sessionId),
      search: (query, options) => this.searchFile(db, query, options),
      get keepsUsage() {
        return db.tables.turnUsage;
      },
    };
  }

  /** `searchDatabase` in the search worker: the same scan, off the host's thread, stopped by `options.signal`. */
  private async searchFile(db: WorkerSessionDatabase, query: SearchQuery, options: SearchOptions): Promise<SearchSummary> {
    const started = performance.now();
    let hits = 0;
    let rowsScanned = 0;
    let itemsSearched: number | null = null;
    let failure: string | undefined;
    const worker = startWorkerSearch(
      this.searchWorkerFile,
      {
        paths: [db.path],
        query,
        driver: db.driver,
        ...(options.maxHits !== undefined ? { maxHits: options.maxHits } : {}),
        ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
        ...(options.countItems ? { countItems: true } : {}),
        ...(options.turns ? { turns: { [db.path]: options.turns } } : {}),
      },
      {
        onHits: (_path, batch) => {
          hits += batch.length;
          options.onHits(batch);
        },
        onProgress: (_path, scanned, total) => options.onProgress?.(scanned, total),
        onDone: (_path, summary) => {
          rowsScanned = summary.rowsScanned;
          itemsSearched = summary.itemsSearched;
        },
        onError: (_path, message) => void (failure = message),
      },
    );
    const cancel = (): void => worker.cancel();
    options.signal?.addEventListener('abort', cancel, { once: true });
    if (options.signal?.aborted) cancel();
    try {
      const end = await worker.finished;
      const error = end.error ?? failure;
      if (error !== undefined && !end.cancelled) throw new Error(error);
      return { hits, rowsScanned, itemsSearched, cancelled: end.cancelled, truncated: end.capped, elapsedMs: performance.now() - started };
    } finally {
      options.signal?.removeEventListener('abort', cancel);
    }
  }

  dispose(): void {
    for (const opened of this.others.values()) void opened.then((db) => db.close()).catch(() => undefined);
    this.others.clear();
  }
}
