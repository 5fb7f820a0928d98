/**
 * Turns' latency beside the Timeline, from a real session file and a real trace store: a branch's turns (its shared
 * ones by the branch that ran them) with their figures and p50/p95, windows read from the file for traces that only
 * name the session, the Tokens table's rows, and the compare view's sides and totals with the same figures.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { CompareData } from '../../../../src/extension/compare/compareData';
import { tables } from '../../../../src/extension/conversation/conversationData';
import type { TraceService } from '../../../../src/extension/traces/traceService';
import { branchLatency, latencyQuery, quantile, turnLatencies, withLatency } from '../../../../src/extension/traces/turnLatency';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import type { SpanRecord } from '../../../../src/store/traces/spanRecord';
import { TraceStore } from '../../../../src/store/traces/traceStore';
import { spanRecord } from '../../../support/spanRecords';
import { tempDir } from '../../../support/tempFiles';
import { sql } from '../../store/inspector/inspectorFixtures';

/** 2020-01-01 10:00:00 UTC in microseconds: turn t of main is stored at 10:00:(10·t). */
const T = Date.parse('2020-01-01T10:00:00Z') * 1000;
const SEC = 1_000_000;

const usage = (total: number) => ({
  state: {
    usage: { requests: 1, inputTokens: total - 1, outputTokens: 1, totalTokens: total, inputTokensDetails: [], outputTokensDetails: [] },
  },
});

/** Stamps every row written since the last stamp (they carry today's time) with `time`. */
function stamp(path: string, time: string): void {
  sql(path, `UPDATE agent_messages SET created_at = ? WHERE created_at > '2021-01-01'`, time);
  sql(path, `UPDATE message_structure SET created_at = ? WHERE created_at > '2021-01-01'`, time);
}

/** main: turns 1–4 at 10:00:10, :20, :30, :40; b: from main at turn 3 (shares 1–2), own turn 3 at 10:05:00. */
async function writeSession(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
  try {
    for (let t = 1; t <= 4; t++) {
      await s.addItems([{ role: 'user', content: `main ${t}` }]);
      await s.storeRunUsage(usage(10 * t));
      stamp(path, `2020-01-01 10:00:${10 * t}`);
    }
    await s.createBranchFromTurn(3, 'b');
    await s.addItems([{ role: 'user', content: 'b 3' }]);
    await s.storeRunUsage(usage(300));
    sql(path, `UPDATE agent_messages SET created_at = '2020-01-01 10:05:00' WHERE created_at > '2021-01-01'`);
    sql(
      path,
      `UPDATE message_structure SET created_at = '2020-01-01 10:05:00' WHERE created_at > '2021-01-01' AND branch_id = 'b' AND user_turn_number = 3`,
    );
  } finally {
    s.close();
  }
}

let n = 0;
function span(traceId: string, over: Partial<SpanRecord>): SpanRecord {
  return spanRecord({ traceId: traceId.padStart(32, '0'), spanId: (++n).toString(16).padStart(16, '0'), ...over });
}

