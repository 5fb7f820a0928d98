/**
 * Each search filter against its SQL floor (issue 43), on a scale file: A by default (one session, 100,000 turns, 5
 * branches: 1.4 M structure rows over 404,000 messages), where the issue's targets are, or B, C or L. For every query:
 * our whole scan in process (`searchDatabase`, every hit, counted, nothing printed) and its floor on a raw connection
 * of the same driver that shares no code with src/store (better-sqlite3 in raw mode; node:sqlite returning arrays,
 * which every VS Code desktop user's search runs on), alternately, `runs` times each after one unmeasured run of
 * each; CPU time of the process (`process.cpuUsage`, so the load of other work on the machine counts less than in wall
 * time) and wall time, medians, and the ratio of the medians. Both sides read through a connection opened before the query's runs and kept across them, its statements
 * prepared once: the floor's connection always was, while ours was opened for each run, so a query reading a few
 * hundred pages (`is:bad`) compared our cold page cache and fresh statements (2.5 ms for the floor's own SQL on a new
 * connection) with the floor's warm one (1 ms).
 *
 * A floor is the SQL a minimal correct implementation runs: each message that can match read once (a branch copies
 * the structure rows of the turns before its fork, not the messages), the hits' rows handed to JavaScript with their
 * text, and each hit's JSON decoded (a hit shows its text: without decoding, a hit-heavy query would be compared with
 * a scan that shows nothing). It leaves out naming each hit's branch and turn and cutting its snippet, which only
 * makes it lower. Where several statements are correct, each is run and the fastest is the floor. What each reads:
 * - text: every message once, `LIKE` on the raw JSON (SQLite folds ASCII case; the term is ASCII);
 * - `is:failed`: the tool items (structure rows that are not messages) once each, tested for the failure texts; or
 *   every message with those tests, whichever is faster;
 * - `tool:NAME`: the calls the `tool_name` column names, and the outputs whose `call_id` is one of theirs;
 * - `role:user`: the messages the structure rows' `message_type` says are the user's;
 * - `is:bad` (200 reviewed turns, `reviewedTurns`): the user messages of those turns, by the (session, branch, turn)
 *   index;
 * - `reviewed:no` (the same reviews): every user message, less those of the reviewed turns.
 *
 * The filters the search's index of tool items serves (`tool:`, `is:failed`; src/store/search/toolIndex.ts) are also
 * run with the index, in a folder of this run's own: first its build from nothing, timed once (what the first such
 * search of a file pays), then a run with it after each run without, the hits compared. Their `met` is the indexed
 * run's, which is how the CLI and VS Code search after a file's first such search.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSessionDatabase, parseSearchQuery, searchDatabase, type DriverName, type SessionDatabase } from '../../src/store';
import { turnSetKey, type TurnSet } from '../../src/store/search/reviewTurns';
import { indexServes, ToolIndex } from '../../src/store/search/toolIndex';
import { median, now, round } from './measure';
import { openNodeSqliteFloor } from './nodeSqliteFloor';
import { ensureScaleFile, type FileSpec, type ScaleFileName } from './scaleFiles';

/** The target: each filter's whole scan at most this many times its floor. */
export const SEARCH_FLOOR_TARGET_RATIO = 1.5;

/**
 * A query whose scan or floor took less than this (ms, wall) in the unmeasured first run is short: `process.cpuUsage`
 * is the whole process's CPU, and over a few milliseconds V8's helper threads (concurrent marking, compiling) are a
 * large, random part of it. `is:bad` on file A once read 1.6 ms of CPU against its floor's 2.0 (0.78×) while the wall times were
 * 1.6 against 0.32 ms (4.9×). A short query is run at least `SHORT_QUERY_RUNS` times and is met only when its wall
 * ratio is too.
 */
export const SHORT_QUERY_MS = 20;
export const SHORT_QUERY_RUNS = 21;

/** Whether a query meets the target: by CPU, and for a short query by wall time as well; every hit found. */
export function floorMet(q: { ratioCpu: number; ratioWall: number; short: boolean; hits: number; floorRows: number }): boolean {
  return q.ratioCpu <= SEARCH_FLOOR_TARGET_RATIO && (!q.short || q.ratioWall <= SEARCH_FLOOR_TARGET_RATIO) && q.hits === q.floorRows;
}

