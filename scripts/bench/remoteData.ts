/**
 * The content of the remote-store benchmark (issue 16), without I/O: which sessions exist, how many items each has,
 * when each turn was written, and the exact text of every item, in Python's format (compact `json.dumps`, ASCII).
 *
 * The same definitions produce the rows twice: `renderItem` here (the Redis load and the checks) and
 * `messageTextSql` / `turnTimeSql` (the PostgreSQL load, generated server-side from `generate_series`). The bench
 * compares sample rows read back from each server with `renderItem`, and test/unit/bench/remoteData.test.ts checks
 * that every template renders text Python would have written.
 *
 * Shape: `sessions` sessions and exactly `messages` items. Three outliers (100,000, 20,000 and 5,000 items at
 * scale 1, at a quarter, half and three quarters of the session list) stand for the long-running agents a real
 * store has; every other session has 1–199 items, uniform, adjusted so the total is exact. Turns repeat a cycle of
 * three: two with a tool call (user, function_call, function_call_output, assistant) and one without (user,
 * assistant), so a session's last turn may be cut short. Session i starts `SESSION_SPACING_S` seconds after
 * session i − 1 and writes a turn every 20–60 s, so sessions overlap as concurrent agents do and the messages
 * table is written (and laid out) in time order, each turn's rows sharing one `created_at` (one transaction).
 */

export type ItemKind = 'user' | 'function_call' | 'function_call_output' | 'assistant';

export const MIN_SESSION_ITEMS = 1;
export const MAX_SESSION_ITEMS = 199;
/** The outliers at scale 1: [position in the session list (fraction), items]. */
export const BIG_SESSIONS: readonly (readonly [number, number])[] = [
  [0.25, 100_000],
  [0.5, 20_000],
  [0.75, 5_000],
];
/** Sessions and items at scale 1 (the store). */
export const FULL_SESSIONS = 100_000;
export const FULL_MESSAGES = 10_000_000;

export interface RemoteDataSpec {
  scale: number;
  sessions: number;
  messages: number;
  /** Items per session, by session index. */
  sizes: number[];
}

/** A deterministic 32-bit generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x100000000;
  };
}

/** Where the outliers go and how big they are, for a store of `sessions` sessions and `messages` items. */
export function bigSessions(sessions: number, messages: number): { index: number; size: number }[] {
  const factor = messages / FULL_MESSAGES;
  return BIG_SESSIONS.map(([at, size]) => ({
    index: Math.min(sessions - 1, Math.floor(sessions * at)),
    size: Math.max(MAX_SESSION_ITEMS + 1, Math.round(size * factor)),
  }));
}

/**
 * Items per session: the outliers of `bigSessions`, the others uniform in 1–199 (seeded), then nudged by ±1 in
 * index order until the total is exactly `messages`.
 */
export function sessionSizes(sessions: number, messages: number, seed = 16): number[] {
  if (!Number.isInteger(sessions) || sessions < 10) throw new Error(`need at least 10 sessions, got ${sessions}`);
  const big = bigSessions(sessions, messages);
  const bigIndexes = new Set(big.map((b) => b.index));
  if (bigIndexes.size !== big.length) throw new Error('the outliers collide; use more sessions');
  const rest = messages - big.reduce((s, b) => s + b.size, 0);
  const small = sessions - big.length;
  if (rest < small * MIN_SESSION_ITEMS || rest > small * MAX_SESSION_ITEMS) {
    throw new Error(`${messages} items cannot be spread over ${sessions} sessions of ${MIN_SESSION_ITEMS}–${MAX_SESSION_ITEMS} items`);
  }
  const next = rng(seed);
  const sizes = new Array<number>(sessions);
  let sum = 0;
  for (let i = 0; i < sessions; i++) {
    if (bigIndexes.has(i)) continue;
    const n = MIN_SESSION_ITEMS + Math.floor(next() * (MAX_SESSION_ITEMS - MIN_SESSION_ITEMS + 1));
    sizes[i] = n;
    sum += n;
  }
  let diff = rest - sum;
  while (diff !== 0) {
    for (let i = 0; i < sessions && diff !== 0; i++) {
      if (bigIndexes.has(i)) continue;
      const n = sizes[i] as number;
      if (diff > 0 && n < MAX_SESSION_ITEMS) {
        sizes[i] = n + 1;
        diff--;
      } else if (diff < 0 && n > MIN_SESSION_ITEMS) {
        sizes[i] = n - 1;
        diff++;
      }
    }
  }
  for (const b of big) sizes[b.index] = b.size;
  return sizes;
}

