/**
 * The remote-store section of `npm run bench` (issue 16): a PostgreSQL store and a Redis store of 100,000 sessions
 * and 10,000,000 items (times `--remote-scale`), each on its own throwaway server (scripts/host/servers.mjs), filled
 * in the Python SDK's format (scripts/bench/remoteData.ts) and then read through what the extension uses:
 * `openRemoteStore` → `new RemoteSessionSource(browser)`, plus `PostgresSession` / `RedisSession` for the agent's
 * own reads and writes.
 *
 * For each call: the first call (on a freshly opened source) and the median of `reps` warm runs, against a floor (the
 * raw driver doing the least possible for the same answer: one `pg.Client`, or one ioredis connection), measured in
 * the same run; for one untimed call, what the store sent and received (requests, rows, bytes off the socket); on
 * PostgreSQL the `EXPLAIN (ANALYZE, BUFFERS)` of each statement it ran. The issue's targets come out as booleans.
 *
 * The servers are started here and stopped at the end, also when something fails; nothing is cached between runs.
 */
import pg from 'pg';
import Redis from 'ioredis';
import type { AgentInputItem } from '@openai/agents';
import {
  DEFAULT_POSTGRES_TABLES,
  PostgresSession,
  RedisSession,
  RemoteSessionSource,
  openRemoteStore,
  postgresDdl,
  type ItemEntry,
} from '../../src/store';
import { InstallError } from '../host/hostTools.mjs';
import { ensureServerPackages, startPostgres, startRedis, type PostgresServer, type RedisServer } from '../host/servers.mjs';
import { batchSize, median, now, ratio, round, settle, timeOnce } from './measure';
import {
  SESSION_SPACING_S,
  itemHashSql,
  messageTextSql,
  remoteDataSpec,
  renderItem,
  sessionId,
  sessionItems,
  sessionRow,
  turnCount,
  turnCountSql,
  turnGapSeconds,
  turnItems,
  turnItemsSql,
  turnTimeSql,
  turnTimeText,
  type RemoteDataSpec,
} from './remoteData';

export type RemoteKind = 'postgres' | 'redis';
export const REMOTE_KINDS: readonly RemoteKind[] = ['postgres', 'redis'];

export interface RemoteConfig {
  stores: RemoteKind[];
  /** Multiplies sessions and items (1 = 100,000 and 10,000,000). */
  scale: number;
  reps: number;
}

/** The issue's targets, and the page sizes the extension uses. */
export const REMOTE_TARGETS = { sessionsPageMs: 100, itemsPageMs: 50 };
const SESSIONS_PAGE = 50;
const ITEMS_PAGE = 50;
const TURNS_PAGE = 200;
const WATCHED = 5;
/** The store's turn index reads this many rows per request (src/store/remote/remoteSessionSource.ts). */
const INDEX_BATCH = 1000;
/**
 * RedisStoreBrowser's SCAN COUNT (the floor walks the same SCAN steps, or it would return another page): twice the
 * page size, at least 100, without a filter; 1000 with one. A page holds the hashes of as many calls as reach the limit.
 */
const REDIS_SCAN_COUNT = 1000;
const redisScanCount = (filtered: boolean): number => (filtered ? REDIS_SCAN_COUNT : Math.max(100, SESSIONS_PAGE * 2));
const COMMON_PREFIX = 'acct-042-';
const PREFIX = 'agents:session';
const TABLES = DEFAULT_POSTGRES_TABLES;
const S = `"${TABLES.sessions}"`;
const M = `"${TABLES.messages}"`;
const MB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------------------------
// Report shapes

interface Side {
  firstMs: number;
  medianMs: number;
  samplesMs: number[];
  /** Calls averaged per warm sample. */
  batch: number;
}

/** What one untimed store call sent and received. */
export interface IoStats {
  /** PostgreSQL: statements (each one round trip); Redis: commands (a pipeline sends many in one round trip). */
  requests: number;
  /** Rows (PostgreSQL), or list entries + scanned keys + hashes read (Redis), summed over the replies. */
  rowsReceived: number;
  /** The largest reply, in the same unit. */
  maxRowsPerReply: number;
  /** Bytes read off the sockets during the call. */
  bytesReceived: number;
}

interface PlanEntry {
  sql: string;
  plan: string[];
}

export interface RemoteCall {
  store: Side;
  floor: Side | null;
  ratio: number | null;
  firstRatio: number | null;
  resultsAgree: boolean | null;
  /** The start of both answers, when they disagree. */
  mismatch?: { store: string; floor: string };
  io: IoStats | null;
  plans?: PlanEntry[];
  note?: string;
}

export interface StoreReport {
  kind: RemoteKind;
  server: { version: string; startMs: number };
  fill: Record<string, unknown>;
  memory: Record<string, unknown>;
  sessions: { largest: SessionFacts; median: SessionFacts; total: number; messages: number };
  calls: Record<string, RemoteCall>;
  checks: Record<string, unknown>;
  targets: Record<string, unknown>;
}

interface SessionFacts {
  index: number;
  sessionId: string;
  items: number;
  turns: number;
  /** Bytes of the session's stored texts: what a whole-session read would transfer, at least. */
  bytes: number;
}

export interface RemoteReport {
  config: RemoteConfig & { sessions: number; messages: number };
  targets: typeof REMOTE_TARGETS;
  stores: Partial<Record<RemoteKind, StoreReport>>;
  /** Why nothing was measured (the servers could not be installed). */
  skipped?: string;
  notes: string[];
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring

interface CallSpec {
  name: string;
  store: () => Promise<unknown>;
  /** The floor; none when there is nothing to compare (an in-memory answer, a store that answers without I/O). */
  floor?: () => Promise<unknown>;
  agree?: (store: unknown, floor: unknown) => boolean;
  /** Untimed, before every store call (e.g. dropping the cached turn index); the store is then timed one call at a time. */
  beforeStore?: () => void;
  note?: string;
  /** Record what one store call sends and receives (and, on PostgreSQL, explain its read statements). */
  record?: boolean;
}

/** Counts what the store's connections send and receive while started. */
interface IoRecorder {
  start(): void;
  stop(): { stats: IoStats; statements: { text: string; values: unknown[] }[] };
}

const emptyStats = (): IoStats => ({ requests: 0, rowsReceived: 0, maxRowsPerReply: 0, bytesReceived: 0 });

class Harness {
  readonly calls: Record<string, RemoteCall> = {};

  constructor(
    private readonly reps: number,
    private readonly recorder: IoRecorder,
    private readonly explain: ((statements: { text: string; values: unknown[] }[]) => Promise<PlanEntry[]>) | null,
    private readonly progress: (m: string) => void,
  ) {}