export interface SearchFloorQuery {
  query: string;
  /** What it stands for. */
  kind: string;
  hits: number;
  /** Messages the floor returned (equal to `hits`: each hit is a message, reported once). */
  floorRows: number;
  ours: { cpuMs: number[]; wallMs: number[] };
  floor: { cpuMs: number[]; wallMs: number[]; statement: string };
  /** Medians' ratios, ours / floor. */
  ratioCpu: number;
  ratioWall: number;
  /**
   * For the filters the search's index of tool items serves (`tool:`, `is:failed`; src/store/search/toolIndex.ts):
   * the same scan with the index current (as every search after a file's first one runs in the CLI and VS Code), and
   * the index's first build from nothing (its one-off cost, paid by the first such search of a file).
   */
  indexed?: {
    cpuMs: number[];
    wallMs: number[];
    ratioCpu: number;
    ratioWall: number;
    build: { cpuMs: number; wallMs: number; bytes: number };
  };
  /** Its scan or floor took less than `SHORT_QUERY_MS`: run at least `SHORT_QUERY_RUNS` times, judged on wall too. */
  short: boolean;
  /** Against the target (`floorMet`): the indexed scan where there is one (what users run), else the scan. */
  met: boolean;
}

export interface SearchFloorReport {
  file: { name: ScaleFileName; path: string; bytes: number };
  /** The driver both sides ran on: the automatic choice (better-sqlite3 where it loads, else node:sqlite). */
  driver: DriverName;
  node: string;
  runs: number;
  /** `uptime`'s load average when the section started and ended (the machine is shared). */
  load: { start: number[]; end: number[] };
  queries: SearchFloorQuery[];
  target: { ratio: number; met: boolean };
}

/** A turn of `main`: its session and number. */
type TurnRef = [sessionId: string, turn: number];

/**
 * The 200 reviewed turns, half of them bad: on a one-session file every (turns / 200)th turn of `main` (on A every
 * 500th, turns 500 … 100,000); on B, whose 2,000 sessions have 50 turns each, the middle turn of every tenth session.
 */
export function reviewedTurns(spec: FileSpec): { bad: TurnRef[]; all: TurnRef[] } {
  const all: TurnRef[] = [];
  const sessions = spec.sessions;
  if (sessions.length === 1) {
    const { sessionId, turns } = sessions[0]!;
    const step = Math.max(1, Math.floor(turns / 200));
    for (let t = step; t <= turns; t += step) all.push([sessionId, t]);
  } else {
    const step = Math.max(1, Math.floor(sessions.length / 200));
    for (let i = 0; i < sessions.length; i += step) all.push([sessions[i]!.sessionId, Math.max(1, Math.ceil(sessions[i]!.turns / 2))]);
  }
  return { bad: all.filter((_, i) => i % 2 === 0), all };
}

/** The text query that finds one user message per session: turn 90 % of the way through the first session's `main`. */
function rareTextQuery(spec: FileSpec): string {
  return `"Turn ${Math.round(spec.sessions[0]!.turns * 0.9)}: "`;
}

interface Floor {
  /** The statements a correct implementation may run; each yields [id, message_data] rows, a superset of the hits. */
  statements: { sql: string; params: unknown[] }[];
  /** The exact test of a decoded row (the floor's own, written out here). */
  keep(item: Record<string, unknown>): boolean;
}

const TOOL_ITEMS = `SELECT message_id FROM message_structure
  WHERE message_type <> 'user' AND message_type <> 'assistant' AND message_type <> 'message'`;

// The reviewed turns' user messages on `main`, by the (session, branch, turn) index: one statement for every session
// (pairs of session and turn as JSON), and on a one-session file also the statement naming the session once.
const REVIEWED_PAIRS = `SELECT s.message_id FROM json_each(?) j JOIN message_structure s
  ON s.session_id = json_extract(j.value, '$[0]') AND s.branch_id = 'main' AND s.user_turn_number = json_extract(j.value, '$[1]')
  WHERE s.message_type = 'user'`;