/** The store at `scale` (1 = 100,000 sessions, 10,000,000 items). */
export function remoteDataSpec(scale: number): RemoteDataSpec {
  if (!(scale > 0) || scale > 10) throw new Error(`scale must be in (0, 10], got ${scale}`);
  const sessions = Math.max(10, Math.round(FULL_SESSIONS * scale));
  const messages = Math.max(sessions * 20, Math.round(FULL_MESSAGES * scale));
  return { scale, sessions, messages, sizes: sessionSizes(sessions, messages) };
}

// ---------------------------------------------------------------------------------------------------------------
// Sessions and turns

/** Session ids look like `acct-042-0012345`: an account (i mod 97, about 1 % of the sessions each) and a number. */
export function sessionId(i: number): string {
  return `acct-${String(i % 97).padStart(3, '0')}-${String(i).padStart(7, '0')}`;
}

/** Turns a session of `n` items has (cycle of 4 + 4 + 2 items). */
export function turnCount(n: number): number {
  const r = n % 10;
  return 3 * Math.floor(n / 10) + (r === 0 ? 0 : r <= 4 ? 1 : r <= 8 ? 2 : 3);
}

/** Position (0-based) of turn k's first item. */
export function turnStart(k: number): number {
  return 10 * Math.floor(k / 3) + [0, 4, 8][k % 3]!;
}

/** Items of turn k in a session of `n` items (the last turn may be cut short). */
export function turnItems(n: number, k: number): number {
  return Math.min(k % 3 === 2 ? 2 : 4, n - turnStart(k));
}

const TOOL_TURN: readonly ItemKind[] = ['user', 'function_call', 'function_call_output', 'assistant'];

/** What item `p` of turn `k` is. */
export function itemKind(k: number, p: number): ItemKind {
  if (k % 3 === 2) return p === 0 ? 'user' : 'assistant';
  return TOOL_TURN[p] as ItemKind;
}

/** The session list starts at this instant (UTC, and the PostgreSQL server's `timestamp without time zone`). */
export const EPOCH_TEXT = '2025-01-06 00:00:00';
const EPOCH_MS = Date.UTC(2025, 0, 6);
/** Seconds between two sessions' first turns. */
export const SESSION_SPACING_S = 20;

export function turnGapSeconds(i: number): number {
  return 20 + ((i * 13) % 41);
}

/** Whole seconds after the epoch at which turn k of session i was written. */
export function turnSecond(i: number, k: number): number {
  return i * SESSION_SPACING_S + k * turnGapSeconds(i);
}

/** The microseconds of that turn's transaction time (makes `created_at` as fine-grained as CURRENT_TIMESTAMP). */
export function turnMicros(i: number, k: number): number {
  return (i * 7919 + k * 104729) % 1_000_000;
}

/** The turn's time as PostgreSQL's `to_char(…, 'YYYY-MM-DD HH24:MI:SS.US')` shows it. */
export function turnTimeText(i: number, k: number): string {
  const base = new Date(EPOCH_MS + turnSecond(i, k) * 1000).toISOString().slice(0, 19).replace('T', ' ');
  return `${base}.${String(turnMicros(i, k)).padStart(6, '0')}`;
}

/** The turn's time as Python's `RedisSession` stores it: `str(int(time.time()))`. */
export function turnUnixSeconds(i: number, k: number): string {
  return String(EPOCH_MS / 1000 + turnSecond(i, k));
}

