/**
 * Shared turns of nested forks, on a file written through the store: the turn list and the branch's Tokens table
 * show the usage and the time recorded by the branch that ran each shared turn, and the session counts each run once.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { tables, turnPage } from '../../../../src/extension/conversation/conversationData';
import type { UsageWindow } from '../../../../src/shared/protocol/conversationViews';
import { AdvancedSQLiteSession, openSessionDatabase, type BranchNode, type SessionDatabase } from '../../../../src/store';
import { tempDir } from '../../../support/tempFiles';
import { sql } from '../../store/inspector/inspectorFixtures';

const usage = (total: number) => ({
  state: {
    usage: {
      requests: 1,
      inputTokens: total - 1,
      outputTokens: 1,
      totalTokens: total,
      inputTokensDetails: [{ cached_tokens: 0 }],
      outputTokensDetails: [{ reasoning_tokens: 0 }],
    },
  },
});

const FIRST_PAGE: UsageWindow = { sort: 'turn', descending: false, offset: 0, limit: 200 };

/** The time every row written so far gets, so that rows copied later (stamped now) carry a different one. */
function backdate(path: string, time: string): void {
  sql(path, `UPDATE agent_messages SET created_at = ? WHERE created_at > '2021-01-01'`, time);
  sql(path, `UPDATE message_structure SET created_at = ? WHERE created_at > '2021-01-01'`, time);
}

/**
 * main: turns 1–5, usage on all but turn 2 (10 × turn), written "2020-01-01"; x: from main @ 4, own turns 4–5 (100 ×
 * turn), written "2020-02-02"; y: from x @ 5, so turns 1–3 are main's and turn 4 is x's; own turn 5 (5000).
 */
async function writeNestedForks(path: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
  try {
    for (let t = 1; t <= 5; t++) {
      await s.addItems([{ role: 'user', content: `main ${t}` }, { role: 'assistant', content: `answer ${t}` } as never]);
      if (t !== 2) await s.storeRunUsage(usage(10 * t));
    }
    backdate(path, '2020-01-01 10:00:00');
    await s.createBranchFromTurn(4, 'x');
    for (let t = 4; t <= 5; t++) {
      await s.addItems([{ role: 'user', content: `x ${t}` }]);
      await s.storeRunUsage(usage(100 * t));
    }
    sql(path, `UPDATE agent_messages SET created_at = '2020-02-02 10:00:00' WHERE created_at > '2021-01-01'`);
    sql(
      path,
      `UPDATE message_structure SET created_at = '2020-02-02 10:00:00' WHERE created_at > '2021-01-01' AND branch_id = 'x' AND user_turn_number >= 4`,
    );
    await s.createBranchFromTurn(5, 'y');
    await s.addItems([{ role: 'user', content: 'y 5' }]);
    await s.storeRunUsage(usage(5000));
  } finally {
    s.close();
  }
}

