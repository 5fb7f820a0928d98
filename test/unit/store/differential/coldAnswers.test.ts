/**
 * The cold answers rewritten for issue 43 against the algorithms they replaced, on every fixture: the whole session's
 * tool totals (now one SQL aggregate per stored call, `feedSessionToolCalls`) against the accumulator fed every row
 * in sequence order (`feedToolCalls`), and a branch's usage page with shared turns (now a compound SELECT whose legs
 * SQLite merges) against the subquery it replaced, kept here as it was. Both sides read the same file; the answers
 * must be equal, key order and all. Runs on better-sqlite3 under `npx mocha`, and on node:sqlite through
 * scripts/runStoreSuites.mjs.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Usage, type AgentInputItem } from '@openai/agents';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { openDatabase } from '../../../../src/store/drivers/openDatabase';
import type { SqliteDatabase, SqliteStatement } from '../../../../src/store/sqlite/sqliteDatabase';
import { exactTextSql, textFromSql } from '../../../../src/store/sqlite/exactText';
import { discoverSessionTables } from '../../../../src/store/inspector/tableDiscovery';
import type { QueryContext } from '../../../../src/store/inspector/queryContext';
import { feedToolCalls, ToolTotalsAccumulator, type ToolTotal } from '../../../../src/store/inspector/toolTotals';
import { pythonJsonLoads } from '../../../../src/store/format/pythonJson';
import { sharedTurnRanges } from '../../../../src/shared/turnOrigin';
import { execSql, Workspace } from '../../../support/sessionHelpers';
import { keptTotalsWrites, seedKeptTotals, type KeptTotalsWrite } from '../../../support/keptTotalsWrites';
import { writeBranchedFile, TempFolder } from '../inspector/inspectorFixtures';

const CONFORMANCE = join(__dirname, '..', '..', '..', 'fixtures', 'conformance');

/** A read-only context over a file, as a `SessionDatabase` builds one, for the old algorithms. */
function contextOf(path: string): { ctx: QueryContext; close(): void } {
  const db: SqliteDatabase = openDatabase(path, { readonly: true, fileMustExist: true });
  const cache = new Map<string, SqliteStatement>();
  const stmt = (sql: string): SqliteStatement => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  return { ctx: { db, tables: discoverSessionTables(db, path), stmt }, close: () => db.close() };
}

/** The whole session's tool totals as they were computed before: every tool-call row, in sequence order. */
function oldSessionToolTotals(ctx: QueryContext, sessionId: string): ToolTotal[] {
  const acc = new ToolTotalsAccumulator(true);
  feedToolCalls(ctx, acc, sessionId, null);
  return acc.result();
}

const SORTS = ['turn', 'branchId', 'requests', 'inputTokens', 'outputTokens', 'totalTokens', 'cachedTokens', 'reasoningTokens'] as const;
type Sort = (typeof SORTS)[number];
const CACHED = "CAST(json_extract(CASE WHEN json_valid(input_tokens_details) THEN input_tokens_details END, '$.cached_tokens') AS INTEGER)";
const REASONING =
  "CAST(json_extract(CASE WHEN json_valid(output_tokens_details) THEN output_tokens_details END, '$.reasoning_tokens') AS INTEGER)";
const SORT_SQL: Record<Sort, string> = {
  turn: 'user_turn_number',
  branchId: 'branch_id',
  requests: 'requests',
  inputTokens: 'input_tokens',
  outputTokens: 'output_tokens',
  totalTokens: 'total_tokens',
  cachedTokens: CACHED,
  reasoningTokens: REASONING,
};
const COLUMNS = 'user_turn_number, requests, input_tokens, output_tokens, total_tokens, input_tokens_details, output_tokens_details';

