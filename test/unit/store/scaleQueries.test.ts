/**
 * The queries rewritten for long sessions (issue 13): they must give the answers of the store's own API and of the
 * exact (slow) rules they replaced, on ordinary files and on the odd ones where a fast path cannot apply.
 */
import { strict as assert } from 'node:assert';
import { Usage, type AgentInputItem } from '@openai/agents';
import { openSessionDatabase, type AdvancedSQLiteSession } from '../../../src/store';
import { Workspace, execSql, mk, query, structure } from '../../support/sessionHelpers';

const call = (name: string, id: string): AgentInputItem =>
  ({ type: 'function_call', callId: id, name, status: 'completed', arguments: '{}' }) as AgentInputItem;
const usage = (n: number) => ({
  state: {
    usage: new Usage({
      requests: 1,
      inputTokens: n,
      outputTokens: 2,
      totalTokens: n + 2,
      inputTokensDetails: { cached_tokens: n % 7 },
      outputTokensDetails: { reasoning_tokens: n % 5 },
    }),
  },
});

describe('queries for long sessions (issue 13)', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace()));
  afterEach(() => ws.cleanup());

  /** main: 12 turns with tools, usage on all but turns 4 and 9; alt from turn 6 with 3 own turns, usage on one. */
  async function session(): Promise<AdvancedSQLiteSession> {
    const s = ws.open();
    for (let t = 1; t <= 12; t++) {
      await s.addItems([mk.user(`q${t}`), call(t % 2 ? 'weather' : 'lookup', `c${t}`), mk.assistant(`a${t}`)]);
      if (t !== 4 && t !== 9) await s.storeRunUsage(usage(t * 10));
    }
    await s.createBranchFromTurn(6, 'alt');
    for (let t = 6; t <= 8; t++) {
      await s.addItems([mk.user(`alt q${t}`), call('weather', `alt${t}`)]);
      if (t === 7) await s.storeRunUsage(usage(t));
    }
    return s;
  }

  it('usage pages: every order pages through all rows once; totals equal the store sums and the rows', async () => {
    const s = await session();
    const db = ws.track(openSessionDatabase(ws.path(), { readonly: true }));
    for (const branchId of ['main', 'alt', null]) {
      const all = db.getUsageRows('s1', branchId);
      for (const sort of ['turn', 'branchId', 'totalTokens', 'cachedTokens'] as const) {
        for (const descending of [false, true]) {
          const seen: string[] = [];
          for (let offset = 0; ; offset += 4) {
            const page = db.getUsagePage('s1', branchId, { sort, descending, offset, limit: 4 });
            assert.equal(page.rowCount, all.length);
            seen.push(...page.rows.map((r) => `${r.branchId}/${r.turn}`));
            if (page.rows.length < 4) break;
          }
          assert.deepEqual([...seen].sort(), all.map((r) => `${r.branchId}/${r.turn}`).sort(), `${branchId} by ${sort}`);
        }
      }
      const { totals } = db.getUsagePage('s1', branchId, { limit: 1 });
      const sum = (k: 'requests' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'cachedTokens' | 'reasoningTokens') =>
        all.reduce((a, r) => a + (r[k] ?? 0), 0);
      assert.deepEqual(totals, {
        requests: sum('requests'),
        inputTokens: sum('inputTokens'),
        outputTokens: sum('outputTokens'),
        totalTokens: sum('totalTokens'),
        cachedTokens: sum('cachedTokens'),
        reasoningTokens: sum('reasoningTokens'),
      });
      const store = await s.getSessionUsage(branchId ?? undefined);
      assert.deepEqual(
        [totals.requests, totals.inputTokens, totals.outputTokens, totals.totalTokens],
        [store?.requests, store?.inputTokens, store?.outputTokens, store?.totalTokens],
      );
    }
    const byTotal = db.getUsagePage('s1', 'main', { sort: 'totalTokens', descending: true, limit: 3 }).rows.map((r) => r.totalTokens);
    assert.deepEqual(byTotal, [122, 112, 102]);
  });

  it('tool totals equal the sums of the store getToolUsage, per branch and once per stored call for the session', async () => {
    const s = await session();
    const db = ws.track(openSessionDatabase(ws.path(), { readonly: true }));
    for (const branchId of ['main', 'alt']) {
      const store = await s.getToolUsage(branchId);
      const expected = new Map<string, { calls: number; turns: Set<number> }>();
      for (const u of store) {
        const e = expected.get(u.toolName ?? '') ?? { calls: 0, turns: new Set<number>() };
        e.calls += u.count;
        e.turns.add(u.turn);
        expected.set(u.toolName ?? '', e);
      }
      assert.deepEqual(
        db.getToolTotals('s1', branchId).map((t) => [t.toolName, t.calls, t.turnCount, t.turns]),
        [...expected]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([name, e]) => [name, e.calls, e.turns.size, [...e.turns].sort((a, b) => a - b)]),
        branchId,
      );
    }
    // Session: main's 12 calls (alt's copies of turns 1–5 are the same stored calls) plus alt's own 3.
    assert.deepEqual(
      db.getToolTotals('s1', null).map((t) => [t.toolName, t.calls]),
      [
        ['lookup', 6],
        ['weather', 9],
      ],
    );
    // Turn numbers repeat across branches: the session's totals name the branch that ran each turn (the copies of
    // turns 1–5 in alt are main's).
    assert.deepEqual(
      db.getToolTotals('s1', null).map((t) => [t.toolName, t.turnCount, t.branchTurns?.map((r) => `${r.branchId} ${r.turn}`)]),
      [
        ['lookup', 6, ['main 2', 'main 4', 'main 6', 'main 8', 'main 10', 'main 12']],
        ['weather', 9, ['alt 6', 'alt 7', 'alt 8', 'main 1', 'main 3', 'main 5', 'main 7', 'main 9', 'main 11']],
      ],
    );
    assert.equal(db.getToolTotals('s1', 'main')[0]?.branchTurns, undefined, 'a branch needs no branch names');
  });

  it('turns without usage: own turns only, first ones plus a count', async () => {
    await session();
    const db = ws.track(openSessionDatabase(ws.path(), { readonly: true }));
    const fromTurns = new Map([['alt', 6]]);
    assert.deepEqual(db.getTurnsWithoutUsage('s1', 'main', { fromTurns }), {
      turns: [
        { branchId: 'main', turn: 4 },
        { branchId: 'main', turn: 9 },
      ],
      count: 2,
    });
    assert.deepEqual(db.getTurnsWithoutUsage('s1', null, { fromTurns, limit: 3 }), {
      turns: [
        { branchId: 'alt', turn: 6 },
        { branchId: 'alt', turn: 8 },
        { branchId: 'main', turn: 4 },
      ],
      count: 4,
    });
    assert.equal(db.getTurnsWithoutUsage('s1', 'alt').count, 7, 'without a fork turn, copied turns 1–5 (their usage is on main) count too');
  });

  describe('createBranchFromTurn (spec §12 l)', () => {
    it("copies the rows before turn N's user message; the same rows as Python's rule on an ordinary file", async () => {
      const s = await session();
      await s.switchToBranch('main');
      const expected = structure(ws.path(), 's1', 'main').filter((r) => (r.branch_turn_number ?? Infinity) < 10);
      await s.createBranchFromTurn(10, 'late');
      assert.deepEqual(
        structure(ws.path(), 's1', 'late').map((r) => [r.message_id, r.message_type, r.user_turn_number, r.branch_turn_number]),
        expected.map((r) => [r.message_id, r.message_type, r.user_turn_number, r.branch_turn_number]),
      );
    });

    it('falls back to the exact rule when the turn columns disagree (a file no SDK writes)', async () => {
      const s = ws.open();
      for (let t = 1; t <= 4; t++) await s.addItems([mk.user(`q${t}`), mk.assistant(`a${t}`)]);
      // Turn 3's user row keeps branch turn 3 but has user turn 30; a row after it claims branch turn 1.
      execSql(ws.path(), "UPDATE message_structure SET user_turn_number = 30 WHERE branch_turn_number = 3 AND message_type = 'user'");
      execSql(ws.path(), "UPDATE message_structure SET branch_turn_number = 1 WHERE branch_turn_number = 4 AND message_type = 'assistant'");
      const expected = structure(ws.path(), 's1', 'main').filter((r) => (r.branch_turn_number ?? Infinity) < 3);
      await s.createBranchFromTurn(3, 'odd');
      assert.deepEqual(
        structure(ws.path(), 's1', 'odd').map((r) => r.message_id),
        expected.map((r) => r.message_id),
        'every row with branch_turn_number < 3, the late one included',
      );
    });
  });

  it('deleteBranch removes the messages only its rows used and leaves other sessions alone', async () => {
    const s = await session();
    const other = ws.open({ sessionId: 's2', createTables: false });
    await other.addItems([mk.user('other session')]);
    const before = query<{ n: number }>(ws.path(), "SELECT COUNT(*) AS n FROM agent_messages WHERE session_id = 's1'")[0]?.n ?? 0;
    await s.switchToBranch('main');
    await s.deleteBranch('alt');
    const after = query<{ n: number }>(ws.path(), "SELECT COUNT(*) AS n FROM agent_messages WHERE session_id = 's1'")[0]?.n ?? 0;
    assert.equal(before - after, 6, "alt's own 6 messages; the 15 it shared with main stay");
    assert.deepEqual(await other.getStoredItems(), [{ role: 'user', content: 'other session' }]);
  });
});
