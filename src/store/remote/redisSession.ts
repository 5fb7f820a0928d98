import type { AgentInputItem, Session } from '@openai/agents';
import type Redis from 'ioredis';
import { checkLimitArgument, checkSessionId } from '../session/argumentChecks';
import { InvalidArgumentError, SessionClosedError } from '../errors';
import { fromStoredItems, toStoredItem } from '../format/itemShape';
import { pythonJsonDumpsCompact, pythonJsonLoads } from '../format/pythonJson';
import { checkSessionSettings } from '../session/sessionSettings';
import type { SessionSettings } from '../types';
import { connectRedis, describeRedisUrl, type RedisConnectionOptions } from './redisConnection';
import { RemoteStoreError, secretOf, translateRedisError } from './remoteErrors';

export const DEFAULT_REDIS_PREFIX = 'agents:session';

export interface RedisSessionOptions {
  sessionId: string;
  /** A client the application manages (not closed by `close()`). Give this or `connection`. */
  client?: Redis;
  /** Address and settings for a client the session owns. */
  connection?: RedisConnectionOptions;
  /** Key prefix (default `agents:session`, as Python). */
  keyPrefix?: string;
  /**
   * Seconds until the session's keys expire after each write (Python's `ttl`), a positive whole number; default:
   * never. Python also takes 0, and its first write then deletes the whole session (an expiry in 0 s deletes the key).
   */
  ttl?: number | null;
  sessionSettings?: SessionSettings | null;
  /** Never write: write methods throw `RemoteStoreError` `read-only` before sending anything. */
  readOnly?: boolean;
}

/** The three keys of a session, as Python names them. */
export function redisSessionKeys(prefix: string, sessionId: string): { session: string; messages: string; counter: string } {
  const session = `${prefix}:${sessionId}`;
  return { session, messages: `${session}:messages`, counter: `${session}:counter` };
}

/** RPUSH takes every item as one argument; Lua's `unpack` has a stack limit, so rows go in slices of this size. */
const PUSH_SLICE = 1000;

/**
 * One atomic write, doing what Python's watched MULTI does: refuse keys of the wrong type, then HSET session_id,
 * HSETNX created_at, RPUSH the items, HSET updated_at and, with a TTL, PEXPIREAT every key at server time + ttl.
 * Python takes `now` from the client clock without a TTL and from the server's TIME with one; so does this.
 * KEYS: session, messages, counter. ARGV: session id, client now (seconds), ttl seconds or '' , items…
 */
const ADD_ITEMS_LUA = `
local st = redis.call('TYPE', KEYS[1]).ok
if st ~= 'none' and st ~= 'hash' then return redis.error_reply('WRONGTYPE session metadata key must contain a hash') end
local mt = redis.call('TYPE', KEYS[2]).ok
if mt ~= 'none' and mt ~= 'list' then return redis.error_reply('WRONGTYPE session messages key must contain a list') end
local now = ARGV[2]
local expire_at = nil
if ARGV[3] ~= '' then
  local t = redis.call('TIME')
  now = t[1]
  expire_at = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3]) * 1000)
end
redis.call('HSET', KEYS[1], 'session_id', ARGV[1])
redis.call('HSETNX', KEYS[1], 'created_at', now)
local n = #ARGV
local i = 4
while i <= n do
  local j = math.min(i + ${PUSH_SLICE - 1}, n)
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, j))
  i = j + 1
end
redis.call('HSET', KEYS[1], 'updated_at', now)
if expire_at then
  for _, k in ipairs(KEYS) do redis.call('PEXPIREAT', k, expire_at) end
end
return n - 3
`;

/**
 * The `@openai/agents` `Session` on Redis, writing exactly what Python's `RedisSession` writes: a hash
 * `<prefix>:<id>` (`session_id`, `created_at`, `updated_at` as Unix-second strings), a list `<prefix>:<id>:messages`
 * of compact `json.dumps` items, and the optional TTL on all keys (docs/session-format.md §15.2).
 */
export class RedisSession implements Session {
  readonly sessionId: string;
  readonly sessionSettings: SessionSettings;
  readonly keyPrefix: string;
  readonly ttl: number | null;
  readonly readOnly: boolean;
  private readonly keys: { session: string; messages: string; counter: string };
  private client: Redis | undefined;
  private connecting: Promise<Redis> | undefined;
  private readonly connection: RedisConnectionOptions | undefined;
  private readonly ownsClient: boolean;
  private readonly where: string;
  private closed = false;

