/**
 * A branch's own usage row for a turn it shares with its parent (a run's usage stored right after branching lands on
 * the branch's latest turn, a copied one): the Tokens table's branch scope counts the turn once, with the branch's own
 * row, as the SDK reads its own branch's row; its count and totals follow, kept (keepTotals) or summed afresh.
 */
import { strict as assert } from 'node:assert';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { sharedTurnRanges } from '../../../../src/shared/turnOrigin';
import { Workspace } from '../../../support/sessionHelpers';
import type { AdvancedSQLiteSession } from '../../../../src/store';

const usage = (input: number) => ({
  state: {
    usage: {
      requests: 1,
      inputTokens: input,
      outputTokens: 100,
      totalTokens: input + 100,
      inputTokensDetails: [],
      outputTokensDetails: [],
    },
  },
});

async function turn(s: AdvancedSQLiteSession, n: number): Promise<void> {
  await s.addItems([
    { role: 'user', content: `q${n}` },
    { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: `a${n}` }] },
  ] as never);
}

function altPage(db: SessionDatabase, sort?: 'inputTokens') {
  const tree = db.getBranchTree('s1');
  return db.getUsagePage('s1', 'alt', { limit: 10, shared: sharedTurnRanges(tree, 'alt'), ...(sort ? { sort } : {}) });
}

describe("a branch's own usage row for a shared turn", () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-own-row-')));
  afterEach(() => ws.cleanup());

  it('wins over the parent’s row in the branch’s rows, count and totals, kept or not', async () => {
    const s = ws.open();
    await turn(s, 1);
    await s.storeRunUsage(usage(1000) as never);
    await turn(s, 2);
    await s.storeRunUsage(usage(2000) as never);
    await turn(s, 3);
    await s.createBranchFromTurn(3, 'alt');
    // The kept totals are asked for before the branch has a row of its own, then the row lands on copied turn 2.
    const kept = ws.track(openSessionDatabase(ws.path(), { keepTotals: true }));
    assert.equal(altPage(kept).totals.totalTokens, 3200);
    await s.storeRunUsage(usage(3000) as never);

    const plain = ws.track(openSessionDatabase(ws.path()));
    for (const [name, db] of [
      ['summed afresh', plain],
      ['kept', kept],
    ] as const) {
      for (const sort of [undefined, 'inputTokens'] as const) {
        const page = altPage(db, sort);
        assert.deepEqual(
          page.rows.map((r) => [r.turn, r.sharedFrom ?? 'own', r.inputTokens]).sort((a, b) => Number(a[0]) - Number(b[0])),
          [
            [1, 'main', 1000],
            [2, 'own', 3000],
          ],
          `${name}, sorted by ${sort ?? 'turn'}`,
        );
        assert.equal(page.rowCount, 2, name);
        assert.equal(page.totals.totalTokens, 1100 + 3100, name);
        assert.equal(page.totals.requests, 2, name);
      }
    }
    // The session counts every row once, the branch's included.
    assert.equal(plain.getUsagePage('s1', null, { limit: 10 }).totals.totalTokens, 1100 + 2100 + 3100);
  });
});
