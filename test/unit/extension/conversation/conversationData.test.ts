/** The conversation view's tables, built from a file written through the store. */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { branchViews, tables, toolsView, turnPage } from '../../../../src/extension/conversation/conversationData';
import { MAX_USAGE_REQUEST, MISSING_USAGE_LISTED } from '../../../../src/shared/pageSizes';
import type { UsageWindow } from '../../../../src/shared/protocol/conversationViews';
import { AdvancedSQLiteSession, SQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { tempDir } from '../../../support/tempFiles';

const usage = (total: number) => ({
  state: {
    usage: {
      requests: 1,
      inputTokens: total - 1,
      outputTokens: 1,
      totalTokens: total,
      inputTokensDetails: [{ cached_tokens: 4 }],
      outputTokensDetails: [{ reasoning_tokens: 2 }],
    },
  },
});

const FIRST_PAGE: UsageWindow = { sort: 'turn', descending: false, offset: 0, limit: 200 };

/** A session of `turns` turns on main, with usage stored for the turns `withUsage` accepts (total tokens 10 × turn). */
async function writeTurns(path: string, turns: number, withUsage: (turn: number) => boolean): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
  try {
    for (let t = 1; t <= turns; t++) {
      await s.addItems([{ role: 'user', content: `question ${t}` }]);
      if (withUsage(t)) await s.storeRunUsage(usage(10 * t));
    }
  } finally {
    s.close();
  }
}

async function withDatabase(
  turns: number,
  withUsage: (turn: number) => boolean,
  test: (db: SessionDatabase, path: string) => Promise<void> | void,
) {
  const tmp = tempDir();
  try {
    const path = join(tmp.dir, 't.db');
    await writeTurns(path, turns, withUsage);
    const db = openSessionDatabase(path);
    try {
      await test(db, path);
    } finally {
      db.close();
    }
  } finally {
    tmp.cleanup();
  }
}

