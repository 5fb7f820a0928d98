/**
 * The two reads replay needs (not in the Python API, docs/replay.md): `forkWithTurnItems` makes the fork
 * `createBranchFromTurn` makes and returns the source turn's stored items, read in the same transaction;
 * `getTurnStoredItems` reads one turn of a branch. Both take turn N's rows through the turn index, and fall back to
 * the exact scan when the two turn columns disagree (spec §12 l). Bad input fails as branch creation does, unchanged.
 */
import { strict as assert } from 'node:assert';
import { BranchError, type AdvancedSQLiteSession } from '../../../../src/store';
import { Workspace, execSql, failsWithoutChange, mk, query } from '../../../support/sessionHelpers';

const CLOCK = () => 1700000000;
const NO_TURN = (n: number, b: string) => `Turn ${n} does not contain a user message in branch '${b}'`;

describe('AdvancedSQLiteSession: a turn read with its fork (replay)', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace()));
  afterEach(() => ws.cleanup());

  /** main: turn 1 (user, answer), turn 2 (user, two calls, their outputs, answer), turn 3 (user, answer). */
  async function recorded(): Promise<AdvancedSQLiteSession> {
    const s = ws.open({ clock: CLOCK });
    await s.addItems([mk.user('hello'), mk.assistant('hi')]);
    await s.addItems([
      mk.user('weather twice'),
      mk.raw({ type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }),
      mk.raw({ type: 'function_call', call_id: 'c2', name: 'get_weather', arguments: '{"city":"Paris"}' }),
      mk.raw({ type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'sunny' }] }),
      mk.raw({ type: 'function_call_output', call_id: 'c2', output: 'rain' }),
      mk.assistant('sunny, then rain'),
    ]);
    await s.addItems([mk.user('thanks'), mk.assistant('welcome')]);
    return s;
  }

  /** Turn `n` of `branch` as stored, read with the exact rule (`branch_turn_number = n`) in plain SQL. */
  const exactTurn = (n: number, branch = 'main'): unknown[] =>
    query<{ message_data: string }>(
      ws.path(),
      `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = 's1' AND s.branch_id = ? AND s.branch_turn_number = ? ORDER BY s.sequence_number`,
      branch,
      n,
    ).map((r) => JSON.parse(r.message_data) as unknown);

  it('forkWithTurnItems: the fork createBranchFromTurn makes, and turn N of the source as stored', async () => {
    const s = await recorded();
    const made = await s.forkWithTurnItems(2, 'retry');
    assert.equal(made.branchId, 'retry');
    assert.equal(s.getCurrentBranchId(), 'retry');
    assert.deepEqual(made.turnItems, exactTurn(2));
    assert.equal(made.turnItems.length, 6);
    assert.deepEqual((made.turnItems[3] as { output: unknown }).output, [{ type: 'input_text', text: 'sunny' }], 'outputs as stored');

    await s.switchToBranch('main');
    await s.createBranchFromTurn(2, 'plain');
    assert.deepEqual(await s.getStoredItems(undefined, 'retry'), await s.getStoredItems(undefined, 'plain'), 'the same fork');
    assert.deepEqual(await s.getStoredItems(undefined, 'retry'), exactTurn(1));
  });

  it('forkWithTurnItems from turn 1: the turn is read, the fork has no rows yet', async () => {
    const s = await recorded();
    const made = await s.forkWithTurnItems(1, 'fresh');
    assert.deepEqual(made.turnItems, exactTurn(1));
    assert.deepEqual(await s.getItems(), []);
  });

  it('getTurnStoredItems: the current branch by default, another by id, nothing for a turn or branch that is not there', async () => {
    const s = await recorded();
    assert.deepEqual(await s.getTurnStoredItems(2), exactTurn(2));
    await s.forkWithTurnItems(3, 'alt');
    await s.addItems([mk.user('other third'), mk.assistant('other answer')]);
    assert.deepEqual(await s.getTurnStoredItems(3), exactTurn(3, 'alt'));
    assert.deepEqual(await s.getTurnStoredItems(3, 'main'), exactTurn(3));
    assert.notDeepEqual(exactTurn(3, 'alt'), exactTurn(3));
    assert.deepEqual(await s.getTurnStoredItems(9, 'main'), []);
    assert.deepEqual(await s.getTurnStoredItems(2, 'no-such-branch'), []);
  });

  it('reads the exact turn when the two turn columns disagree (a file no SDK writes)', async () => {
    const s = await recorded();
    const expected = exactTurn(2);
    execSql(ws.path(), "UPDATE message_structure SET user_turn_number = NULL WHERE branch_id = 'main' AND branch_turn_number = 2");
    assert.deepEqual(await s.getTurnStoredItems(2, 'main'), expected);
    const made = await s.forkWithTurnItems(2, 'odd');
    assert.deepEqual(made.turnItems, expected);
  });

  it('bad input fails as branch creation does, and changes nothing', async () => {
    const s = await recorded();
    await failsWithoutChange(ws.path(), s, () => s.forkWithTurnItems(0, 'z'), BranchError, NO_TURN(0, 'main'));
    await failsWithoutChange(ws.path(), s, () => s.forkWithTurnItems(7, 'z'), BranchError, NO_TURN(7, 'main'));
    await failsWithoutChange(ws.path(), s, () => s.forkWithTurnItems(-1, 'z'), BranchError, /non-negative integer, got -1/);
    await failsWithoutChange(ws.path(), s, () => s.forkWithTurnItems(1.5, 'z'), BranchError, /non-negative integer/);
    await failsWithoutChange(ws.path(), s, () => s.forkWithTurnItems(2, 'main'), BranchError, /already been used/);
    await failsWithoutChange(ws.path(), s, () => s.getTurnStoredItems(-2), BranchError, /non-negative integer/);
  });
});