  async run(call: CallSpec): Promise<RemoteCall> {
    this.progress(call.name);
    await settle();
    let storeResult: unknown;
    let floorResult: unknown;
    call.beforeStore?.();
    const storeFirst = await timeOnce(async () => (storeResult = await call.store()));
    const floorFirst = call.floor ? await timeOnce(async () => (floorResult = await call.floor!())) : NaN;
    const agree = call.agree && call.floor ? call.agree(storeResult, floorResult) : null;
    // A disagreement is a bug in the store or in the floor: keep the start of both answers to look at.
    const mismatch =
      agree === false ? { store: JSON.stringify(storeResult).slice(0, 600), floor: JSON.stringify(floorResult).slice(0, 600) } : undefined;
    storeResult = floorResult = undefined;
    const slow = Math.max(storeFirst, call.floor ? floorFirst : 0) > 2000;
    const n = slow ? Math.min(this.reps, 3) : this.reps;
    const oneStore = async (): Promise<number> => {
      call.beforeStore?.();
      return timeOnce(call.store);
    };
    const oneFloor = (): Promise<number> => timeOnce(call.floor!);
    const single = Math.min(await oneStore(), call.floor ? await oneFloor() : Infinity);
    const batch = call.beforeStore ? 1 : batchSize(single, 5, 50);
    const storeBatch = async (): Promise<number> => {
      if (call.beforeStore) return oneStore();
      const t0 = now();
      for (let i = 0; i < batch; i++) await call.store();
      return (now() - t0) / batch;
    };
    const floorBatch = async (): Promise<number> => {
      const t0 = now();
      for (let i = 0; i < batch; i++) await call.floor!();
      return (now() - t0) / batch;
    };
    const storeSamples: number[] = [];
    const floorSamples: number[] = [];
    for (let r = 0; r < n; r++) {
      await settle();
      // Alternate who goes first, so a burst of background load does not always hit the same side.
      if (r % 2 === 0 || !call.floor) {
        storeSamples.push(await storeBatch());
        if (call.floor) floorSamples.push(await floorBatch());
      } else {
        floorSamples.push(await floorBatch());
        storeSamples.push(await storeBatch());
      }
    }
    let io: IoStats | null = null;
    let plans: PlanEntry[] | undefined;
    if (call.record) {
      call.beforeStore?.();
      this.recorder.start();
      try {
        await call.store();
      } finally {
        const recorded = this.recorder.stop();
        io = recorded.stats;
        if (this.explain) plans = await this.explain(recorded.statements);
      }
    }
    const side = (first: number, samples: number[]): Side => ({
      firstMs: round(first),
      medianMs: round(median(samples)),
      samplesMs: samples.map(round),
      batch,
    });
    const result: RemoteCall = {
      store: side(storeFirst, storeSamples),
      floor: call.floor ? side(floorFirst, floorSamples) : null,
      ratio: call.floor ? ratio(median(storeSamples), median(floorSamples)) : null,
      firstRatio: call.floor ? ratio(storeFirst, floorFirst) : null,
      resultsAgree: agree,
      ...(mismatch ? { mismatch } : {}),
      io,
      ...(plans ? { plans } : {}),
      ...(call.note ? { note: call.note } : {}),
    };
    this.calls[call.name] = result;
    return result;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Recording what the store's drivers do

type QueryFn = (this: pg.Client, ...args: unknown[]) => unknown;

/** Wraps `pg.Client.prototype.query` (every pool client, the store's included) while recording. */
function pgRecorder(): IoRecorder & { uninstall(): void } {
  const proto = pg.Client.prototype as unknown as { query: QueryFn };
  const original = proto.query;
  let stats: IoStats | null = null;
  let statements: { text: string; values: unknown[] }[] = [];
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const current = stats;
    if (!current) return original.apply(this, args);
    const first = args[0] as string | { text?: string; values?: unknown[] };
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    const values = (Array.isArray(args[1]) ? args[1] : typeof first === 'object' ? first?.values : undefined) ?? [];
    statements.push({ text, values });
    const stream = (this as unknown as { connection?: { stream?: { bytesRead?: number } } }).connection?.stream;
    const before = stream?.bytesRead ?? 0;
    current.requests++;
    const done = (res: unknown): void => {
      const rows = (res as { rows?: unknown[] } | undefined)?.rows?.length ?? 0;
      current.rowsReceived += rows;
      current.maxRowsPerReply = Math.max(current.maxRowsPerReply, rows);
      current.bytesReceived += (stream?.bytesRead ?? 0) - before;
    };
    const cbAt = args.findIndex((a) => typeof a === 'function');
    if (cbAt >= 0) {
      const cb = args[cbAt] as (err: unknown, res: unknown) => void;
      args[cbAt] = (err: unknown, res: unknown) => {
        if (!err) done(res);
        cb(err, res);
      };
      return original.apply(this, args);
    }
    const promise = original.apply(this, args) as Promise<unknown> | undefined;
    promise?.then(done, () => undefined);
    return promise;
  };
  return {
    start() {
      stats = emptyStats();
      statements = [];
    },
    stop() {
      const out = { stats: stats ?? emptyStats(), statements };
      stats = null;
      return out;
    },
    uninstall() {
      proto.query = original;
    },
  };
}

interface RedisCommandLike {
  name: string;
  promise: Promise<unknown>;
}

/** Wraps one ioredis client's `sendCommand` (pipelines go through it too) while recording. */
function redisRecorder(client: Redis): IoRecorder {
  const target = client as unknown as { sendCommand: (command: RedisCommandLike, stream?: unknown) => unknown };
  const original = target.sendCommand.bind(client);
  let stats: IoStats | null = null;
  let bytesAtStart = 0;
  const bytes = (): number => (client as unknown as { stream?: { bytesRead?: number } }).stream?.bytesRead ?? 0;
  target.sendCommand = (command: RedisCommandLike, stream?: unknown) => {
    const current = stats;
    if (current) {
      current.requests++;
      command.promise.then(
        (reply) => {
          let rows = 0;
          if (command.name === 'scan') rows = Array.isArray(reply) && Array.isArray(reply[1]) ? reply[1].length : 0;
          else if (command.name === 'hmget' || command.name === 'hgetall') rows = 1;
          else if (command.name === 'lrange') rows = Array.isArray(reply) ? reply.length : 0;
          current.rowsReceived += rows;
          current.maxRowsPerReply = Math.max(current.maxRowsPerReply, rows);
        },
        () => undefined,
      );
    }
    return original(command, stream);
  };
  return {
    start() {
      stats = emptyStats();
      bytesAtStart = bytes();
    },
    stop() {
      const out = stats ?? emptyStats();
      out.bytesReceived = bytes() - bytesAtStart;
      stats = null;
      return { stats: out, statements: [] };
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The store's content: facts the checks and floors need

interface Facts {
  spec: RemoteDataSpec;
  largest: SessionFacts;
  median: SessionFacts;
  /** Sessions whose changes the poll watches (largest, median and three ordinary ones). */
  watched: number[];
  /** The most recently updated sessions, newest first (updated_at, then id, descending): PostgreSQL's page order. */
  newest: string[];
}

/** Pages of sessions walked to check that paging neither skips nor repeats a session. */
const WALK_PAGES = 100;

function sessionFacts(spec: RemoteDataSpec, index: number): SessionFacts {
  const n = spec.sizes[index]!;
  let bytes = 0;
  for (const text of sessionItems(index, n)) bytes += Buffer.byteLength(text);
  return { index, sessionId: sessionId(index), items: n, turns: turnCount(n), bytes };
}

function factsOf(spec: RemoteDataSpec): Facts {
  const sizes = spec.sizes;
  let largest = 0;
  for (let i = 1; i < sizes.length; i++) if (sizes[i]! > sizes[largest]!) largest = i;
  const sorted = [...sizes].sort((a, b) => a - b);
  const medianSize = sorted[sorted.length >> 1]!;
  // The median-sized session nearest the middle of the list.
  let med = -1;
  for (let d = 0; med < 0 && d < sizes.length; d++) {
    for (const i of [(sizes.length >> 1) + d, (sizes.length >> 1) - d]) if (med < 0 && sizes[i] === medianSize) med = i;
  }
  const updated = sizes.map((n, i) => ({ id: sessionId(i), at: sessionRow(i, n).updatedText }));
  updated.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.id < b.id ? 1 : -1));
  const ordinary = [1, Math.floor(sizes.length / 3), sizes.length - 2].filter((i) => i !== largest && i !== med);
  return {
    spec,
    largest: sessionFacts(spec, largest),
    median: sessionFacts(spec, med),
    watched: [largest, med, ...ordinary].slice(0, WATCHED),
    newest: updated.slice(0, WALK_PAGES * SESSIONS_PAGE).map((u) => u.id),
  };
}

/** The items of one synthetic turn (what `addItems` writes in the write rows). */
function writeTurn(): { items: AgentInputItem[]; texts: string[] } {
  const texts = [0, 1, 2, 3].map((p) => renderItem(999_999, 0, p));
  return { texts, items: texts.map((t) => JSON.parse(t) as AgentInputItem) };
}

// ---------------------------------------------------------------------------------------------------------------
// Result comparisons

const itemsOf = (page: unknown): unknown[] => ((page as { items: ItemEntry[] }).items ?? []).map((e) => ('item' in e ? e.item : null));
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const idsAndCounts = (page: unknown): [string, number][] =>
  (page as { sessions: { sessionId: string; messageCount: number }[] }).sessions.map((s) => [s.sessionId, s.messageCount]);
const sortedPairs = (pairs: [string, number][]): string => JSON.stringify([...pairs].sort((a, b) => a[0].localeCompare(b[0])));
const turnStarts = (page: unknown): number[] => (page as { turns: { sequenceNumber: number }[] }).turns.map((t) => t.sequenceNumber);

/** Positions (1-based) of the user items among `texts`, at most `limit`. */
function userPositions(texts: readonly (string | null)[], limit: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < texts.length && out.length < limit; i++) {
    const v = JSON.parse(texts[i] ?? 'null') as { role?: string; type?: string } | null;
    if (v && v.role === 'user' && (v.type === undefined || v.type === 'message')) out.push(i + 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL

const TEXT_TIME_US = `'YYYY-MM-DD HH24:MI:SS.US'`;

async function withClient<T>(config: string | pg.ClientConfig, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Fills the database the store's way: the DDL of `postgresDdl` (the tables, then, after the rows, the index), and
 * the rows generated server-side in time order (as concurrent agents write them), a million or so per statement.
 * The load runs as the superuser with `session_replication_role = replica` (no per-row foreign-key check; every
 * row's session exists by construction, and the counts are checked afterwards), then VACUUM (ANALYZE).
 */
async function fillPostgres(server: PostgresServer, facts: Facts, progress: (m: string) => void): Promise<Record<string, unknown>> {
  const spec = facts.spec;
  const t0 = now();
  const phases: Record<string, number> = {};
  const phase = async (name: string, fn: () => Promise<unknown>): Promise<void> => {
    const t = now();
    await fn();
    phases[name] = Math.round(now() - t);
  };
  const [sessionsDdl, messagesDdl, indexDdl] = postgresDdl(TABLES) as [string, string, string];
  await withClient(server.url, async (owner) => {
    await phase('tables (DDL)', async () => {
      await owner.query(sessionsDdl);
      await owner.query(messagesDdl);
    });
    await withClient({ host: server.socketDir, port: server.port, user: 'postgres', database: server.database }, async (su) => {
      await su.query(`SET session_replication_role = replica`);
      await su.query(`SET temp_buffers = '1GB'`);
      await su.query(`SET work_mem = '256MB'`);
      await phase('session list (temp)', async () => {
        await su.query(`CREATE TEMP TABLE bench_sessions (i int PRIMARY KEY, sid text NOT NULL, n int NOT NULL, gap int NOT NULL)`);
        const ids = spec.sizes.map((_, i) => sessionId(i));
        const gaps = spec.sizes.map((_, i) => turnGapSeconds(i));
        await su.query(`INSERT INTO bench_sessions SELECT * FROM unnest($1::int[], $2::text[], $3::int[], $4::int[])`, [
          spec.sizes.map((_, i) => i),
          ids,
          spec.sizes,
          gaps,
        ]);
      });
      await phase('agent_sessions', async () => {
        const last = `(${turnCountSql('b.n')} - 1)`;
        await su.query(
          `INSERT INTO ${S} (session_id, created_at, updated_at)
           SELECT b.sid, ${turnTimeSql(`b.i * ${SESSION_SPACING_S}`, 'b.i', '0')},
                  ${turnTimeSql(`b.i::bigint * ${SESSION_SPACING_S} + ${last}::bigint * b.gap`, 'b.i', last)}
             FROM bench_sessions b ORDER BY b.i`,
        );
      });
      let turns = 0;
      await phase('turn list (temp)', async () => {
        await su.query(
          `CREATE TEMP TABLE bench_turns AS
           SELECT row_number() OVER (ORDER BY x.sec, x.i) AS seq, x.*
             FROM (SELECT b.i, b.sid, t.k, ${turnItemsSql('b.n', 't.k')} AS cnt,
                          b.i::bigint * ${SESSION_SPACING_S} + t.k::bigint * b.gap AS sec
                     FROM bench_sessions b CROSS JOIN LATERAL generate_series(0, ${turnCountSql('b.n')} - 1) AS t(k)) x`,
        );
        await su.query(`CREATE INDEX ON bench_turns (seq)`);
        await su.query(`ANALYZE bench_turns`);
        turns = Number((await su.query<{ n: string }>(`SELECT count(*) AS n FROM bench_turns`)).rows[0]?.n ?? 0);
      });
      const chunks = Math.max(1, Math.round(spec.messages / 1_000_000));
      const per = Math.ceil(turns / chunks);
      const text = messageTextSql({ i: 'x.i', k: 'x.k', p: 'x.p', h: 'x.h' });
      await phase('agent_messages', async () => {
        for (let c = 0; c < chunks; c++) {
          const t = now();
          await su.query(
            `INSERT INTO ${M} (session_id, message_data, created_at)
             SELECT x.sid, ${text}, ${turnTimeSql('x.sec', 'x.i', 'x.k')}
               FROM (SELECT t.seq, t.i, t.sid, t.k, t.sec, g.p, ${itemHashSql('t.i', 't.k', 'g.p')} AS h
                       FROM bench_turns t CROSS JOIN LATERAL generate_series(0, t.cnt - 1) AS g(p)
                      WHERE t.seq > $1 AND t.seq <= $2) x
              ORDER BY x.seq, x.p`,
            [c * per, (c + 1) * per],
          );
          progress(`postgres: messages ${c + 1}/${chunks} (${Math.round(now() - t)} ms)`);
        }
      });
    });
    await phase('index (DDL)', async () => {
      await owner.query(`SET maintenance_work_mem = '1GB'`);
      await owner.query(indexDdl);
    });
    await phase('VACUUM (ANALYZE)', async () => {
      await owner.query(`VACUUM (ANALYZE) ${S}`);
      await owner.query(`VACUUM (ANALYZE) ${M}`);
    });
  });
  const totalMs = Math.round(now() - t0);
  progress(`postgres: filled in ${(totalMs / 1000).toFixed(1)} s (${JSON.stringify(phases)})`);
  return { totalMs, phasesMs: phases };
}

/** Counts, a sample of rows compared with the generator, and the sizes on disk. */
async function checkPostgres(c: pg.Client, facts: Facts): Promise<{ checks: Record<string, unknown>; memory: Record<string, unknown> }> {
  const spec = facts.spec;
  const counts = (
    await c.query<{ s: number; m: number; ids: boolean }>(
      `SELECT (SELECT count(*)::int FROM ${S}) AS s, (SELECT count(*)::int FROM ${M}) AS m,
              (SELECT max(id) = count(*) FROM ${M}) AS ids`,
    )
  ).rows[0]!;
  const mismatches: string[] = [];
  const samples = [0, facts.largest.index, facts.median.index, spec.sessions - 1, ...facts.watched];
  for (const i of [...new Set(samples)]) {
    const n = spec.sizes[i]!;
    const id = sessionId(i);
    const expectRow = sessionRow(i, n);
    const row = (
      await c.query<{ c: string; u: string; n: number }>(
        `SELECT to_char(created_at, ${TEXT_TIME_US}) AS c, to_char(updated_at, ${TEXT_TIME_US}) AS u,
                (SELECT count(*)::int FROM ${M} WHERE session_id = $1) AS n
           FROM ${S} WHERE session_id = $1`,
        [id],
      )
    ).rows[0];
    if (!row || row.c !== expectRow.createdText || row.u !== expectRow.updatedText || row.n !== n) {
      mismatches.push(`${id}: session row ${JSON.stringify(row)} ≠ ${JSON.stringify({ ...expectRow, n })}`);
    }
    const head = (
      await c.query<{ t: string; at: string }>(
        `SELECT message_data AS t, to_char(created_at, ${TEXT_TIME_US}) AS at FROM ${M} WHERE session_id = $1 ORDER BY created_at, id LIMIT 12`,
        [id],
      )
    ).rows;
    const tail = (
      await c.query<{ t: string; at: string }>(
        `SELECT message_data AS t, to_char(created_at, ${TEXT_TIME_US}) AS at FROM ${M} WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT 6`,
        [id],
      )
    ).rows.reverse();
    const expected = expectedRows(i, n);
    const exHead = expected.slice(0, 12);
    const exTail = expected.slice(-6);
    if (!same(head, exHead)) mismatches.push(`${id}: first rows differ from the generator`);
    if (!same(tail, exTail.slice(-tail.length))) mismatches.push(`${id}: last rows differ from the generator`);
  }
  const sizes = (
    await c.query<Record<string, string>>(
      `SELECT pg_database_size(current_database()) AS database,
              pg_total_relation_size('${TABLES.messages}') AS messages_total,
              pg_relation_size('${TABLES.messages}') AS messages_heap,
              pg_indexes_size('${TABLES.messages}') AS messages_indexes,
              pg_total_relation_size('${TABLES.sessions}') AS sessions_total,
              current_setting('shared_buffers') AS shared_buffers`,
    )
  ).rows[0]!;
  const bytes = (k: string): number => Number(sizes[k]);
  return {
    checks: {
      sessions: counts.s,
      messages: counts.m,
      expected: { sessions: spec.sessions, messages: spec.messages },
      countsMatch: counts.s === spec.sessions && counts.m === spec.messages,
      idsDense: counts.ids,
      sampleSessions: samples.length,
      sampleRowsMatchGenerator: mismatches.length === 0,
      ...(mismatches.length ? { mismatches: mismatches.slice(0, 5) } : {}),
    },
    memory: {
      databaseBytes: bytes('database'),
      messagesTableBytes: bytes('messages_heap'),
      messagesIndexBytes: bytes('messages_indexes'),
      messagesTotalBytes: bytes('messages_total'),
      sessionsTotalBytes: bytes('sessions_total'),
      sharedBuffers: sizes.shared_buffers,
    },
  };
}

/** Every row of session i as [text, created_at] in the store's order. */
function expectedRows(i: number, n: number): { t: string; at: string }[] {
  const out: { t: string; at: string }[] = [];
  for (let k = 0, turns = turnCount(n); k < turns; k++) {
    const at = turnTimeText(i, k);
    for (let p = 0, count = turnItems(n, k); p < count; p++) out.push({ t: renderItem(i, k, p), at });
  }
  return out;
}

async function explainWith(c: pg.Client, statements: { text: string; values: unknown[] }[]): Promise<PlanEntry[]> {
  const out: PlanEntry[] = [];
  const seen = new Set<string>();
  for (const s of statements) {
    const sql = s.text.replace(/\s+/g, ' ').trim();
    if (seen.has(sql) || !/^(SELECT|WITH)\b/i.test(sql) || /\b(INSERT|UPDATE|DELETE)\b/i.test(sql)) continue;
    seen.add(sql);
    try {
      const { rows } = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${s.text}`, s.values);
      out.push({ sql, plan: rows.map((r) => r['QUERY PLAN']) });
    } catch (err) {
      out.push({ sql, plan: [`EXPLAIN failed: ${err instanceof Error ? err.message : String(err)}`] });
    }
  }
  return out;
}

interface FloorSession {
  session_id: string;
  updated_at: Date;
  k: string;
  n: number;
}

async function measurePostgres(
  server: PostgresServer,
  facts: Facts,
  reps: number,
  progress: (m: string) => void,
): Promise<{ calls: Record<string, RemoteCall>; extra: Record<string, unknown> }> {
  const url = server.url;
  const floor = new pg.Client(url);
  await floor.connect();
  const recorder = pgRecorder();
  const h = new Harness(
    reps,
    recorder,
    (st) => explainWith(floor, st),
    (m) => progress(`postgres: ${m}`),
  );
  let source: RemoteSessionSource | undefined;
  let poller: RemoteSessionSource | undefined;
  let reader: PostgresSession | undefined;
  let writer: PostgresSession | undefined;
  const extra: Record<string, unknown> = {};
  try {
    await h.run({
      name: 'open + close',
      store: async () => {
        const s = new RemoteSessionSource(await openRemoteStore({ url }));
        await s.close();
      },
      floor: () =>
        withClient(url, (c) =>
          c.query(
            `SELECT attrelid::regclass::text AS t, attname, format_type(atttypid, atttypmod) AS type FROM pg_attribute
              WHERE attrelid IN ('${TABLES.sessions}'::regclass, '${TABLES.messages}'::regclass) AND attnum > 0 AND NOT attisdropped`,
          ),
        ),
      note: 'connect (SCRAM), check the tables (information_schema), end the pool; floor: connect, read the columns from pg_attribute, end',
      record: true,
    });
    source = new RemoteSessionSource(await openRemoteStore({ url }));
    const src = source;
    const floorPage = async (where: string, params: unknown[]): Promise<FloorSession[]> =>
      (
        await floor.query<FloorSession>(
          `SELECT p.session_id, p.updated_at, p.k, (SELECT count(*)::int FROM ${M} m WHERE m.session_id = p.session_id) AS n
             FROM (SELECT session_id, updated_at, updated_at::text AS k FROM ${S} ${where}
                    ORDER BY updated_at DESC, session_id DESC LIMIT ${SESSIONS_PAGE + 1}) p
            ORDER BY p.updated_at DESC, p.session_id DESC`,
          params,
        )
      ).rows;
    const floorPairs = (rows: FloorSession[]): [string, number][] => rows.slice(0, SESSIONS_PAGE).map((r) => [r.session_id, r.n]);
    const agreePage = (s: unknown, f: unknown): boolean => same(idsAndCounts(s), floorPairs(f as FloorSession[]));

    await h.run({
      name: 'listSessionsPage(first 50)',
      store: () => src.listSessionsPage({ limit: SESSIONS_PAGE }),
      floor: () => floorPage('', []),
      agree: agreePage,
      record: true,
    });
    const page1 = await src.listSessionsPage({ limit: SESSIONS_PAGE });
    const floor1 = await floorPage('', []);
    extra.firstPage = {
      sessions: page1.sessions.length,
      isTheNewest50: same(
        page1.sessions.map((s) => s.sessionId),
        facts.newest.slice(0, SESSIONS_PAGE),
      ),
      floorIsTheNewest50: same(
        floor1.slice(0, SESSIONS_PAGE).map((r) => r.session_id),
        facts.newest.slice(0, SESSIONS_PAGE),
      ),
      hasNextCursor: page1.nextCursor !== null,
    };
    extra.pagingWalk = await walkPages(src, WALK_PAGES, facts.newest);
    const cursor = page1.nextCursor;
    const lastFloor = floor1[SESSIONS_PAGE - 1]!;
    await h.run({
      name: 'listSessionsPage(second 50)',
      store: () => src.listSessionsPage({ limit: SESSIONS_PAGE, cursor }),
      floor: () => floorPage(`WHERE (updated_at, session_id) < ($1::timestamp, $2::text)`, [lastFloor.k, lastFloor.session_id]),
      agree: agreePage,
      record: true,
    });
    await h.run({
      name: `listSessionsPage(prefix '${COMMON_PREFIX}')`,
      store: () => src.listSessionsPage({ limit: SESSIONS_PAGE, prefix: COMMON_PREFIX }),
      floor: () => floorPage(`WHERE starts_with(session_id, $1)`, [COMMON_PREFIX]),
      agree: agreePage,
      note: 'about 1 % of the sessions have this prefix',
      record: true,
    });
    const exact = facts.median.sessionId;
    await h.run({
      name: 'listSessionsPage(prefix = one id)',
      store: () => src.listSessionsPage({ limit: SESSIONS_PAGE, prefix: exact }),
      floor: () => floorPage(`WHERE starts_with(session_id, $1)`, [exact]),
      agree: agreePage,
      note: `the whole id of one session (${exact}) as the filter: one match`,
      record: true,
    });
    await h.run({
      name: 'countSessions()',
      store: () => src.countSessions(),
      floor: async () => (await floor.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${S}`)).rows[0]?.n,
      agree: (s, f) => s === f,
      record: true,
    });
    const floorItems = async (id: string, after: number): Promise<unknown[]> =>
      (
        await floor.query<{ message_data: string }>(
          `SELECT id, message_data, created_at FROM ${M} WHERE session_id = $1 ORDER BY created_at, id OFFSET $2 LIMIT $3`,
          [id, after, ITEMS_PAGE + 1],
        )
      ).rows
        .slice(0, ITEMS_PAGE)
        .map((r) => JSON.parse(r.message_data) as unknown);
    for (const [label, f] of [
      ['largest', facts.largest],
      ['median', facts.median],
    ] as const) {
      await h.run({
        name: `getItemsPage(${label}, first 50)`,
        store: () => src.getItemsPage(f.sessionId, 'main', { limit: ITEMS_PAGE }),
        floor: () => floorItems(f.sessionId, 0),
        agree: (s, fl) => same(itemsOf(s), fl),
        note: `${f.items} items`,
        record: true,
      });
    }
    const L = facts.largest;
    await h.run({
      name: 'getItemsPage(largest, last 50)',
      store: () => src.getItemsPage(L.sessionId, 'main', { afterSequence: L.items - ITEMS_PAGE, limit: ITEMS_PAGE }),
      floor: async () =>
        (
          await floor.query<{ message_data: string }>(
            `SELECT id, message_data, created_at FROM ${M} WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
            [L.sessionId, ITEMS_PAGE],
          )
        ).rows
          .reverse()
          .map((r) => JSON.parse(r.message_data) as unknown),
      agree: (s, fl) => same(itemsOf(s), fl),
      note: 'the store pages by OFFSET; the floor reads the index backwards',
      record: true,
    });
    const floorTurns = async (): Promise<number[]> => {
      const { rows } = await floor.query<{ message_data: string }>(
        `SELECT id, message_data, created_at FROM ${M} WHERE session_id = $1 ORDER BY created_at, id LIMIT ${INDEX_BATCH}`,
        [L.sessionId],
      );
      return userPositions(
        rows.map((r) => r.message_data),
        TURNS_PAGE,
      );
    };
    await h.run({
      name: 'getTurnsPage(largest, first 200)',
      beforeStore: () => src.forget(L.sessionId),
      store: () => src.getTurnsPage(L.sessionId, 'main', { limit: TURNS_PAGE }),
      floor: floorTurns,
      agree: (s, f) => same(turnStarts(s), f),
      note: `turn index built from scratch each time (forget() before each call); floor: the first ${INDEX_BATCH} rows, parsed`,
      record: true,
    });
    await h.run({
      name: 'getTurnsPage(largest, first 200, index cached)',
      store: () => src.getTurnsPage(L.sessionId, 'main', { limit: TURNS_PAGE }),
      note: 'answered from the turn index the previous call built: no I/O, no floor',
    });
    await h.run({
      name: 'getBranchTree(largest)',
      beforeStore: () => src.forget(L.sessionId),
      store: () => src.getBranchTree(L.sessionId),
      floor: async () =>
        (
          await floor.query<{ n: number; users: number }>(
            `SELECT count(*)::int AS n, (count(*) FILTER (WHERE (message_data::json ->> 'role') = 'user'))::int AS users
               FROM ${M} WHERE session_id = $1`,
            [L.sessionId],
          )
        ).rows[0],
      agree: (s, f) => {
        const node = (s as { messageCount: number; userTurns: number }[])[0];
        const fl = f as { n: number; users: number };
        return !!node && node.messageCount === fl.n && node.userTurns === fl.users;
      },
      note: 'what expanding the session in the tree and opening its view call: the complete turn index (every row, read in batches of 1000 by OFFSET); floor: the two counts server-side',
      record: true,
    });

    // ---- polling ----------------------------------------------------------------------------------------------------
    poller = new RemoteSessionSource(await openRemoteStore({ url }));
    const pollSource = poller;
    const watchedIds = facts.watched.map(sessionId);
    for (const id of watchedIds) await pollSource.getItemsPage(id, 'main', { limit: 1 });
    await h.run({
      name: `pollChanges(${WATCHED} watched)`,
      store: () => pollSource.pollChanges(),
      floor: async () =>
        (
          await floor.query(
            `SELECT NULL AS session_id, (SELECT count(*) FROM ${S}) AS n, (SELECT max(id) FROM ${M}) AS top
             UNION ALL
             SELECT session_id, count(*), max(id) FROM ${M} WHERE session_id = ANY($1::text[]) GROUP BY session_id`,
            [watchedIds],
          )
        ).rows,
      note: `watching the largest, the median and ${WATCHED - 2} ordinary sessions; floor: the same tokens in one statement`,
      record: true,
    });

    // ---- the agent's session ------------------------------------------------------------------------------------------
    reader = new PostgresSession({ sessionId: L.sessionId, connection: { url } });
    const rd = reader;
    await h.run({
      name: 'PostgresSession.getItems(20)',
      store: () => rd.getItems(20),
      floor: async () =>
        (
          await floor.query<{ message_data: string }>(
            `SELECT message_data FROM ${M} WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT 20`,
            [L.sessionId],
          )
        ).rows
          .reverse()
          .map((r) => JSON.parse(r.message_data) as unknown),
      agree: (s, f) => (s as unknown[]).length === 20 && (f as unknown[]).length === 20,
      note: 'on the largest session; the first call includes the table check',
      record: true,
    });
    writer = new PostgresSession({ sessionId: 'bench-write-store', connection: { url } });
    const wr = writer;
    const turn = writeTurn();
    await h.run({
      name: 'PostgresSession.addItems(one turn)',
      store: () => wr.addItems(turn.items),
      floor: () =>
        floor.query(
          `WITH s AS (INSERT INTO ${S} (session_id) VALUES ($1)
                      ON CONFLICT (session_id) DO UPDATE SET updated_at = CURRENT_TIMESTAMP)
           INSERT INTO ${M} (session_id, message_data)
           SELECT $1, u.t FROM unnest($2::text[]) WITH ORDINALITY AS u(t, n) ORDER BY u.n`,
          ['bench-write-floor', turn.texts],
        ),
      note: 'four items appended to a session of its own (created by the first call); store: BEGIN, 3 statements, COMMIT; floor: one statement',
      record: true,
    });
  } finally {
    recorder.uninstall();
    await writer?.close();
    await reader?.close();
    await poller?.close();
    await source?.close();
    await floor.end().catch(() => undefined);
  }
  return { calls: h.calls, extra };
}

// ---------------------------------------------------------------------------------------------------------------
// Redis

/**
 * Fills Redis the way Python's `RedisSession` leaves it: per session a hash (`session_id`, `created_at`,
 * `updated_at` as Unix-second strings) and a list of compact JSON items, RPUSHed from the generator in pipelines of
 * about 8 MB.
 */
async function fillRedis(server: RedisServer, facts: Facts, progress: (m: string) => void): Promise<Record<string, unknown>> {
  const spec = facts.spec;
  const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await client.connect();
  const t0 = now();
  try {
    let pipe = client.pipeline();
    let queuedBytes = 0;
    // Resolves to the pipeline's first error (or null), so a failure waits to be rethrown instead of going unhandled.
    let pending: Promise<unknown> = Promise.resolve(null);
    let lastReport = now();
    const flush = async (): Promise<void> => {
      const p = pipe;
      pipe = client.pipeline();
      queuedBytes = 0;
      // One pipeline in flight while the next is built.
      const failed = await pending;
      if (failed) throw failed as Error;
      pending = p.exec().then(
        (replies) => (replies ?? []).find(([err]) => err)?.[0] ?? null,
        (err: unknown) => err,
      );
    };
    for (let i = 0; i < spec.sessions; i++) {
      const n = spec.sizes[i]!;
      const row = sessionRow(i, n);
      const key = `${PREFIX}:${row.sessionId}`;
      pipe.hset(key, 'session_id', row.sessionId, 'created_at', row.createdUnix, 'updated_at', row.updatedUnix);
      let slice: string[] = [];
      for (const text of sessionItems(i, n)) {
        slice.push(text);
        queuedBytes += text.length;
        if (slice.length === 1000) {
          pipe.rpush(`${key}:messages`, ...slice);
          slice = [];
        }
      }
      if (slice.length) pipe.rpush(`${key}:messages`, ...slice);
      if (queuedBytes > 8 * MB) await flush();
      if (now() - lastReport > 15_000) {
        progress(`redis: ${i + 1}/${spec.sessions} sessions`);
        lastReport = now();
      }
    }
    await flush();
    const failed = await pending;
    if (failed) throw failed as Error;
    const totalMs = Math.round(now() - t0);
    progress(`redis: filled in ${(totalMs / 1000).toFixed(1)} s`);
    return { totalMs };
  } finally {
    client.disconnect();
  }
}

async function checkRedis(c: Redis, facts: Facts): Promise<{ checks: Record<string, unknown>; memory: Record<string, unknown> }> {
  const spec = facts.spec;
  const keys = await c.dbsize();
  let total = 0;
  for (let from = 0; from < spec.sessions; from += 10_000) {
    const pipe = c.pipeline();
    for (let i = from; i < Math.min(spec.sessions, from + 10_000); i++) pipe.llen(`${PREFIX}:${sessionId(i)}:messages`);
    for (const [err, n] of (await pipe.exec()) ?? []) if (!err) total += Number(n);
  }
  const mismatches: string[] = [];
  const samples = [...new Set([0, facts.largest.index, facts.median.index, spec.sessions - 1, ...facts.watched])];
  for (const i of samples) {
    const n = spec.sizes[i]!;
    const row = sessionRow(i, n);
    const key = `${PREFIX}:${row.sessionId}`;
    const hash = await c.hgetall(key);
    const expectHash = { session_id: row.sessionId, created_at: row.createdUnix, updated_at: row.updatedUnix };
    if (!same(hash, expectHash)) mismatches.push(`${key}: ${JSON.stringify(hash)} ≠ ${JSON.stringify(expectHash)}`);
    const expected = expectedRows(i, n).map((r) => r.t);
    const head = await c.lrange(`${key}:messages`, 0, 11);
    const tail = await c.lrange(`${key}:messages`, -6, -1);
    if (!same(head, expected.slice(0, 12)) || !same(tail, expected.slice(-tail.length))) mismatches.push(`${key}: entries differ`);
  }
  const info = await c.info('memory');
  const field = (name: string): number => Number(new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1] ?? NaN);
  return {
    checks: {
      keys,
      messages: total,
      expected: { keys: 2 * spec.sessions, messages: spec.messages },
      countsMatch: keys === 2 * spec.sessions && total === spec.messages,
      sampleSessions: samples.length,
      sampleRowsMatchGenerator: mismatches.length === 0,
      ...(mismatches.length ? { mismatches: mismatches.slice(0, 5) } : {}),
    },
    memory: {
      usedMemoryBytes: field('used_memory'),
      usedMemoryRssBytes: field('used_memory_rss'),
      usedMemoryPeakBytes: field('used_memory_peak'),
      fragmentationRatio: field('mem_fragmentation_ratio'),
    },
  };
}

/** Counts the user items of a list server-side (the floor of a whole-session index). */
const COUNT_USERS_LUA = `
local n = redis.call('LLEN', KEYS[1])
local users = 0
for s = 0, n - 1, 1000 do
  for _, e in ipairs(redis.call('LRANGE', KEYS[1], s, s + 999)) do
    local ok, v = pcall(cjson.decode, e)
    if ok and type(v) == 'table' and v.role == 'user' and (v.type == nil or v.type == 'message') then users = users + 1 end
  end
end
return {n, users}
`;

async function measureRedis(
  server: RedisServer,
  facts: Facts,
  reps: number,
  progress: (m: string) => void,
): Promise<{ calls: Record<string, RemoteCall>; extra: Record<string, unknown> }> {
  const url = server.url;
  const floor = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await floor.connect();
  let source: RemoteSessionSource | undefined;
  let poller: RemoteSessionSource | undefined;
  let reader: RedisSession | undefined;
  let writer: RedisSession | undefined;
  const extra: Record<string, unknown> = {};
  // The recorder watches the source's client once it exists; until then it records nothing.
  let inner: IoRecorder | null = null;
  const recorder: IoRecorder = {
    start: () => inner?.start(),
    stop: () => inner?.stop() ?? { stats: emptyStats(), statements: [] },
  };
  const h = new Harness(reps, recorder, null, (m) => progress(`redis: ${m}`));
  try {
    await h.run({
      name: 'open + close',
      store: async () => {
        const s = new RemoteSessionSource(await openRemoteStore({ url }));
        await s.close();
      },
      floor: async () => {
        const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
        await c.connect();
        await c.ping();
        await c.quit();
      },
      note: 'connect, PING, QUIT (no schema to check)',
    });
    source = new RemoteSessionSource(await openRemoteStore({ url }));
    const src = source;
    const storeClient = (src.browser as unknown as { client: Redis }).client;
    inner = redisRecorder(storeClient);

    /** The floor of a session page: SCAN from `cursor` until `limit` hashes, then HMGET + LLEN of each in one pipeline. */
    const floorPage = async (cursor: string, match: string, filtered = false): Promise<{ pairs: [string, number][]; cursor: string }> => {
      const keys: string[] = [];
      let at = cursor;
      do {
        const [next, found] = await floor.scan(at, 'MATCH', match, 'COUNT', redisScanCount(filtered), 'TYPE', 'hash');
        at = next;
        keys.push(...found);
      } while (at !== '0' && keys.length < SESSIONS_PAGE);
      const pipe = floor.pipeline();
      for (const k of keys) {
        pipe.hmget(k, 'session_id', 'created_at', 'updated_at');
        pipe.llen(`${k}:messages`);
      }
      const replies = (await pipe.exec()) ?? [];
      const pairs: [string, number][] = keys.map((_, j) => [
        String((replies[2 * j]?.[1] as string[] | undefined)?.[0]),
        Number(replies[2 * j + 1]?.[1] ?? 0),
      ]);
      return { pairs, cursor: at };
    };
    const agreePage = (s: unknown, f: unknown): boolean =>
      sortedPairs(idsAndCounts(s)) === sortedPairs((f as { pairs: [string, number][] }).pairs);
    const all = `${PREFIX}:*`;
    await h.run({
      name: 'listSessionsPage(first 50)',
      store: () => src.listSessionsPage({ limit: SESSIONS_PAGE }),
      floor: () => floorPage('0', all),
      agree: agreePage,
      note: 'SCAN order (no order across keys in Redis), each page sorted newest first',
      record: true,
    });
    const page1 = await src.listSessionsPage({ limit: SESSIONS_PAGE });
    const newest = new Set(facts.newest.slice(0, SESSIONS_PAGE));
    extra.firstPage = {
      sessions: page1.sessions.length,
      limit: SESSIONS_PAGE,
      ofTheNewest50: page1.sessions.filter((s) => newest.has(s.sessionId)).length,
      hasNextCursor: page1.nextCursor !== null,
      order:
        'SCAN order: the first page holds every session hash the first SCAN call(s) met (COUNT 1000), sorted by updated_at; ' +
        'it is not the most recently updated sessions of the store',
    };
    extra.pagingWalk = await walkPages(src, Infinity, [], facts.spec.sessions);
    const cursor = page1.nextCursor ?? '0';
    await h.run({
      name: 'listSessionsPage(second 50)',
      store: () => src.listSessionsPage({ limit: SESSIONS_PAGE, cursor }),
      floor: () => floorPage(cursor, all),
      agree: agreePage,
      record: true,
    });
    await h.run({
      name: `listSessionsPage(prefix '${COMMON_PREFIX}')`,
      store: () => src.listSessionsPage({ limit: SESSIONS_PAGE, prefix: COMMON_PREFIX }),
      floor: () => floorPage('0', `${PREFIX}:${COMMON_PREFIX}*`, true),
      agree: agreePage,
      note: 'about 1 % of the sessions have this prefix: SCAN walks until 50 match',
      record: true,
    });
    const exact = facts.median.sessionId;
    await h.run({
      name: 'listSessionsPage(prefix = one id)',
      store: () => src.listSessionsPage({ limit: SESSIONS_PAGE, prefix: exact }),
      floor: () => floorPage('0', `${PREFIX}:${exact}*`, true),
      agree: agreePage,
      note: `the whole id of one session (${exact}) as the filter: SCAN walks the whole keyspace`,
      record: true,
    });
    await h.run({
      name: 'countSessions()',
      store: () => src.countSessions(),
      note: 'Redis: null without I/O (counting would scan every key); no floor',
    });
    const floorItems = async (id: string, from: number, to: number): Promise<unknown[]> =>
      (await floor.lrange(`${PREFIX}:${id}:messages`, from, to)).map((t) => JSON.parse(t) as unknown);
    for (const [label, f] of [
      ['largest', facts.largest],
      ['median', facts.median],
    ] as const) {
      await h.run({
        name: `getItemsPage(${label}, first 50)`,
        store: () => src.getItemsPage(f.sessionId, 'main', { limit: ITEMS_PAGE }),
        floor: async () => (await floorItems(f.sessionId, 0, ITEMS_PAGE)).slice(0, ITEMS_PAGE),
        agree: (s, fl) => same(itemsOf(s), fl),
        note: `${f.items} items; floor: LRANGE 0 ${ITEMS_PAGE} (the page and one more, as the store asks)`,
        record: true,
      });
    }
    const L = facts.largest;
    await h.run({
      name: 'getItemsPage(largest, last 50)',
      store: () => src.getItemsPage(L.sessionId, 'main', { afterSequence: L.items - ITEMS_PAGE, limit: ITEMS_PAGE }),
      floor: () => floorItems(L.sessionId, -ITEMS_PAGE, -1),
      agree: (s, fl) => same(itemsOf(s), fl),
      record: true,
    });
    await h.run({
      name: 'getTurnsPage(largest, first 200)',
      beforeStore: () => src.forget(L.sessionId),
      store: () => src.getTurnsPage(L.sessionId, 'main', { limit: TURNS_PAGE }),
      floor: async () => userPositions(await floor.lrange(`${PREFIX}:${L.sessionId}:messages`, 0, INDEX_BATCH - 1), TURNS_PAGE),
      agree: (s, f) => same(turnStarts(s), f),
      note: `turn index built from scratch each time (forget() before each call); floor: LRANGE of the first ${INDEX_BATCH} entries, parsed`,
      record: true,
    });
    await h.run({
      name: 'getTurnsPage(largest, first 200, index cached)',
      store: () => src.getTurnsPage(L.sessionId, 'main', { limit: TURNS_PAGE }),
      note: 'answered from the turn index the previous call built: no I/O, no floor',
    });
    await h.run({
      name: 'getBranchTree(largest)',
      beforeStore: () => src.forget(L.sessionId),
      store: () => src.getBranchTree(L.sessionId),
      floor: async () => (await floor.eval(COUNT_USERS_LUA, 1, `${PREFIX}:${L.sessionId}:messages`)) as [number, number],
      agree: (s, f) => {
        const node = (s as { messageCount: number; userTurns: number }[])[0];
        const [n, users] = f as [number, number];
        return !!node && node.messageCount === n && node.userTurns === users;
      },
      note: 'the complete turn index (every entry, in LRANGEs of 1000); floor: the two counts in a Lua script, server-side',
      record: true,
    });

    poller = new RemoteSessionSource(await openRemoteStore({ url }));
    const pollSource = poller;
    const watchedIds = facts.watched.map(sessionId);
    for (const id of watchedIds) await pollSource.getItemsPage(id, 'main', { limit: 1 });
    await h.run({
      name: `pollChanges(${WATCHED} watched)`,
      store: () => pollSource.pollChanges(),
      floor: async () => {
        const pipe = floor.pipeline();
        pipe.dbsize();
        for (const id of watchedIds) {
          pipe.llen(`${PREFIX}:${id}:messages`);
          pipe.lindex(`${PREFIX}:${id}:messages`, -1);
          pipe.hget(`${PREFIX}:${id}`, 'updated_at');
        }
        return pipe.exec();
      },
      note: 'store: DBSIZE, then one EVAL per watched session, one after the other; floor: the same facts in one pipeline',
    });

    reader = new RedisSession({ sessionId: L.sessionId, connection: { url } });
    const rd = reader;
    await h.run({
      name: 'RedisSession.getItems(20)',
      store: () => rd.getItems(20),
      floor: async () => (await floor.lrange(`${PREFIX}:${L.sessionId}:messages`, -20, -1)).map((t) => JSON.parse(t) as unknown),
      agree: (s, f) => (s as unknown[]).length === 20 && (f as unknown[]).length === 20,
      note: 'on the largest session; the first call includes connecting',
    });
    writer = new RedisSession({ sessionId: 'bench-write-store', connection: { url } });
    const wr = writer;
    const turn = writeTurn();
    const floorKey = `${PREFIX}:bench-write-floor`;
    await h.run({
      name: 'RedisSession.addItems(one turn)',
      store: () => wr.addItems(turn.items),
      floor: () => {
        const nowText = String(Math.floor(Date.now() / 1000));
        return floor
          .multi()
          .hset(floorKey, 'session_id', 'bench-write-floor')
          .hsetnx(floorKey, 'created_at', nowText)
          .rpush(`${floorKey}:messages`, ...turn.texts)
          .hset(floorKey, 'updated_at', nowText)
          .exec();
      },
      note: 'store: one EVAL of the write script (sent whole each time); floor: MULTI … EXEC in one pipeline',
    });
  } finally {
    await writer?.close();
    await reader?.close();
    await poller?.close();
    await source?.close();
    floor.disconnect();
  }
  return { calls: h.calls, extra };
}

// ---------------------------------------------------------------------------------------------------------------
// Targets and checks

/**
 * Follows `nextCursor` for `pages` pages (or to the end) and compares what the pages held with `expected` (the
 * sessions in the order they should come; empty = any order, every session once): sessions skipped, repeated, out
 * of order.
 */
async function walkPages(src: RemoteSessionSource, pages: number, expected: readonly string[], total?: number) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let walked = 0;
  const t0 = now();
  do {
    const page: { sessions: { sessionId: string }[]; nextCursor: string | null } = await src.listSessionsPage({
      limit: SESSIONS_PAGE,
      cursor,
    });
    seen.push(...page.sessions.map((s) => s.sessionId));
    cursor = page.nextCursor;
    walked++;
  } while (cursor !== null && walked < pages);
  const ms = Math.round(now() - t0);
  const distinct = new Set(seen);
  const repeated = seen.length - distinct.size;
  if (expected.length > 0) {
    const want = expected.slice(0, seen.length);
    const wanted = new Set(want);
    const skipped = want.filter((id) => !distinct.has(id));
    const extra = seen.filter((id) => !wanted.has(id));
    return {
      pages: walked,
      ms,
      sessionsSeen: seen.length,
      repeated,
      skipped: skipped.length,
      skippedExamples: skipped.slice(0, 5),
      unexpected: extra.length,
      inExpectedOrder: same(seen, want),
    };
  }
  return {
    pages: walked,
    ms,
    sessionsSeen: seen.length,
    distinct: distinct.size,
    repeated,
    complete: total === undefined ? null : distinct.size === total,
  };
}

function evaluate(kind: RemoteKind, calls: Record<string, RemoteCall>, facts: Facts, extra: Record<string, unknown>) {
  const page = calls['listSessionsPage(first 50)'];
  const items = [calls['getItemsPage(largest, first 50)'], calls['getItemsPage(median, first 50)']];
  const pageIo = page?.io ?? null;
  const itemsIo = items.map((c) => c?.io ?? null);
  const firstPage = extra.firstPage as { sessions: number } | undefined;
  const sessionsOnPage = firstPage?.sessions ?? NaN;
  const maxSessions = kind === 'postgres' ? SESSIONS_PAGE : SESSIONS_PAGE + REDIS_SCAN_COUNT;
  // PostgreSQL: the page query (limit + 1 rows) and the counts (≤ limit rows); Redis: keys of the SCAN calls.
  const pageRowsOk = kind === 'postgres' ? (pageIo?.maxRowsPerReply ?? Infinity) <= SESSIONS_PAGE + 1 : true;
  const itemRowsOk = itemsIo.every((io) => (io?.maxRowsPerReply ?? Infinity) <= ITEMS_PAGE + 1);
  const tree = calls['getBranchTree(largest)'];
  const ms = (c: RemoteCall | undefined): number => c?.store.medianMs ?? NaN;
  const first = (c: RemoteCall | undefined): number => c?.store.firstMs ?? NaN;
  return {
    firstSessionsPageUnder100ms: {
      pass: ms(page) < REMOTE_TARGETS.sessionsPageMs,
      medianMs: ms(page),
      firstMs: first(page),
      firstCallUnder100ms: first(page) < REMOTE_TARGETS.sessionsPageMs,
    },
    firstItemsPageUnder50ms: {
      pass: items.every((c) => ms(c) < REMOTE_TARGETS.itemsPageMs),
      largest: { items: facts.largest.items, medianMs: ms(items[0]), firstMs: first(items[0]) },
      median: { items: facts.median.items, medianMs: ms(items[1]), firstMs: first(items[1]) },
      firstCallsUnder50ms: items.every((c) => first(c) < REMOTE_TARGETS.itemsPageMs),
    },
    pagesDoNotLoadWholeSessionOrList: {
      pass: sessionsOnPage <= maxSessions && pageRowsOk && itemRowsOk,
      sessionsPage: {
        sessionsReturned: sessionsOnPage,
        limit: SESSIONS_PAGE,
        allowed: maxSessions,
        ...(kind === 'redis' ? { allowance: `limit + SCAN COUNT (${REDIS_SCAN_COUNT}): a page keeps every hash its SCAN calls met` } : {}),
        io: pageIo,
        sessionsInStore: facts.spec.sessions,
      },
      itemsPage: {
        largest: { io: itemsIo[0], maxRowsAllowed: ITEMS_PAGE + 1, wholeSessionBytes: facts.largest.bytes },
        median: { io: itemsIo[1], maxRowsAllowed: ITEMS_PAGE + 1, wholeSessionBytes: facts.median.bytes },
      },
    },
    pagingSkipsAndRepeatsNothing: (() => {
      const walk = extra.pagingWalk as { skipped?: number; repeated: number; complete?: boolean | null } | undefined;
      if (!walk) return { pass: null };
      const pass = walk.repeated === 0 && (walk.skipped === undefined || walk.skipped === 0) && walk.complete !== false;
      return { pass, ...walk };
    })(),
    readsWholeSession: {
      'getBranchTree(largest)': {
        io: tree?.io ?? null,
        wholeSessionBytes: facts.largest.bytes,
        medianMs: ms(tree),
        note: 'the turn index needs every row of the session (turn count, message count); it keeps one record per turn, not the rows',
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The section

export async function runRemoteBench(config: RemoteConfig, progress: (m: string) => void): Promise<RemoteReport> {
  const spec = remoteDataSpec(config.scale);
  const facts = factsOf(spec);
  progress(
    `store: ${spec.sessions} sessions, ${spec.messages} items; largest ${facts.largest.sessionId} (${facts.largest.items} items, ` +
      `${(facts.largest.bytes / MB).toFixed(1)} MB), median ${facts.median.sessionId} (${facts.median.items} items)`,
  );
  const reportConfig = { ...config, sessions: spec.sessions, messages: spec.messages };
  try {
    ensureServerPackages((line: string) => progress(line));
  } catch (err) {
    // No PostgreSQL or Redis and no way to install them (not root, no repositories): the other sections still count.
    if (!(err instanceof InstallError)) throw err;
    progress(`skipped: ${err.message}`);
    return { config: reportConfig, targets: REMOTE_TARGETS, stores: {}, skipped: err.message, notes: [] };
  }
  const stores: RemoteReport['stores'] = {};
  for (const kind of config.stores) {
    if (kind === 'postgres') {
      const t = now();
      const server = await startPostgres({ log: (line: string) => progress(`postgres: ${line}`) });
      const startMs = Math.round(now() - t);
      try {
        progress(`postgres ${server.version} on port ${server.port}: filling`);
        const fill = await fillPostgres(server, facts, progress);
        const { checks, memory } = await withClient(server.url, (c) => checkPostgres(c, facts));
        if (!checks.countsMatch || !checks.sampleRowsMatchGenerator)
          throw new Error(`postgres: the load is wrong: ${JSON.stringify(checks)}`);
        const { calls, extra } = await measurePostgres(server, facts, config.reps, progress);
        stores.postgres = {
          kind,
          server: { version: server.version, startMs },
          fill,
          memory,
          sessions: { largest: facts.largest, median: facts.median, total: spec.sessions, messages: spec.messages },
          calls,
          checks: { ...checks, ...extra },
          targets: evaluate(kind, calls, facts, extra),
        };
      } finally {
        await server.stop();
      }
    } else {
      const t = now();
      const server = await startRedis({ log: (line: string) => progress(`redis: ${line}`) });
      const startMs = Math.round(now() - t);
      try {
        progress(`redis ${server.version} on port ${server.port}: filling`);
        const fill = await fillRedis(server, facts, progress);
        const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
        await client.connect();
        let checked: Awaited<ReturnType<typeof checkRedis>>;
        try {
          checked = await checkRedis(client, facts);
        } finally {
          client.disconnect();
        }
        const { checks, memory } = checked;
        if (!checks.countsMatch || !checks.sampleRowsMatchGenerator) throw new Error(`redis: the load is wrong: ${JSON.stringify(checks)}`);
        progress(
          `redis: ${((memory.usedMemoryBytes as number) / MB).toFixed(0)} MB used, ${((memory.usedMemoryRssBytes as number) / MB).toFixed(0)} MB RSS`,
        );
        const { calls, extra } = await measureRedis(server, facts, config.reps, progress);
        stores.redis = {
          kind,
          server: { version: server.version, startMs },
          fill,
          memory,
          sessions: { largest: facts.largest, median: facts.median, total: spec.sessions, messages: spec.messages },
          calls,
          checks: { ...checks, ...extra },
          targets: evaluate(kind, calls, facts, extra),
        };
      } finally {
        await server.stop();
      }
    }
  }
  return {
    config: reportConfig,
    targets: REMOTE_TARGETS,
    stores,
    notes: [
      'firstMs: the first call on a freshly opened RemoteSessionSource (new pool or connection, nothing cached in the source); ' +
        'the servers are not restarted and the OS cache is not dropped after the load, so the data is in memory',
      'medianMs: median of the warm samples; fast calls are batched and each sample is a per-call average',
      'floor: the raw driver (one pg.Client / one ioredis connection) doing the least possible for the same answer',
      'io: one untimed store call — requests (PostgreSQL statements, Redis commands), rows (or entries/keys) received, socket bytes read',
    ],
  };
}

/** The compact table for stderr. */
export function remoteTable(report: RemoteReport): string {
  if (report.skipped) return `remote stores: skipped (${report.skipped})`;
  const header = ['store', 'call', 'first ms', 'median ms', 'floor ms', 'ratio', 'requests', 'rows', 'KB in', 'agree'];
  const rows: string[][] = [header];
  for (const [kind, s] of Object.entries(report.stores)) {
    if (!s) continue;
    for (const [name, c] of Object.entries(s.calls)) {
      rows.push([
        kind,
        name,
        String(c.store.firstMs),
        String(c.store.medianMs),
        c.floor ? String(c.floor.medianMs) : '-',
        c.ratio === null ? '-' : String(c.ratio),
        c.io ? String(c.io.requests) : '-',
        c.io ? String(c.io.rowsReceived) : '-',
        c.io ? (c.io.bytesReceived / 1024).toFixed(1) : '-',
        c.resultsAgree === null ? '-' : c.resultsAgree ? 'yes' : 'NO',
      ]);
    }
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = rows.map((r) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
  for (const [kind, s] of Object.entries(report.stores)) {
    if (!s) continue;
    const t = s.targets as {
      firstSessionsPageUnder100ms: { pass: boolean };
      firstItemsPageUnder50ms: { pass: boolean };
      pagesDoNotLoadWholeSessionOrList: { pass: boolean };
    };
    const yes = (b: boolean): string => (b ? 'yes' : 'NO');
    lines.push(
      `${kind}: sessions page < ${REMOTE_TARGETS.sessionsPageMs} ms: ${yes(t.firstSessionsPageUnder100ms.pass)}; ` +
        `items page < ${REMOTE_TARGETS.itemsPageMs} ms: ${yes(t.firstItemsPageUnder50ms.pass)}; ` +
        `pages read only a page: ${yes(t.pagesDoNotLoadWholeSessionOrList.pass)}; fill ${((s.fill.totalMs as number) / 1000).toFixed(1)} s`,
    );
  }
  return lines.join('\n');
}
