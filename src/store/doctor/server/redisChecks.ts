/**
 * The doctor on a Redis store written by `RedisSession` (docs/doctor.md, "Server stores"), with read commands only
 * (SCAN, TYPE, LRANGE, LLEN). Sessions are found as `SCAN MATCH <prefix>:* TYPE hash|list` meets their keys: a hash
 * `<prefix>:<id>` or a list `<prefix>:<id>:messages`, so a list whose hash is gone is found too. Redis has no read
 * snapshot: a session written while the check reads it is seen as it was part way through.
 */
import { redisSessionKeys, strictUtf8 } from '../../remote/redisSession';
import { globEscape, type RedisStoreBrowser } from '../../remote/redisBrowser';
import type { Finding } from '../checkContext';
import { SessionScan, isOutputOf, literalCallId, type TipCall } from './sessionScan';

/** Keys SCAN looks at per call. */
const SCAN_COUNT = 1000;
/** List entries read per LRANGE. */
const PAGE = 500;
const LIST_SUFFIX = ':messages';

type Client = RedisStoreBrowser['client'];

/**
 * Checks the store, or one session of it. Returns, for one session, whether the store holds it at all (its hash or its
 * list, of any type); `undefined` for the whole store.
 */
export async function checkRedisStore(
  browser: RedisStoreBrowser,
  session: string | null,
  add: (f: Finding) => void,
): Promise<boolean | undefined> {
  const { client, keyPrefix } = browser;
  if (session !== null) return checkSession(client, keyPrefix, session, add);
  // SCAN may return a key twice (while the server resizes its table), and a session's hash and its list are met in
  // different scans: the ids checked are kept (one string per session) so no session is checked or counted twice.
  const checked = new Set<string>();
  // The server filters by type (Redis 6+), so no key costs a TYPE of its own: hashes are sessions, lists named
  // `…:messages` are found even when their hash is gone.
  for (const type of ['hash', 'list'] as const) {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${globEscape(keyPrefix)}:*`, 'COUNT', SCAN_COUNT, 'TYPE', type);
      cursor = next;
      for (const key of keys) {
        const rest = key.slice(keyPrefix.length + 1);
        const id = type === 'hash' ? rest : rest.endsWith(LIST_SUFFIX) ? rest.slice(0, -LIST_SUFFIX.length) : null;
        if (id === null || checked.has(id)) continue;
        checked.add(id);
        await checkSession(client, keyPrefix, id, add);
      }
    } while (cursor !== '0');
  }
  return undefined;
}

/** Checks one session; returns whether either of its keys exists. */
async function checkSession(client: Client, prefix: string, session: string, add: (f: Finding) => void): Promise<boolean> {
  const keys = redisSessionKeys(prefix, session);
  // Both types and the first page in one round trip: most sessions need no other (on a key that is not a list the
  // LRANGE fails, and its reply is not used).
  const replies =
    (await client
      .pipeline()
      .type(keys.session)
      .type(keys.messages)
      .lrangeBuffer(keys.messages, 0, PAGE - 1)
      .exec()) ?? [];
  const [hashType, listType] = replies.slice(0, 2).map(([err, type]) => {
    if (err) throw err;
    return String(type);
  });
  const quoted = JSON.stringify(session);
  if (hashType !== 'none' && hashType !== 'hash') {
    add({
      kind: 'wrong-key-type',
      session,
      detail: `key ${JSON.stringify(keys.session)} of session ${quoted} holds a ${hashType}, not a hash: add_items refuses the session`,
    });
  }
  if (listType !== 'none' && listType !== 'list') {
    add({
      kind: 'wrong-key-type',
      session,
      detail: `key ${JSON.stringify(keys.messages)} of session ${quoted} holds a ${listType}, not a list: get_items and add_items fail`,
    });
  }
  const found = hashType !== 'none' || listType !== 'none';
  if (listType !== 'list') return found;
  if (hashType === 'none') {
    const n = await client.llen(keys.messages);
    add({
      kind: 'messages-without-session',
      session,
      detail: `list ${JSON.stringify(keys.messages)} holds ${n} entr${n === 1 ? 'y' : 'ies'}, and there is no hash ${JSON.stringify(keys.session)}`,
    });
  }
  const scan = new SessionScan(session, keys.messages, (position) => `entry ${position}`, add);
  const first = replies[2]?.[1] as Buffer[];
  for await (const page of entries(client, keys.messages, first)) for (const e of page) scan.see({ ref: e.ref, text: strictUtf8(e.raw) });
  const call = scan.lastCall();
  if (call && !(await hasOutput(client, keys.messages, call))) add(scan.danglingFinding(call));
  return found;
}

interface ListEntry {
  /** The 1-based list position. */
  ref: number;
  raw: Buffer;
}

/**
 * The list's entries by position, a page of `PAGE` at a time (the first page given when it was read already): pages,
 * not entries, since a step of an async loop costs a promise.
 */
async function* entries(client: Client, key: string, first?: Buffer[]): AsyncGenerator<ListEntry[]> {
  for (let start = 0; ; start += PAGE) {
    const page = start === 0 && first !== undefined ? first : await client.lrangeBuffer(key, start, start + PAGE - 1);
    yield page.map((raw, i) => ({ ref: start + i + 1, raw }));
    if (page.length < PAGE) return;
  }
}

/** Whether the list holds the call's output: entries that can hold it are decoded (a call id written as it is). */
async function hasOutput(client: Client, key: string, call: TipCall): Promise<boolean> {
  const literal = literalCallId(call.callId);
  for await (const page of entries(client, key)) {
    if (page.some((e) => (literal === null || e.raw.includes(literal)) && isOutputOf(strictUtf8(e.raw), call))) return true;
  }
  return false;
}
