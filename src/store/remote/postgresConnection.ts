/**
 * Pools for the PostgreSQL store: one place that turns an address and options into a `pg.Pool` with bounded
 * timeouts (a dead server must fail a call, not hang it), an application name, optional read-only transactions,
 * and TLS from the address (`sslmode=require|verify-ca|verify-full`) or from `ssl`.
 */
import type pg from 'pg';
import { loadPg } from './serverDrivers';
import type { ConnectionOptions } from 'node:tls';
import { RemoteStoreError, credentialsUnclear, passwordEndsAddress, redactUrl, unreadableAddress } from './remoteErrors';

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

/** The statement that makes a connection's transactions read-only (see `createPostgresPool`). */
const READ_ONLY_SETTING = 'SET default_transaction_read_only = on';
/** `sslmode` values pg takes as `verify-full` while printing a multi-line SECURITY WARNING on stderr about it. */
const VERIFYING_SSL_MODES = new Set(['prefer', 'require', 'verify-ca']);

export function createPostgresPool(options: PostgresConnectionOptions): pg.Pool {
  // A password with an unencoded `/`, `?` or `#` ends the address early: pg would read part of it as the host, port
  // or database, connect somewhere else, and echo it in its errors and our labels. Refused before any connection.
  if (credentialsUnclear(options.url)) {
    if (!passwordEndsAddress(options.url)) throw new RemoteStoreError('bad-url', unreadableAddress(options.url));
    throw new RemoteStoreError(
      'bad-url',
      `The password in ${redactUrl(options.url)} holds a character that ends an address (/, ? or #): percent-encode it (%2F, %3F, %23), or give it apart from the address.`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    // No cause: Node's URL error keeps the whole address (`input`), password and all.
    throw new RemoteStoreError('bad-url', `Not a PostgreSQL address: ${redactUrl(options.url)}`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new RemoteStoreError('bad-url', `Not a PostgreSQL address (expected postgres:// or postgresql://): ${redactUrl(options.url)}`);
  }
  const queryTimeout = options.queryTimeoutMs ?? 30_000;
  // pg lets the address's fields win over the config's (an address without a password even blanks it), so a
  // password given apart from the address goes into the address.
  let rewritten = false;
  if (options.password !== undefined) {
    parsed.password = encodeURIComponent(options.password);
    rewritten = true;
  }
  // pg takes these modes as verify-full (certificate and host checked) and says so in a SECURITY WARNING on stderr,
  // which the CLI would print above its output. Taken out of the address, they become that same TLS setting here.
  const sslMode = parsed.searchParams.get('sslmode');
  let ssl = options.ssl;
  if (sslMode !== null && VERIFYING_SSL_MODES.has(sslMode) && !parsed.searchParams.has('uselibpqcompat')) {
    parsed.searchParams.delete('sslmode');
    rewritten = true;
    ssl ??= true;
  }
  const config: pg.PoolConfig = {
    connectionString: rewritten ? parsed.toString() : options.url,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // The server stops a runaway query; the client gives up a little later if the server itself stopped answering.
    statement_timeout: queryTimeout,
    query_timeout: queryTimeout + 2_000,
    idleTimeoutMillis: 30_000,
    application_name: 'agent-session-inspector',
    keepAlive: true,
  };
  if (ssl !== undefined) config.ssl = ssl;
  if (options.readOnly) {
    // A SET on each new connection, not the startup `options` parameter: pg lets an address's own `options=` (a
    // search_path, say) replace the config's, which dropped the guard, while a statement run after the startup packet
    // is one nothing in the address can undo. pg-pool awaits `onConnect` before it hands the connection out; when the
    // SET fails, the connection is ended and the checkout fails, so no statement runs on a connection without it.
    // (@types/pg declares the hook as returning void; pg-pool awaits what it returns.)
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    config.onConnect = async (client) => {
      await client.query(READ_ONLY_SETTING);
    };
  }
  const pool = new (loadPg().Pool)(config);
  // An idle client losing its connection (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Runs `use` on one pooled connection (a transaction, a cursor), then gives the connection back. pg-pool removes its
 * own 'error' listener from a connection it hands out, so a connection lost while checked out (a server restart or
 * failover, `pg_terminate_backend`) would raise an unhandled 'error' event and end the process: the listener here
 * keeps the process alive, and the statement that was running, or the next one, fails instead. A connection that was
 * lost, or whose `use` failed (a transaction or cursor may still be open on it), is discarded, not reused.
 */
export async function withPooledClient<T>(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  client.on('error', onError);
  let failed = false;
  try {
    return await use(client);
  } catch (err) {
    failed = true;
    // A statement sent after the loss only says the client is "not queryable": the loss itself says why.
    if (lost && err !== lost && err instanceof Error && /not queryable/i.test(err.message)) throw lost;
    throw err;
  } finally {
    // Released in the same tick the listener goes, so no 'error' event falls between the two (pg-pool listens again
    // from release on).
    client.removeListener('error', onError);
    client.release(lost ?? failed);
  }
}

/** `user@host:port/database` of an address, without the password, for labels and messages. */
export function describePostgresUrl(url: string): string {
  try {
    // An address whose password ends it early (`credentialsUnclear`) parses with part of the password as its host or
    // port: its redacted form (password `***`) parses as meant.
    const u = new URL(credentialsUnclear(url) ? redactUrl(url) : url);
    const db = u.pathname.replace(/^\//, '') || decodeURIComponent(u.username) || 'postgres';
    return `${u.username ? decodeURIComponent(u.username) + '@' : ''}${u.hostname}${u.port ? ':' + u.port : ''}/${decodeURIComponent(db)}`;
  } catch {
    return redactUrl(url);
  }
}
