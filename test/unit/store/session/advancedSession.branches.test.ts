/**
 * Branches of an AdvancedSQLiteSession (spec §8, §10.3, §12 b/d): reservations, auto ids, copying, switching,
 * deleting, listing, clear generations across instances, and the errors — every failing call leaves the file
 * and the current branch unchanged.
 */
import { strict as assert } from 'node:assert';
import { BranchError, type AdvancedSQLiteSession } from '../../../../src/store';
import { Workspace, execSql, failsWithoutChange, mk, query, structure } from '../../../support/sessionHelpers';

const CLOCK = () => 1700000000;
const USED = (id: string) => `Branch ID '${id}' has already been used. Choose a new branch ID.`;
const NO_TURN = (n: number | string, b: string) => `Turn ${n} does not contain a user message in branch '${b}'`;

describe('AdvancedSQLiteSession branches', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace()));
  afterEach(() => ws.cleanup());

  /** main: turn 1 (user, call, output, assistant), turn 2 (user, assistant), turn 3 (user). */
  async function threeTurns(options: Parameters<Workspace['open']>[0] = {}): Promise<AdvancedSQLiteSession> {
    const s = ws.open({ clock: CLOCK, ...options });
    await s.addItems([mk.user('first question'), mk.call('get_weather'), mk.output(), mk.assistant('first answer')]);
    await s.addItems([mk.user('second question'), mk.assistant('second answer')]);
    await s.addItems([mk.user('third question')]);
    return s;
  }
  const reservations = (sid = 's1') =>
    query<{ branch_id: string }>(ws.path(), 'SELECT branch_id FROM branch_reservations WHERE session_id = ? ORDER BY rowid', sid).map(
      (r) => r.branch_id,
    );

  describe('createBranchFromTurn (§8.1–8.3)', () => {
    it('copies the prefix below turn N, sharing message rows, with new sequence numbers; moves the pointer', async () => {
      const s = await threeTurns();
      const messagesBefore = query(ws.path(), 'SELECT * FROM agent_messages ORDER BY id');
      assert.equal(await s.createBranchFromTurn(3, 'alt'), 'alt');
      assert.equal(s.getCurrentBranchId(), 'alt');
      assert.deepEqual(query(ws.path(), 'SELECT * FROM agent_messages ORDER BY id'), messagesBefore, 'no message row is duplicated');
      const main = structure(ws.path(), 's1', 'main');
      const alt = structure(ws.path(), 's1', 'alt');
      assert.deepEqual(
        alt.map((r) => [r.message_id, r.message_type, r.sequence_number, r.user_turn_number, r.branch_turn_number, r.tool_name]),
        main.slice(0, 6).map((r, i) => [r.message_id, r.message_type, 8 + i, r.user_turn_number, r.branch_turn_number, r.tool_name]),
      );
      assert.deepEqual(
        (await s.getItems()).map((i) => (i as { content?: unknown }).content ?? (i as { type: string }).type),
        [
          'first question',
          'function_call',
          'function_call_result',
          [{ type: 'output_text', text: 'first answer' }],
          'second question',
          [{ type: 'output_text', text: 'second answer' }],
        ],
      );
      await s.addItems([mk.user('alt third')]);
      assert.deepEqual(structure(ws.path(), 's1', 'alt').at(-1)?.user_turn_number, 3);
    });

    it('copies turn-0 rows but not rows with NULL turns', async () => {
      const s = ws.open();
      await s.addItems([mk.raw({ role: 'system', content: 'sys' }), mk.user('q1'), mk.user('q2')]);
      execSql(ws.path(), 'INSERT INTO agent_messages (session_id, message_data) VALUES (\'s1\', \'{"type": "reasoning"}\')');
      execSql(
        ws.path(),
        "INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number, branch_turn_number) VALUES ('s1', 4, 'main', 'reasoning', 4, NULL, NULL)",
      );
      await s.createBranchFromTurn(2, 'b');
      assert.deepEqual(
        structure(ws.path(), 's1', 'b').map((r) => [r.message_type, r.user_turn_number]),
        [
          ['other', 0],
          ['user', 1],
        ],
      );
    });

    it('does not copy usage', async () => {
      const s = await threeTurns();
      await s.switchToBranch('main');
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 2, outputTokens: 3, totalTokens: 5 } } });
      await s.createBranchFromTurn(3, 'alt');
      assert.deepEqual(await s.getTurnUsage(), []);
      assert.deepEqual(query(ws.path(), 'SELECT branch_id, user_turn_number FROM turn_usage'), [
        { branch_id: 'main', user_turn_number: 3 },
      ]);
    });

    it('from turn 1: the branch is current but unlisted and has no items until its first add', async () => {
      const s = await threeTurns();
      assert.equal(await s.createBranchFromTurn(1, 'fresh'), 'fresh');
      assert.equal(s.getCurrentBranchId(), 'fresh');
      assert.deepEqual(await s.getItems(), []);
      assert.deepEqual(
        (await s.listBranches()).map((b) => [b.branchId, b.isCurrent]),
        [['main', false]],
      );
      await s.addItems([mk.user('new start')]);
      assert.deepEqual(
        structure(ws.path(), 's1', 'fresh').map((r) => [r.sequence_number, r.user_turn_number]),
        [[8, 1]],
      );
      assert.deepEqual((await s.listBranches()).map((b) => b.branchId).sort(), ['fresh', 'main']);
    });

    it('a branch from turn 1 without items cannot be switched back to', async () => {
      const s = await threeTurns();
      await s.createBranchFromTurn(1, 'fresh');
      await s.switchToBranch('main');
      await failsWithoutChange(ws.path(), s, () => s.switchToBranch('fresh'), BranchError, "Branch 'fresh' does not exist");
    });

    it('reserves ids per session; every id is used once, main included (after a backfill)', async () => {
      const s = await threeTurns();
      const t = await threeTurns({ sessionId: 's2' });
      assert.equal(await s.createBranchFromTurn(2, 'alt'), 'alt');
      assert.equal(await t.createBranchFromTurn(2, 'alt'), 'alt');
      assert.deepEqual(reservations('s1'), ['main', 'alt']);
      assert.deepEqual(reservations('s2'), ['main', 'alt']);
      await s.switchToBranch('main');
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(2, 'alt'), BranchError, USED('alt'));
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(2, 'main'), BranchError, USED('main'));
      await s.deleteBranch('alt');
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(2, 'alt'), BranchError, USED('alt'));
      assert.deepEqual(reservations('s1'), ['main', 'alt']);
    });

    it('isBranchIdUsed answers what a new branch name would be refused for, writing nothing', async () => {
      const s = await threeTurns();
      // Before any branch was made: no reservation yet, main and rows answer.
      assert.deepEqual(reservations('s1'), []);
      assert.equal(await s.isBranchIdUsed('main'), true);
      assert.equal(await s.isBranchIdUsed('alt'), false);
      await s.createBranchFromTurn(2, 'alt');
      await s.switchToBranch('main');
      await s.createBranchFromTurn(2, 'gone');
      await s.deleteBranch('gone', true);
      const t = await threeTurns({ sessionId: 's2' });
      const rows = query(ws.path(), 'SELECT * FROM branch_reservations ORDER BY rowid');
      for (const [id, used] of [
        ['alt', true],
        ['gone', true], // deleted, but its reservation stays
        ['fresh', false],
      ] as const) {
        assert.equal(await s.isBranchIdUsed(id), used, id);
        assert.equal(await t.isBranchIdUsed(id), false, `${id} in another session`);
      }
      assert.deepEqual(query(ws.path(), 'SELECT * FROM branch_reservations ORDER BY rowid'), rows);
    });

    it('backfills unreserved branch ids in ascending binary order before reserving', async () => {
      const s = await threeTurns();
      execSql(ws.path(), "UPDATE message_structure SET branch_id = 'Zed' WHERE sequence_number = 7");
      execSql(ws.path(), "UPDATE message_structure SET branch_id = 'alpha' WHERE sequence_number = 6");
      await s.createBranchFromTurn(1, 'new');
      assert.deepEqual(reservations(), ['Zed', 'alpha', 'main', 'new']);
    });

    it('generates branch_from_turn_<N>_<S>, then _2, _3 in the same second', async () => {
      const s = await threeTurns();
      assert.equal(await s.createBranchFromTurn(2), 'branch_from_turn_2_1700000000');
      await s.switchToBranch('main');
      assert.equal(await s.createBranchFromTurn(2, null as unknown as string), 'branch_from_turn_2_1700000000_2');
      await s.switchToBranch('main');
      assert.equal(await s.createBranchFromTurn(2, undefined), 'branch_from_turn_2_1700000000_3');
      await s.switchToBranch('main');
      assert.equal(await s.createBranchFromTurn(3), 'branch_from_turn_3_1700000000');
      assert.deepEqual(reservations(), [
        'main',
        'branch_from_turn_2_1700000000',
        'branch_from_turn_2_1700000000_2',
        'branch_from_turn_2_1700000000_3',
        'branch_from_turn_3_1700000000',
      ]);
    });

    it('uses whole Unix seconds of the wall clock by default', async () => {
      const s = ws.open();
      await s.addItems([mk.user('1'), mk.user('2')]);
      const before = Math.floor(Date.now() / 1000);
      const id = await s.createBranchFromTurn(2);
      const after = Math.floor(Date.now() / 1000);
      const m = /^branch_from_turn_2_(\d+)$/.exec(id);
      assert.ok(m, id);
      assert.ok(Number(m[1]) >= before && Number(m[1]) <= after, id);
    });

    it('skips a reserved auto id taken by a name', async () => {
      const s = await threeTurns({ clock: () => 1234.9 });
      await s.createBranchFromTurn(2, 'branch_from_turn_2_1234');
      await s.switchToBranch('main');
      assert.equal(await s.createBranchFromTurn(2), 'branch_from_turn_2_1234_2');
    });

    it('stores names with surrounding spaces as given', async () => {
      const s = await threeTurns();
      assert.equal(await s.createBranchFromTurn(2, '  sp  '), '  sp  ');
      assert.deepEqual(reservations().at(-1), '  sp  ');
    });

    it('branches from the current branch (the source is the current branch)', async () => {
      const s = await threeTurns();
      await s.createBranchFromTurn(3, 'a');
      await s.addItems([mk.user('a3'), mk.assistant('a3a'), mk.user('a4')]);
      await s.createBranchFromTurn(4, 'b');
      assert.deepEqual(
        (await s.getItems()).map((i) => (i as { role?: string; content?: unknown }).content).filter((c) => typeof c === 'string'),
        ['first question', 'second question', 'a3'],
      );
    });

    it('§12 b: rejects blank names and bad turn numbers before touching the database', async () => {
      const s = await threeTurns();
      for (const name of ['', ' ', '\t\n ']) {
        await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(2, name), BranchError, 'Branch ID cannot be empty');
        await failsWithoutChange(ws.path(), s, () => s.createBranchFromContent('second', name), BranchError, 'Branch ID cannot be empty');
      }
      const bad: [unknown, string][] = [
        [-1, '-1'],
        [1.5, '1.5'],
        [NaN, 'NaN'],
        [Infinity, 'Infinity'],
        ['2', "'2' (string)"],
        ['2.0', "'2.0' (string)"],
        [2n, '2n (bigint)'],
        [null, 'null'],
      ];
      for (const [value, shown] of bad) {
        await failsWithoutChange(
          ws.path(),
          s,
          () => s.createBranchFromTurn(value as number, 'x'),
          BranchError,
          `Turn number must be a non-negative integer, got ${shown}`,
        );
      }
      // 2.0 is the integer 2 in JS.
      assert.equal(await s.createBranchFromTurn(2.0, 'two'), 'two');
    });

    it('turn 0 passes the argument check, then has no user message', async () => {
      const s = await threeTurns();
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(0, 'z'), BranchError, NO_TURN(0, 'main'));
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(0), BranchError, NO_TURN(0, 'main'));
    });

    it('checks the turn before the name (quirk 19)', async () => {
      const s = await threeTurns();
      await s.createBranchFromTurn(2, 'used');
      await s.switchToBranch('main');
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(9, 'used'), BranchError, NO_TURN(9, 'main'));
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(9, 'main'), BranchError, NO_TURN(9, 'main'));
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.createBranchFromTurn(-3, ' '),
        BranchError,
        'Turn number must be a non-negative integer, got -3',
      );
    });

    it('names the current branch in the missing-turn error', async () => {
      const s = await threeTurns();
      await s.createBranchFromTurn(2, 'alt');
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(3), BranchError, NO_TURN(3, 'alt'));
    });

    it('a turn whose number exists only on non-user rows does not count', async () => {
      const s = ws.open();
      await s.addItems([mk.assistant('pre')]);
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(0, 'x'), BranchError, NO_TURN(0, 'main'));
    });
  });

  describe('createBranchFromContent (§10.3, §12 a)', () => {
    it('branches from the earliest matching user turn (case-insensitive)', async () => {
      const s = ws.open({ clock: CLOCK });
      await s.addItems([mk.user('Weather in Paris?'), mk.assistant('sunny')]);
      await s.addItems([mk.user('weather in Rome?'), mk.assistant('rainy')]);
      await s.addItems([mk.user('thanks')]);
      assert.equal(await s.createBranchFromContent('WEATHER'), 'branch_from_turn_1_1700000000');
      assert.deepEqual(await s.getItems(), []);
      await s.switchToBranch('main');
      assert.equal(await s.createBranchFromContent('rome', 'r'), 'r');
      assert.equal((await s.getItems()).length, 2);
    });

    it('searches the current branch only', async () => {
      const s = ws.open();
      await s.addItems([mk.user('one'), mk.user('two'), mk.user('three')]);
      await s.createBranchFromTurn(2, 'short');
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.createBranchFromContent('three'),
        BranchError,
        "No user turns found containing 'three'",
      );
    });

    it('fails without a match, changing nothing', async () => {
      const s = await threeTurns();
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromContent('xyz'), BranchError, "No user turns found containing 'xyz'");
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.createBranchFromContent('answer'),
        BranchError,
        "No user turns found containing 'answer'",
      );
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromContent('role'), BranchError, "No user turns found containing 'role'");
    });

    it('a used name fails after the match, changing nothing', async () => {
      const s = await threeTurns();
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromContent('second', 'main'), BranchError, USED('main'));
    });
  });

  describe('switchToBranch (§10.3)', () => {
    it('moves the pointer to a branch with rows', async () => {
      const s = await threeTurns();
      await s.createBranchFromTurn(2, 'alt');
      await s.switchToBranch('main');
      assert.equal(s.getCurrentBranchId(), 'main');
      assert.equal((await s.getItems()).length, 7);
      await s.switchToBranch('alt');
      assert.equal(s.getCurrentBranchId(), 'alt');
      assert.equal((await s.getItems()).length, 4);
    });

    it('fails for an unknown branch and for main of an empty session, changing nothing', async () => {
      const s = await threeTurns();
      await failsWithoutChange(ws.path(), s, () => s.switchToBranch('nope'), BranchError, "Branch 'nope' does not exist");
      await failsWithoutChange(ws.path(), s, () => s.switchToBranch(' main'), BranchError, "Branch ' main' does not exist");
      const empty = ws.open({ sessionId: 'empty' });
      await failsWithoutChange(ws.path(), empty, () => empty.switchToBranch('main'), BranchError, "Branch 'main' does not exist");
    });

    it('adds the generation row if missing (in a write transaction)', async () => {
      const s = await threeTurns();
      execSql(ws.path(), 'DELETE FROM session_clear_generations');
      await s.switchToBranch('main');
      assert.deepEqual(query(ws.path(), 'SELECT * FROM session_clear_generations'), [{ session_id: 's1', generation: 0 }]);
    });
  });

  describe('deleteBranch (§10.3, §12 d)', () => {
    async function withAlt() {
      const s = await threeTurns();
      await s.createBranchFromTurn(3, 'alt');
      await s.addItems([mk.user('alt question'), mk.assistant('alt answer')]);
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      return s;
    }

    it('deletes the branch rows, its usage and its unshared messages; the reservation stays', async () => {
      const s = await withAlt();
      await s.switchToBranch('main');
      const mainBefore = structure(ws.path(), 's1', 'main');
      await s.deleteBranch('alt');
      assert.deepEqual(structure(ws.path(), 's1', 'alt'), []);
      assert.deepEqual(structure(ws.path(), 's1', 'main'), mainBefore);
      assert.deepEqual(query(ws.path(), 'SELECT * FROM turn_usage'), []);
      assert.deepEqual(
        query<{ id: number }>(ws.path(), 'SELECT id FROM agent_messages ORDER BY id').map((r) => r.id),
        [1, 2, 3, 4, 5, 6, 7],
      );
      assert.deepEqual(reservations(), ['main', 'alt']);
      assert.equal(s.getCurrentBranchId(), 'main');
    });

    it('trims the id', async () => {
      const s = await withAlt();
      await s.switchToBranch('main');
      await s.deleteBranch('  alt \t');
      assert.deepEqual(structure(ws.path(), 's1', 'alt'), []);
    });

    it('a name with surrounding spaces cannot be deleted by name (quirk 5)', async () => {
      const s = await threeTurns();
      await s.createBranchFromTurn(2, ' sp ');
      await s.addItems([mk.user('x')]);
      await s.switchToBranch('main');
      await failsWithoutChange(ws.path(), s, () => s.deleteBranch(' sp '), BranchError, "Branch 'sp' does not exist");
    });

    it('refuses blank ids, main and unknown branches, changing nothing', async () => {
      const s = await withAlt();
      await failsWithoutChange(ws.path(), s, () => s.deleteBranch(''), BranchError, 'Branch ID cannot be empty');
      await failsWithoutChange(ws.path(), s, () => s.deleteBranch('  '), BranchError, 'Branch ID cannot be empty');
      await failsWithoutChange(ws.path(), s, () => s.deleteBranch('main'), BranchError, "Cannot delete the 'main' branch");
      await failsWithoutChange(ws.path(), s, () => s.deleteBranch(' main ', true), BranchError, "Cannot delete the 'main' branch");
      await failsWithoutChange(ws.path(), s, () => s.deleteBranch('nope'), BranchError, "Branch 'nope' does not exist");
    });

    it('refuses the current branch without force', async () => {
      const s = await withAlt();
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.deleteBranch('alt'),
        BranchError,
        "Cannot delete current branch 'alt'. Use force=True or switch branches first",
      );
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.deleteBranch(' alt ', false),
        BranchError,
        "Cannot delete current branch 'alt'. Use force=True or switch branches first",
      );
    });

    it('with force deletes the current branch and moves to main', async () => {
      const s = await withAlt();
      await s.deleteBranch('alt', true);
      assert.equal(s.getCurrentBranchId(), 'main');
      assert.deepEqual(structure(ws.path(), 's1', 'alt'), []);
      assert.equal((await s.getItems()).length, 7);
    });

    it('§12 d: with force fails when main is empty, changing nothing (pointer included)', async () => {
      const s = ws.open();
      await s.addItems([mk.user('main only')]);
      await s.createBranchFromTurn(1, 'b');
      await s.addItems([mk.user('b one')]);
      await s.switchToBranch('main');
      await s.popItem();
      await s.switchToBranch('b');
      await failsWithoutChange(ws.path(), s, () => s.deleteBranch('b', true), BranchError, "Branch 'main' does not exist");
      assert.equal(s.getCurrentBranchId(), 'b');
      assert.equal((await s.getItems()).length, 1);
    });

    it('the current branch with force but without rows fails with "does not exist", changing nothing', async () => {
      const s = await threeTurns();
      await s.createBranchFromTurn(1, 'fresh');
      await failsWithoutChange(ws.path(), s, () => s.deleteBranch('fresh', true), BranchError, "Branch 'fresh' does not exist");
    });

    it('deleting a non-current branch ignores force', async () => {
      const s = await withAlt();
      await s.switchToBranch('main');
      await s.deleteBranch('alt', true);
      assert.equal(s.getCurrentBranchId(), 'main');
      assert.deepEqual(structure(ws.path(), 's1', 'alt'), []);
    });
  });

  describe('listBranches (§10.3)', () => {
    it('lists branches with rows: counts, user turns (copies included), createdAt, isCurrent', async () => {
      const s = await threeTurns();
      await s.createBranchFromTurn(3, 'alt');
      await s.addItems([mk.user('alt 3')]);
      execSql(ws.path(), "UPDATE message_structure SET created_at = '2024-01-01 00:00:05' WHERE branch_id = 'main'");
      execSql(ws.path(), "UPDATE message_structure SET created_at = '2024-01-01 00:00:09' WHERE branch_id = 'alt'");
      execSql(
        ws.path(),
        "UPDATE message_structure SET created_at = '2024-01-01 00:00:02' WHERE branch_id = 'main' AND sequence_number = 7",
      );
      const list = await s.listBranches();
      assert.deepEqual(list, [
        { branchId: 'main', messageCount: 7, userTurns: 3, isCurrent: false, createdAt: '2024-01-01 00:00:02' },
        { branchId: 'alt', messageCount: 7, userTurns: 3, isCurrent: true, createdAt: '2024-01-01 00:00:09' },
      ]);
      assert.deepEqual(Object.keys(list[0] ?? {}), ['branchId', 'messageCount', 'userTurns', 'isCurrent', 'createdAt']);
    });

    it('orders by earliest row time, ties by branch id (binary)', async () => {
      const s = await threeTurns();
      for (const id of ['b', 'B', 'a', 'zz']) {
        await s.createBranchFromTurn(2, id);
        await s.switchToBranch('main');
      }
      execSql(ws.path(), "UPDATE message_structure SET created_at = '2024-01-01 00:00:00'");
      assert.deepEqual(
        (await s.listBranches()).map((b) => b.branchId),
        ['B', 'a', 'b', 'main', 'zz'],
      );
      execSql(ws.path(), "UPDATE message_structure SET created_at = '2023-12-31 23:59:59' WHERE branch_id = 'zz'");
      assert.deepEqual(
        (await s.listBranches()).map((b) => b.branchId),
        ['zz', 'B', 'a', 'b', 'main'],
      );
    });

    it('is empty for a session without rows and only lists this session', async () => {
      const s = ws.open();
      const other = await threeTurns({ sessionId: 'other' });
      assert.deepEqual(await s.listBranches(), []);
      assert.equal((await other.listBranches()).length, 1);
    });
  });

  describe('clear generations across instances (§8.4)', () => {
    async function twoInstances() {
      const a = await threeTurns({ logger: { error: () => undefined, warn: () => undefined } });
      await a.createBranchFromTurn(3, 'alt');
      await a.addItems([mk.user('alt question')]);
      const b = ws.open({ createTables: false });
      return { a, b };
    }

    it("A's next listBranches drops A to main after B clears", async () => {
      const { a, b } = await twoInstances();
      await b.clearSession();
      assert.equal(a.getCurrentBranchId(), 'alt', 'the pointer is checked lazily');
      assert.deepEqual(await a.listBranches(), []);
      assert.equal(a.getCurrentBranchId(), 'main');
    });

    it("A's next getItems reads main after B clears and B writes main", async () => {
      const { a, b } = await twoInstances();
      await b.clearSession();
      await b.addItems([mk.user('fresh main')]);
      assert.deepEqual(await a.getItems(), [mk.user('fresh main')]);
      assert.equal(a.getCurrentBranchId(), 'main');
    });

    it('other default-branch reads and storeRunUsage also notice the clear', async () => {
      for (const read of [
        (s: AdvancedSQLiteSession) => s.getConversationTurns(),
        (s: AdvancedSQLiteSession) => s.getTurnUsage(),
        (s: AdvancedSQLiteSession) => s.getToolUsage(),
        (s: AdvancedSQLiteSession) => s.storeRunUsage({ state: { usage: { requests: 1 } } }),
      ]) {
        const { a, b } = await twoInstances();
        await b.clearSession();
        await read(a);
        assert.equal(a.getCurrentBranchId(), 'main', read.toString());
        a.close();
        b.close();
        ws.cleanup();
        ws = new Workspace();
      }
    });

    it("A's next write goes to main, numbered from turn 1", async () => {
      const { a, b } = await twoInstances();
      await b.clearSession();
      await a.addItems([mk.user('after clear'), mk.assistant('x')]);
      assert.equal(a.getCurrentBranchId(), 'main');
      assert.deepEqual(
        structure(ws.path()).map((r) => [r.branch_id, r.sequence_number, r.user_turn_number]),
        [
          ['main', 1, 1],
          ['main', 2, 1],
        ],
      );
    });

    it('reads do not write the generation row', async () => {
      const { a } = await twoInstances();
      execSql(ws.path(), 'DELETE FROM session_clear_generations');
      await a.getItems();
      await a.listBranches();
      assert.deepEqual(query(ws.path(), 'SELECT * FROM session_clear_generations'), []);
      assert.equal(a.getCurrentBranchId(), 'alt');
    });

    it('creation after an external clear branches from main and moves the pointer to the new branch', async () => {
      const { a, b } = await twoInstances();
      await b.clearSession();
      await b.addItems([mk.user('q1'), mk.user('q2')]);
      assert.equal(await a.createBranchFromTurn(2, 'x'), 'x');
      assert.equal(a.getCurrentBranchId(), 'x');
      assert.equal(structure(ws.path(), 's1', 'x').length, 1);
    });

    it('a switch after an external clear moves the pointer to the target at once', async () => {
      const { a, b } = await twoInstances();
      await b.clearSession();
      await b.addItems([mk.user('q1'), mk.user('q2')]);
      await b.createBranchFromTurn(2, 'y');
      await a.switchToBranch('y');
      assert.equal(a.getCurrentBranchId(), 'y');
    });

    it("a clear of another session does not move A's pointer", async () => {
      const { a } = await twoInstances();
      const other = await threeTurns({ sessionId: 'other' });
      await other.clearSession();
      await a.listBranches();
      assert.equal(a.getCurrentBranchId(), 'alt');
    });
  });
});