/** A branch's usage page with shared turns as it was read before: a UNION ALL in FROM, sorted as one table. */
function oldSharedPage(
  ctx: QueryContext,
  sessionId: string,
  branchId: string,
  ranges: readonly { originBranchId: string; fromTurn: number; toTurn: number }[],
  sort: Sort,
  descending: boolean,
  offset: number,
  limit: number,
): unknown[] {
  const direction = descending ? 'DESC' : 'ASC';
  const order =
    sort === 'turn'
      ? `branch_id ${direction}, user_turn_number ${direction}`
      : `${SORT_SQL[sort]} ${direction}, branch_id, user_turn_number`;
  const own = `SELECT branch_id, ${COLUMNS}, NULL AS shared_from FROM turn_usage WHERE session_id = ? AND branch_id = ?`;
  const copied = `SELECT ? AS branch_id, ${COLUMNS}, branch_id AS shared_from FROM turn_usage
    WHERE session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ?`;
  const from = `(${[own, ...ranges.map(() => copied)].join(' UNION ALL ')})`;
  const params = [sessionId, branchId, ...ranges.flatMap((r) => [branchId, sessionId, r.originBranchId, r.fromTurn, r.toTurn])];
  const rows = ctx
    .stmt(
      `SELECT ${exactTextSql('branch_id')} AS branch, ${COLUMNS}, ${exactTextSql('shared_from')} AS shared_from FROM ${from}
       ORDER BY ${order} LIMIT ? OFFSET ?`,
    )
    .all<Record<string, unknown>>(...params, limit, offset);
  const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  const detail = (text: unknown, key: string): number | null => {
    if (typeof text !== 'string' || text === '') return null;
    const d = pythonJsonLoads(text);
    if (!d.ok || typeof d.value !== 'object' || d.value === null) return null;
    const v = (d.value as Record<string, unknown>)[key];
    return typeof v === 'number' ? v : null;
  };
  return rows.map((r) => ({
    branchId: textFromSql(r.branch),
    turn: Number(r.user_turn_number),
    ...(r.shared_from !== null ? { sharedFrom: textFromSql(r.shared_from) } : {}),
    requests: num(r.requests),
    inputTokens: num(r.input_tokens),
    outputTokens: num(r.output_tokens),
    totalTokens: num(r.total_tokens),
    cachedTokens: detail(r.input_tokens_details, 'cached_tokens'),
    reasoningTokens: detail(r.output_tokens_details, 'reasoning_tokens'),
  }));
}

/** Compares the new answers (fresh and kept connections) with the old algorithms on every session of `path`. */
function compareAll(path: string, label: string): { sessions: number; pages: number } {
  const old = contextOf(path);
  const fresh = openSessionDatabase(path, { readonly: true });
  const kept = openSessionDatabase(path, { readonly: true, keepTotals: true });
  let pages = 0;
  try {
    const sessions = fresh.listSessions();
    for (const { sessionId } of sessions) {
      const expected = oldSessionToolTotals(old.ctx, sessionId);
      assert.deepEqual(fresh.getToolTotals(sessionId, null), expected, `${label} ${sessionId}: session tool totals`);
      assert.deepEqual(kept.getToolTotals(sessionId, null), expected, `${label} ${sessionId}: kept session tool totals`);
      pages += comparePages(old.ctx, [fresh, kept], sessionId, label);
    }
    return { sessions: sessions.length, pages };
  } finally {
    old.close();
    fresh.close();
    kept.close();
  }
}

function comparePages(ctx: QueryContext, dbs: SessionDatabase[], sessionId: string, label: string): number {
  const tree = dbs[0]!.getBranchTree(sessionId);
  let pages = 0;
  for (const b of tree) {
    const ranges = sharedTurnRanges(tree, b.branchId).filter((r) => r.fromTurn <= r.toTurn && r.originBranchId !== b.branchId);
    if (ranges.length === 0) continue;
    for (const sort of SORTS) {
      for (const descending of [false, true]) {
        for (const [offset, limit] of [
          [0, 3],
          [2, 3],
          [0, 200],
          [5, 1],
        ] as const) {
          const expected = oldSharedPage(ctx, sessionId, b.branchId, ranges, sort, descending, offset, limit);
          for (const db of dbs) {
            const page = db.getUsagePage(sessionId, b.branchId, { sort, descending, offset, limit, shared: ranges });
            assert.deepEqual(
              page.rows,
              expected,
              `${label} ${sessionId}/${b.branchId} by ${sort} ${descending ? 'desc' : 'asc'} @${offset}+${limit}`,
            );
          }
          pages++;
        }
      }
    }
  }
  return pages;
}

const call = (callId: string, name: string): AgentInputItem =>
  ({ type: 'function_call', callId, name, status: 'completed', arguments: '{}' }) as AgentInputItem;
const user = (text: string): AgentInputItem => ({ role: 'user', content: text }) as AgentInputItem;
const usage = (n: number) => ({
  state: {
    usage: new Usage({
      requests: 1 + (n % 3),
      inputTokens: 100 + ((n * 37) % 50),
      outputTokens: n % 4,
      totalTokens: 100 + ((n * 37) % 50) + (n % 4),
      inputTokensDetails: [{ cached_tokens: n % 5 }],
      outputTokensDetails: [{ reasoning_tokens: n % 3 }],
    }),
  },
});

