/**
 * The read side of a server-backed store, for the inspector: sessions a page at a time, a session's rows a page at
 * a time, and cheap change tokens to poll. Nothing here reads a whole session or the whole session list.
 */
import type { PostgresConnectionOptions } from './postgresConnection';
import type { PostgresTableNames } from './postgresSchema';
import type { RedisConnectionOptions } from './redisConnection';

export type RemoteStoreKind = 'postgres' | 'redis';

export interface RemoteSessionSummary {
  sessionId: string;
  /** `YYYY-MM-DD HH:MM:SS` (PostgreSQL: as stored, the server's local time; Redis: UTC from Unix seconds). */
  createdAt: string | null;
  updatedAt: string | null;
  itemCount: number;
}

export interface RemoteSessionPage {
  sessions: RemoteSessionSummary[];
  /** Pass back for the next page; null after the last. */
  nextCursor: string | null;
}

/** One stored entry, in session order. */
export interface RemoteRow {
  /** 1-based position in the session's order (the paging key). */
  position: number;
  /** The row's id (PostgreSQL `id`); null for Redis, whose list has none. */
  id: number | null;
  /** The stored text; null when the bytes are not UTF-8 (Redis) or the column is NULL (`textIsNull`, PostgreSQL). */
  text: string | null;
  /** Set when `text` is null because `message_data` is NULL (a schema without SQLAlchemy's NOT NULL). */
  textIsNull?: true;
  createdAt: string | null;
  /** Where the next rows start (`readRowsAfter`): a keyset cursor (PostgreSQL) or the position (Redis). */
  cursor: string;
}

export interface RemoteSessionListRequest {
  limit: number;
  cursor?: string | null;
  /** Only sessions whose id starts with this text. */
  prefix?: string;
}

export interface RemoteStoreBrowser {
  readonly kind: RemoteStoreKind;
  /** `user@host:port/db` or `host:port/db`: no password. */
  readonly label: string;
  /**
   * A page of sessions. PostgreSQL: most recently updated first, across the whole table. Redis keeps no order
   * across sessions, so pages come in key-scan order, each page sorted newest first.
   */
  listSessions(request: RemoteSessionListRequest): Promise<RemoteSessionPage>;
  /** How many sessions (with `prefix`); null when the store cannot tell without reading every key (Redis). */
  countSessions(prefix?: string): Promise<number | null>;
  /** One session's summary, or null when it does not exist. */
  getSession(sessionId: string): Promise<RemoteSessionSummary | null>;
  /** Rows at positions `offset + 1 … offset + limit` (random access; deep offsets cost their depth on PostgreSQL). */
  readRows(sessionId: string, offset: number, limit: number): Promise<RemoteRow[]>;
  /** The rows after a row (its `cursor` and `position`), or from the start: sequential reading at index speed. */
  readRowsAfter(sessionId: string, after: { cursor: string; position: number } | null, limit: number): Promise<RemoteRow[]>;
  /** A token that changes whenever the session's rows change (newest id and count; list length and updated_at). */
  sessionToken(sessionId: string): Promise<string>;
  /** A token that changes when sessions are added or removed or written (cheap: no scan). */
  storeToken(): Promise<string>;
  close(): Promise<void>;
}

export interface OpenRemoteStoreOptions {
  url: string;
  password?: string;
  /** PostgreSQL table names (defaults: `agent_sessions`, `agent_messages`). */
  tables?: Partial<PostgresTableNames>;
  /** Redis key prefix (default `agents:session`). */
  keyPrefix?: string;
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
  /** Default true: every PostgreSQL transaction read-only. */
  readOnly?: boolean;
  postgres?: Partial<PostgresConnectionOptions>;
  redis?: Partial<RedisConnectionOptions>;
}

/** The kind an address names, or undefined for anything else (a file path). */
export function remoteKindOf(url: string): RemoteStoreKind | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url.trim())?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') return 'postgres';
  if (scheme === 'redis' || scheme === 'rediss') return 'redis';
  return undefined;
}
