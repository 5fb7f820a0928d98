/**
 * Clients for the Redis store: one place that turns an address and options into an `ioredis` client that fails a
 * call instead of queueing it forever when the server is gone (bounded reconnects, a command timeout, no offline
 * queue once connected), with TLS from `rediss://` or `tls`.
 */
import { connect as netConnect } from 'node:net';
import type Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { loadIoRedis } from './serverDrivers';
import type { ConnectionOptions } from 'node:tls';
import {
  RemoteStoreError,
  credentialsUnclear,
  passwordEndsAddress,
  redactUrl,
  secretOf,
  translateRedisError,
  unreadableAddress,
} from './remoteErrors';

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

/** The highest database number an address may name: Redis reads SELECT's argument as a C `int`. */
const MAX_DATABASE = 2 ** 31 - 1;

/**
 * How long a TLS handshake may go unanswered before we ask whether the server speaks plain-text Redis. A plain
 * server reads the TLS hello as the start of a command line and waits for the rest, so the handshake would only end
 * at the connect timeout, reported as a timeout. A handshake with a TLS server takes milliseconds.
 */
const TLS_PROBE_AFTER_MS = 1_000;
/** How long that probe waits for the plain-text answer. */
const TLS_PROBE_TIMEOUT_MS = 2_000;

/**
 * The database text an address names, where ioredis reads it: the path, else the last `db` parameter, else none
 * (database 0).
 */
function databaseText(u: URL): string | undefined {
  const path = u.pathname.replace(/^\//, '');
  return path !== '' ? path : u.searchParams.getAll('db').at(-1);
}

/** A connected client, or a `RemoteStoreError` saying why there is none. */
export async function connectRedis(options: RedisConnectionOptions): Promise<Redis> {
  // A password holding `/`, `?` or `#` unencoded ends the address early: `user:12/34@host` parses as host `user`,
  // port 12, so the client would connect elsewhere and show the password as part of the address.
  if (credentialsUnclear(options.url))
    throw new RemoteStoreError(
      'bad-url',
      passwordEndsAddress(options.url)
        ? `The password in ${redactUrl(options.url)} holds a character that ends an address (/, ? or #): percent-encode it ` +
            '(%2F, %3F, %23), or give it apart from the address (the password option).'
        : unreadableAddress(options.url),
    );
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    // Neither the cause (Node's URL error keeps its whole input) nor the query (redactUrl can only mask a
    // `?password=` in an address that parses) goes into the error.
    throw new RemoteStoreError('bad-url', `Not a Redis address: ${redactUrl(options.url.replace(/[?#][^]*$/, '?…'))}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RemoteStoreError('bad-url', `Not a Redis address (expected redis:// or rediss://): ${redactUrl(options.url)}`);
  }
  // ioredis sends `SELECT parseInt(text)`: `NaN` fails with an error nothing can catch, and a huge number loses digits.
  const dbText = databaseText(parsed);
  if (dbText !== undefined && (!/^\d+$/.test(dbText) || Number(dbText) > MAX_DATABASE))
    throw new RemoteStoreError(
      'bad-url',
      `The database in ${redactUrl(options.url)} is not a number from 0 to ${MAX_DATABASE}: ${JSON.stringify(dbText)}`,
    );
  const db = dbText === undefined ? 0 : Number(dbText);
  const connectTimeout = options.connectTimeoutMs ?? 10_000;
  const extra: RedisOptions = {
    lazyConnect: true,
    connectTimeout,
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
  const where = `Redis ${describeRedisUrl(options.url)}`;
  const secret = secretOf(options.url, options.password);
  let probe: NodeJS.Timeout | undefined;
  const plainText = new Promise<never>((_, reject) => {
    if (parsed.protocol !== 'rediss:' && !options.tls) return;
    probe = setTimeout(
      () => {
        if (client.status !== 'connecting') return;
        void answersPlainText(parsed.hostname.replace(/^\[|\]$/g, ''), Number(parsed.port || 6379)).then((plain) => {
          if (plain)
            reject(
              new RemoteStoreError(
                'tls',
                `${where}: the server does not speak TLS (it answers in plain text). Use redis:// for it, or turn TLS on at the server.`,
              ),
            );
        });
      },
      Math.min(TLS_PROBE_AFTER_MS, connectTimeout / 2),
    );
  });
  try {
    await Promise.race([client.connect(), plainText]);
    await client.ping();
    // ioredis selects the address's database while connecting, but when the server refuses (no such database) it
    // only emits an event and stays on database 0: selecting again here makes that refusal the caller's error.
    if (db !== 0) await client.select(db);
  } catch (err) {
    client.disconnect();
    const reason = lastError !== undefined && /Connection is closed/i.test(err instanceof Error ? err.message : '') ? lastError : err;
    throw translateRedisError(reason, where, secret);
  } finally {
    clearTimeout(probe);
  }
  return client;
}

/**
 * Whether a plain-text `PING` to host:port gets a RESP line back (`+PONG`, `-NOAUTH …`): the server speaks Redis
 * without TLS. A TLS server answers the plain text with nothing or a TLS alert, never with such a line.
 */
function answersPlainText(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host, port });
    let answer = Buffer.alloc(0);
    const done = (plain: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(plain);
    };
    const timer = setTimeout(() => done(false), TLS_PROBE_TIMEOUT_MS);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      if (answer.includes('\r\n') || answer.length > 512) done(/^[+-][^\r\n]*\r\n/.test(answer.toString('latin1')));
    });
    socket.on('error', () => done(false));
    socket.once('close', () => done(false));
  });
}

/** `host:port/db` of an address, without credentials. */
export function describeRedisUrl(url: string): string {
  // Such an address parses with the password in its host, port or path (`credentialsUnclear`).
  if (credentialsUnclear(url)) return redactUrl(url);
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? ':' + u.port : ''}/${databaseText(u) ?? '0'}`;
  } catch {
    return redactUrl(url);
  }
}
