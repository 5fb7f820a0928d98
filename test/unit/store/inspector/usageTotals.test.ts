/**
 * One huge value never stops the Tokens tab's and the session list's sums (src/store/inspector/usageTables.ts
 * `displaySumSql`: SQLite's `sum()` raised "integer overflow", so `ls` and the Tokens tab failed for the whole file).
 * Fresh and kept (keepTotals) alike.
 */
import { strict as assert } from 'node:assert';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { sharedTurnRanges } from '../../../../src/shared/turnOrigin';
import { execSql, mk, Workspace } from '../../../support/sessionHelpers';

const COUNTS = ['requests', 'inputTokens', 'outputTokens', 'totalTokens', 'cachedTokens', 'reasoningTokens'] as const;

/** main: turns 1–3; alt: from main at turn 2 (shares turn 1), turns 2–3; a usage row on each, all normal. */
async function file(ws: Workspace): Promise<string> {
  const s = ws.open();
  await s.addItems([mk.user('q1'), mk.assistant('a1'), mk.user('q2'), mk.assistant('a2'), mk.user('q3'), mk.assistant('a3')]);
  await s.createBranchFromTurn(2, 'alt');
  await s.addItems([mk.user('q2'), mk.assistant('b2'), mk.user('q3'), mk.assistant('b3')]);
  s.close();
  const path = ws.path();
  for (const [branch, turn] of [
    ['main', 1],
    ['main', 2],
    ['main', 3],
    ['alt', 2],
    ['alt', 3],
  ] as const) {
    execSql(
      path,
      `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
         input_tokens_details, output_tokens_details) VALUES ('s1', ?, ?, 1, ?, 100, ?, '{"cached_tokens": 10}', '{"reasoning_tokens": 5}')`,
      branch,
      turn,
      1000 * turn,
      1000 * turn + 100,
    );
  }
  return path;
}

/** Every scope the Tokens tab shows (the session, each branch with its shared turns): its rows and its page. */
function scopes(db: SessionDatabase) {
  const tree = db.getBranchTree('s1');
  return [null, 'main', 'alt'].map((branchId) => {
    const page = db.getUsagePage('s1', branchId, { limit: 100, shared: branchId === null ? [] : sharedTurnRanges(tree, branchId) });
    return { branchId, page };
  });
}

describe('usage totals never overflow', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-usage-totals-')));
  afterEach(() => ws.cleanup());

  it('one huge count: the list and the Tokens tab still answer, with numbers', async () => {
    const path = await file(ws);
    const plain = ws.track(openSessionDatabase(path));
    // Normal values: exact whole numbers.
    assert.deepEqual(plain.listSessions()[0]?.usage, {
      requests: 5,
      inputTokens: 11000,
      outputTokens: 500,
      totalTokens: 11500,
      totalTurns: 5,
    });
    assert.equal(plain.getUsagePage('s1', null, { limit: 1 }).totals.cachedTokens, 50);
    execSql(path, "UPDATE turn_usage SET input_tokens = 9223372036854775807 WHERE branch_id = 'main' AND user_turn_number = 1");
    execSql(path, "UPDATE turn_usage SET total_tokens = 9223372036854775807 WHERE branch_id = 'alt' AND user_turn_number = 3");
    for (const db of [ws.track(openSessionDatabase(path)), ws.track(openSessionDatabase(path, { keepTotals: true }))]) {
      const usage = db.listSessions()[0]?.usage;
      assert.ok(usage && typeof usage.inputTokens === 'number' && usage.inputTokens > 9e18, JSON.stringify(usage));
      assert.equal(typeof usage.totalTokens, 'number');
      assert.equal(usage.outputTokens, 500);
      for (const { branchId, page } of scopes(db)) {
        assert.equal(page.totals.outputTokens, page.rowCount * 100, String(branchId));
        for (const key of COUNTS) assert.equal(typeof page.totals[key], 'number', `${branchId} ${key}`);
      }
    }
  });
});
