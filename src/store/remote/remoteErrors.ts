/**
 * Errors of the server-backed stores (PostgreSQL, Redis). Each failure is classified, so the extension can say what
 * to do (check the address, the password, the schema) and tests can assert the class, and no message ever holds a
 * password: addresses are shown through `redactUrl`.
 */
import { SessionError } from '../errors';

export type RemoteStoreProblem =
  /** Nothing answers at the address (refused, unknown host, unreachable network). */
  | 'unreachable'
  /** The server refused the user name or password. */
  | 'auth'
  /** The server took longer than the configured timeout (connect, query or command). */
  | 'timeout'
  /** The TLS handshake failed or the server demands TLS. */
  | 'tls'
  /** The database (PostgreSQL) does not exist. */
  | 'missing-database'
  /** The session tables are not there. */
  | 'missing-table'
  /** The tables or keys exist but do not have the shape the Python SDK writes. */
  | 'wrong-schema'
  /** A write was asked of a store opened read-only (or of a read-only server / replica). */
  | 'read-only'
  /** The connection dropped while a call was running (server stopped or restarted). */
  | 'connection-lost'
  /** The address cannot be parsed or names an unsupported scheme. */
  | 'bad-url'
  /** Any other error the server reported. */
  | 'server';

export class RemoteStoreError extends SessionError {
  constructor(
    readonly problem: RemoteStoreProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message);
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/**
 * Whether `url` has an `@` that a URL parser does not read as the end of its `user:pass`: a password holding an
 * unencoded `/`, `?` or `#` (generated passwords often do) ends the address's authority early, so the parser fails
 * (`user:se/cret@host`) or, worse, reads `user:12/34@host/db` as host `user`, port 12 and a path: no password at all.
 * The password is then everything up to the last `@`, which only its writer can tell apart.
 */
export function credentialsUnclear(url: string): boolean {
  const start = url.indexOf('//');
  if (start < 0 || url.indexOf('@', start) < 0) return false;
  try {
    const u = new URL(url);
    return u.username === '' && u.password === '' && u.pathname.includes('@');
  } catch {
    return true;
  }
}

/**
 * For an address `credentialsUnclear` refuses, whether its password is to blame: true when it parses once everything
 * up to its last `@` is set aside, false when it does not parse even so (a port past 65535, no host), which a
 * message blaming the password would send the user looking in the wrong place.
 */
export function passwordEndsAddress(url: string): boolean {
  const start = url.indexOf('//');
  const at = url.lastIndexOf('@');
  if (start < 0 || at < start) return false;
  try {
    new URL(`${url.slice(0, start + 2)}user:password${url.slice(at)}`);
    return true;
  } catch {
    return false;
  }
}

/** The message for an address `credentialsUnclear` refuses whose password is not to blame (`passwordEndsAddress`). */
export function unreadableAddress(url: string): string {
  return `${redactUrl(url)} is not an address that can be read: check its host and port.`;
}

/**
 * Where an unclear address's password is (`credentialsUnclear`): from after the user name's `:` (from the `//` when
 * there is none) to the last `@`, everything that may be the password.
 */
function looseCredentials(url: string): { secretStart: number; at: number } {
  const start = url.indexOf('//') + 2;
  const at = url.lastIndexOf('@');
  const colon = url.indexOf(':', start);
  return { secretStart: colon >= 0 && colon < at ? colon + 1 : start, at };
}

/** The address with its password replaced by `***` (user names stay: they help to spot a wrong account). */
export function redactUrl(url: string): string {
  if (credentialsUnclear(url)) {
    const { secretStart, at } = looseCredentials(url);
    return `${url.slice(0, secretStart)}***${url.slice(at)}`;
  }
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const key of [...u.searchParams.keys()]) if (/pass|secret|key/i.test(key)) u.searchParams.set(key, '***');
    return u.toString();
  } catch {
    // Not a URL we can parse, and no `@` in it: only its query can hold a secret, masked as a parsed one's would be.
    return url.replace(/([?&][^=&#]*(?:pass|secret|key)[^=&#]*=)[^&#]*/gi, '$1***');
  }
}

/** The password to keep out of messages: the one given apart, else the address's own (undefined when none). */
export function secretOf(url: string, password?: string): string | undefined {
  if (password !== undefined) return password || undefined;
  if (credentialsUnclear(url)) {
    const { secretStart, at } = looseCredentials(url);
    return url.slice(secretStart, at) || undefined;
  }
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/** `text` with every occurrence of `secret` masked (a driver's message may echo the connection string). */
export function maskSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join('***');
}

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EADDRNOTAVAIL']);
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Problems both drivers report through Node's socket errors. */
function socketProblem(err: unknown): RemoteStoreProblem | undefined {
  const code = codeOf(err);
  const message = messageOf(err);
  if (code && NETWORK_CODES.has(code)) return 'unreachable';
  if (code && LOST_CODES.has(code)) return 'connection-lost';
  if (code === 'ETIMEDOUT' || /timeout|timed out/i.test(message)) return 'timeout';
  if (/ssl|tls|certificate|self.signed/i.test(message) || (code !== undefined && /^ERR_TLS|^CERT_|^DEPTH_ZERO|^UNABLE_TO/.test(code)))
    return 'tls';
  return undefined;
}

/**
 * A PostgreSQL driver error as a `RemoteStoreError` (SQLSTATE classes: 28 = authorization, 3D = no database,
 * 42P01 = no table, 42703 = no column, 57014 = statement timeout, 57P0x = server shutting down, 25006 = read-only).
 */
export function translatePostgresError(err: unknown, where: string, secret?: string): RemoteStoreError {
  if (err instanceof RemoteStoreError) return err;
  const code = codeOf(err);
  const message = maskSecret(messageOf(err), secret);
  const say = (problem: RemoteStoreProblem, text: string) => new RemoteStoreError(problem, `${where}: ${text}`, { cause: err });
  if (code === '28P01' || code === '28000')
    return say('auth', `the server refused the credentials (${message}). Check the user name and password.`);
  if (code === '3D000') return say('missing-database', `${message}. Check the database name in the address.`);
  if (code === '42P01') return say('missing-table', `${message}. Create the session tables (createTables: true, or your migrations).`);
  if (code === '42703' || code === '42804')
    return say('wrong-schema', `${message}. The table does not have the columns SQLAlchemySession writes.`);
  if (code === '57014') return say('timeout', `the query took longer than the timeout (${message}).`);
  if (code === '57P01' || code === '57P02' || code === '57P03')
    return say('connection-lost', `the server is shutting down or restarting (${message}).`);
  if (code === '25006') return say('read-only', `the server only allows reads here (${message}).`);
  if (/Connection terminated|connection closed|Client has encountered a connection error/i.test(message)) {
    if (/timeout/i.test(message)) return say('timeout', `no answer in time (${message}).`);
    return say('connection-lost', `the connection to the server was lost (${message}).`);
  }
  const socket = socketProblem(err);
  if (socket === 'unreachable')
    return say('unreachable', `nothing answers at that address (${message}). Is the server running and reachable?`);
  if (socket) return say(socket, message);
  return say('server', message);
}

/** A Redis (ioredis) error as a `RemoteStoreError`. */
export function translateRedisError(err: unknown, where: string, secret?: string): RemoteStoreError {
  if (err instanceof RemoteStoreError) return err;
  const message = maskSecret(messageOf(err), secret);
  // Not `err` itself: ioredis's errors hold the failed command, and AUTH's arguments are the user name and password.
  const kept = sanitizedCause(err, secret);
  const say = (problem: RemoteStoreProblem, text: string) => new RemoteStoreError(problem, `${where}: ${text}`, { cause: kept });
  if (/^(NOAUTH|WRONGPASS)|invalid password|invalid username-password/i.test(message))
    return say('auth', `the server refused the credentials (${message}). Check the user name and password.`);
  if (/^WRONGTYPE/.test(message)) return say('wrong-schema', `${message}. The keys do not have the types RedisSession writes.`);
  if (/^READONLY/.test(message)) return say('read-only', `the server only allows reads (${message}).`);
  if (/DB index is out of range|invalid DB index/i.test(message))
    return say(
      'missing-database',
      `the server has no such database (${message}). Check the database number in the address: a server has as many as ` +
        'its `databases` setting says (16 by default), numbered from 0.',
    );
  if (/Command timed out/i.test(message)) return say('timeout', `no answer in time (${message}).`);
  if (/Connection is closed|Stream isn't writeable|enableOfflineQueue|MaxRetriesPerRequest|Reached the max retries/i.test(message)) {
    const cause = (err as { lastNodeError?: unknown; previousErrors?: unknown[] }).lastNodeError;
    if (cause && socketProblem(cause) === 'unreachable')
      return say('unreachable', `nothing answers at that address (${maskSecret(messageOf(cause), secret)}).`);
    return say('connection-lost', `the connection to the server was lost or could not be made (${message}).`);
  }
  const socket = socketProblem(err);
  if (socket === 'unreachable')
    return say('unreachable', `nothing answers at that address (${message}). Is the server running and reachable?`);
  // What a TLS client reads when the server answered its hello in plain text (a Redis error line).
  if (socket === 'tls' && (codeOf(err) === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number|packet length too long/i.test(message)))
    return say('tls', `the TLS handshake failed (${message}): the server may not speak TLS. Use redis:// for a server without TLS.`);
  if (socket) return say(socket, message);
  return say('server', message);
}

/**
 * A driver error fit to keep as a `RemoteStoreError`'s cause: its class name, code, message and stack, masked, and
 * nothing else. Drivers hang what they sent on their errors (ioredis the failed command, whose arguments for AUTH are
 * the user name and the password), and an uncaught error or `console.error(err)` prints the cause with all of it.
 */
export function sanitizedCause(err: unknown, secret: string | undefined): Error {
  const copy = new Error(maskSecret(messageOf(err), secret));
  if (err instanceof Error) {
    Object.defineProperty(copy, 'name', { value: err.name, configurable: true, writable: true, enumerable: false });
    copy.stack = err.stack === undefined ? undefined : maskSecret(err.stack, secret);
  }
  const code = codeOf(err);
  if (code !== undefined) (copy as { code?: string }).code = code;
  return copy;
}