const REVIEWED_ONE_SESSION = `SELECT s.message_id FROM message_structure s
  WHERE s.session_id = ? AND s.branch_id = 'main' AND s.message_type = 'user' AND s.user_turn_number IN (SELECT value FROM json_each(?))`;

function floorOf(query: string, spec: FileSpec, reviewed: ReturnType<typeof reviewedTurns>): Floor {
  const oneSession = spec.sessions.length === 1 ? spec.sessions[0]!.sessionId : null;
  const text = (needle: string): Floor => ({
    statements: [{ sql: `SELECT id, message_data FROM agent_messages WHERE message_data LIKE ?`, params: [`%${needle}%`] }],
    keep: () => true,
  });
  // The reviewed turns `refs` as the parameters of `sql(turns)`, each way there is.
  const byTurns = (refs: TurnRef[], sql: (turns: string) => string): Floor['statements'] => [
    { sql: sql(REVIEWED_PAIRS), params: [JSON.stringify(refs)] },
    ...(oneSession === null ? [] : [{ sql: sql(REVIEWED_ONE_SESSION), params: [oneSession, JSON.stringify(refs.map((r) => r[1]))] }]),
  ];
  if (query === 'berlin') return text('berlin');
  if (query === rareTextQuery(spec)) return text(query.slice(1, -1));
  switch (query) {
    case 'is:failed': {
      const failed = `(message_data GLOB '*while running the tool*' OR message_data GLOB '*med out after*'
        OR message_data GLOB '*"failed"*' OR message_data GLOB '*"incomplete"*' OR message_data GLOB '*"error"*')`;
      return {
        statements: [
          { sql: `SELECT id, message_data FROM agent_messages WHERE id IN (${TOOL_ITEMS}) AND ${failed}`, params: [] },
          { sql: `SELECT id, message_data FROM agent_messages WHERE ${failed}`, params: [] },
        ],
        keep: (item) =>
          typeof item.role !== 'string' &&
          (item.status === 'failed' ||
            item.status === 'incomplete' ||
            (typeof item.output === 'string' && /^An error occurred while running the tool|^Tool '.*' timed out/.test(item.output))),
      };
    }
    case 'tool:get_weather':
      return {
        statements: [
          {
            sql: `WITH calls AS (SELECT id, message_data FROM agent_messages
                    WHERE id IN (SELECT message_id FROM message_structure WHERE tool_name = 'get_weather'))
                  SELECT id, message_data FROM calls
                  UNION ALL
                  SELECT id, message_data FROM agent_messages
                    WHERE id IN (SELECT message_id FROM message_structure WHERE message_type = 'function_call_output')
                      AND json_extract(message_data, '$.call_id') IN (SELECT json_extract(message_data, '$.call_id') FROM calls)`,
            params: [],
          },
        ],
        keep: () => true,
      };
    case 'role:user':
      return {
        statements: [
          {
            sql: `SELECT id, message_data FROM agent_messages WHERE id IN (SELECT message_id FROM message_structure WHERE message_type = 'user')`,
            params: [],
          },
        ],
        keep: (item) => item.role === 'user',
      };
    case 'is:bad':
      return {
        statements: byTurns(reviewed.bad, (turns) => `SELECT m.id, m.message_data FROM agent_messages m WHERE m.id IN (${turns})`).concat(
          oneSession === null
            ? []
            : [
                {
                  // The floor of the rounds before B, C and L: the join the index drives, the session named once.
                  sql: `SELECT m.id, m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
                  WHERE s.session_id = ? AND s.branch_id = 'main' AND s.message_type = 'user'
                    AND s.user_turn_number IN (SELECT value FROM json_each(?))`,
                  params: [oneSession, JSON.stringify(reviewed.bad.map((r) => r[1]))],
                },
              ],
        ),
        keep: (item) => item.role === 'user',
      };
    case 'reviewed:no':
      return {
        statements: byTurns(
          reviewed.all,
          (turns) => `SELECT id, message_data FROM agent_messages
                  WHERE id IN (SELECT message_id FROM message_structure WHERE message_type = 'user') AND id NOT IN (${turns})`,
        ),
        keep: (item) => item.role === 'user',
      };
    default:
      throw new Error(`no floor for ${query}`);
  }
}

