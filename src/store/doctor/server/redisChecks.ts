/**
 * The doctor on a Redis store written by `RedisSession` (docs/doctor.md, "Server stores"), with read commands only
 * (SCAN, TYPE, LRANGE, LLEN). Sessions are found as `SCAN MATCH <prefix>:*` meets their keys: a hash `<prefix>:<id>`
 * or a list `<prefix>:<id>:messages`, so a list whose hash is gone is found too. Redis has no read snapshot: a session
 * written while the check reads it is seen as it was part way through.
 */
import { redisSessionKeys } from '../../remote/redisSession';
import { globEscape, type RedisStoreBrowser } from '../../remote/redisBrowser';
import type { Finding } from '../checkContext';
import { SessionScan, isOutputOf, literalCallId, type TipCall } from './sessionScan';

/** Keys SCAN looks at per call. */
const SCAN_COUNT = 1000;
/** List entries read per LRANGE. */
const PAGE = 500;
const LIST_SUFFIX = ':messages';

type Client = RedisStoreBrowser['client'];

export async function checkRedisStore(browser: RedisStoreBrowser, session: string | null, add: (f: Finding) => void): Promise<void> {
  const { client, keyPrefix } = browser;
  if (session !== null) return checkSession(client, keyPrefix, session, add);
  // SCAN may return a key twice (while the server resizes its table) and meets a session's hash and its list apart:
  // the ids checked are kept (one string per session) so no session is checked or counted twice.
  const checked = new Set<string>();
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${globEscape(keyPrefix)}:*`, 'COUNT', SCAN_COUNT);
    cursor = next;
    const types = await typesOf(client, keys);
    for (const [i, key] of keys.entries()) {
      const rest = key.slice(keyPrefix.length + 1);
      const id = types[i] === 'hash' ? rest : types[i] === 'list' && rest.endsWith(LIST_SUFFIX) ? rest.slice(0, -LIST_SUFFIX.length) : null;
      if (id === null || checked.has(id)) continue;
      checked.add(id);
      await checkSession(client, keyPrefix, id, add);
    }
  } while (cursor !== '0');
}

/** The TYPE of each key, in one round trip. */
async function typesOf(client: Client, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const pipe = client.pipeline();
  for (const k of keys) pipe.type(k);
  const replies = (await pipe.exec()) ?? [];
  return replies.map(([err, type]) => {
    if (err) throw err;
    return String(type);
  });
}

async function checkSession(client: Client, prefix: string, session: string, add: (f: Finding) => void): Promise<void> {
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
  if (listType !== 'list') return;
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
  for await (const e of entries(client, keys.messages, first)) scan.see(e);
  const call = scan.lastCall();
  if (call && !(await hasOutput(client, keys.messages, call))) add(scan.danglingFinding(call));
}

/**
 * The list's entries by position (1-based), `PAGE` at a time (the first page given when it was read already); bytes
 * that are not UTF-8 come as null text.
 */
async function* entries(client: Client, key: string, first?: Buffer[]): AsyncGenerator<{ ref: number; text: string | null; raw: Buffer }> {
  for (let start = 0; ; start += PAGE) {
    const page = start === 0 && first !== undefined ? first : await client.lrangeBuffer(key, start, start + PAGE - 1);
    for (const [i, raw] of page.entries()) yield { ref: start + i + 1, text: utf8OrNull(raw), raw };
    if (page.length < PAGE) return;
  }
}

/** Whether the list holds the call's output: entries that can hold it are decoded (a call id written as it is). */
async function hasOutput(client: Client, key: string, call: TipCall): Promise<boolean> {
  const literal = literalCallId(call.callId);
  for await (const e of entries(client, key)) {
    if (literal !== null && !e.raw.includes(literal)) continue;
    if (isOutputOf(e.text, call)) return true;
  }
  return false;
}

function utf8OrNull(b: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    return null;
  }
}
