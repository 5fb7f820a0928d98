/**
 * Pools for the PostgreSQL store: one place that turns an address and options into a `pg.Pool` with bounded
 * timeouts (a dead server must fail a call, not hang it), an application name, optional read-only transactions,
 * and TLS from the address (`sslmode=require|verify-ca|verify-full`) or from `ssl`.
 */
import type pg from 'pg';
import { loadPg } from './serverDrivers';
import type { ConnectionOptions } from 'node:tls';
import { RemoteStoreError, redactUrl } from './remoteErrors';

export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database?sslmode=require` (the password may instead come in `password`). */
  url: string;
  /** Overrides the address's password (the extension keeps it in secret storage, not in the address). */
  password?: string;
  /** TLS settings; `true` = TLS with certificate checks. Default: what the address's `sslmode` says. */
  ssl?: boolean | ConnectionOptions;
  /** Connections in the pool (default 4). */
  maxConnections?: number;
  /** How long to wait for a connection (default 10 s). */
  connectTimeoutMs?: number;
  /** How long one query may run, enforced by the server and the client (default 30 s). */
  queryTimeoutMs?: number;
  /** Every transaction read-only, so not even a bug can write (the inspector's default for servers). */
  readOnly?: boolean;
}

export function createPostgresPool(options: PostgresConnectionOptions): pg.Pool {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch (err) {
    throw new RemoteStoreError('bad-url', `Not a PostgreSQL address: ${redactUrl(options.url)}`, { cause: err });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new RemoteStoreError('bad-url', `Not a PostgreSQL address (expected postgres:// or postgresql://): ${redactUrl(options.url)}`);
  }
  const queryTimeout = options.queryTimeoutMs ?? 30_000;
  // pg lets the address's fields win over the config's (an address without a password even blanks it), so a
  // password given apart from the address goes into the address.
  if (options.password !== undefined) parsed.password = encodeURIComponent(options.password);
  const config: pg.PoolConfig = {
    connectionString: options.password !== undefined ? parsed.toString() : options.url,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // The server stops a runaway query; the client gives up a little later if the server itself stopped answering.
    statement_timeout: queryTimeout,
    query_timeout: queryTimeout + 2_000,
    idleTimeoutMillis: 30_000,
    application_name: 'agent-session-inspector',
    keepAlive: true,
  };
  if (options.ssl !== undefined) config.ssl = options.ssl;
  if (options.readOnly) config.options = '-c default_transaction_read_only=on';
  const pool = new (loadPg().Pool)(config);
  // An idle client losing its connection (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/** `user@host:port/database` of an address, without the password, for labels and messages. */
export function describePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    const db = u.pathname.replace(/^\//, '') || decodeURIComponent(u.username) || 'postgres';
    return `${u.username ? decodeURIComponent(u.username) + '@' : ''}${u.hostname}${u.port ? ':' + u.port : ''}/${decodeURIComponent(db)}`;
  } catch {
    return redactUrl(url);
  }
}