/** The queries, with what each stands for on `spec`'s file. */
function queriesOf(spec: FileSpec): { query: string; kind: string }[] {
  const sessions = spec.sessions.length;
  return [
    { query: 'berlin', kind: 'text, a common word (a hit in most messages)' },
    {
      query: rareTextQuery(spec),
      kind: sessions === 1 ? 'text, one hit (every message read)' : `text, one hit in each of ${sessions} sessions`,
    },
    { query: 'is:failed', kind: 'failed tool calls (none on the scale files)' },
    { query: 'tool:get_weather', kind: 'a tool: its calls and their outputs' },
    { query: 'role:user', kind: 'a role' },
    { query: 'is:bad', kind: 'a review filter: 100 turns' },
    { query: 'reviewed:no', kind: 'a review filter: all but 200 turns' },
  ];
}

const cpuMs = (start: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};

/**
 * A read-only connection of the floor's own on `driver`, sharing no code with src/store: better-sqlite3 in raw mode, or
 * node:sqlite returning arrays (`setReturnArrays`, Node 22.16+). `prepare` prepares a statement once and returns what
 * runs it: the rows of one run, each an array of its columns.
 */
interface FloorConnection {
  prepare(sql: string): (params: unknown[]) => Iterable<unknown[]>;
  close(): void;
}

function openFloor(path: string, driver: DriverName): FloorConnection {
  if (driver === 'better-sqlite3') {
    const db = new Database(path, { readonly: true });
    return {
      prepare: (sql) => {
        const st = db.prepare(sql).raw();
        return (params) => st.iterate(...params) as Iterable<unknown[]>;
      },
      close: () => db.close(),
    };
  }
  const db = openNodeSqliteFloor(path, { readOnly: true });
  return {
    prepare: (sql) => {
      const st = db.prepare(sql);
      return (params) => st.iterate(...params);
    },
    close: () => db.close(),
  };
}

function runFloor(
  prepared: ((params: unknown[]) => Iterable<unknown[]>)[],
  floor: Floor,
): { rows: number; idSum: number; cpuMs: number; wallMs: number; statement: number }[] {
  return floor.statements.map((st, statement) => {
    const c0 = process.cpuUsage();
    const t0 = now();
    let rows = 0;
    let idSum = 0;
    for (const row of prepared[statement]!(st.params)) {
      if (floor.keep(JSON.parse(row[1] as string) as Record<string, unknown>)) {
        rows++;
        idSum += Number(row[0]);
      }
    }
    return { rows, idSum, cpuMs: cpuMs(c0), wallMs: now() - t0, statement };
  });
}

/** Our whole scan of `query` (every hit counted), with the index of tool items in `indexDir` when given. */
export async function runOurs(
  db: SessionDatabase,
  query: string,
  turnSet: TurnSet | undefined,
  indexDir?: string,
): Promise<{ hits: number; idSum: number; cpuMs: number; wallMs: number }> {
  const c0 = process.cpuUsage();
  const t0 = now();
  let hits = 0;
  let idSum = 0;
  await searchDatabase(db, parseSearchQuery(query), {
    maxHits: Number.MAX_SAFE_INTEGER,
    onHits: (h) => {
      hits += h.length;
      for (const hit of h) idSum += hit.messageId;
    },
    ...(turnSet ? { turns: turnSet } : {}),
    ...(indexDir
      ? {
          index: {
            dir: indexDir,
            onProblem: (m: string) => {
              throw new Error(m);
            },
          },
        }
      : {}),
  });
  return { hits, idSum, cpuMs: cpuMs(c0), wallMs: now() - t0 };
}

const loadAverage = (): number[] => loadavg().map((l) => round(l));

/** The bytes of the files in `dir` (the index and its -wal). */
const folderBytes = (dir: string): number => readdirSync(dir).reduce((n, name) => n + statSync(join(dir, name)).size, 0);

