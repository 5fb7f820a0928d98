/**
 * The scale section of `npm run bench` (issue 13): every inspector call a user waits for, on the generated files A, B
 * and C (scripts/bench/scaleFiles.ts), against its plain-SQL floor (scripts/bench/scaleFloor.ts) measured in the same
 * run. Calls go through the public `SessionDatabase` API (and `AdvancedSQLiteSession` for the two branch writes), so
 * whatever src/store/inspector does today is what gets measured.
 *
 * For each call: the first call on a freshly opened database (cold-ish: SQLite's page cache is empty, the OS cache
 * is not) and the median of `reps` warm runs, on both sides; heap and RSS growth across one call; the ratio; the
 * targets as booleans; and `EXPLAIN QUERY PLAN` of the floor's statements and of the store's (recorded by
 * wrapping better-sqlite3's Statement methods during one untimed call).
 */
import { closeSync, copyFileSync, fsyncSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../src/store';
import { batchSize, median, now, ratio, round, settle, timeBatch, timeOnce } from './measure';
import { ensureScaleFile, type CachedFile, type ScaleFileName } from './scaleFiles';
import {
  FloorConnection,
  explain,
  floorAddTurn,
  floorBranchTree,
  floorCreateBranch,
  floorDeleteBranch,
  floorItemsPage,
  floorListSessions,
  floorToolTotals,
  floorTurnItems,
  floorTurnsPage,
  floorTurnsPageBefore,
  floorTurnsWithoutUsage,
  floorUsagePage,
  floorUsageRows,
  floorUsedBranchIds,
} from './scaleFloor';

export interface ScaleConfig {
  files: ScaleFileName[];
  scale: number;
  reps: number;
  cacheDir: string;
  /** Where the copies for the write calls go (deleted afterwards). */
  tmpDir: string;
}

const MB = 1024 * 1024;
/** The issue's targets. */
export const SCALE_TARGETS = { maxMs: 100, maxRatio: 3, maxMemoryBytes: 32 * MB, maxDeleteRatio: 1.5 };

interface SideTiming {
  firstMs: number;
  medianMs: number;
  samplesMs: number[];
  /** Calls averaged per warm sample (fast calls are batched). */
  batch: number;
  /** heapUsed right after one call minus before it (from a collected heap, no collection in between). */
  heapGrowthBytes: number;
  /** RSS right after one call minus before it. */
  rssGrowthBytes: number;
  /** heapUsed growth after a full collection while the result is still referenced. */
  retainedBytes: number | null;
}

interface PlanEntry {
  sql: string;
  plan: string[];
}

export interface CallResult {
  store: SideTiming;
  floor: SideTiming;
  /** store / floor of the warm medians. */
  ratio: number | null;
  firstRatio: number | null;
  resultsAgree: boolean | null;
  targets: {
    within100ms: boolean;
    withinRatio: boolean;
    maxRatio: number;
    within32MB: boolean;
    pass: boolean;
  };
  plans: { floor: PlanEntry[]; store: PlanEntry[] };
  note?: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Recording the store's SQL

type StatementMethod = (this: Database.Statement, ...args: unknown[]) => unknown;
const RECORDED_METHODS = ['get', 'all', 'iterate', 'run'] as const;

/**
 * Runs `fn` with better-sqlite3's Statement methods wrapped to record each statement's SQL and parameters (PRAGMAs
 * and transaction control left out). Only for the untimed plan call; the methods are restored afterwards.
 */
async function recordStatements(fn: () => unknown): Promise<{ sql: string; params: unknown[] }[]> {
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, StatementMethod>;
  probe.close();
  const saved = RECORDED_METHODS.map((m) => [m, proto[m]] as const);
  const seen: { sql: string; params: unknown[] }[] = [];
  for (const [name, original] of saved) {
    proto[name] = function (this: Database.Statement, ...args: unknown[]) {
      const sql = this.source.trim();
      if (!/^(PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(sql)) seen.push({ sql, params: args });
      return original!.apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    for (const [name, original] of saved) proto[name] = original!;
  }
  return seen;
}

const oneLine = (sql: string): string => sql.replace(/\s+/g, ' ').trim();

function plansOf(db: Database.Database, statements: readonly { sql: string; params: readonly unknown[] }[]): PlanEntry[] {
  const out: PlanEntry[] = [];
  const done = new Set<string>();
  for (const s of statements) {
    if (done.has(s.sql)) continue;
    done.add(s.sql);
    out.push({ sql: oneLine(s.sql), plan: explain(db, s.sql, s.params) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring

interface MemorySample {
  heapGrowthBytes: number;
  rssGrowthBytes: number;
  retainedBytes: number | null;
}

async function memoryOf(fn: () => unknown, gc: (() => void) | null): Promise<MemorySample> {
  gc?.();
  gc?.();
  const before = process.memoryUsage();
  const result = await fn();
  const after = process.memoryUsage();
  let retained: number | null = null;
  if (gc) {
    gc();
    retained = process.memoryUsage().heapUsed - before.heapUsed;
  }
  // Keep the result reachable until the collection above has run.
  void (result as unknown);
  return { heapGrowthBytes: after.heapUsed - before.heapUsed, rssGrowthBytes: after.rss - before.rss, retainedBytes: retained };
}

function targetsOf(storeMedian: number, r: number | null, heap: number, maxRatio: number): CallResult['targets'] {
  const within100ms = storeMedian <= SCALE_TARGETS.maxMs;
  const withinRatio = r !== null && r <= maxRatio;
  const within32MB = heap <= SCALE_TARGETS.maxMemoryBytes;
  return { within100ms, withinRatio, maxRatio, within32MB, pass: within100ms && withinRatio && within32MB };
}

interface ReadCall {
  name: string;
  store: () => unknown;
  floor: () => unknown;
  /** Both answers reduced to what they must agree on (null: not comparable). */
  agree?: (store: unknown, floor: unknown) => boolean | null;
}

/** Times a read on both sides (first call each, then alternating warm samples), then its memory, then its plans. */
async function measureRead(
  call: ReadCall,
  reps: number,
  gc: (() => void) | null,
  floorConn: FloorConnection,
  explainDb: Database.Database,
): Promise<CallResult> {
  await settle();
  gc?.();
  let storeResult: unknown;
  let floorResult: unknown;
  const storeFirst = await timeOnce(() => (storeResult = call.store()));
  gc?.();
  const floorFirst = await timeOnce(() => (floorResult = call.floor()));
  const agree = call.agree ? call.agree(storeResult, floorResult) : null;
  storeResult = floorResult = undefined;
  const slow = Math.max(storeFirst, floorFirst) > 2000;
  const n = slow ? Math.min(reps, 3) : reps;
  const batch = batchSize(Math.min(await timeOnce(call.store), await timeOnce(call.floor)), 5, 200);
  const storeSamples: number[] = [];
  const floorSamples: number[] = [];
  for (let r = 0; r < n; r++) {
    await settle();
    gc?.();
    if (r % 2 === 0) {
      storeSamples.push(await timeBatch(call.store, batch));
      gc?.();
      floorSamples.push(await timeBatch(call.floor, batch));
    } else {
      floorSamples.push(await timeBatch(call.floor, batch));
      gc?.();
      storeSamples.push(await timeBatch(call.store, batch));
    }
  }
  const storeMemory = await memoryOf(call.store, gc);
  const floorMemory = await memoryOf(call.floor, gc);
  const storeStatements = await recordStatements(call.store);
  floorConn.recording = [];
  call.floor();
  const floorStatements = floorConn.recording;
  floorConn.recording = null;
  const side = (first: number, samples: number[], m: MemorySample): SideTiming => ({
    firstMs: round(first),
    medianMs: round(median(samples)),
    samplesMs: samples.map(round),
    batch,
    ...m,
  });
  const r = ratio(median(storeSamples), median(floorSamples));
  return {
    store: side(storeFirst, storeSamples, storeMemory),
    floor: side(floorFirst, floorSamples, floorMemory),
    ratio: r,
    firstRatio: ratio(storeFirst, floorFirst),
    resultsAgree: agree,
    targets: targetsOf(median(storeSamples), r, storeMemory.heapGrowthBytes, SCALE_TARGETS.maxRatio),
    plans: { floor: plansOf(explainDb, floorStatements), store: plansOf(explainDb, storeStatements) },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Result comparisons (reduced to what both sides compute)

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const pick = <T extends object>(rows: unknown, keys: (keyof T)[]): unknown =>
  (rows as T[]).map((r) => Object.fromEntries(keys.map((k) => [k, r[k]])));

const agreeSessions = (s: unknown, f: unknown): boolean =>
  same(
    pick<Record<string, unknown>>(s, ['sessionId', 'messageCount', 'branchCount', 'usage']),
    pick<Record<string, unknown>>(f, ['sessionId', 'messageCount', 'branchCount', 'usage']),
  );
const TREE_KEYS = ['branchId', 'messageCount', 'userTurns', 'parentBranchId', 'forkTurn', 'sharedItemCount'];
const agreeTree = (s: unknown, f: unknown): boolean =>
  same(pick<Record<string, unknown>>(s, TREE_KEYS), pick<Record<string, unknown>>(f, TREE_KEYS));
const agreeTurns = (s: unknown, f: unknown): boolean =>
  same(
    pick<Record<string, unknown>>((s as { turns: unknown[] }).turns, ['turn', 'totalTokens', 'preview']),
    pick<Record<string, unknown>>(f, ['turn', 'totalTokens', 'preview']),
  );
const itemKeys = (rows: unknown): unknown =>
  (rows as { sequenceNumber: number; type: string | null; item?: unknown }[]).map((r) => [r.sequenceNumber, r.type, r.item]);
const agreeItems = (s: unknown, f: unknown): boolean => same(itemKeys((s as { items: unknown[] }).items), itemKeys(f));
const agreeTurnItems = (s: unknown, f: unknown): boolean => same(itemKeys(s), itemKeys(f));
const USAGE_KEYS = ['branchId', 'turn', 'requests', 'inputTokens', 'outputTokens', 'totalTokens', 'cachedTokens', 'reasoningTokens'];
const agreeUsage = (s: unknown, f: unknown): boolean =>
  same(pick<Record<string, unknown>>(s, USAGE_KEYS), pick<Record<string, unknown>>(f, USAGE_KEYS));

/** How many turns the view lists per tool and how many missing-usage turns it shows (src/shared/pageSizes.ts). */
const TOOL_TURNS_LISTED = 20;
const MISSING_USAGE_LISTED = 20;
const USAGE_PAGE = 200;

const agreeToolTotals = (s: unknown, f: unknown): boolean => {
  const store = (s as { toolName: string; calls: number; turns: number[]; turnCount?: number }[]).map((t) => ({
    toolName: t.toolName,
    calls: t.calls,
    turns: t.turns.slice(0, TOOL_TURNS_LISTED),
    turnCount: t.turnCount ?? t.turns.length,
  }));
  return same(store, f);
};

const agreeUsagePage = (s: unknown, f: unknown): boolean => {
  const a = s as { rows: unknown[]; rowCount: number; totals: unknown };
  const b = f as { rows: unknown[]; rowCount: number; totals: unknown };
  return a.rowCount === b.rowCount && same(a.totals, b.totals) && agreeUsage(a.rows, b.rows);
};

// ---------------------------------------------------------------------------------------------------------------
// One file

export interface FileReport {
  file: Omit<CachedFile, 'spec'> & { rows: Record<string, number> };
  sessionId: string;
  branchId: string;
  calls: Record<string, CallResult>;
}

function rowCounts(path: string): Record<string, number> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const out: Record<string, number> = {};
    for (const r of db.prepare('SELECT name, seq FROM sqlite_sequence').all() as { name: string; seq: number }[]) out[r.name] = r.seq;
    out.sessions = (db.prepare('SELECT COUNT(*) AS n FROM agent_sessions').get() as { n: number }).n;
    return out;
  } finally {
    db.close();
  }
}

async function measureFile(
  file: CachedFile,
  config: ScaleConfig,
  gc: (() => void) | null,
  progress: (m: string) => void,
): Promise<FileReport> {
  const sessions = file.spec.sessions;
  const session = sessions[Math.floor(sessions.length / 2)]!;
  const sid = session.sessionId;
  const branch = 'main';
  const lastTurn = session.turns;
  const calls: Record<string, CallResult> = {};
  const floor = new FloorConnection(file.path, { readonly: true });
  const explainDb = floor.db;
  let db: SessionDatabase | undefined;
  try {
    // ---- opening ---------------------------------------------------------------------------------------------------
    progress(`${file.name}: openSessionDatabase`);
    calls['openSessionDatabase'] = await measureRead(
      {
        name: 'openSessionDatabase',
        store: () => openSessionDatabase(file.path).close(),
        floor: () => {
          const d = new Database(file.path, { readonly: true, fileMustExist: true });
          d.prepare('SELECT name, sql FROM sqlite_master').all();
          d.close();
        },
      },
      config.reps,
      gc,
      floor,
      explainDb,
    );
    db = openSessionDatabase(file.path);
    const d = db;

    const read = async (call: ReadCall): Promise<void> => {
      progress(`${file.name}: ${call.name}`);
      calls[call.name] = await measureRead(call, config.reps, gc, floor, explainDb);
    };
    const endAfter = Math.max(0, lastTurn - 500);
    const lastSeq = (
      floor.get<{ s: number }>(
        'SELECT MAX(sequence_number) AS s FROM message_structure WHERE session_id = ? AND branch_id = ?',
        sid,
        branch,
      ) ?? {
        s: 0,
      }
    ).s;
    const midTurn = Math.max(1, Math.floor(lastTurn / 2));

    await read({ name: 'listSessions()', store: () => d.listSessions(), floor: () => floorListSessions(floor), agree: agreeSessions });
    await read({ name: 'getBranchTree', store: () => d.getBranchTree(sid), floor: () => floorBranchTree(floor, sid), agree: agreeTree });
    await read({ name: 'usedBranchIds', store: () => d.usedBranchIds(sid), floor: () => floorUsedBranchIds(floor, sid), agree: same });
    await read({
      name: 'getTurnsPage(first 100)',
      store: () => d.getTurnsPage(sid, branch, { limit: 100 }),
      floor: () => floorTurnsPage(floor, sid, branch, 0, 100),
      agree: agreeTurns,
    });
    await read({
      name: 'getTurnsPage(last 500)',
      store: () => d.getTurnsPage(sid, branch, { afterTurn: endAfter, limit: 500 }),
      floor: () => floorTurnsPage(floor, sid, branch, endAfter, 500),
      agree: agreeTurns,
    });
    await read({
      name: 'getTurnsPageBefore(end, 500)',
      store: () => d.getTurnsPageBefore(sid, branch, { limit: 500 }),
      floor: () => floorTurnsPageBefore(floor, sid, branch, Number.MAX_SAFE_INTEGER, 500),
      agree: agreeTurns,
    });
    await read({
      name: 'getItemsPage(first 100)',
      store: () => d.getItemsPage(sid, branch, { limit: 100 }),
      floor: () => floorItemsPage(floor, sid, branch, 0, 100),
      agree: agreeItems,
    });
    await read({
      name: 'getItemsPage(last 100)',
      store: () => d.getItemsPage(sid, branch, { afterSequence: lastSeq - 100, limit: 100 }),
      floor: () => floorItemsPage(floor, sid, branch, lastSeq - 100, 100),
      agree: agreeItems,
    });
    await read({
      name: `getTurnItems(${midTurn})`,
      store: () => d.getTurnItems(sid, branch, midTurn),
      floor: () => floorTurnItems(floor, sid, branch, midTurn),
      agree: agreeTurnItems,
    });
    // The fork turns the view passes to getTurnsWithoutUsage (copied turns have their usage on the parent).
    const fromTurns = new Map<string, number>();
    for (const n of d.getBranchTree(sid)) if (n.parentBranchId !== null && n.forkTurn !== null) fromTurns.set(n.branchId, n.forkTurn);
    for (const b of [branch, null]) {
      const label = b === null ? 'all' : b;
      await read({
        name: `getUsagePage(${label}, first ${USAGE_PAGE})`,
        store: () => d.getUsagePage(sid, b, { sort: 'turn', offset: 0, limit: USAGE_PAGE }),
        floor: () => floorUsagePage(floor, sid, b, 0, USAGE_PAGE),
        agree: agreeUsagePage,
      });
      await read({
        name: `getUsageRows(${label})`,
        store: () => d.getUsageRows(sid, b),
        floor: () => floorUsageRows(floor, sid, b),
        agree: agreeUsage,
      });
      await read({
        name: `getToolTotals(${label})`,
        store: () => d.getToolTotals(sid, b),
        floor: () => floorToolTotals(floor, sid, b, TOOL_TURNS_LISTED),
        agree: agreeToolTotals,
      });
      await read({
        name: `getTurnsWithoutUsage(${label})`,
        store: () => d.getTurnsWithoutUsage(sid, b, { fromTurns, limit: MISSING_USAGE_LISTED }),
        floor: () => floorTurnsWithoutUsage(floor, sid, b, fromTurns, MISSING_USAGE_LISTED),
        agree: same,
      });
    }
  } finally {
    db?.close();
    floor.close();
  }

  // ---- the two branch writes, on a copy ------------------------------------------------------------------------------
  Object.assign(calls, await measureBranchWrites(file, sid, config, gc, progress));

  const { spec: _spec, ...rest } = file;
  return { file: { ...rest, rows: rowCounts(file.path) }, sessionId: sid, branchId: branch, calls };
}

/**
 * `createBranchFromTurn(k)` from main and `deleteBranch` of that branch (after one turn of its own was added,
 * untimed, so the delete has messages to remove), `reps` + 1 times on each side, alternating, on a copy of the file.
 * The store goes through `AdvancedSQLiteSession` (the extension's writable session), the floor through raw SQL.
 */
async function measureBranchWrites(
  file: CachedFile,
  sid: string,
  config: ScaleConfig,
  gc: (() => void) | null,
  progress: (m: string) => void,
): Promise<Record<string, CallResult>> {
  // B's sessions have 50 turns; a branch from 26 is the issue's 25-turn branch. A and C branch from turn 10.
  const k = file.name === 'B' ? 26 : 10;
  const copy = join(config.tmpDir, `scale-${file.name}-copy.db`);
  const removeCopy = (): void => {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(copy + suffix, { force: true });
  };
  progress(`${file.name}: copying the file for the branch writes`);
  removeCopy();
  copyFileSync(file.path, copy);
  // Flush the copy before timing: otherwise the first commit's fsync waits for the copy's gigabyte of dirty pages
  // (ext4 orders a journal commit after other files' pending data), which is the copy's cost, not the call's.
  const fd = openSync(copy, 'r+');
  fsyncSync(fd);
  closeSync(fd);
  const store = new AdvancedSQLiteSession({ sessionId: sid, dbPath: copy });
  const floor = new FloorConnection(copy, { readonly: false });
  const texts = [
    '{"content": "x", "role": "user"}',
    '{"type": "function_call"}',
    '{"type": "function_call_output"}',
    '{"role": "assistant"}',
  ];
  const items = texts.map((t) => JSON.parse(t) as AgentInputItem);
  const created = { store: [] as number[], floor: [] as number[] };
  const deleted = { store: [] as number[], floor: [] as number[] };
  const memory = {
    create: { store: [] as MemorySample[], floor: [] as MemorySample[] },
    del: { store: [] as MemorySample[], floor: [] as MemorySample[] },
  };
  let storeStatements: { create: { sql: string; params: unknown[] }[]; del: { sql: string; params: unknown[] }[] } = {
    create: [],
    del: [],
  };
  const floorStatements: { create: { sql: string; params: readonly unknown[] }[]; del: { sql: string; params: readonly unknown[] }[] } = {
    create: [],
    del: [],
  };
  const storeRound = async (name: string, r: number, last: boolean): Promise<void> => {
    gc?.();
    let createMs = 0;
    const createMem = await memoryOf(async () => (createMs = await timeOnce(() => store.createBranchFromTurn(k, name))), gc);
    await store.addItems(items);
    await store.switchToBranch('main');
    gc?.();
    let deleteMs = 0;
    const deleteMem = await memoryOf(async () => (deleteMs = await timeOnce(() => store.deleteBranch(name))), gc);
    if (last) {
      memory.create.store.push(createMem);
      memory.del.store.push(deleteMem);
      const n2 = `${name}_plan`;
      storeStatements = {
        create: await recordStatements(() => store.createBranchFromTurn(k, n2)),
        del: [],
      };
      await store.switchToBranch('main');
      storeStatements.del = await recordStatements(() => store.deleteBranch(n2));
    } else {
      created.store.push(createMs);
      deleted.store.push(deleteMs);
    }
    void r;
  };
  const floorRound = async (name: string, last: boolean): Promise<void> => {
    gc?.();
    let createMs = 0;
    if (last) floor.recording = [];
    const createMem = await memoryOf(async () => (createMs = await timeOnce(() => floorCreateBranch(floor, sid, 'main', k, name))), gc);
    if (last) {
      floorStatements.create = floor.recording ?? [];
      floor.recording = null;
    }
    floorAddTurn(floor, sid, name, k, texts);
    gc?.();
    let deleteMs = 0;
    if (last) floor.recording = [];
    const deleteMem = await memoryOf(async () => (deleteMs = await timeOnce(() => floorDeleteBranch(floor, sid, name))), gc);
    if (last) {
      floorStatements.del = floor.recording ?? [];
      floor.recording = null;
      memory.create.floor.push(createMem);
      memory.del.floor.push(deleteMem);
    } else {
      created.floor.push(createMs);
      deleted.floor.push(deleteMs);
    }
  };
  try {
    progress(`${file.name}: createBranchFromTurn(${k}) and deleteBranch`);
    for (let r = 0; r <= config.reps + 1; r++) {
      await settle();
      const last = r === config.reps + 1;
      if (r % 2 === 0) {
        await storeRound(`bench_store_${r}`, r, last);
        await floorRound(`bench_floor_${r}`, last);
      } else {
        await floorRound(`bench_floor_${r}`, last);
        await storeRound(`bench_store_${r}`, r, last);
      }
    }
    const result = (
      times: { store: number[]; floor: number[] },
      mem: { store: MemorySample[]; floor: MemorySample[] },
      statements: { store: { sql: string; params: readonly unknown[] }[]; floor: { sql: string; params: readonly unknown[] }[] },
      maxRatio: number,
      note: string,
    ): CallResult => {
      const [sFirst = NaN, ...sWarm] = times.store;
      const [fFirst = NaN, ...fWarm] = times.floor;
      const r = ratio(median(sWarm), median(fWarm));
      const sm = mem.store[0]!;
      const fm = mem.floor[0]!;
      return {
        store: { firstMs: round(sFirst), medianMs: round(median(sWarm)), samplesMs: sWarm.map(round), batch: 1, ...sm },
        floor: { firstMs: round(fFirst), medianMs: round(median(fWarm)), samplesMs: fWarm.map(round), batch: 1, ...fm },
        ratio: r,
        firstRatio: ratio(sFirst, fFirst),
        resultsAgree: null,
        targets: targetsOf(median(sWarm), r, sm.heapGrowthBytes, maxRatio),
        plans: { floor: plansOf(floor.db, statements.floor), store: plansOf(floor.db, statements.store) },
        note,
      };
    };
    return {
      [`createBranchFromTurn(${k})`]: result(
        created,
        memory.create,
        { store: storeStatements.create, floor: floorStatements.create },
        SCALE_TARGETS.maxRatio,
        `from main, on a copy of the file; both sides commit with synchronous=FULL in WAL mode`,
      ),
      deleteBranch: result(
        deleted,
        memory.del,
        { store: storeStatements.del, floor: floorStatements.del },
        SCALE_TARGETS.maxDeleteRatio,
        `the branch just created plus one turn of its own (4 messages to remove); target ≤ ${SCALE_TARGETS.maxDeleteRatio}× floor`,
      ),
    };
  } finally {
    store.close();
    floor.close();
    removeCopy();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The section

export interface ScaleReport {
  config: ScaleConfig;
  targets: typeof SCALE_TARGETS;
  files: Partial<Record<ScaleFileName, FileReport>>;
  /** Calls that miss a target, per file. */
  misses: { file: ScaleFileName; call: string; missed: string[] }[];
}

export async function runScaleBench(config: ScaleConfig, gc: (() => void) | null, progress: (m: string) => void): Promise<ScaleReport> {
  const files: Partial<Record<ScaleFileName, FileReport>> = {};
  const misses: ScaleReport['misses'] = [];
  for (const name of config.files) {
    progress(`${name}: generating or reusing (scale ${config.scale})`);
    const t0 = now();
    const file = ensureScaleFile(config.cacheDir, name, config.scale, (m) => progress(`${name}: ${m}`));
    progress(
      `${name}: ${file.generated ? `generated in ${Math.round(now() - t0)} ms` : 'reused from the cache'}, ${(file.bytes / MB).toFixed(0)} MB`,
    );
    const report = await measureFile(file, config, gc, progress);
    files[name] = report;
    for (const [call, r] of Object.entries(report.calls)) {
      const missed = [
        r.targets.within100ms ? null : `${r.store.medianMs} ms > ${SCALE_TARGETS.maxMs} ms`,
        r.targets.withinRatio ? null : `ratio ${r.ratio} > ${r.targets.maxRatio}×`,
        r.targets.within32MB ? null : `heap +${(r.store.heapGrowthBytes / MB).toFixed(1)} MB > 32 MB`,
      ].filter((x): x is string => x !== null);
      if (missed.length) misses.push({ file: name, call, missed });
    }
  }
  return { config, targets: SCALE_TARGETS, files, misses };
}

/** The compact table for stderr. */
export function scaleTable(report: ScaleReport): string {
  const header = ['file', 'call', 'first ms', 'median ms', 'floor ms', 'ratio', 'heap MB', 'rss MB', '≤100ms', '≤N×', '≤32MB', 'agree'];
  const rows: string[][] = [header];
  const yes = (b: boolean): string => (b ? 'yes' : 'NO');
  for (const [name, f] of Object.entries(report.files)) {
    if (!f) continue;
    for (const [call, r] of Object.entries(f.calls)) {
      rows.push([
        name,
        call,
        String(r.store.firstMs),
        String(r.store.medianMs),
        String(r.floor.medianMs),
        r.ratio === null ? '-' : String(r.ratio),
        (r.store.heapGrowthBytes / MB).toFixed(1),
        (r.store.rssGrowthBytes / MB).toFixed(1),
        yes(r.targets.within100ms),
        `${yes(r.targets.withinRatio)} (${r.targets.maxRatio}×)`,
        yes(r.targets.within32MB),
        r.resultsAgree === null ? '-' : r.resultsAgree ? 'yes' : 'NO',
      ]);
    }
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
}
