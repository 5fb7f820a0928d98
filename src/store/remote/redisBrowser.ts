import type Redis from 'ioredis';
import { connectRedis, describeRedisUrl } from './redisConnection';
import { DEFAULT_REDIS_PREFIX, redisSessionKeys, strictUtf8 } from './redisSession';
import { secretOf, translateRedisError } from './remoteErrors';
import type {
  OpenRemoteStoreOptions,
  RemoteRow,
  RemoteSessionListRequest,
  RemoteSessionPage,
  RemoteSessionSummary,
  RemoteStoreBrowser,
} from './remoteStore';

/**
 * Keys SCAN looks at per call, at least: twice the page size, since a session has two keys (hash and list), so one
 * call fills about one page (a page holds what the calls met, so it can be somewhat longer than asked).
 */
const SCAN_MIN = 100;
/** With a filter, matches are sparse: larger steps, so a page is not hundreds of round trips. */
const SCAN_FILTERED = 1000;

/** The COUNT of each SCAN call for a page request. */
export function scanCount(request: { limit: number; prefix?: string }): number {
  return request.prefix ? SCAN_FILTERED : Math.max(SCAN_MIN, request.limit * 2);
}

/** Glob-escapes text for SCAN MATCH. */
export function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => '\\' + c);
}

/** Python stores `str(int(time.time()))`; shown as UTC `YYYY-MM-DD HH:MM:SS` like SQLite's CURRENT_TIMESTAMP. */
export function unixSecondsText(value: string | null): string | null {
  if (value === null || !/^-?\d+$/.test(value)) return value;
  const d = new Date(Number(value) * 1000);
  return Number.isNaN(d.getTime()) ? value : d.toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * The list length, `updated_at` and a digest of the newest entry, in one round trip: a pop followed by a push in the
 * same second leaves the first two alike, the digest tells them apart.
 */
const TOKEN_LUA = `
local n = redis.call('LLEN', KEYS[2])
local last = redis.call('LINDEX', KEYS[2], -1)
local u = redis.call('HGET', KEYS[1], 'updated_at')
return {n, u or '', last and redis.sha1hex(last) or ''}
`;

/**
 * Browsing a Redis store written by `RedisSession`. Sessions are the hashes under the prefix (found with SCAN …
 * TYPE hash, never KEYS, so a production server is never blocked); Redis keeps no order across keys, so each page
 * is sorted newest first by `updated_at` but pages follow the scan. A session's entries come by list position.
 */
export class RedisStoreBrowser implements RemoteStoreBrowser {
  readonly kind = 'redis' as const;
  readonly label: string;
  private readonly where: string;

  private constructor(
    readonly client: Redis,
    url: string,
    readonly keyPrefix: string,
    private readonly secret: string | undefined,
  ) {
    this.label = describeRedisUrl(url);
    this.where = `Redis ${this.label}`;
  }

  static async open(options: OpenRemoteStoreOptions): Promise<RedisStoreBrowser> {
    const client = await connectRedis({
      ...options.redis,
      url: options.url,
      password: options.password,
      connectTimeoutMs: options.connectTimeoutMs,
      commandTimeoutMs: options.queryTimeoutMs,
    });
    return new RedisStoreBrowser(client, options.url, options.keyPrefix ?? DEFAULT_REDIS_PREFIX, secretOf(options.url, options.password));
  }

  async listSessions(request: RemoteSessionListRequest): Promise<RemoteSessionPage> {
    const match = `${globEscape(this.keyPrefix)}:${globEscape(request.prefix ?? '')}*`;
    return this.run(async () => {
      let cursor = request.cursor ?? '0';
      const keys: string[] = [];
      do {
        const [next, found] = await this.client.scan(cursor, 'MATCH', match, 'COUNT', scanCount(request), 'TYPE', 'hash');
        cursor = next;
        keys.push(...found);
      } while (cursor !== '0' && keys.length < request.limit);
      const sessions = await this.summaries(keys);
      sessions.sort((a, b) => (b.updatedAt ?? '').localeCompare(a.updatedAt ?? '') || a.sessionId.localeCompare(b.sessionId));
      return { sessions, nextCursor: cursor === '0' ? null : cursor };
    });
  }

  /** Unknown: counting would mean scanning every key of the server. */
  async countSessions(): Promise<null> {
    return null;
  }

  async getSession(sessionId: string): Promise<RemoteSessionSummary | null> {
    return this.run(async () => {
      const [found] = await this.summaries([redisSessionKeys(this.keyPrefix, sessionId).session], sessionId);
      return found ?? null;
    });
  }

  async readRows(sessionId: string, offset: number, limit: number): Promise<RemoteRow[]> {
    const { messages } = redisSessionKeys(this.keyPrefix, sessionId);
    return this.run(async () => {
      const raw = await this.client.lrangeBuffer(messages, offset, offset + limit - 1);
      return raw.map((b, i) => ({
        position: offset + i + 1,
        id: null,
        text: strictUtf8(b),
        createdAt: null,
        cursor: String(offset + i + 1),
      }));
    });
  }

  /** A list has positions: the rows after a position are one LRANGE. */
  async readRowsAfter(sessionId: string, after: { cursor: string; position: number } | null, limit: number): Promise<RemoteRow[]> {
    return this.readRows(sessionId, after?.position ?? 0, limit);
  }

  async sessionToken(sessionId: string): Promise<string> {
    const keys = redisSessionKeys(this.keyPrefix, sessionId);
    return this.run(async () => {
      const r = (await this.client.eval(TOKEN_LUA, 2, keys.session, keys.messages)) as [number, string, string];
      return r.join(':');
    });
  }

  async storeToken(): Promise<string> {
    return this.run(async () => String(await this.client.dbsize()));
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }

  /** Summaries of session hashes in one pipeline (HMGET + LLEN each); hashes without `session_id` are not sessions. */
  private async summaries(hashKeys: string[], knownId?: string): Promise<RemoteSessionSummary[]> {
    if (hashKeys.length === 0) return [];
    const pipe = this.client.pipeline();
    for (const key of hashKeys) {
      pipe.hmget(key, 'session_id', 'created_at', 'updated_at');
      pipe.llen(`${key}:messages`);
    }
    const replies = (await pipe.exec()) ?? [];
    const out: RemoteSessionSummary[] = [];
    for (let i = 0; i < hashKeys.length; i++) {
      const [errA, fields] = replies[2 * i] ?? [];
      const [errB, length] = replies[2 * i + 1] ?? [];
      if (errA) throw errA;
      const [id, created, updated] = (fields as (string | null)[] | undefined) ?? [];
      const count = errB ? 0 : Number(length ?? 0);
      if (id == null && created == null && updated == null && count === 0) continue; // no such session
      const sessionId = id ?? knownId ?? null;
      if (sessionId === null) {
        if (count > 0)
          out.push({
            sessionId: (hashKeys[i] as string).slice(this.keyPrefix.length + 1),
            createdAt: null,
            updatedAt: null,
            itemCount: count,
          });
        continue;
      }
      out.push({ sessionId, createdAt: unixSecondsText(created ?? null), updatedAt: unixSecondsText(updated ?? null), itemCount: count });
    }
    return out;
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translateRedisError(err, this.where, this.secret);
    }
  }
}