export async function runSearchFloorBench(
  cacheDir: string,
  runs: number,
  only: readonly string[] | null,
  progress: (m: string) => void,
  name: ScaleFileName = 'A',
  scale = 1,
): Promise<SearchFloorReport> {
  const file = ensureScaleFile(cacheDir, name, scale, progress);
  const reviewed = reviewedTurns(file.spec);
  const start = loadAverage();
  // Ours on the driver the store picks here; the floor on the same one.
  const probe = openSessionDatabase(file.path);
  const driver = probe.driver;
  probe.close();
  const db = openFloor(file.path, driver);
  const queries: SearchFloorQuery[] = [];
  // The index of tool items, in a folder of this run's own (removed at the end).
  const indexDir = mkdtempSync(join(tmpdir(), 'asi-bench-index-'));
  try {
    // One read of the whole file first, so the page cache is as warm for the first measured scan as for the others.
    for (const row of db.prepare('SELECT count(*) FROM agent_messages WHERE message_data LIKE ?')(['%no such text%'])) void row;
    for (const q of queriesOf(file.spec)) {
      if (only && !only.includes(q.query)) continue;
      const keys = (refs: TurnRef[]): string[] => refs.map(([sessionId, turn]) => turnSetKey(sessionId, 'main', turn));
      const turnSet: TurnSet | undefined =
        q.query === 'is:bad'
          ? { mode: 'only', keys: keys(reviewed.bad) }
          : q.query === 'reviewed:no'
            ? { mode: 'except', keys: keys(reviewed.all) }
            : undefined;
      const floor = floorOf(q.query, file.spec, reviewed);
      const ours: SearchFloorQuery['ours'] = { cpuMs: [], wallMs: [] };
      const withIndex = indexServes(parseSearchQuery(q.query));
      const indexed = { cpuMs: [] as number[], wallMs: [] as number[] };
      const perStatement: { cpuMs: number[]; wallMs: number[] }[] = floor.statements.map(() => ({ cpuMs: [], wallMs: [] }));
      let hits = -1;
      let floorRows = -1;
      let short = false;
      // Both sides as the floor always was: one connection for the query's runs, its statements prepared once, and
      // one run of each first that is not measured (its page cache warm for both).
      const ourDb = openSessionDatabase(file.path);
      const prepared = floor.statements.map((st) => db.prepare(st.sql));
      let build: { cpuMs: number; wallMs: number; bytes: number } | undefined;
      try {
        if (withIndex) {
          // The index from nothing, as the first such search of a file builds it (then kept for every run below).
          rmSync(indexDir, { recursive: true, force: true });
          progress(`search floors: ${q.query} (the index's first build)`);
          const c0 = process.cpuUsage();
          const t0 = now();
          const index = ToolIndex.open(indexDir, ourDb);
          try {
            index.catchUp(ourDb);
          } finally {
            index.close();
          }
          const wallMs = now() - t0;
          build = { cpuMs: round(cpuMs(c0)), wallMs: round(wallMs), bytes: folderBytes(indexDir) };
        }
        let queryRuns = runs;
        for (let r = -1; r < queryRuns; r++) {
          progress(`search floors: ${q.query} (${r < 0 ? 'unmeasured first run' : `run ${r + 1} of ${queryRuns}`})`);
          const o = await runOurs(ourDb, q.query, turnSet);
          const x = withIndex ? await runOurs(ourDb, q.query, turnSet, indexDir) : undefined;
          const f = runFloor(prepared, floor);
          if (x && (x.hits !== o.hits || x.idSum !== o.idSum))
            throw new Error(`${q.query}: ${x.hits} hits with the index, ${o.hits} without`);
          // The same messages on both sides (their count, and the sum of their ids: a floor reading the turn after each
          // reviewed one counts as many), or the comparison means nothing.
          for (const one of f)
            if (one.rows !== o.hits || one.idSum !== o.idSum)
              throw new Error(
                `${q.query}: the search found ${o.hits} messages (ids summing to ${o.idSum}), the floor's statement ${one.statement + 1} ${one.rows} (${one.idSum})`,
              );
          if (r < 0) {
            // The floor's side counts too: its CPU is read over as short a window (is:bad's floor takes 0.3 ms).
            short = Math.min((x ?? o).wallMs, ...f.map((one) => one.wallMs)) < SHORT_QUERY_MS;
            if (short) queryRuns = Math.max(runs, SHORT_QUERY_RUNS);
            continue;
          }
          if (x) {
            indexed.cpuMs.push(round(x.cpuMs));
            indexed.wallMs.push(round(x.wallMs));
          }
          ours.cpuMs.push(round(o.cpuMs));
          ours.wallMs.push(round(o.wallMs));
          hits = o.hits;
          for (const one of f) {
            perStatement[one.statement]!.cpuMs.push(round(one.cpuMs));
            perStatement[one.statement]!.wallMs.push(round(one.wallMs));
            floorRows = one.rows;
          }
        }
      } finally {
        ourDb.close();
      }
      // The fastest correct statement is the floor.
      const best = perStatement.reduce((a, b) => (median(b.cpuMs) < median(a.cpuMs) ? b : a));
      const ratioCpu = round(median(ours.cpuMs) / Math.max(median(best.cpuMs), 0.001));
      const indexedRatio = build ? round(median(indexed.cpuMs) / Math.max(median(best.cpuMs), 0.001)) : undefined;
      const ratioWall = round(median(ours.wallMs) / Math.max(median(best.wallMs), 0.001));
      const indexedWall = build ? round(median(indexed.wallMs) / Math.max(median(best.wallMs), 0.001)) : undefined;
      queries.push({
        query: q.query,
        kind: q.kind,
        hits,
        floorRows,
        ours,
        floor: { ...best, statement: floor.statements[perStatement.indexOf(best)]!.sql.replace(/\s+/g, ' ') },
        ratioCpu,
        ratioWall,
        ...(build && indexedRatio !== undefined && indexedWall !== undefined
          ? { indexed: { ...indexed, ratioCpu: indexedRatio, ratioWall: indexedWall, build } }
          : {}),
        short,
        met: floorMet({ ratioCpu: indexedRatio ?? ratioCpu, ratioWall: indexedWall ?? ratioWall, short, hits, floorRows }),
      });
    }
  } finally {
    db.close();
    rmSync(indexDir, { recursive: true, force: true });
  }
  return {
    file: { name, path: file.path, bytes: file.bytes },
    driver,
    node: process.version,
    runs,
    load: { start, end: loadAverage() },
    queries,
    target: { ratio: SEARCH_FLOOR_TARGET_RATIO, met: queries.every((q) => q.met) },
  };
}

