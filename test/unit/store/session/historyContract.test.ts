/**
 * The SDK's optional Session capabilities on AdvancedSQLiteSession (docs/session-format.md §14): history mutations,
 * durable idempotent history transactions, compaction of the current branch only, and the current-branch view.
 */
import { strict as assert } from 'node:assert';
import { Usage, type AgentInputItem } from '@openai/agents';
import { HistoryConflictError, InvalidArgumentError, toStoredItem } from '../../../../src/store';
import { Workspace, failsWithoutChange, mk, query, structure, tableNames } from '../../../support/sessionHelpers';

const call = (callId: string, args = '{}'): AgentInputItem =>
  ({ type: 'function_call', callId, name: 'get_weather', status: 'completed', arguments: args }) as AgentInputItem;
const result = (callId: string, output: string): AgentInputItem =>
  ({ type: 'function_call_result', callId, name: 'get_weather', status: 'completed', output }) as AgentInputItem;
const compaction = (text: string): AgentInputItem => ({ type: 'compaction', encrypted_content: text }) as AgentInputItem;
const stored = (items: AgentInputItem[]) => items.map((i) => toStoredItem(i));
const usage = (tokens: number) => ({
  state: { usage: new Usage({ requests: 1, inputTokens: tokens, outputTokens: 1, totalTokens: tokens + 1 }) },
});

