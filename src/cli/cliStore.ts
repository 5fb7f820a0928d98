/**
 * What a read command opens: a session file (SQLite, through the inspector, read-only) or a PostgreSQL or Redis
 * store given by its address (`postgresql://user@host/db`, `redis://host:6379/0`), read through its browser with
 * every transaction read-only. The password comes from the address or from $AGENT_SESSIONS_PASSWORD (so it need not
 * appear in the shell's history); a Redis key prefix other than Python's default from --key-prefix.
 */
import { openSessionDatabase, type SessionDatabase } from '../store/inspector/sessionDatabase';
import { ONE_PASS_PAGE_CACHE_KIB } from '../store/sqlite/pageCache';
import type { SessionReader } from '../store/inspector/sessionReader';
import type { SessionSummary } from '../store/inspector/inspectorTypes';
import { openRemoteStore } from '../store/remote/openRemoteStore';
import { redactUrl } from '../store/remote/remoteErrors';
import { RemoteSessionSource } from '../store/remote/remoteSessionSource';
import { remoteKindOf } from '../store/remote/remoteStore';
import { allServerSessions } from '../store/remote/allServerSessions';
import { UsageError } from './exitCodes';

export type CliStore =
  | { kind: 'file'; db: SessionDatabase; reader: SessionReader; label: string }
  | { kind: 'server'; source: RemoteSessionSource; reader: SessionReader; label: string };

export interface StoreOptions {
  /** The Redis key prefix (default Python's `agents:session`). */
  keyPrefix?: string;
  /** A file's counts and totals kept between calls (`keepTotals`): for a process that answers many, as `mcp` does. */
  keepTotals?: boolean;
}

/** The database named by --db, the first argument, or $AGENT_SESSIONS_DB. */
export function storeAddress(arg: string | undefined): string {
  const target = arg ?? process.env.AGENT_SESSIONS_DB;
  if (!target) throw new UsageError('no database: pass --db <file or address> (or set AGENT_SESSIONS_DB)');
  return target;
}

export function isServerAddress(target: string): boolean {
  return remoteKindOf(target) !== undefined;
}

export async function openStore(arg: string | undefined, options: StoreOptions = {}): Promise<CliStore> {
  const target = storeAddress(arg);
  if (!isServerAddress(target)) {
    // A command reads what it prints once: SQLite's own page cache, not better-sqlite3's 16 MB (`mcp` keeps the default).
    const db = openSessionDatabase(target, {
      readonly: true,
      keepTotals: options.keepTotals === true,
      ...(options.keepTotals === true ? {} : { pageCacheKiB: ONE_PASS_PAGE_CACHE_KIB }),
    });
    return { kind: 'file', db, reader: db, label: db.path };
  }
  const browser = await openRemoteStore({
    url: target,
    password: process.env.AGENT_SESSIONS_PASSWORD || undefined,
    keyPrefix: options.keyPrefix,
    readOnly: true,
  });
  const source = new RemoteSessionSource(browser);
  return { kind: 'server', source, reader: source, label: browser.label || redactUrl(target) };
}

export async function closeStore(store: CliStore): Promise<void> {
  if (store.kind === 'file') store.db.close();
  else await store.source.close();
}

/** Every session of the store (a server store's, page by page; a file's at once). */
export async function allSessions(store: CliStore): Promise<SessionSummary[]> {
  return store.kind === 'file' ? store.db.listSessions() : allServerSessions(store.source);
}