describe('conversation view tables', () => {
  it('lists own turns without usage rows, never turns copied from the parent', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 't.db');
      const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
      await s.addItems([{ role: 'user', content: 'one' }]);
      await s.storeRunUsage(usage(10));
      await s.addItems([{ role: 'user', content: 'two' }]); // no usage stored for turn 2
      await s.addItems([{ role: 'user', content: 'three' }]);
      await s.storeRunUsage(usage(30));
      await s.createBranchFromTurn(3, 'alt'); // copies turns 1 and 2 (their usage stays on main)
      await s.addItems([{ role: 'user', content: 'alt three' }]); // alt's own turn 3, no usage
      await s.addItems([{ type: 'function_call', name: 'lookup', callId: 'c', arguments: '{}', status: 'completed' }] as never);
      s.close();
      const db = openSessionDatabase(path);
      try {
        const branches = branchViews(db.getBranchTree('s'), 'main');
        const alt = await tables(db, 's', 'alt', branches, FIRST_PAGE);
        assert.deepEqual(alt.turnsWithoutUsage, [{ branchId: 'alt', turn: 3 }]);
        assert.equal(alt.turnsWithoutUsageCount, 1);
        // The shared turns' usage is main's: alt's table shows it, marked (turn 2 has none anywhere).
        assert.deepEqual(
          alt.usage.rows.map((u) => [u.branchId, u.turn, u.sharedFrom, u.totalTokens]),
          [['alt', 1, 'main', 10]],
        );
        assert.equal(alt.usage.rowCount, 1);
        assert.ok(!('tools' in alt), 'the Tokens tab does not read the tool totals it does not show');
        assert.deepEqual((await toolsView(db, 's', 'alt')).tools, [{ toolName: 'lookup', calls: 1, turns: [3], turnCount: 1 }]);
        const main = await tables(db, 's', 'main', branches, FIRST_PAGE);
        assert.deepEqual(main.turnsWithoutUsage, [{ branchId: 'main', turn: 2 }]);
        assert.deepEqual(
          main.usage.rows.map((u) => [u.turn, u.totalTokens, u.cachedTokens, u.reasoningTokens]),
          [
            [1, 10, 4, 2],
            [3, 30, 4, 2],
          ],
        );
        const all = await tables(db, 's', null, branches, FIRST_PAGE);
        assert.deepEqual(all.turnsWithoutUsage, [
          { branchId: 'alt', turn: 3 },
          { branchId: 'main', turn: 2 },
        ]);
      } finally {
        db.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it('sends one page of usage rows in the order asked for, with the totals of the whole scope', () =>
    withDatabase(
      30,
      (t) => t !== 7,
      async (db, path) => {
        const branches = branchViews(db.getBranchTree('s'), 'main');
        const page = async (w: Partial<UsageWindow>) => (await tables(db, 's', 'main', branches, { ...FIRST_PAGE, ...w })).usage;
        const first = await page({ limit: 10 });
        assert.deepEqual(
          first.rows.map((r) => r.turn),
          [1, 2, 3, 4, 5, 6, 8, 9, 10, 11],
        );
        assert.equal(first.rowCount, 29);
        assert.equal(first.offset, 0);
        const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, readonly: true });
        try {
          const store = await s.getSessionUsage('main');
          assert.ok(store);
          assert.equal(first.totals.totalTokens, store.totalTokens, 'the totals of every row, not of the page');
          assert.equal(first.totals.requests, store.requests);
          assert.equal(first.totals.inputTokens, store.inputTokens);
          assert.equal(first.totals.outputTokens, store.outputTokens);
        } finally {
          s.close();
        }
        assert.equal(first.totals.cachedTokens, 29 * 4);
        assert.equal(first.totals.reasoningTokens, 29 * 2);

        const byTotal = await page({ sort: 'totalTokens', descending: true, offset: 10, limit: 5 });
        assert.deepEqual(
          byTotal.rows.map((r) => r.totalTokens),
          [200, 190, 180, 170, 160],
          'the host sorts, and the offset counts in that order',
        );
        assert.deepEqual([byTotal.sort, byTotal.descending, byTotal.offset], ['totalTokens', true, 10]);
        assert.deepEqual(byTotal.totals, first.totals);

        const past = await page({ offset: 1000, limit: 10 });
        assert.equal(past.offset, 20, 'a window past the end shows the last page');
        assert.deepEqual(
          past.rows.map((r) => r.turn),
          [22, 23, 24, 25, 26, 27, 28, 29, 30],
        );
        assert.equal((await page({ limit: 100_000 })).rows.length, Math.min(29, MAX_USAGE_REQUEST));
        assert.equal((await page({ offset: -5, limit: 0 })).rows.length, 1, 'the limit is clamped to 1…, the offset to 0…');
      },
    ));

  it('lists the first turns without usage and says how many there are', () =>
    withDatabase(
      MISSING_USAGE_LISTED + 15,
      (t) => t % 10 === 0,
      async (db) => {
        const t = await tables(db, 's', 'main', branchViews(db.getBranchTree('s'), 'main'), FIRST_PAGE);
        const missing = Array.from({ length: MISSING_USAGE_LISTED + 15 }, (_, i) => i + 1).filter((n) => n % 10 !== 0);
        assert.equal(t.turnsWithoutUsageCount, missing.length);
        assert.deepEqual(
          t.turnsWithoutUsage.map((m) => m.turn),
          missing.slice(0, MISSING_USAGE_LISTED),
        );
      },
    ));
});