describe('cold answers (issue 43): the new queries give the old algorithms’ answers on every fixture', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-cold-')));
  afterEach(() => ws.cleanup());

  it('on the Python reference files', () => {
    for (const name of ['ref-basic.db', 'ref-multisession.db']) {
      // A copy: a reader must not leave -wal/-shm beside the checked-in fixture, and sessions may be read in any order.
      const copy = ws.path(name);
      copyFileSync(join(CONFORMANCE, name), copy);
      for (const suffix of ['-wal', '-shm']) {
        try {
          copyFileSync(join(CONFORMANCE, name + suffix), copy + suffix);
        } catch {
          // no such file beside this fixture
        }
      }
      assert.ok(compareAll(copy, name).sessions > 0, `${name} has sessions`);
    }
  });

  it('on the inspector’s branched file (nested forks, a branch from turn 1)', async () => {
    const folder = new TempFolder();
    try {
      await writeBranchedFile(folder);
      assert.ok(compareAll(folder.path(), 'branched').pages > 0, 'some branch has shared turns');
    } finally {
      folder.cleanup();
    }
  });

  it('on the kept-totals seed after each kind of write', async () => {
    const writer = ws.open();
    await seedKeptTotals(writer);
    compareAll(ws.path(), 'seed');
    for (const write of Object.keys(keptTotalsWrites) as KeptTotalsWrite[]) {
      await keptTotalsWrites[write](writer);
      compareAll(ws.path(), `after ${write}`);
    }
  });

  it('on long-lived branches forked early, with several calls per turn, tied counts and turns without usage', async () => {
    const s = ws.open();
    let n = 0;
    const turn = async (calls: number, withUsage: boolean): Promise<void> => {
      n++;
      const items = [user(`q${n}`), ...Array.from({ length: calls }, (_, i) => call(`c${n}_${i}`, ['a', 'b', 'ns.c'][(n + i) % 3]!))];
      await s.addItems(items);
      if (withUsage) await s.storeRunUsage(usage(n % 6));
    };
    for (let t = 1; t <= 30; t++) await turn(1 + (t % 3), t % 7 !== 0);
    await s.createBranchFromTurn(3, 'early');
    for (let t = 0; t < 25; t++) await turn(t % 2, t % 5 !== 0);
    await s.createBranchFromTurn(10, 'nested');
    for (let t = 0; t < 12; t++) await turn(2, true);
    await s.switchToBranch('main');
    await s.createBranchFromTurn(20, 'late');
    for (let t = 0; t < 4; t++) await turn(1, t !== 2);
    const result = compareAll(ws.path(), 'long branches');
    assert.ok(result.pages >= 3 * SORTS.length * 2 * 4, `every branch's pages compared (${result.pages})`);
  });

  it('on odd rows no SDK writes: calls with no turn or tool name, a branch id holding U+0000, a call copied first', async () => {
    const s = ws.open();
    for (let t = 1; t <= 6; t++) {
      await s.addItems([user(`q${t}`), call(`c${t}`, t % 2 ? 'x' : 'y')]);
      await s.storeRunUsage(usage(t));
    }
    await s.createBranchFromTurn(4, 'alt');
    await s.addItems([user('alt q'), call('alt1', 'z')]);
    await s.storeRunUsage(usage(9));
    s.close();
    const path = ws.path();
    execSql(
      path,
      "UPDATE message_structure SET user_turn_number = NULL WHERE tool_name = 'y' AND branch_id = 'main' AND sequence_number > 6",
    );
    execSql(path, "UPDATE message_structure SET tool_name = NULL WHERE tool_name = 'z'");
    execSql(path, "UPDATE message_structure SET branch_id = 'alt' || char(0) || 'x' WHERE branch_id = 'alt'");
    execSql(path, "UPDATE turn_usage SET branch_id = 'alt' || char(0) || 'x' WHERE branch_id = 'alt'");
    // A copied row that sorts before the row its branch wrote: the call then counts under the copy's branch.
    execSql(
      path,
      "UPDATE message_structure SET sequence_number = -1 WHERE id = (SELECT MAX(id) FROM message_structure WHERE branch_id <> 'main' AND tool_name = 'x')",
    );
    compareAll(path, 'odd rows');
  });
});