describe('AdvancedSQLiteSession: the SDK history capabilities (§14)', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace()));
  afterEach(() => ws.cleanup());

  /** main: two turns with a tool call in turn 1; alt: branched from turn 2 (shares turn 1's rows); back on main. */
  async function twoBranches() {
    const s = ws.open();
    await s.addItems([mk.user('q1'), call('c1'), result('c1', 'sunny'), mk.assistant('a1')]);
    await s.storeRunUsage(usage(10));
    await s.addItems([mk.user('q2'), mk.assistant('a2')]);
    await s.storeRunUsage(usage(20));
    await s.createBranchFromTurn(2, 'alt');
    await s.addItems([mk.user('alt q2'), mk.assistant('alt a2')]);
    await s.storeRunUsage(usage(30));
    await s.switchToBranch('main');
    return s;
  }

  describe('applyHistoryMutations', () => {
    it('replaces the call on the current branch only; a branch sharing the old message keeps it', async () => {
      const s = await twoBranches();
      const altBefore = await s.getStoredItems(undefined, 'alt');
      await s.applyHistoryMutations({
        mutations: [{ type: 'replace_function_call', callId: 'c1', replacement: call('c1', '{"city":"Oslo"}') as never }],
      });
      const main = await s.getItems();
      assert.deepEqual((main[1] as { arguments: string }).arguments, '{"city":"Oslo"}');
      assert.equal(main.length, 6);
      assert.deepEqual(await s.getStoredItems(undefined, 'alt'), altBefore, 'alt still has the original call');
      const [row] = structure(ws.path(), 's1', 'main').filter((r) => r.message_type === 'function_call');
      assert.equal(row?.user_turn_number, 1, 'the replacement keeps its place and turn');
    });

    it('an unknown call id changes nothing; a malformed mutation is refused before anything is written', async () => {
      const s = await twoBranches();
      const before = await s.getStoredItems();
      await s.applyHistoryMutations({ mutations: [{ type: 'replace_function_call', callId: 'nope', replacement: call('nope') as never }] });
      assert.deepEqual(await s.getStoredItems(), before);
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.applyHistoryMutations({ mutations: [{ type: 'drop' }] } as never),
        InvalidArgumentError,
        /Unsupported session history mutation/,
      );
    });
  });

  describe('applyHistoryTransaction', () => {
    it('appends once per operation id, also when retried from another instance (durable)', async () => {
      const s = await twoBranches();
      const tx = { operationId: 'op-1', transaction: { type: 'append_items' as const, items: [mk.user('q3'), mk.assistant('a3')] } };
      assert.ok(!tableNames(ws.path()).includes('session_history_operations'), 'no table until first used');
      await s.applyHistoryTransaction(tx);
      assert.ok(tableNames(ws.path()).includes('session_history_operations'));
      const after = await s.getStoredItems();
      await s.applyHistoryTransaction(tx);
      const other = ws.open({ createTables: false });
      await other.applyHistoryTransaction(structuredClone(tx));
      assert.deepEqual(await s.getStoredItems(), after, 'the retries applied nothing');
      assert.equal(after.length, 8);
      assert.deepEqual(
        structure(ws.path(), 's1', 'main')
          .slice(-2)
          .map((r) => r.user_turn_number),
        [3, 3],
      );
    });

    it('the same id with another change, or a suffix that moved, is a HistoryConflictError and changes nothing', async () => {
      const s = await twoBranches();
      await s.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [mk.user('q3')] } });
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [mk.user('other')] } }),
        HistoryConflictError,
        'Session history operation was already applied with a different transaction.',
      );
      await failsWithoutChange(
        ws.path(),
        s,
        () =>
          s.applyHistoryTransaction({
            operationId: 'op-2',
            transaction: { type: 'replace_suffix', expectedSuffix: [mk.assistant('not the last item')], replacement: [] },
          }),
        HistoryConflictError,
        'Session history suffix no longer matches the transaction precondition.',
      );
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.applyHistoryTransaction({ operationId: ' ', transaction: { type: 'append_items', items: [] } }),
        InvalidArgumentError,
        /operationId/,
      );
    });

    it('replace_suffix swaps the matching suffix (JS or stored shape alike) and drops usage of turns that vanished', async () => {
      const s = await twoBranches();
      await s.applyHistoryTransaction({
        operationId: 'op-r',
        transaction: {
          type: 'replace_suffix',
          expectedSuffix: [mk.user('q2'), mk.assistant('a2')],
          replacement: [mk.assistant('blocked by a guardrail')],
        },
      });
      const items = await s.getStoredItems();
      assert.deepEqual(items.slice(-1), stored([mk.assistant('blocked by a guardrail')]));
      assert.equal(items.length, 5);
      const turns = query<{ user_turn_number: number }>(
        ws.path(),
        "SELECT user_turn_number FROM turn_usage WHERE branch_id = 'main' ORDER BY 1",
      );
      assert.deepEqual(
        turns.map((t) => t.user_turn_number),
        [1],
        'turn 2 has no rows left, so its usage row went, as popItem does',
      );
      assert.equal((await s.getStoredItems(undefined, 'alt')).length, 6, 'alt untouched');
    });
  });

  describe('popItem(expected)', () => {
    it('pops the newest item when it is the expected one (JS or stored shape alike), and its turn’s usage with it', async () => {
      const s = await twoBranches();
      assert.deepEqual(stored([(await s.popItem(mk.assistant('a2'))) as AgentInputItem]), stored([mk.assistant('a2')]));
      assert.deepEqual(stored([(await s.popItem(toStoredItem(mk.user('q2')) as never)) as AgentInputItem]), stored([mk.user('q2')]));
      assert.equal((await s.getItems()).length, 4);
      const turns = query<{ user_turn_number: number }>(
        ws.path(),
        "SELECT user_turn_number FROM turn_usage WHERE branch_id = 'main' ORDER BY 1",
      );
      assert.deepEqual(
        turns.map((t) => t.user_turn_number),
        [1],
      );
      assert.equal((await s.getStoredItems(undefined, 'alt')).length, 6, 'alt untouched');
    });

    it('another newest item, one another connection just added, or an empty branch: HistoryConflictError, nothing changes', async () => {
      const s = await twoBranches();
      const message = "The branch's newest item is not the expected one; nothing was popped.";
      await failsWithoutChange(ws.path(), s, () => s.popItem(mk.user('q2')), HistoryConflictError, message);
      await ws.open().addItems([mk.user('from another connection')]);
      await failsWithoutChange(ws.path(), s, () => s.popItem(mk.assistant('a2')), HistoryConflictError, message);
      const empty = ws.open({ sessionId: 'empty' });
      await failsWithoutChange(ws.path(), empty, () => empty.popItem(mk.user('q')), HistoryConflictError, message);
      assert.deepEqual(
        structure(ws.path(), 's1', 'main')
          .slice(-1)
          .map((r) => r.message_type),
        ['user'],
      );
      // Without `expected`, as Python's pop_item: the newest item, whatever it is.
      assert.deepEqual(stored([(await s.popItem()) as AgentInputItem]), stored([mk.user('from another connection')]));
    });
  });

  describe('replaceHistoryWithCompaction', () => {
    it('replaces only the current branch; other branches and every usage row stay; numbering continues', async () => {
      const s = await twoBranches();
      const altBefore = await s.getStoredItems(undefined, 'alt');
      const usageBefore = query(ws.path(), 'SELECT * FROM turn_usage ORDER BY branch_id, user_turn_number');
      await s.replaceHistoryWithCompaction([compaction('summary of turns 1-2'), mk.user('q2'), mk.assistant('a2')]);
      assert.deepEqual(await s.getStoredItems(), stored([compaction('summary of turns 1-2'), mk.user('q2'), mk.assistant('a2')]));
      assert.deepEqual(await s.getStoredItems(undefined, 'alt'), altBefore);
      assert.deepEqual(query(ws.path(), 'SELECT * FROM turn_usage ORDER BY branch_id, user_turn_number'), usageBefore);
      assert.deepEqual(
        structure(ws.path(), 's1', 'main').map((r) => [r.message_type, r.user_turn_number]),
        [
          ['compaction', 2],
          ['user', 3],
          ['assistant', 3],
        ],
        'after the last usage row, so a new turn never lands on an old turn usage row',
      );
      await s.storeRunUsage(usage(40));
      assert.deepEqual(
        query<{ n: number; t: number }>(
          ws.path(),
          "SELECT user_turn_number AS n, input_tokens AS t FROM turn_usage WHERE branch_id = 'main' ORDER BY 1",
        ),
        [
          { n: 1, t: 10 },
          { n: 2, t: 20 },
          { n: 3, t: 40 },
        ],
      );
    });
  });

  describe('currentBranchSession()', () => {
    it('clearSession clears only the current branch, for wrappers that clear and re-add', async () => {
      const s = await twoBranches();
      await s.switchToBranch('alt');
      const mainBefore = await s.getStoredItems(undefined, 'main');
      const view = s.currentBranchSession();
      await view.clearSession();
      assert.deepEqual(await view.getItems(), []);
      assert.equal(s.getCurrentBranchId(), 'alt');
      assert.deepEqual(await s.getStoredItems(undefined, 'main'), mainBefore, 'main is untouched, shared rows included');
      await view.addItems([compaction('alt summary'), mk.user('next')]);
      assert.deepEqual(await s.getStoredItems(), stored([compaction('alt summary'), mk.user('next')]));
      assert.equal(await view.getSessionId(), 's1');
    });

    it("the session's own clearSession still clears every branch, as Python's does", async () => {
      const s = await twoBranches();
      await s.applyHistoryTransaction({ operationId: 'op', transaction: { type: 'append_items', items: [mk.user('x')] } });
      await s.clearSession();
      assert.deepEqual(query(ws.path(), "SELECT COUNT(*) AS n FROM message_structure WHERE session_id = 's1'"), [{ n: 0 }]);
      assert.deepEqual(query(ws.path(), 'SELECT COUNT(*) AS n FROM session_history_operations'), [{ n: 0 }], 'applied ids are forgotten');
    });
  });

  it('prepareHistoryItemsForPersistenceComparison makes a JS item and its stored form compare equal', async () => {
    const s = ws.open();
    const js = { ...(call('c9') as object), id: '__fake_id__', providerData: { type: 'function_call' } } as unknown as AgentInputItem;
    await s.addItems([js]);
    assert.deepStrictEqual(
      s.prepareHistoryItemsForPersistenceComparison([js]),
      s.prepareHistoryItemsForPersistenceComparison(await s.getItems()),
    );
  });
});
