/**
 * The Python SDK's golden files (test/fixtures/conformance, spec §13): open each one and check every recorded
 * query; replay every recorded operation into a fresh file and compare the file with the recorded dump.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Usage } from '@openai/agents';
import { AdvancedSQLiteSession, fromStoredItems, type SessionError } from '../../../src/store';
import { dumpPragmas, dumpSchema, dumpTables, inspect } from '../../support/tableDump';
import { copyFixture, tempDir } from '../../support/tempFiles';
import { py } from '../../support/pythonShapes';

const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'conformance');
const CLOCK = () => 1700000000;

/**
 * Where our results may differ from Python's, by spec §12 (a): content search matches the text, not the raw JSON,
 * so the JSON key `role` matches nothing here. Any other mismatch fails.
 */
const SEARCH_DIFFERENCES: Record<string, unknown[]> = { role: [] };

interface Expected {
  constructions: { kwargs: { session_id: string; db_path: string; create_tables: boolean } }[];
  operations: {
    step: number;
    session_id: string;
    method: string;
    args: { positional?: unknown[]; keyword?: Record<string, unknown>; usage?: Record<string, unknown> };
    result: unknown;
    error: { type: string; message: string } | null;
    branch_before: string;
    branch_after: string;
  }[];
  queries: Record<string, SessionQueries>;
  fresh_instance: Record<string, { current_branch: string; list_branches: unknown; get_items: unknown }>;
  schema: unknown[];
  pragmas: Record<string, unknown>;
  tables: Record<string, unknown>;
}
type BranchQueries = Record<string, unknown>;
interface SessionQueries {
  current_branch: string;
  list_branches: unknown;
  'get_session_usage()': unknown;
  "get_session_usage('')": unknown;
  'default_branch (branch_id=None)': BranchQueries;
  branches: Record<string, BranchQueries>;
}

/** Resolves just after the wall clock enters the next whole second (CURRENT_TIMESTAMP's resolution). */
function nextSecond(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
}