describe('shared turns of nested forks', () => {
  let tmp: ReturnType<typeof tempDir>;
  let path: string;
  let db: SessionDatabase;
  let tree: BranchNode[];
  before(async () => {
    tmp = tempDir();
    path = join(tmp.dir, 'nested.db');
    await writeNestedForks(path);
    db = openSessionDatabase(path);
    tree = db.getBranchTree('s');
  });
  after(() => {
    db.close();
    tmp.cleanup();
  });

  it('reads the tree the test means: y from x @ 5, x from main @ 4', () => {
    assert.deepEqual(
      tree.map((b) => [b.branchId, b.parentBranchId, b.forkTurn]),
      [
        ['main', null, null],
        ['x', 'main', 4],
        ['y', 'x', 5],
      ],
    );
  });

  it("shows a shared turn's original time, not the time it was copied (turn list and items)", () => {
    // The copies on y were stamped when y was made: the test only means something if that time differs.
    const copies = sql<{ created_at: string }>(
      path,
      "SELECT created_at FROM message_structure WHERE branch_id = 'y' AND user_turn_number = 2",
    );
    assert.ok(copies.length > 0 && copies.every((r) => r.created_at > '2021-01-01'), 'the copies carry the copy time');
    const turns = db.getTurnsPage('s', 'y', { limit: 10 }).turns;
    assert.deepEqual(
      turns.map((t) => t.createdAt?.slice(0, 10)),
      ['2020-01-01', '2020-01-01', '2020-01-01', '2020-02-02', turns[4]?.createdAt?.slice(0, 10)],
    );
    assert.ok((turns[4]?.createdAt ?? '') > '2021', "y's own turn has its own time");
    const items = db.getTurnItems('s', 'y', 2);
    assert.equal(items.length, 2);
    assert.deepEqual(
      items.map((i) => i.createdAt),
      ['2020-01-01 10:00:00', '2020-01-01 10:00:00'],
    );
    assert.deepEqual(
      db.getItemsPage('s', 'y', { limit: 1 }).items.map((i) => i.createdAt),
      ['2020-01-01 10:00:00'],
    );
  });

  it('marks shared turns with the branch that ran them (a grandparent for nested forks) and shows its usage', async () => {
    const page = await turnPage(db, 's', { branchId: 'y', afterTurn: null, limit: 50 }, tree);
    assert.deepEqual(
      page.turns.map((t) => [t.turn, t.sharedFrom ?? null, t.totalTokens]),
      [
        [1, 'main', 10],
        [2, 'main', null],
        [3, 'main', 30],
        [4, 'x', 400],
        [5, null, 5000],
      ],
    );
    // A page in the middle, read backwards, reaches only the origins it covers.
    const before = await turnPage(db, 's', { branchId: 'y', afterTurn: null, beforeTurn: 5, limit: 2 }, tree);
    assert.deepEqual(
      before.turns.map((t) => [t.turn, t.sharedFrom ?? null, t.totalTokens]),
      [
        [3, 'main', 30],
        [4, 'x', 400],
      ],
    );
    // main's own turns are not shared.
    const main = await turnPage(db, 's', { branchId: 'main', afterTurn: null, limit: 50 }, tree);
    assert.ok(main.turns.every((t) => t.sharedFrom === undefined));
  });

  it("includes the shared turns' rows in the branch's Tokens table, marked, with totals of what the branch cost", async () => {
    const view = await tables(db, 's', 'y', tree, FIRST_PAGE);
    assert.deepEqual(
      view.usage.rows.map((r) => [r.branchId, r.turn, r.sharedFrom ?? null, r.totalTokens]),
      [
        ['y', 1, 'main', 10],
        ['y', 3, 'main', 30],
        ['y', 4, 'x', 400],
        ['y', 5, null, 5000],
      ],
    );
    assert.equal(view.usage.rowCount, 4);
    assert.equal(view.usage.totals.totalTokens, 10 + 30 + 400 + 5000);
    assert.equal(view.usage.totals.requests, 4);
    // Shared turns without usage are the origin's to report, not the branch's.
    assert.deepEqual(view.turnsWithoutUsage, []);
    assert.equal(view.turnsWithoutUsageCount, 0);
    const x = await tables(db, 's', 'x', tree, FIRST_PAGE);
    assert.deepEqual(
      x.usage.rows.map((r) => [r.turn, r.sharedFrom ?? null]),
      [
        [1, 'main'],
        [3, 'main'],
        [4, null],
        [5, null],
      ],
    );
    assert.equal(x.usage.totals.totalTokens, 10 + 30 + 400 + 500);
  });

  it('sorts and pages shared and own rows together in SQL', async () => {
    const byTokens: UsageWindow = { sort: 'totalTokens', descending: true, offset: 0, limit: 3 };
    const first = await tables(db, 's', 'y', tree, byTokens);
    assert.deepEqual(
      first.usage.rows.map((r) => r.totalTokens),
      [5000, 400, 30],
    );
    const second = await tables(db, 's', 'y', tree, { ...byTokens, offset: 3 });
    assert.deepEqual(
      second.usage.rows.map((r) => [r.turn, r.sharedFrom]),
      [[1, 'main']],
    );
    assert.equal(second.usage.totals.totalTokens, 5440, 'the totals are the whole scope, not the page');
  });

  it('counts each run once for the whole session', async () => {
    const view = await tables(db, 's', null, tree, FIRST_PAGE);
    assert.equal(view.usage.rowCount, 4 + 2 + 1);
    assert.equal(view.usage.totals.totalTokens, 10 + 30 + 40 + 50 + 400 + 500 + 5000);
    assert.ok(view.usage.rows.every((r) => r.sharedFrom === undefined));
    assert.deepEqual(view.turnsWithoutUsage, [{ branchId: 'main', turn: 2 }]);
  });
});
