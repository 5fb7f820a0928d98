/**
 * Behaviour that must match the Python SDK 0.22.0, or differ from it exactly as the format spec's §12 says: a stale
 * clear generation never blocks a move (§8.4), the plain session's popItem skips corrupt rows as Python does, limits
 * are integers (§12 i), names with control characters are refused (§12 f), writing to a branch another connection
 * deleted is an error (§12 g), and argument errors say what they got.
 */
import { strict as assert } from 'node:assert';
import {
  AdvancedSQLiteSession,
  BranchError,
  InvalidArgumentError,
  SQLiteSession,
  TableOwnershipError,
  openDatabase,
} from '../../../src/store';
import { Workspace, execSql, failsWithoutChange, mk, query, rejectsWith, structure, tables } from '../../support/sessionHelpers';

const DELETED = (id: string) => `Branch '${id}' was deleted by another connection; switch to an existing branch`;
const CONTROL = 'Branch ID cannot contain control characters';

describe('Python parity and the §12 differences', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-parity-')));
  afterEach(() => ws.cleanup());

  /** s1 on main: turns 1–3 (user + assistant each). */
  async function threeTurns(options: Parameters<Workspace['open']>[0] = {}): Promise<AdvancedSQLiteSession> {
    const s = ws.open(options);
    await s.addItems([mk.user('q1'), mk.assistant('a1'), mk.user('q2'), mk.assistant('a2'), mk.user('q3'), mk.assistant('a3')]);
    return s;
  }

  describe('§8.4: a stale clear generation never blocks a switch or a creation', () => {
    it("switchToBranch moves A to a branch B created after clearing, and A's next addItems lands there", async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(2, 'alt');
      await a.addItems([mk.user('alt question')]);
      const b = ws.open({ createTables: false });
      await b.clearSession();
      await b.addItems([mk.user('new 1'), mk.user('new 2')]);
      await b.createBranchFromTurn(2, 'fresh');
      await b.addItems([mk.user('fresh question')]);

      await a.switchToBranch('fresh');
      assert.equal(a.getCurrentBranchId(), 'fresh', 'the switch resolved, so A must be on fresh');
      await a.addItems([mk.user('from A')]);
      assert.deepEqual(await b.getItems(null, 'fresh'), [mk.user('new 1'), mk.user('fresh question'), mk.user('from A')]);
      assert.deepEqual(await b.getItems(null, 'main'), [mk.user('new 1'), mk.user('new 2')], 'nothing landed on main');
    });

    it("createBranchFromTurn after another instance's clear branches from main and ends on the new branch", async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(3, 'alt');
      const b = ws.open({ createTables: false });
      await b.clearSession();
      await b.addItems([mk.user('n1'), mk.assistant('r1'), mk.user('n2')]);

      assert.equal(await a.createBranchFromTurn(2, 'second'), 'second');
      assert.equal(a.getCurrentBranchId(), 'second');
      await a.addItems([mk.user('on second')]);
      assert.deepEqual(await a.getItems(), [mk.user('n1'), mk.assistant('r1'), mk.user('on second')]);
      assert.deepEqual(await b.getItems(), [mk.user('n1'), mk.assistant('r1'), mk.user('n2')], 'main is untouched');
    });

    it('an auto-named creation after an external clear also ends on the new branch', async () => {
      const a = await threeTurns({ clock: () => 1700000000 });
      await a.createBranchFromTurn(3, 'alt');
      const b = ws.open({ createTables: false });
      await b.clearSession();
      await b.addItems([mk.user('n1'), mk.user('n2')]);
      const id = await a.createBranchFromTurn(2);
      assert.equal(id, 'branch_from_turn_2_1700000000');
      assert.equal(a.getCurrentBranchId(), id);
    });

    it('a failed switch after an external clear leaves A on main (the clear was real) and writes nothing', async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(3, 'alt');
      const b = ws.open({ createTables: false });
      await b.clearSession();
      await rejectsWith(() => a.switchToBranch('nowhere'), BranchError, "Branch 'nowhere' does not exist");
      assert.equal(a.getCurrentBranchId(), 'main');
    });
  });

  describe('SQLiteSession.popItem skips corrupt rows as Python 0.22.0 does', () => {
    function plain(): SQLiteSession {
      return ws.track(new SQLiteSession({ sessionId: 'p', dbPath: ws.path() }));
    }
    const messages = () =>
      query<{ message_data: string }>(ws.path(), "SELECT message_data FROM agent_messages WHERE session_id = 'p' ORDER BY id").map(
        (r) => r.message_data,
      );

    it('deletes the corrupt newest rows and pops the next valid item', async () => {
      const s = plain();
      await s.addItems([mk.user('first'), mk.user('second')]);
      execSql(ws.path(), "INSERT INTO agent_messages (session_id, message_data) VALUES ('p', '{not json'), ('p', '')");
      assert.deepEqual(await s.popItem(), mk.user('second'));
      assert.deepEqual(messages(), ['{"role": "user", "content": "first"}'], 'the corrupt rows are gone, as in Python');
      assert.deepEqual(await s.popItem(), mk.user('first'));
      assert.equal(await s.popItem(), undefined);
    });

    it('returns undefined when only corrupt rows are left, and deletes them', async () => {
      const s = plain();
      execSql(ws.path(), "INSERT INTO agent_sessions (session_id) VALUES ('p')");
      execSql(ws.path(), "INSERT INTO agent_messages (session_id, message_data) VALUES ('p', 'nope'), ('p', '[1,')");
      assert.equal(await s.popItem(), undefined);
      assert.deepEqual(messages(), []);
    });

    it('leaves other sessions alone', async () => {
      const s = plain();
      const other = ws.track(new SQLiteSession({ sessionId: 'q', dbPath: ws.path() }));
      await other.addItems([mk.user('other')]);
      await s.addItems([mk.user('mine')]);
      execSql(ws.path(), "INSERT INTO agent_messages (session_id, message_data) VALUES ('p', '{bad')");
      assert.deepEqual(await s.popItem(), mk.user('mine'));
      assert.deepEqual(await other.getItems(), [mk.user('other')]);
    });

    it('matches AdvancedSQLiteSession, which skips the same corrupt row', async () => {
      const s = await threeTurns();
      execSql(ws.path(), "UPDATE agent_messages SET message_data = '{broken' WHERE id = (SELECT MAX(id) FROM agent_messages)");
      assert.deepEqual(await s.popItem(), mk.user('q3'));
    });
  });

  describe('§12 i: limits are integers, null or undefined', () => {
    const bad: [unknown, string][] = [
      ['5', "'5' (string)"],
      [2n, '2n (bigint)'],
      [1.5, '1.5'],
      [NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [-Infinity, '-Infinity'],
      [true, 'true (boolean)'],
      [{}, 'an object'],
    ];

    it('getItems(limit) rejects anything else with InvalidArgumentError, on both session classes', async () => {
      const s = await threeTurns();
      const p = ws.track(new SQLiteSession({ sessionId: 'p', dbPath: ws.path() }));
      for (const [value, shown] of bad) {
        for (const session of [s, p]) {
          await rejectsWith(
            () => session.getItems(value as number),
            InvalidArgumentError,
            `limit must be an integer, null or undefined, got ${shown}`,
          );
        }
      }
    });

    it('sessionSettings.limit rejects the same values at construction', () => {
      for (const [value, shown] of bad) {
        for (const make of [
          () => new AdvancedSQLiteSession({ sessionId: 's1', createTables: true, sessionSettings: { limit: value as number } }),
          () => new SQLiteSession({ sessionId: 's1', sessionSettings: { limit: value as number } }),
        ]) {
          assert.throws(make, (err: unknown) => {
            assert.ok(err instanceof InvalidArgumentError, String(err));
            assert.equal(err.message, `sessionSettings.limit must be an integer, null or undefined, got ${shown}`);
            return true;
          });
        }
      }
    });

    it('integers keep their Python meaning: negative → all, 0 → [], n → newest n; null/undefined → the setting', async () => {
      const s = await threeTurns();
      const all = await s.getItems();
      assert.equal(all.length, 6);
      assert.deepEqual(await s.getItems(-1), all);
      assert.deepEqual(await s.getItems(0), []);
      assert.deepEqual(await s.getItems(2), all.slice(4));
      assert.deepEqual(await s.getItems(null), all);
      assert.deepEqual(await s.getItems(undefined), all);
      const limited = ws.open({ createTables: false, sessionSettings: { limit: 1 } });
      assert.deepEqual(await limited.getItems(), all.slice(5));
      assert.deepEqual(await limited.getItems(null), all.slice(5));
      assert.deepEqual(await limited.getItems(-5), all);
    });
  });

  describe('§12 f: a new branch id with a control character is refused before anything is written', () => {
    const names = ['a\u0000b', '\u0000', 'tab\there', 'line\nbreak', 'x\u001f', 'del\u007f', 'c1\u0080', 'nel\u0085', 'x\u009f'];

    it('createBranchFromTurn and createBranchFromContent throw BranchError', async () => {
      const s = await threeTurns();
      for (const name of names) {
        await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(2, name), BranchError, CONTROL);
        await failsWithoutChange(ws.path(), s, () => s.createBranchFromContent('q2', name), BranchError, CONTROL);
      }
    });

    it('checks the name before the turn, and blank names stay "cannot be empty"', async () => {
      const s = await threeTurns();
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(9, 'a\u0000'), BranchError, CONTROL);
      await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(2, '\t\n'), BranchError, 'Branch ID cannot be empty');
    });

    it('half of a character (a lone surrogate) is refused too; a whole one outside the BMP is accepted', async () => {
      const s = await threeTurns();
      const HALF = 'Branch ID cannot contain half of a character (a lone UTF-16 surrogate)';
      for (const name of ['b\ud800', '\udc00x', 'x\ud83d', 'y\ude00z']) {
        await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(2, name), BranchError, HALF);
        await failsWithoutChange(ws.path(), s, () => s.createBranchFromContent('q2', name), BranchError, HALF);
      }
      assert.equal(await s.createBranchFromTurn(2, 'emoji 😀'), 'emoji 😀');
      // A session id with half a character: Python's sqlite3 could read no session id of the file after it.
      assert.throws(
        () => ws.open({ sessionId: 's\ud800' }),
        (e: unknown) => e instanceof InvalidArgumentError && /half of a character/.test(e.message),
      );
      assert.throws(() => new SQLiteSession({ sessionId: '\udfffs', dbPath: ws.path() }), InvalidArgumentError);
    });

    it('invisible and direction-changing characters are refused; the joiners emoji need are accepted', async () => {
      const s = await threeTurns();
      const HIDDEN = 'Branch ID cannot contain invisible or direction-changing characters (a zero-width space, a bidi control)';
      for (const name of ['main\u200b', 'ma\u2060in', 'fix\u202egnp.exe', '\u2066main\u2069', '\ufeffalt', 'rtl\u200f'])
        await failsWithoutChange(ws.path(), s, () => s.createBranchFromTurn(2, name), BranchError, HIDDEN);
      assert.equal(await s.createBranchFromTurn(2, 'family 👨\u200d👩\u200d👧'), 'family 👨\u200d👩\u200d👧');
    });

    it('characters next to the control ranges are accepted', async () => {
      const s = await threeTurns();
      for (const [i, name] of ['nbsp\u00a0x', 'space x', '~', 'line\u2028sep', 'é'].entries()) {
        if (i > 0) await s.switchToBranch('main');
        assert.equal(await s.createBranchFromTurn(2, name), name);
      }
    });
  });

  describe('§12 g: writing to a branch another connection deleted', () => {
    it("addItems throws BranchError and writes nothing when A's branch (with rows) was deleted by B", async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(2, 'y');
      await a.addItems([mk.user('on y')]);
      const b = ws.open({ createTables: false });
      await b.deleteBranch('y');
      await failsWithoutChange(ws.path(), a, () => a.addItems([mk.user('lost')]), BranchError, DELETED('y'));
      assert.equal(a.getCurrentBranchId(), 'y');
      await a.switchToBranch('main');
      await a.addItems([mk.user('q4')]);
      assert.equal((await a.getItems()).length, 7);
    });

    it('also after a switch (the branch had rows when A moved to it) and after a raw SQL delete', async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(3, 'y');
      await a.switchToBranch('main');
      await a.switchToBranch('y');
      execSql(ws.path(), "DELETE FROM message_structure WHERE branch_id = 'y'");
      await failsWithoutChange(ws.path(), a, () => a.addItems([mk.user('lost')]), BranchError, DELETED('y'));
    });

    it("an instance that switched to y (and read it) sees another instance's delete", async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(3, 'y');
      await a.addItems([mk.user('on y')]);
      const b = ws.open({ createTables: false });
      await b.switchToBranch('y');
      assert.equal((await b.getItems()).length, 5);
      await a.switchToBranch('main');
      await a.deleteBranch('y');
      await failsWithoutChange(ws.path(), b, () => b.addItems([mk.user('lost')]), BranchError, DELETED('y'));
    });

    it('quirk 6 is kept: a branch from turn 1 that never had rows takes its first item', async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(1, 'z');
      await a.addItems([mk.user('first on z')]);
      assert.deepEqual(
        structure(ws.path(), 's1', 'z').map((r) => [r.message_type, r.user_turn_number]),
        [['user', 1]],
      );
    });

    it("A's own popItem emptying the branch is not a delete: the next addItems writes to it", async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(1, 'z');
      await a.addItems([mk.user('only item')]);
      assert.deepEqual(await a.popItem(), mk.user('only item'));
      await a.addItems([mk.user('again')]);
      assert.deepEqual(await a.getItems(), [mk.user('again')]);
      assert.equal(a.getCurrentBranchId(), 'z');
    });

    it('an external clear is not a delete: A drops to main and writes there (§8.4)', async () => {
      const a = await threeTurns();
      await a.createBranchFromTurn(2, 'y');
      await a.addItems([mk.user('on y')]);
      const b = ws.open({ createTables: false });
      await b.clearSession();
      await a.addItems([mk.user('after clear')]);
      assert.equal(a.getCurrentBranchId(), 'main');
      assert.deepEqual(await b.getItems(), [mk.user('after clear')]);
    });
  });

  describe('argument and open errors say what they got and what helps', () => {
    it('createBranchFromTurn shows the type of a non-number turn', async () => {
      const s = await threeTurns();
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.createBranchFromTurn('3' as never),
        BranchError,
        "Turn number must be a non-negative integer, got '3' (string)",
      );
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.createBranchFromTurn(3n as never),
        BranchError,
        'Turn number must be a non-negative integer, got 3n (bigint)',
      );
      await failsWithoutChange(
        ws.path(),
        s,
        () => s.createBranchFromTurn(-1),
        BranchError,
        'Turn number must be a non-negative integer, got -1',
      );
    });

    it('readonly: true on a file without session tables does not advise create_tables=True', () => {
      const p = ws.path('users.db');
      const raw = openDatabase(p);
      raw.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)');
      raw.close();
      const before = tables(p);
      assert.throws(
        () => new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p, readonly: true }),
        (err: unknown) => {
          assert.ok(err instanceof TableOwnershipError, String(err));
          assert.doesNotMatch(err.message, /create_tables=True/);
          assert.match(err.message, /holds no session tables/);
          assert.match(err.message, /read-only session never creates tables/);
          assert.ok(err.message.includes(p), err.message);
          return true;
        },
      );
      assert.deepEqual(tables(p), before);
    });

    it('readonly: true with missing configured base tables says so without create_tables=True', async () => {
      (await threeTurns()).close();
      assert.throws(
        () =>
          new AdvancedSQLiteSession({
            sessionId: 's1',
            dbPath: ws.path(),
            readonly: true,
            sessionsTable: 'nope_sessions',
            messagesTable: 'nope_messages',
          }),
        (err: unknown) => {
          assert.ok(err instanceof TableOwnershipError, String(err));
          assert.doesNotMatch(err.message, /create_tables=True/);
          assert.match(err.message, /base tables .* are missing\. A read-only session never creates tables/);
          return true;
        },
      );
    });
  });
});
