/**
 * A store as the query surface reads it: any `SessionReader` (a session file's `SessionDatabase`, a PostgreSQL or
 * Redis store's `RemoteSessionSource`, or the extension's worker-backed reader) plus the two things a reader does not
 * offer in the same way everywhere: the whole session list and the search scan. The CLI, the MCP server and the
 * VS Code tools each hand the queries a `QueryStore`; the queries never ask how it was opened.
 */
import type { SessionDatabase } from '../inspector/sessionDatabase';
import type { SessionReader } from '../inspector/sessionReader';
import type { SessionSummary } from '../inspector/inspectorTypes';
import type { RemoteSessionSource } from '../remote/remoteSessionSource';
import type { SearchQuery } from '../search/searchQuery';
import type { SearchOptions, SearchSummary } from '../search/searchHits';
import { searchDatabase } from '../search/searchDatabase';
import { searchRemoteStore } from '../search/searchRemote';
import { checkCancelled } from './queryErrors';
import { allServerSessions } from '../remote/allServerSessions';

export interface QueryStore {
  /** The short name results and resource URIs use (`demo`, `postgres-app`); unique among the stores served. */
  readonly name: string;
  /** Where it is: the file's absolute path, or the server address without its password. */
  readonly location: string;
  readonly kind: 'file' | 'server';
  readonly reader: SessionReader;
  /** Every session, in the store's order (a server store's read page by page). */
  listSessions(signal?: AbortSignal): Promise<SessionSummary[]>;
  /** Whether a session exists (it may have no rows on a branch tree yet). */
  hasSession(sessionId: string): Promise<boolean>;
  /** Scans the store (or `options.sessionId`) for `query`; stops when `options.signal` is aborted. */
  search(query: SearchQuery, options: SearchOptions): Promise<SearchSummary>;
  /** True when the store records per-turn token usage (session files with `turn_usage`). */
  readonly keepsUsage: boolean;
}

/** A session file opened read-only (`openSessionDatabase(path, { readonly: true, keepTotals: true })`). */
export function fileQueryStore(db: SessionDatabase, name: string): QueryStore {
  return {
    name,
    location: db.path,
    kind: 'file',
    reader: db,
    listSessions: async () => db.listSessions(),
    hasSession: async (sessionId) => db.listSessions().some((s) => s.sessionId === sessionId),
    search: (query, options) => searchDatabase(db, query, options),
    get keepsUsage() {
      return db.tables.turnUsage;
    },
  };
}

/** A PostgreSQL or Redis store, read through its browser (every transaction read-only). */
export function serverQueryStore(source: RemoteSessionSource, name: string, location: string): QueryStore {
  return {
    name,
    location,
    kind: 'server',
    reader: source,
    async listSessions(signal) {
      return allServerSessions(source, () => checkCancelled(signal));
    },
    hasSession: async (sessionId) => (await source.getSession(sessionId)) !== null,
    search: (query, options) => searchRemoteStore(source.browser, query, options),
    keepsUsage: false,
  };
}