function load(name: string): Expected {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.expected.json`), 'utf8')) as Expected;
}

/** Compares values and key order (Python's result key order is part of the contract). */
function same(actual: unknown, expected: unknown, what: string): void {
  assert.deepStrictEqual(actual, expected, what);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), `${what}: key order`);
}

/**
 * Python's `get_items` returns the rows as stored: `getStoredItems` must match it exactly, and `getItems` must be the
 * JS runner's view of exactly those rows.
 */
async function sameItems(s: AdvancedSQLiteSession, limit: number | undefined, branch: string | undefined, expected: unknown, what: string) {
  same(await s.getStoredItems(limit, branch), expected, `${what} (as stored)`);
  same(await s.getItems(limit, branch), fromStoredItems(expected as unknown[]), `${what} (for the JS runner)`);
}

async function checkBranchQueries(s: AdvancedSQLiteSession, q: BranchQueries, branch: string | undefined, where: string) {
  for (const [key, expected] of Object.entries(q)) {
    const what = `${where} ${key}`;
    if (key === 'get_items') await sameItems(s, undefined, branch, expected, what);
    else if (key.startsWith('get_items(limit=')) {
      const limit = Number(/limit=(-?\d+)/.exec(key)?.[1]);
      await sameItems(s, limit, branch, expected, what);
    } else if (key === 'get_conversation_turns') same(py.turns(await s.getConversationTurns(branch)), expected, what);
    else if (key === 'get_conversation_by_turns') same(py.byTurns(await s.getConversationByTurns(branch)), expected, what);
    else if (key === 'get_tool_usage') same(py.toolUsage(await s.getToolUsage(branch)), expected, what);
    else if (key === 'find_turns_by_content') {
      for (const [term, result] of Object.entries(expected as Record<string, unknown[]>)) {
        const want = term in SEARCH_DIFFERENCES ? SEARCH_DIFFERENCES[term] : result;
        same(py.turns(await s.findTurnsByContent(term, branch)), want, `${what} '${term}'`);
      }
    } else if (key === 'get_turn_usage()') same(py.turnUsageRows(await s.getTurnUsage(undefined, branch)), expected, what);
    else if (key === 'get_turn_usage(n)') {
      for (const [n, result] of Object.entries(expected as Record<string, unknown>)) {
        same(py.turnUsage(await s.getTurnUsage(Number(n), branch)), result, `${what} n=${n}`);
      }
    } else if (key === 'get_session_usage(branch_id)') {
      // Under default_branch this is a placeholder (spec §13); per branch it is real.
      if (branch !== undefined) same(py.sessionUsage(await s.getSessionUsage(branch)), expected, what);
    } else assert.fail(`${what}: a recorded query this test does not know`);
  }
}

async function checkSessionQueries(s: AdvancedSQLiteSession, q: SessionQueries, sid: string) {
  assert.equal(s.getCurrentBranchId(), q.current_branch, `${sid} current_branch`);
  same(py.branches(await s.listBranches()), q.list_branches, `${sid} list_branches`);
  same(py.sessionUsage(await s.getSessionUsage()), q['get_session_usage()'], `${sid} get_session_usage()`);
  same(py.sessionUsage(await s.getSessionUsage('')), q["get_session_usage('')"], `${sid} get_session_usage('')`);
  await checkBranchQueries(s, q['default_branch (branch_id=None)'], undefined, `${sid} default branch`);
  for (const [branch, bq] of Object.entries(q.branches)) await checkBranchQueries(s, bq, branch, `${sid} branch ${branch}`);
}

async function checkFreshInstances(path: string, fresh: Expected['fresh_instance']) {
  for (const [sid, f] of Object.entries(fresh)) {
    const s = new AdvancedSQLiteSession({ sessionId: sid, dbPath: path });
    try {
      assert.equal(s.getCurrentBranchId(), f.current_branch);
      same(py.branches(await s.listBranches()), f.list_branches, `fresh ${sid} list_branches`);
      await sameItems(s, undefined, undefined, f.get_items, `fresh ${sid} get_items`);
    } finally {
      s.close();
    }
  }
}

async function replay(s: AdvancedSQLiteSession, op: Expected['operations'][number]): Promise<unknown> {
  const pos = op.args.positional ?? [];
  const kw = op.args.keyword ?? {};
  switch (op.method) {
    case 'add_items':
      return s.addItems(pos[0] as never);
    case 'store_run_usage':
      return s.storeRunUsage({ state: { usage: new Usage(op.args.usage as never) } });
    case 'create_branch_from_turn':
      return s.createBranchFromTurn(pos[0] as number, (pos[1] ?? kw.branch_name) as string | undefined);
    case 'create_branch_from_content':
      return s.createBranchFromContent(pos[0] as string, (pos[1] ?? kw.branch_name) as string | undefined);
    case 'switch_to_branch':
      return s.switchToBranch((pos[0] ?? kw.branch_id) as string);
    case 'delete_branch':
      return s.deleteBranch((pos[0] ?? kw.branch_id) as string, (pos[1] ?? kw.force) as boolean | undefined);
    case 'pop_item':
      // Python returns the row as stored; ours is the JS runner's view of it, compared as such below.
      return s.popItem();
    case 'clear_session':
      return s.clearSession();
    default:
      return assert.fail(`operation ${op.method} is not mapped`);
  }
}

for (const name of ['ref-basic', 'ref-multisession']) {
  describe(`conformance: ${name}`, () => {
    const expected = load(name);
    let tmp: ReturnType<typeof tempDir>;
    beforeEach(() => (tmp = tempDir()));
    afterEach(() => tmp.cleanup());

    it('answers every recorded query on the Python-written file, and writes nothing', async () => {
      const path = copyFixture(join(FIXTURES, `${name}.db`), tmp.dir);
      for (const [sid, q] of Object.entries(expected.queries)) {
        const s = new AdvancedSQLiteSession({ sessionId: sid, dbPath: path });
        try {
          await checkSessionQueries(s, q, sid);
        } finally {
          s.close();
        }
      }
      await checkFreshInstances(path, expected.fresh_instance);
      inspect(path, (db) => same(dumpTables(db), expected.tables, 'tables after reading'));
    });

    it('answers the same queries read-only without changing a byte of the file', async () => {
      const path = copyFixture(join(FIXTURES, `${name}.db`), tmp.dir);
      const before = createHash('sha256').update(readFileSync(path)).digest('hex');
      for (const [sid, q] of Object.entries(expected.queries)) {
        const s = new AdvancedSQLiteSession({ sessionId: sid, dbPath: path, readonly: true });
        try {
          await checkSessionQueries(s, q, sid);
        } finally {
          s.close();
        }
      }
      assert.equal(createHash('sha256').update(readFileSync(path)).digest('hex'), before);
    });

    it('replays every recorded operation into an identical file', async () => {
      const path = join(tmp.dir, `${name}.db`);
      const sessions = new Map<string, AdvancedSQLiteSession>();
      try {
        for (const c of expected.constructions) {
          sessions.set(
            c.kwargs.session_id,
            new AdvancedSQLiteSession({ sessionId: c.kwargs.session_id, dbPath: path, createTables: c.kwargs.create_tables, clock: CLOCK }),
          );
        }
        for (const op of expected.operations) {
          const s = sessions.get(op.session_id);
          assert.ok(s, `step ${op.step}: no instance for ${op.session_id}`);
          const where = `step ${op.step} ${op.method}`;
          assert.equal(s.getCurrentBranchId(), op.branch_before, `${where}: branch_before`);
          // The recording ran steps over a second apart; list_branches orders by the (1 s) creation time, so a
          // branch must not be created in the same second as main's first row, or the tie orders by id instead.
          if (op.method.startsWith('create_branch')) await nextSecond();
          let result: unknown = null;
          let error: { type: string; message: string } | null = null;
          try {
            result = (await replay(s, op)) ?? null;
          } catch (err) {
            const e = err as SessionError;
            error = { type: e.pythonType ?? e.name, message: e.message };
          }
          same(error, op.error, `${where}: error`);
          const pythonResult = op.method === 'pop_item' && op.result !== null ? fromStoredItems([op.result])[0] : op.result;
          same(result, pythonResult, `${where}: result`);
          assert.equal(s.getCurrentBranchId(), op.branch_after, `${where}: branch_after`);
        }
        inspect(path, (db) => {
          same(dumpSchema(db), expected.schema, 'sqlite_master');
          same(dumpPragmas(db), expected.pragmas, 'pragmas');
          same(dumpTables(db), expected.tables, 'tables');
        });
        for (const [sid, q] of Object.entries(expected.queries)) {
          const s = sessions.get(sid);
          assert.ok(s);
          await checkSessionQueries(s, q, sid);
        }
      } finally {
        for (const s of sessions.values()) s.close();
      }
      await checkFreshInstances(path, expected.fresh_instance);
    });
  });
}
