/**
 * Items of an AdvancedSQLiteSession: stored encoding (spec §5), numbering (§7), and the Session interface methods
 * getItems / addItems / popItem / clearSession (§10.1), plus the closed-instance errors (§11).
 */
import { strict as assert } from 'node:assert';
import { InvalidArgumentError, SessionClosedError, SessionError } from '../../../../src/store';
import {
  Workspace,
  captureLogger,
  execSql,
  failsWithoutChange,
  mk,
  query,
  rejectsWith,
  structure,
  tables,
} from '../../../support/sessionHelpers';

describe('AdvancedSQLiteSession items', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace()));
  afterEach(() => ws.cleanup());

  const messageData = () =>
    query<{ message_data: string }>(ws.path(), 'SELECT message_data FROM agent_messages ORDER BY id').map((r) => r.message_data);

  describe('JSON encoding in message_data (§5)', () => {
    it('stores the spec example exactly', async () => {
      const s = ws.open();
      await s.addItems([mk.raw({ content: 'Convert 22°C to Fahrenheit', role: 'user' })]);
      assert.deepEqual(messageData(), ['{"content": "Convert 22\\u00b0C to Fahrenheit", "role": "user"}']);
    });

    it('keeps key order, escapes astral characters as surrogate pairs, drops undefined, writes Python numbers', async () => {
      const s = ws.open();
      await s.addItems([
        mk.raw({
          role: 'user',
          content: 'smile 😀 a/b "q" \\ \n\u0001\u007f',
          extra: undefined,
          n: 1.0,
          small: 0.00001,
          x: [undefined, NaN, Infinity, true, null],
        }),
      ]);
      assert.deepEqual(messageData(), [
        '{"role": "user", "content": "smile \\ud83d\\ude00 a/b \\"q\\" \\\\ \\n\\u0001\\u007f", "n": 1, "small": 1e-05, "x": [null, NaN, Infinity, true, null]}',
      ]);
      // And it decodes back (NaN / Infinity are valid on read).
      const [item] = (await s.getItems()) as unknown as Record<string, unknown>[];
      assert.deepEqual((item as { x: unknown[] }).x, [null, NaN, Infinity, true, null]);
      assert.equal((item as { content: string }).content, 'smile 😀 a/b "q" \\ \n\u0001\u007f');
    });

    it('a BigInt anywhere rejects the whole batch before anything, even the sessions row, is written', async () => {
      const s = ws.open();
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.addItems([mk.user('fine'), mk.raw({ type: 'function_call', name: 'x', big: 10n })]),
        InvalidArgumentError,
        'Object of type bigint is not JSON serializable',
      );
      assert.deepEqual(query(ws.path(), 'SELECT * FROM agent_sessions'), []);
    });

    it('a cycle rejects the whole batch before anything is written', async () => {
      const s = ws.open();
      await s.addItems([mk.user('existing')]);
      const cyclic: Record<string, unknown> = { role: 'user', content: 'loop' };
      cyclic.self = { inner: cyclic };
      const err = await rejectsWith(() => s.addItems([mk.user('a'), mk.raw(cyclic)]), InvalidArgumentError, 'Circular reference detected');
      assert.equal((err as SessionError).pythonType, 'TypeError');
      assert.deepEqual(messageData(), ['{"role": "user", "content": "existing"}']);
      assert.equal(structure(ws.path()).length, 1);
    });
  });

  describe('numbering (§7)', () => {
    it('numbers sequence session-wide across branches and turns per branch', async () => {
      const s = ws.open();
      await s.addItems([mk.user('u1'), mk.assistant('a1'), mk.user('u2'), mk.assistant('a2')]);
      await s.createBranchFromTurn(2, 'b');
      await s.addItems([mk.user('b2'), mk.assistant('b2a')]);
      await s.switchToBranch('main');
      await s.addItems([mk.user('u3')]);
      const rows = structure(ws.path()).map((r) => [
        r.branch_id,
        r.sequence_number,
        r.user_turn_number,
        r.branch_turn_number,
        r.message_type,
      ]);
      assert.deepEqual(rows, [
        ['main', 1, 1, 1, 'user'],
        ['main', 2, 1, 1, 'assistant'],
        ['main', 3, 2, 2, 'user'],
        ['main', 4, 2, 2, 'assistant'],
        ['b', 5, 1, 1, 'user'],
        ['b', 6, 1, 1, 'assistant'],
        // After branching from turn N the next user message is turn N.
        ['b', 7, 2, 2, 'user'],
        ['b', 8, 2, 2, 'assistant'],
        ['main', 9, 3, 3, 'user'],
      ]);
      // Row ids are write order; message rows come before structure rows of a batch.
      assert.deepEqual(
        structure(ws.path()).map((r) => r.id),
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
      );
    });

    it('several user messages in one batch open consecutive turns; other items join the latest', async () => {
      const s = ws.open();
      await s.addItems([mk.user('a'), mk.user('b'), mk.call('f'), mk.output(), mk.user('c'), mk.assistant('x')]);
      assert.deepEqual(
        structure(ws.path()).map((r) => [r.sequence_number, r.user_turn_number, r.branch_turn_number]),
        [
          [1, 1, 1],
          [2, 2, 2],
          [3, 2, 2],
          [4, 2, 2],
          [5, 3, 3],
          [6, 3, 3],
        ],
      );
      await s.addItems([mk.assistant('more')]);
      await s.addItems([mk.user('d')]);
      assert.deepEqual(
        structure(ws.path())
          .slice(6)
          .map((r) => [r.sequence_number, r.user_turn_number]),
        [
          [7, 3],
          [8, 4],
        ],
      );
    });

    it('items before any user message on an empty branch are turn 0', async () => {
      const s = ws.open();
      await s.addItems([mk.raw({ role: 'system', content: 'be nice' }), mk.assistant('hello')]);
      await s.addItems([mk.call('f'), mk.user('q'), mk.assistant('r')]);
      assert.deepEqual(
        structure(ws.path()).map((r) => [r.message_type, r.user_turn_number, r.branch_turn_number]),
        [
          ['other', 0, 0],
          ['assistant', 0, 0],
          ['function_call', 0, 0],
          ['user', 1, 1],
          ['assistant', 1, 1],
        ],
      );
    });

    it('restarts sequence numbers and turns after clearSession while row ids continue', async () => {
      const s = ws.open();
      await s.addItems([mk.user('u1'), mk.assistant('a1'), mk.user('u2')]);
      await s.clearSession();
      await s.addItems([mk.user('again'), mk.assistant('x')]);
      const rows = structure(ws.path());
      assert.deepEqual(
        rows.map((r) => [r.id, r.message_id, r.sequence_number, r.user_turn_number]),
        [
          [4, 4, 1, 1],
          [5, 5, 2, 1],
        ],
      );
      assert.deepEqual(query(ws.path(), 'SELECT name, seq FROM sqlite_sequence ORDER BY name'), [
        { name: 'agent_messages', seq: 5 },
        { name: 'message_structure', seq: 5 },
      ]);
    });

    it('numbers correctly when two instances on one file and session write alternately', async () => {
      const a = ws.open();
      const b = ws.open({ createTables: false });
      await a.addItems([mk.user('a1')]); // turn 1
      await b.addItems([mk.user('b1')]); // turn 2
      await a.addItems([mk.assistant('a after b')]); // joins turn 2
      await b.addItems([mk.assistant('b')]); // turn 2
      await a.addItems([mk.user('a2')]); // turn 3
      await a.addItems([mk.assistant('a3')]); // turn 3 (cache path)
      await b.addItems([mk.call('f'), mk.user('b3')]); // turn 3, then 4
      await a.addItems([mk.assistant('a4')]); // turn 4
      await b.popItem(); // removes a4
      await b.popItem(); // removes b3 (turn 4 gone)
      await a.addItems([mk.assistant('a after pops')]); // turn 3
      await a.addItems([mk.user('a5')]); // turn 4
      assert.deepEqual(
        structure(ws.path()).map((r) => [r.sequence_number, r.user_turn_number, r.branch_turn_number, r.message_type]),
        [
          [1, 1, 1, 'user'],
          [2, 2, 2, 'user'],
          [3, 2, 2, 'assistant'],
          [4, 2, 2, 'assistant'],
          [5, 3, 3, 'user'],
          [6, 3, 3, 'assistant'],
          [7, 3, 3, 'function_call'],
          // The session's largest sequence number is 7 again after the pops.
          [8, 3, 3, 'assistant'],
          [9, 4, 4, 'user'],
        ],
      );
    });

    it('numbers correctly when another instance writes a turn that does not change the user-turn maximum', async () => {
      const a = ws.open();
      const b = ws.open({ createTables: false });
      await a.addItems([mk.user('1'), mk.user('2')]);
      // Another writer rewrites the branch so its turn maxima differ while MAX(user_turn_number) stays 2.
      await b.addItems([mk.assistant('x')]);
      execSql(ws.path(), "UPDATE message_structure SET branch_turn_number = 7 WHERE message_type = 'assistant'");
      await a.addItems([mk.user('3')]);
      const last = structure(ws.path()).at(-1);
      assert.deepEqual([last?.user_turn_number, last?.branch_turn_number], [3, 8]);
    });
  });

  describe('getItems (§10.1)', () => {
    async function five() {
      const s = ws.open();
      await s.addItems([mk.user('1'), mk.assistant('2'), mk.user('3'), mk.assistant('4'), mk.user('5')]);
      return s;
    }
    const contents = (items: unknown[]) =>
      items.map((i) => {
        const it = i as { content: unknown };
        return typeof it.content === 'string' ? it.content : (it.content as { text: string }[])[0]?.text;
      });

    it('returns all items in sequence order by default, and with a negative limit', async () => {
      const s = await five();
      assert.deepEqual(contents(await s.getItems()), ['1', '2', '3', '4', '5']);
      assert.deepEqual(contents(await s.getItems(-1)), ['1', '2', '3', '4', '5']);
      assert.deepEqual(contents(await s.getItems(-7)), ['1', '2', '3', '4', '5']);
      assert.deepEqual(contents(await s.getItems(null as unknown as number)), ['1', '2', '3', '4', '5']);
    });

    it('returns the newest `limit` items oldest first, [] for 0', async () => {
      const s = await five();
      assert.deepEqual(contents(await s.getItems(2)), ['4', '5']);
      assert.deepEqual(contents(await s.getItems(1)), ['5']);
      assert.deepEqual(contents(await s.getItems(99)), ['1', '2', '3', '4', '5']);
      assert.deepEqual(await s.getItems(0), []);
    });

    it('uses sessionSettings.limit when no limit is passed, and an explicit limit over it', async () => {
      await (await five()).close();
      const s = ws.open({ createTables: false, sessionSettings: { limit: 3 } });
      assert.deepEqual(contents(await s.getItems()), ['3', '4', '5']);
      assert.deepEqual(contents(await s.getItems(1)), ['5']);
      assert.deepEqual(contents(await s.getItems(-1)), ['1', '2', '3', '4', '5']);
      assert.deepEqual(await s.getItems(0), []);
      const zero = ws.open({ createTables: false, sessionSettings: { limit: 0 } });
      assert.deepEqual(await zero.getItems(), []);
    });

    it('skips corrupt rows silently and still returns `limit` valid items', async () => {
      const s = await five();
      execSql(ws.path(), "UPDATE agent_messages SET message_data = '{not json' WHERE id IN (2, 5)");
      assert.deepEqual(contents(await s.getItems()), ['1', '3', '4']);
      assert.deepEqual(contents(await s.getItems(2)), ['3', '4']);
      assert.deepEqual(contents(await s.getItems(3)), ['1', '3', '4']);
    });

    it('reads a BLOB message_data as UTF-8 JSON on either driver, in every read of items', async () => {
      // Another writer may store bytes. Python's json.loads takes them, and better-sqlite3's Buffer stringified as
      // their text; node:sqlite's Uint8Array did not, so the row vanished there from getItems and the turn list.
      const s = await five();
      execSql(ws.path(), 'UPDATE agent_messages SET message_data = CAST(message_data AS BLOB) WHERE id IN (3, 4)');
      execSql(
        ws.path(),
        'UPDATE agent_messages SET message_data = CAST(\'{"content": "caf\u00e9 ☕", "role": "user"}\' AS BLOB) WHERE id = 5',
      );
      assert.deepEqual(
        query<{ t: string }>(ws.path(), 'SELECT typeof(message_data) AS t FROM agent_messages ORDER BY id').map((r) => r.t),
        ['text', 'text', 'blob', 'blob', 'blob'],
      );
      assert.deepEqual(contents(await s.getItems()), ['1', '2', '3', '4', 'café ☕']);
      assert.deepEqual(contents(await s.getItems(3)), ['3', '4', 'café ☕']);
      assert.deepEqual(
        (await s.getConversationTurns()).map((t) => t.content),
        ['1', '3', 'café ☕'],
      );
      assert.equal(await s.getLatestTurnNumber(), 3);
      assert.deepEqual(
        (await s.findTurnsByContent('3')).map((t) => t.turn),
        [2],
      );
      assert.deepEqual(contents(await s.getTurnStoredItems(2)), ['3', '4']);
      assert.equal(contents([await s.popItem()])[0], 'café ☕');
    });

    it('decodes any top-level JSON value, NaN included', async () => {
      const s = await five();
      execSql(ws.path(), "UPDATE agent_messages SET message_data = '[1, NaN, -Infinity]' WHERE id = 1");
      execSql(ws.path(), 'UPDATE agent_messages SET message_data = \'"text"\' WHERE id = 2');
      const items = (await s.getItems()) as unknown[];
      assert.deepEqual(items.slice(0, 2), [[1, NaN, -Infinity], 'text']);
    });

    it('reads an explicit branch, and an unknown branch gives []', async () => {
      const s = await five();
      await s.createBranchFromTurn(2, 'b');
      assert.deepEqual(contents(await s.getItems()), ['1', '2']);
      assert.deepEqual(contents(await s.getItems(undefined, 'main')), ['1', '2', '3', '4', '5']);
      assert.deepEqual(contents(await s.getItems(1, 'main')), ['5']);
      assert.deepEqual(await s.getItems(undefined, 'nope'), []);
      // null counts as omitted: the current branch.
      assert.deepEqual(contents(await s.getItems(null as unknown as number, null as unknown as string)), ['1', '2']);
    });

    it('only sees its own session', async () => {
      const s = await five();
      const other = ws.open({ sessionId: 'other' });
      await other.addItems([mk.user('mine')]);
      assert.deepEqual(contents(await other.getItems()), ['mine']);
      assert.equal((await s.getItems()).length, 5);
    });
  });

  describe('addItems (§10.1)', () => {
    it('[] touches nothing (not even the sessions row)', async () => {
      const s = ws.open();
      const before = tables(ws.path());
      await s.addItems([]);
      assert.deepEqual(tables(ws.path()), before);
    });

    it('adds the sessions row once, message rows in order and structure rows on the current branch; never reserves', async () => {
      const s = ws.open({ sessionId: 'sx' });
      await s.addItems([mk.user('a'), mk.call('get_weather')]);
      await s.addItems([mk.output()]);
      assert.deepEqual(query(ws.path(), 'SELECT session_id FROM agent_sessions'), [{ session_id: 'sx' }]);
      assert.deepEqual(
        query(ws.path(), 'SELECT id, session_id FROM agent_messages ORDER BY id'),
        [1, 2, 3].map((id) => ({ id, session_id: 'sx' })),
      );
      assert.deepEqual(
        structure(ws.path(), 'sx').map((r) => [r.message_id, r.branch_id, r.message_type, r.tool_name]),
        [
          [1, 'main', 'user', null],
          [2, 'main', 'function_call', 'get_weather'],
          [3, 'main', 'function_call_output', null],
        ],
      );
      assert.deepEqual(query(ws.path(), 'SELECT * FROM branch_reservations'), []);
    });

    it('moves agent_sessions.updated_at', async () => {
      const s = ws.open();
      await s.addItems([mk.user('a')]);
      execSql(ws.path(), "UPDATE agent_sessions SET updated_at = '2000-01-01 00:00:00', created_at = '2000-01-01 00:00:00'");
      await s.addItems([mk.user('b')]);
      const [row] = query<{ created_at: string; updated_at: string }>(ws.path(), 'SELECT created_at, updated_at FROM agent_sessions');
      assert.equal(row?.created_at, '2000-01-01 00:00:00');
      assert.match(row?.updated_at ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      assert.notEqual(row?.updated_at, '2000-01-01 00:00:00');
    });

    it('only addItems moves updated_at (quirk 18)', async () => {
      const s = ws.open();
      await s.addItems([mk.user('a'), mk.assistant('b'), mk.user('c')]);
      execSql(ws.path(), "UPDATE agent_sessions SET updated_at = '2000-01-01 00:00:00'");
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      await s.createBranchFromTurn(2, 'b');
      await s.switchToBranch('main');
      await s.popItem();
      await s.deleteBranch('b');
      await s.getItems();
      assert.deepEqual(query(ws.path(), 'SELECT updated_at FROM agent_sessions'), [{ updated_at: '2000-01-01 00:00:00' }]);
    });
  });

  describe('popItem (§10.1)', () => {
    it('returns undefined on an empty branch and changes nothing', async () => {
      const s = ws.open();
      const before = tables(ws.path());
      assert.equal(await s.popItem(), undefined);
      assert.deepEqual(tables(ws.path()), before);
    });

    it('returns and removes the newest item of the current branch; agent_sessions is untouched', async () => {
      const s = ws.open();
      await s.addItems([mk.user('1'), mk.assistant('2')]);
      const sessionsBefore = tables(ws.path()).agent_sessions;
      assert.deepEqual(await s.popItem(), mk.assistant('2'));
      assert.deepEqual(await s.getItems(), [mk.user('1')]);
      assert.deepEqual(query(ws.path(), 'SELECT id FROM agent_messages'), [{ id: 1 }]);
      assert.deepEqual(await s.popItem(), mk.user('1'));
      assert.equal(await s.popItem(), undefined);
      assert.deepEqual(tables(ws.path()).agent_sessions, sessionsBefore);
    });

    it('skips and deletes corrupt and missing messages, then returns the next valid one', async () => {
      const s = ws.open();
      await s.addItems([mk.user('1'), mk.assistant('2'), mk.assistant('3'), mk.assistant('4')]);
      execSql(ws.path(), "UPDATE agent_messages SET message_data = 'garbage' WHERE id = 4");
      execSql(ws.path(), 'DELETE FROM agent_messages WHERE id = 3');
      assert.deepEqual(await s.popItem(), mk.assistant('2'));
      assert.deepEqual(
        structure(ws.path()).map((r) => r.message_id),
        [1],
      );
      assert.deepEqual(query(ws.path(), 'SELECT id FROM agent_messages'), [{ id: 1 }]);
    });

    it('returns undefined when only corrupt rows are left, deleting them', async () => {
      const s = ws.open();
      await s.addItems([mk.user('1')]);
      execSql(ws.path(), "UPDATE agent_messages SET message_data = 'garbage'");
      assert.equal(await s.popItem(), undefined);
      assert.deepEqual(structure(ws.path()), []);
      assert.deepEqual(query(ws.path(), 'SELECT * FROM agent_messages'), []);
    });

    it('deletes the turn usage only when the turn has no rows left', async () => {
      const s = ws.open();
      await s.addItems([mk.user('1'), mk.assistant('1a')]);
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 } } });
      await s.addItems([mk.user('2'), mk.assistant('2a')]);
      await s.storeRunUsage({ state: { usage: { requests: 2, inputTokens: 1, outputTokens: 1, totalTokens: 2 } } });
      const turns = () =>
        query<{ user_turn_number: number }>(ws.path(), 'SELECT user_turn_number FROM turn_usage ORDER BY user_turn_number').map(
          (r) => r.user_turn_number,
        );
      await s.popItem();
      assert.deepEqual(turns(), [1, 2]);
      await s.popItem();
      assert.deepEqual(turns(), [1]);
      await s.popItem();
      assert.deepEqual(turns(), [1]);
      await s.popItem();
      assert.deepEqual(turns(), []);
    });

    it('shared messages survive the orphan cleanup; other sessions are untouched', async () => {
      const s = ws.open();
      const other = ws.open({ sessionId: 'other' });
      await other.addItems([mk.user('other')]);
      await s.addItems([mk.user('1'), mk.assistant('1a'), mk.user('2')]);
      await s.createBranchFromTurn(2, 'b');
      assert.deepEqual(await s.popItem(), mk.assistant('1a'));
      assert.deepEqual(await s.popItem(), mk.user('1'));
      assert.equal(await s.popItem(), undefined);
      await s.switchToBranch('main');
      assert.deepEqual(await s.getItems(), [mk.user('1'), mk.assistant('1a'), mk.user('2')]);
      assert.deepEqual(await other.getItems(), [mk.user('other')]);
      assert.equal(query(ws.path(), 'SELECT * FROM agent_messages').length, 4);
    });

    it('runs the backfill (main is reserved by a pop)', async () => {
      const s = ws.open();
      await s.addItems([mk.user('1'), mk.user('2')]);
      await s.popItem();
      assert.deepEqual(query(ws.path(), 'SELECT session_id, branch_id FROM branch_reservations'), [
        { session_id: 's1', branch_id: 'main' },
      ]);
    });
  });

  describe('clearSession (§10.1)', () => {
    it('deletes every branch, message, usage row and the sessions row, bumps the generation and keeps reservations', async () => {
      const s = ws.open();
      const other = ws.open({ sessionId: 'other' });
      await other.addItems([mk.user('keep me')]);
      await s.addItems([mk.user('1'), mk.assistant('1a'), mk.user('2')]);
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      await s.createBranchFromTurn(2, 'b');
      await s.addItems([mk.user('b2')]);
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      await s.clearSession();
      assert.equal(s.getCurrentBranchId(), 'main');
      assert.deepEqual(query(ws.path(), "SELECT * FROM message_structure WHERE session_id = 's1'"), []);
      assert.deepEqual(query(ws.path(), "SELECT * FROM agent_messages WHERE session_id = 's1'"), []);
      assert.deepEqual(query(ws.path(), "SELECT * FROM turn_usage WHERE session_id = 's1'"), []);
      assert.deepEqual(query(ws.path(), 'SELECT session_id FROM agent_sessions'), [{ session_id: 'other' }]);
      assert.deepEqual(query(ws.path(), 'SELECT * FROM session_clear_generations ORDER BY session_id'), [
        { session_id: 'other', generation: 0 },
        { session_id: 's1', generation: 1 },
      ]);
      assert.deepEqual(query(ws.path(), "SELECT branch_id FROM branch_reservations WHERE session_id = 's1' ORDER BY branch_id"), [
        { branch_id: 'b' },
        { branch_id: 'main' },
      ]);
      assert.deepEqual(await other.getItems(), [mk.user('keep me')]);
      await rejectsWith(() => s.createBranchFromTurn(1, 'b'), Error, /does not contain a user message/);
      await s.addItems([mk.user('new')]);
      await rejectsWith(() => s.createBranchFromTurn(1, 'b'), Error, "Branch ID 'b' has already been used. Choose a new branch ID.");
      await s.clearSession();
      assert.deepEqual(query(ws.path(), "SELECT generation FROM session_clear_generations WHERE session_id = 's1'"), [{ generation: 2 }]);
    });

    it('works on a session without rows', async () => {
      const s = ws.open();
      await s.clearSession();
      assert.deepEqual(query(ws.path(), 'SELECT * FROM session_clear_generations'), [{ session_id: 's1', generation: 1 }]);
    });
  });

  describe('closed instance (§10, §11)', () => {
    it('every §10 method throws SessionClosedError, addItems([]) too; getSessionId, getCurrentBranchId, close still work', async () => {
      const logger = captureLogger();
      const s = ws.open({ sessionId: 'closed-one', logger });
      await s.addItems([mk.user('1')]);
      await s.createBranchFromTurn(1, 'b');
      s.close();
      s.close();
      const calls: [string, () => unknown][] = [
        ['getItems', () => s.getItems()],
        ['getItems(1, main)', () => s.getItems(1, 'main')],
        ['addItems', () => s.addItems([mk.user('x')])],
        ['addItems([])', () => s.addItems([])],
        ['popItem', () => s.popItem()],
        ['clearSession', () => s.clearSession()],
        ['getSessionUsage', () => s.getSessionUsage()],
        ['getTurnUsage()', () => s.getTurnUsage()],
        ['getTurnUsage(1)', () => s.getTurnUsage(1)],
        ['getConversationTurns', () => s.getConversationTurns()],
        ['getConversationByTurns', () => s.getConversationByTurns()],
        ['getToolUsage', () => s.getToolUsage()],
        ['findTurnsByContent', () => s.findTurnsByContent('1')],
        ['createBranchFromTurn', () => s.createBranchFromTurn(1, 'c')],
        ['createBranchFromTurn(bad args)', () => s.createBranchFromTurn(-1, ' ')],
        ['createBranchFromContent', () => s.createBranchFromContent('1', 'c')],
        ['createBranchFromContent(blank)', () => s.createBranchFromContent('1', '  ')],
        ['switchToBranch', () => s.switchToBranch('main')],
        ['deleteBranch', () => s.deleteBranch('x')],
        ['deleteBranch(current, force)', () => s.deleteBranch('b', true)],
        ['listBranches', () => s.listBranches()],
      ];
      for (const [name, call] of calls) {
        const err = await rejectsWith(call, SessionClosedError, 'SQLiteSession is closed').catch((e: Error) => {
          throw new Error(`${name}: ${e.message}`);
        });
        assert.equal((err as SessionError).pythonType, 'RuntimeError', name);
        assert.ok(err instanceof SessionError, name);
      }
      assert.equal(await s.getSessionId(), 'closed-one');
      assert.equal(s.sessionId, 'closed-one');
      assert.equal(s.getCurrentBranchId(), 'b');
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.equal(logger.errors.length, 1);
      assert.equal(logger.errors[0]?.message, 'Failed to store session usage');
    });

    it("deleteBranch's argument checks come before the closed check", async () => {
      const s = ws.open();
      s.close();
      await rejectsWith(() => s.deleteBranch(''), Error, 'Branch ID cannot be empty');
      await rejectsWith(() => s.deleteBranch('   '), Error, 'Branch ID cannot be empty');
      await rejectsWith(() => s.deleteBranch(' main '), Error, "Cannot delete the 'main' branch");
    });
  });
});
