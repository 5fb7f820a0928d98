/**
 * Clients for the Redis store: one place that turns an address and options into an `ioredis` client that fails a
 * call instead of queueing it forever when the server is gone (bounded reconnects, a command timeout, no offline
 * queue once connected), with TLS from `rediss://` or `tls`.
 */
import type Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { loadIoRedis } from './serverDrivers';
import type { ConnectionOptions } from 'node:tls';
import { RemoteStoreError, redactUrl, secretOf, translateRedisError } from './remoteErrors';

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port/db` or `rediss://…` for TLS. */
  url: string;
  /** Overrides the address's password (the extension keeps it in secret storage). */
  password?: string;
  /** TLS settings (implied by `rediss://`). */
  tls?: ConnectionOptions;
  /** How long to wait for the connection (default 10 s). */
  connectTimeoutMs?: number;
  /** How long one command may take (default 30 s). */
  commandTimeoutMs?: number;
}

/** A connected client, or a `RemoteStoreError` saying why there is none. */
export async function connectRedis(options: RedisConnectionOptions): Promise<Redis> {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch (err) {
    throw new RemoteStoreError('bad-url', `Not a Redis address: ${redactUrl(options.url)}`, { cause: err });
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RemoteStoreError('bad-url', `Not a Redis address (expected redis:// or rediss://): ${redactUrl(options.url)}`);
  }
  const extra: RedisOptions = {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    commandTimeout: options.commandTimeoutMs ?? 30_000,
    maxRetriesPerRequest: 1,
    // A few quick reconnects survive a restart; after that calls fail instead of waiting.
    retryStrategy: (times) => (times > 3 ? null : Math.min(times * 200, 1000)),
    enableOfflineQueue: true,
    connectionName: 'agent-session-inspector',
  };
  // ioredis lets the address's fields win over the options, so a password given apart from the address goes into it.
  if (options.password !== undefined) parsed.password = encodeURIComponent(options.password);
  if (options.tls) extra.tls = options.tls;
  const RedisClient = loadIoRedis();
  const client = new RedisClient(options.password !== undefined ? parsed.toString() : options.url, extra);
  // Errors reach the caller through the failing command; an unhandled 'error' event would crash the process. The
  // last one is kept: when connecting fails, ioredis rejects with "Connection is closed" and the reason (refused,
  // WRONGPASS) only came as an event.
  let lastError: unknown;
  client.on('error', (err: unknown) => {
    lastError = err;
  });
  const secret = secretOf(options.url, options.password);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    client.disconnect();
    const reason = lastError !== undefined && /Connection is closed/i.test(err instanceof Error ? err.message : '') ? lastError : err;
    throw translateRedisError(reason, `Redis ${describeRedisUrl(options.url)}`, secret);
  }
  return client;
}

/** `host:port/db` of an address, without credentials. */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    const db = u.pathname.replace(/^\//, '') || '0';
    return `${u.hostname}${u.port ? ':' + u.port : ''}/${db}`;
  } catch {
    return redactUrl(url);
  }
}