export interface SessionRow {
  sessionId: string;
  /** `created_at` / `updated_at` as PostgreSQL shows them (microseconds). */
  createdText: string;
  updatedText: string;
  /** The same as Redis stores them (Unix seconds). */
  createdUnix: string;
  updatedUnix: string;
}

/** A session's row: created by its first turn's transaction, updated by its last one's (as the stores write). */
export function sessionRow(i: number, n: number): SessionRow {
  const last = Math.max(0, turnCount(n) - 1);
  return {
    sessionId: sessionId(i),
    createdText: turnTimeText(i, 0),
    updatedText: turnTimeText(i, last),
    createdUnix: turnUnixSeconds(i, 0),
    updatedUnix: turnUnixSeconds(i, last),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Item text

const WORDS = (
  'agent session weather forecast tomorrow paris berlin temperature degrees please summarise report latest numbers ' +
  'quarter revenue compare with last year and the of for a to in is what how why could you check table rows query ' +
  'index result error retry timeout window cache token model reply tool deploy build test review merge plan customer ' +
  'order invoice shipping status refund account balance ticket priority escalate'
).split(' ');

/** 4 KB of words (no quote, backslash or non-ASCII character: the JSON needs no escape inside it). */
export const FILLER: string = (() => {
  const next = rng(7);
  const parts: string[] = [];
  let length = 0;
  while (length < 4096) {
    const word = WORDS[Math.floor(next() * WORDS.length)] as string;
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ').slice(0, 4096);
})();

export const TOOLS: readonly string[] = ['get_weather', 'search_docs', 'run_query', 'lookup_account'];

/** A template part: literal text, or a value derived from (session i, turn k, item p, hash h). */
export type Part =
  | string
  | { filler: readonly [base: number, spread: number] }
  | { num: readonly [base: number, spread: number] }
  /** `tag`: `<i>_<k>` (call and message ids); `turn`: k + 1; `tool`: the turn's tool name. */
  | { field: 'tag' | 'turn' | 'tool' };

const TAG = { field: 'tag' } as const;
const TURN = { field: 'turn' } as const;
const TOOL = { field: 'tool' } as const;

/** The stored text of each kind, as Python's SDK writes the Responses items (key order included). */
export const TEMPLATES: Record<ItemKind, readonly Part[]> = {
  user: ['{"content":"Turn ', TURN, ': ', { filler: [110, 120] }, '","role":"user"}'],
  function_call: [
    '{"arguments":"{\\"q\\":\\"',
    { filler: [40, 60] },
    '\\",\\"limit\\":',
    { num: [1, 20] },
    '}","call_id":"call_',
    TAG,
    '","name":"',
    TOOL,
    '","type":"function_call","id":"fc_',
    TAG,
    '","status":"completed"}',
  ],
  function_call_output: ['{"call_id":"call_', TAG, '","output":"', { filler: [100, 150] }, '","type":"function_call_output"}'],
  assistant: [
    '{"id":"msg_',
    TAG,
    '","content":[{"annotations":[],"text":"',
    { filler: [60, 110] },
    '","type":"output_text","logprobs":[]}],"role":"assistant","status":"completed","type":"message"}',
  ],
};

const MAX_FILLER = Math.max(
  ...Object.values(TEMPLATES).flatMap((parts) =>
    parts.map((p) => (typeof p === 'object' && 'filler' in p ? p.filler[0] + p.filler[1] : 0)),
  ),
);
/** Filler slices start in [0, FILLER_SPAN). */
const FILLER_SPAN = FILLER.length - MAX_FILLER;
const HASH_MOD = 1_000_003;

/** The per-item hash every derived value comes from. */
export function itemHash(i: number, k: number, p: number): number {
  return (i * 7919 + k * 104729 + p * 15485863) % HASH_MOD;
}

/** The stored text of item p of turn k of session i. */
export function renderItem(i: number, k: number, p: number): string {
  const h = itemHash(i, k, p);
  let out = '';
  for (const part of TEMPLATES[itemKind(k, p)]) {
    if (typeof part === 'string') out += part;
    else if ('field' in part) {
      if (part.field === 'tag') out += `${i}_${k}`;
      else if (part.field === 'turn') out += String(k + 1);
      else out += TOOLS[k % TOOLS.length];
    } else if ('filler' in part) {
      const start = h % FILLER_SPAN;
      out += FILLER.slice(start, start + part.filler[0] + (h % part.filler[1]));
    } else {
      out += String(part.num[0] + (h % part.num[1]));
    }
  }
  return out;
}

/** Every item of session i (n items), in order: what a whole-session read returns. */
export function* sessionItems(i: number, n: number): Generator<string> {
  for (let k = 0, turns = turnCount(n); k < turns; k++) {
    for (let p = 0, count = turnItems(n, k); p < count; p++) yield renderItem(i, k, p);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The same in SQL (PostgreSQL), for the server-side load

const sqlText = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** `itemHash` over columns (bigint arithmetic). */
export function itemHashSql(i: string, k: string, p: string): string {
  return `((${i})::bigint * 7919 + (${k})::bigint * 104729 + (${p})::bigint * 15485863) % ${HASH_MOD}`;
}

function partsSql(parts: readonly Part[], c: { i: string; k: string; h: string }): string {
  const pieces = parts.map((part) => {
    if (typeof part === 'string') return sqlText(part);
    if ('field' in part) {
      if (part.field === 'tag') return `(${c.i})::text || '_' || (${c.k})::text`;
      if (part.field === 'turn') return `((${c.k}) + 1)::text`;
      return `(ARRAY[${TOOLS.map(sqlText).join(', ')}])[(${c.k}) % ${TOOLS.length} + 1]`;
    }
    if ('filler' in part) {
      return `substr(${sqlText(FILLER)}, 1 + ((${c.h}) % ${FILLER_SPAN})::int, (${part.filler[0]} + (${c.h}) % ${part.filler[1]})::int)`;
    }
    return `(${part.num[0]} + (${c.h}) % ${part.num[1]})::text`;
  });
  return `(${pieces.join(' || ')})`;
}

/** `renderItem` as a SQL expression over the columns named in `c` (session index, turn, item, hash). */
export function messageTextSql(c: { i: string; k: string; p: string; h: string }): string {
  const t = (kind: ItemKind): string => partsSql(TEMPLATES[kind], c);
  return `CASE WHEN (${c.k}) % 3 = 2 THEN (CASE WHEN (${c.p}) = 0 THEN ${t('user')} ELSE ${t('assistant')} END)
     WHEN (${c.p}) = 0 THEN ${t('user')} WHEN (${c.p}) = 1 THEN ${t('function_call')}
     WHEN (${c.p}) = 2 THEN ${t('function_call_output')} ELSE ${t('assistant')} END`;
}

/** `turnTimeText` as a `timestamp` expression, from the turn's whole second and the session and turn numbers. */
export function turnTimeSql(second: string, i: string, k: string): string {
  return (
    `(TIMESTAMP '${EPOCH_TEXT}' + make_interval(secs => (${second})::double precision)` +
    ` + (((${i})::bigint * 7919 + (${k})::bigint * 104729) % 1000000) * INTERVAL '1 microsecond')`
  );
}

/** `turnCount` in SQL. */
export function turnCountSql(n: string): string {
  return `(3 * ((${n}) / 10) + CASE WHEN (${n}) % 10 = 0 THEN 0 WHEN (${n}) % 10 <= 4 THEN 1 WHEN (${n}) % 10 <= 8 THEN 2 ELSE 3 END)`;
}

/** `turnStart` in SQL. */
export function turnStartSql(k: string): string {
  return `(10 * ((${k}) / 3) + CASE (${k}) % 3 WHEN 0 THEN 0 WHEN 1 THEN 4 ELSE 8 END)`;
}

/** `turnItems` in SQL. */
export function turnItemsSql(n: string, k: string): string {
  return `least(CASE WHEN (${k}) % 3 = 2 THEN 2 ELSE 4 END, (${n}) - ${turnStartSql(k)})`;
}