describe('conversation view turn pages', () => {
  it('reads the last page directly and pages backwards to the first turn, in ascending order', () =>
    withDatabase(
      25,
      () => false,
      async (db) => {
        const get = (p: { afterTurn: number | null; beforeTurn?: number | null; limit: number }) =>
          turnPage(db, 's', { branchId: 'main', ...p });
        const last = await get({ afterTurn: null, beforeTurn: null, limit: 10 });
        assert.deepEqual(
          last.turns.map((t) => t.turn),
          [16, 17, 18, 19, 20, 21, 22, 23, 24, 25],
        );
        assert.equal(last.turns[0]?.preview, 'question 16');
        assert.equal(last.nextAfterTurn, null, 'nothing after the last page');
        assert.equal(last.previousBeforeTurn, 16);
        const middle = await get({ afterTurn: null, beforeTurn: 16, limit: 10 });
        assert.deepEqual(
          middle.turns.map((t) => t.turn),
          [6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        );
        assert.equal(middle.nextAfterTurn, 15);
        assert.equal(middle.previousBeforeTurn, 6);
        const first = await get({ afterTurn: null, beforeTurn: 6, limit: 10 });
        assert.deepEqual(
          first.turns.map((t) => t.turn),
          [1, 2, 3, 4, 5],
        );
        assert.equal(first.previousBeforeTurn, null, 'the first turn is reached');
        const exact = await get({ afterTurn: null, beforeTurn: 11, limit: 10 });
        assert.equal(exact.previousBeforeTurn, null, 'a page that ends exactly at the first turn has nothing before it');

        const forward = await get({ afterTurn: 20, limit: 10 });
        assert.deepEqual(
          forward.turns.map((t) => t.turn),
          [21, 22, 23, 24, 25],
        );
        assert.equal(forward.previousBeforeTurn, 21, 'a page from a cursor has turns before it');
        assert.equal((await get({ afterTurn: null, limit: 10 })).previousBeforeTurn, null);
        assert.equal((await get({ afterTurn: null, beforeTurn: null, limit: 10_000 })).turns.length, 25, 'clamped, not refused');
      },
    ));

  it('pages a plain SQLiteSession backwards too (its one branch, main)', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'plain.db');
      const s = new SQLiteSession({ sessionId: 'p', dbPath: path });
      for (let t = 1; t <= 7; t++) {
        await s.addItems([
          { role: 'user', content: `plain ${t}` },
          { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: `answer ${t}` }] },
        ] as never);
      }
      s.close();
      const db = openSessionDatabase(path);
      try {
        const last = await turnPage(db, 'p', { branchId: 'main', afterTurn: null, beforeTurn: null, limit: 3 });
        assert.deepEqual(
          last.turns.map((t) => [t.turn, t.preview]),
          [
            [5, 'plain 5'],
            [6, 'plain 6'],
            [7, 'plain 7'],
          ],
        );
        assert.equal(last.previousBeforeTurn, 5);
        const first = await turnPage(db, 'p', { branchId: 'main', afterTurn: null, beforeTurn: 3, limit: 3 });
        assert.deepEqual(
          first.turns.map((t) => t.turn),
          [1, 2],
        );
        assert.equal(first.previousBeforeTurn, null);
        assert.deepEqual((await turnPage(db, 'p', { branchId: 'other', afterTurn: null, beforeTurn: null, limit: 3 })).turns, []);
      } finally {
        db.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
  it('lists the items before the first user message as turn 0, first on a page that starts the branch', async () => {
    const tmp = tempDir();
    try {
      const path = join(tmp.dir, 'preamble.db');
      const instructions = 'You are the support agent. Refund only with an order number.';
      const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
      await s.addItems([
        { role: 'system', content: instructions },
        { role: 'developer', content: 'Today is 2026-12-02.' },
      ] as never);
      for (let t = 1; t <= 3; t++) await s.addItems([{ role: 'user', content: `question ${t}` }]);
      await s.createBranchFromTurn(2, 'fork');
      s.close();
      const plainPath = join(tmp.dir, 'plain.db');
      const p = new SQLiteSession({ sessionId: 'p', dbPath: plainPath });
      await p.addItems([
        { role: 'system', content: instructions },
        { role: 'user', content: 'hi' },
      ] as never);
      p.close();
      const db = openSessionDatabase(path);
      const plain = openSessionDatabase(plainPath);
      try {
        const first = await turnPage(db, 's', { branchId: 'main', afterTurn: null, limit: 2 });
        assert.deepEqual(
          first.turns.map((t) => [t.turn, t.branchTurnNumber, t.preview, t.itemCount]),
          [
            [0, null, instructions, 2],
            [1, 1, 'question 1', 1],
            [2, 2, 'question 2', 1],
          ],
        );
        // Later pages, and a page read backwards from a cursor that does not reach the start, have no turn 0.
        assert.deepEqual(
          (await turnPage(db, 's', { branchId: 'main', afterTurn: 2, limit: 2 })).turns.map((t) => t.turn),
          [3],
        );
        assert.deepEqual(
          (await turnPage(db, 's', { branchId: 'main', afterTurn: null, beforeTurn: null, limit: 1 })).turns.map((t) => t.turn),
          [3],
        );
        // The last page of a short branch is also its first.
        assert.deepEqual(
          (await turnPage(db, 's', { branchId: 'main', afterTurn: null, beforeTurn: null, limit: 10 })).turns.map((t) => t.turn),
          [0, 1, 2, 3],
        );
        // A fork copies turn 0 with the turns before its fork turn.
        assert.deepEqual(
          (await turnPage(db, 's', { branchId: 'fork', afterTurn: null, limit: 5 })).turns.map((t) => t.turn),
          [0, 1],
        );
        assert.deepEqual(
          db.getTurnItems('s', 'fork', 0).map((i) => (i.corrupt ? null : (i.item as { role: string }).role)),
          ['system', 'developer'],
        );
        const plainPage = await turnPage(plain, 'p', { branchId: 'main', afterTurn: null, limit: 5 });
        assert.deepEqual(
          plainPage.turns.map((t) => [t.turn, t.preview, t.itemCount]),
          [
            [0, instructions, 1],
            [1, 'hi', 1],
          ],
        );
      } finally {
        db.close();
        plain.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});