/** The section's table for stderr. */
export function searchFloorTable(r: SearchFloorReport): string {
  const lines = [
    `search floors on ${r.file.name} (${r.file.path}), ${r.driver} on Node ${r.node} (${r.runs} runs each; load ${r.load.start.join(' ')} → ${r.load.end.join(' ')})`,
    'query                 hits  ours cpu ms  floor cpu ms  ratio  ours wall ms  floor wall ms  ratio  ≤1.5',
  ];
  for (const q of r.queries) {
    lines.push(
      [
        q.query.padEnd(18),
        String(q.hits).padStart(7),
        String(median(q.ours.cpuMs)).padStart(12),
        String(median(q.floor.cpuMs)).padStart(13),
        String(q.ratioCpu).padStart(6),
        String(median(q.ours.wallMs)).padStart(13),
        String(median(q.floor.wallMs)).padStart(14),
        String(q.ratioWall).padStart(6),
        (q.met ? '  yes' : '   NO') + (q.short ? `  (short: ${q.ours.cpuMs.length} runs, wall judged too)` : ''),
      ].join(' '),
    );
    const x = q.indexed;
    if (x)
      lines.push(
        [
          '  with the index'.padEnd(26),
          String(median(x.cpuMs)).padStart(12),
          String(median(q.floor.cpuMs)).padStart(13),
          String(x.ratioCpu).padStart(6),
          String(median(x.wallMs)).padStart(13),
          String(median(q.floor.wallMs)).padStart(14),
          String(x.ratioWall).padStart(6),
          `  (built in ${x.build.wallMs} ms, CPU ${x.build.cpuMs} ms, ${round(x.build.bytes / 1e6)} MB)`,
        ].join(' '),
      );
  }
  return lines.join('\n');
}