  constructor(options: RedisSessionOptions) {
    if (typeof options.sessionId !== 'string') throw new InvalidArgumentError('sessionId must be a string');
    // Keys are UTF-8: ids differing only in a lone surrogate would all name the keys of `…\uFFFD`, one merged session.
    checkSessionId(options.sessionId);
    this.sessionId = options.sessionId;
    this.sessionSettings = checkSessionSettings(options.sessionSettings);
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_PREFIX;
    const ttl = options.ttl ?? null;
    if (ttl !== null && (!Number.isInteger(ttl) || ttl <= 0))
      throw new InvalidArgumentError(
        `ttl must be a positive whole number of seconds, or null for none, got ${String(ttl)} (a ttl of 0 would delete the session on every write)`,
      );
    this.ttl = ttl;
    this.readOnly = !!options.readOnly;
    this.keys = redisSessionKeys(this.keyPrefix, this.sessionId);
    if (options.client) {
      this.client = options.client;
      this.ownsClient = false;
      this.where = 'Redis';
    } else if (options.connection) {
      this.connection = options.connection;
      this.ownsClient = true;
      this.where = `Redis ${describeRedisUrl(options.connection.url)}`;
    } else {
      throw new InvalidArgumentError('RedisSession needs a client or a connection');
    }
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  async getItems(limit?: number | null): Promise<AgentInputItem[]> {
    return fromStoredItems(await this.getStoredItems(limit));
  }

  /** Decoded items exactly as stored, oldest first, skipping entries that do not decode (as Python). */
  async getStoredItems(limit?: number | null): Promise<unknown[]> {
    const effective = checkLimitArgument('limit', limit) ?? this.sessionSettings.limit ?? null;
    return this.run(async (redis) => {
      if (effective === null) return decodeAll(await redis.lrangeBuffer(this.keys.messages, 0, -1));
      if (effective <= 0) return [];
      for (let window = effective; ; window *= 2) {
        const raw = await redis.lrangeBuffer(this.keys.messages, -window, -1);
        const items = decodeAll(raw);
        if (items.length >= effective) return items.slice(items.length - effective);
        if (raw.length < window) return items;
      }
    });
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    this.assertOpen();
    if (items.length === 0) return;
    this.assertWritable('addItems');
    await this.addStoredTexts(items.map((item) => pythonJsonDumpsCompact(toStoredItem(item))));
  }

  /** Appends already-encoded entries atomically (used to copy a session byte for byte). */
  async addStoredTexts(texts: readonly string[]): Promise<void> {
    this.assertOpen();
    if (texts.length === 0) return;
    this.assertWritable('addItems');
    const now = String(Math.floor(Date.now() / 1000));
    await this.run((redis) =>
      redis.eval(
        ADD_ITEMS_LUA,
        3,
        this.keys.session,
        this.keys.messages,
        this.keys.counter,
        this.sessionId,
        now,
        this.ttl === null ? '' : String(this.ttl),
        ...texts,
      ),
    );
  }

  /** RPOP until an entry decodes (entries that do not are dropped, as in Python); undefined when empty. */
  async popItem(): Promise<AgentInputItem | undefined> {
    this.assertOpen();
    this.assertWritable('popItem');
    return this.run(async (redis) => {
      for (;;) {
        const raw = await redis.rpopBuffer(this.keys.messages);
        if (raw === null) return undefined;
        const decoded = decodeEntry(raw);
        if (decoded !== NOT_JSON) return fromStoredItems([decoded])[0];
      }
    });
  }

  /** Deletes the session's three keys. */
  async clearSession(): Promise<void> {
    this.assertOpen();
    this.assertWritable('clearSession');
    await this.run((redis) => redis.del(this.keys.session, this.keys.messages, this.keys.counter));
  }

  /** Disconnects the client if the session made it; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsClient) {
      const client = this.client ?? (await this.connecting?.catch(() => undefined));
      if (client) await client.quit().catch(() => client.disconnect());
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new SessionClosedError();
  }

  private assertWritable(what: string): void {
    if (this.readOnly) throw new RemoteStoreError('read-only', `${this.where}: ${what} refused: the session was opened read-only.`);
  }

  private async redis(): Promise<Redis> {
    if (this.client) return this.client;
    this.connecting ??= connectRedis(this.connection as RedisConnectionOptions).then(
      (c) => (this.client = c),
      (err: unknown) => {
        this.connecting = undefined;
        throw err;
      },
    );
    return this.connecting;
  }

  private async run<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await fn(await this.redis());
    } catch (err) {
      if (err instanceof InvalidArgumentError || err instanceof SessionClosedError) throw err;
      throw translateRedisError(err, this.where, this.connection && secretOf(this.connection.url, this.connection.password));
    }
  }
}

const NOT_JSON = Symbol('not JSON');

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Strict UTF-8, as Python's `bytes.decode('utf-8')`: null for bytes that are not UTF-8, and a leading byte order mark
 * kept (a `TextDecoder` drops it by default), so that `json.loads` refuses the text as Python's does ("Unexpected
 * UTF-8 BOM"). One decoder serves every call: a whole-buffer decode keeps no state.
 */
export function strictUtf8(raw: Uint8Array): string | null {
  try {
    return UTF8.decode(raw);
  } catch {
    return null;
  }
}

/** Python decodes bytes as UTF-8 (strictly: invalid bytes make the entry corrupt) and then `json.loads`. */
function decodeEntry(raw: Buffer): unknown {
  const text = strictUtf8(raw);
  if (text === null) return NOT_JSON;
  const d = pythonJsonLoads(text);
  return d.ok ? d.value : NOT_JSON;
}

function decodeAll(raw: readonly Buffer[]): unknown[] {
  const out: unknown[] = [];
  for (const r of raw) {
    const v = decodeEntry(r);
    if (v !== NOT_JSON) out.push(v);
  }
  return out;
}