describe('turn latency', () => {
  const tmp = tempDir('asi-latency-');
  let db: SessionDatabase;
  let store: TraceStore;
  /** The service's one method these functions use, over the real store (the worker's `call` without the thread). */
  let traces: TraceService;

  before(async () => {
    const path = join(tmp.dir, 's.db');
    await writeSession(path);
    db = openSessionDatabase(path);
    store = TraceStore.open(join(tmp.dir, 'traces.db'));
    traces = {
      traces: async () => ({
        call: async (method: string, ...args: unknown[]) =>
          (store as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!.apply(store, args),
      }),
    } as unknown as TraceService;
    store.addSpans([
      // main turn 1, by its run: 1.5 s, two requests on gpt-4.1.
      span('1', { link: { sessionId: 's', branchId: 'main', turnNumber: 1 }, kind: 'agent', startUs: T + 10 * SEC, endUs: T + 11.5 * SEC }),
      span('1', { kind: 'model', model: 'gpt-4.1', startUs: T + 10.1 * SEC, endUs: T + 10.6 * SEC }),
      span('1', { kind: 'model', model: 'gpt-4.1', startUs: T + 10.7 * SEC, endUs: T + 11.4 * SEC }),
      // Names only the session and starts inside main turn 2's window (10:00:18 to 10:00:28): 400 ms on o3, a failed tool.
      span('2', { link: { sessionId: 's' }, kind: 'model', model: 'o3', startUs: T + 20.5 * SEC, endUs: T + 20.9 * SEC }),
      span('2', { kind: 'tool', status: 'error', error: 'timeout', startUs: T + 20.6 * SEC, endUs: T + 20.7 * SEC }),
      // b's own turn 3, by its run: 3 s.
      span('3', {
        link: { sessionId: 's', branchId: 'b', turnNumber: 3 },
        kind: 'model',
        model: 'gpt-4.1-mini',
        startUs: T + 300 * SEC,
        endUs: T + 303 * SEC,
      }),
      // Another session's trace in the same window is not this session's.
      span('4', { link: { sessionId: 'other' }, kind: 'model', startUs: T + 20 * SEC, endUs: T + 29 * SEC }),
    ]);
  });
  after(() => {
    db.close();
    store.close();
    tmp.cleanup();
  });

  it("reads each turn's window from the branch that ran it", async () => {
    const q = await latencyQuery(db, 's', [
      { branchId: 'main', turn: 2 },
      { branchId: 'main', turn: 4 },
      { branchId: 'b', turn: 3 },
    ]);
    assert.deepEqual(q, [
      { branchId: 'main', turnNumber: 2, window: { startUs: T + 18 * SEC, endUs: T + 28 * SEC } },
      { branchId: 'main', turnNumber: 4, window: { startUs: T + 38 * SEC, endUs: null } },
      { branchId: 'b', turnNumber: 3, window: { startUs: T + 298 * SEC, endUs: null } },
    ]);
  });

  it("gives a branch's traced turns, shared ones by the branch that ran them, and p50/p95 over them", async () => {
    const main = await branchLatency(db, traces, 's', 'main', db.getBranchTree('s'));
    assert.deepEqual(main, {
      branchId: 'main',
      turns: [
        { branchId: 'main', turn: 1, ms: 1500, requests: 2, models: ['gpt-4.1'], errors: 0, traces: 1 },
        { branchId: 'main', turn: 2, ms: 400, requests: 1, models: ['o3'], errors: 1, traces: 1 },
      ],
      turnCount: 4,
      partial: false,
      p50Ms: 400,
      p95Ms: 1500,
    });
    const b = await branchLatency(db, traces, 's', 'b', db.getBranchTree('s'));
    assert.deepEqual(
      b.turns.map((t) => [t.branchId, t.turn, t.ms]),
      [
        ['main', 1, 1500],
        ['main', 2, 400],
        ['b', 3, 3000],
      ],
    );
    assert.deepEqual([b.turnCount, b.p50Ms, b.p95Ms], [3, 1500, 3000]);
  });

  it("puts each turn's latency and traced requests on the Tokens table's rows, and leaves a failing store's table whole", async () => {
    const tree = db.getBranchTree('s');
    const view = await tables(db, 's', 'b', tree, { sort: 'turn', descending: false, offset: 0, limit: 50 });
    const withFigures = await withLatency(view, (turns) => turnLatencies(db, traces, 's', turns));
    assert.deepEqual(
      withFigures.usage.rows.map((r) => [r.turn, r.sharedFrom ?? r.branchId, r.latencyMs, r.tracedRequests]),
      [
        [1, 'main', 1500, 2],
        [2, 'main', 400, 1],
        [3, 'b', 3000, 1],
      ],
    );
    const session = await tables(db, 's', null, tree, { sort: 'turn', descending: false, offset: 0, limit: 50 });
    const sessionRows = (await withLatency(session, (turns) => turnLatencies(db, traces, 's', turns))).usage.rows;
    assert.deepEqual(
      sessionRows.map((r) => [r.branchId, r.turn, r.latencyMs]),
      [
        ['b', 3, 3000],
        ['main', 1, 1500],
        ['main', 2, 400],
        ['main', 3, null],
        ['main', 4, null],
      ],
    );
    const failing = await withLatency(view, () => Promise.reject(new Error('the trace store is gone')));
    assert.equal(failing, view);
  });

  it("gives the compare view each side's latency and each column's p50/p95", async () => {
    const data = new CompareData(
      [
        { dbPath: 'x.db', sessionId: 's', branchId: 'main' },
        { dbPath: 'x.db', sessionId: 's', branchId: 'b' },
      ],
      () => ({ reader: db, dbName: 'x.db', pricing: { model: null, price: null } }),
      {
        turns: (sessionId, turns, reader) => turnLatencies(reader, traces, sessionId, turns),
        branch: (sessionId, branchId, tree, reader) => branchLatency(reader, traces, sessionId, branchId, tree),
      },
    );
    const { rows } = await data.rows(0, 10);
    assert.deepEqual(
      rows.map((r) => [r.turn, r.sides.map((s) => s && [s.latencyMs, s.tracedRequests])]),
      [
        [
          3,
          [
            [null, null],
            [3000, 1],
          ],
        ],
        [4, [[null, null], null]],
      ],
    );
    const summary = await data.summary();
    assert.deepEqual(
      summary.columns.map((c) => c?.latency),
      [
        { p50Ms: 400, p95Ms: 1500, tracedTurns: 2 },
        { p50Ms: 1500, p95Ms: 3000, tracedTurns: 3 },
      ],
    );
  });

  it('takes quantiles by the nearest rank', () => {
    assert.equal(quantile([], 0.5), null);
    assert.equal(quantile([7], 0.95), 7);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.deepEqual([quantile(hundred, 0.5), quantile(hundred, 0.95), quantile(hundred, 1)], [50, 95, 100]);
  });
});
