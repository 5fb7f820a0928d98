/**
 * The plain SQLiteSession (Python's SQLiteSession): the base tables only, add/get/limit/pop/clear, the closed
 * errors, and files shared with AdvancedSQLiteSession.
 */
import { strict as assert } from 'node:assert';
import { InvalidArgumentError, SQLiteSession, SessionClosedError } from '../../../../src/store';
import { Workspace, execSql, mk, query, rejectsWith, tableNames } from '../../../support/sessionHelpers';

describe('SQLiteSession', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-plain-')));
  afterEach(() => ws.cleanup());

  const plain = (options: Partial<ConstructorParameters<typeof SQLiteSession>[0]> = {}) =>
    ws.track(new SQLiteSession({ sessionId: 's1', dbPath: ws.path(), ...options }));
  const texts = (items: unknown[]) => items.map((i) => (i as { content: string }).content);

  it('creates only the base tables and their index, with journal_mode=wal', () => {
    plain();
    assert.deepEqual(
      query<{ name: string }>(ws.path(), 'SELECT name FROM sqlite_master ORDER BY rowid').map((r) => r.name),
      ['agent_sessions', 'sqlite_autoindex_agent_sessions_1', 'agent_messages', 'sqlite_sequence', 'idx_agent_messages_session_id'],
    );
    assert.deepEqual(query(ws.path(), 'PRAGMA journal_mode'), [{ journal_mode: 'wal' }]);
  });

  it('works on :memory: (the default), privately per instance', async () => {
    const a = ws.track(new SQLiteSession({ sessionId: 's1' }));
    const b = ws.track(new SQLiteSession({ sessionId: 's1', dbPath: ':memory:' }));
    await a.addItems([mk.user('a')]);
    assert.deepEqual(texts(await a.getItems()), ['a']);
    assert.deepEqual(await b.getItems(), []);
  });

  it('adds items in order in Python encoding and reads them back', async () => {
    const s = plain();
    await s.addItems([mk.raw({ content: 'Convert 22°C to Fahrenheit', role: 'user' }), mk.assistant('x')]);
    await s.addItems([]);
    assert.deepEqual(query(ws.path(), 'SELECT id, session_id, message_data FROM agent_messages ORDER BY id')[0], {
      id: 1,
      session_id: 's1',
      message_data: '{"content": "Convert 22°C to Fahrenheit", "role": "user"}'.replace('°', '\\u00b0'),
    });
    assert.deepEqual(query(ws.path(), 'SELECT session_id FROM agent_sessions'), [{ session_id: 's1' }]);
    assert.deepEqual(await s.getItems(), [mk.raw({ content: 'Convert 22°C to Fahrenheit', role: 'user' }), mk.assistant('x')]);
    assert.equal(await s.getSessionId(), 's1');
  });

  it('rejects a batch with a BigInt or a cycle before writing anything', async () => {
    const s = plain();
    await rejectsWith(
      () => s.addItems([mk.user('ok'), mk.raw({ n: 1n })]),
      InvalidArgumentError,
      'Object of type bigint is not JSON serializable',
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.me = cyclic;
    await rejectsWith(() => s.addItems([mk.user('ok'), mk.raw(cyclic)]), InvalidArgumentError, 'Circular reference detected');
    assert.deepEqual(query(ws.path(), 'SELECT * FROM agent_messages'), []);
    assert.deepEqual(query(ws.path(), 'SELECT * FROM agent_sessions'), []);
  });

  it('applies limits: newest `limit` oldest first, 0 → [], negative → all, sessionSettings.limit by default', async () => {
    const s = plain({ sessionSettings: { limit: 2 } });
    await s.addItems(['1', '2', '3', '4'].map((t) => mk.user(t)));
    assert.deepEqual(texts(await s.getItems()), ['3', '4']);
    assert.deepEqual(texts(await s.getItems(3)), ['2', '3', '4']);
    assert.deepEqual(texts(await s.getItems(-1)), ['1', '2', '3', '4']);
    assert.deepEqual(await s.getItems(0), []);
    const unlimited = plain();
    assert.deepEqual(texts(await unlimited.getItems()), ['1', '2', '3', '4']);
  });

  it('rejects unknown session settings', () => {
    assert.throws(() => new SQLiteSession({ sessionId: 's', sessionSettings: { max: 1, foo: 2 } as never }), {
      name: 'InvalidArgumentError',
      message: 'Unknown session settings: foo, max',
    });
  });

  it('skips corrupt rows in getItems and still fills the limit', async () => {
    const s = plain();
    await s.addItems(['1', '2', '3', '4'].map((t) => mk.user(t)));
    execSql(ws.path(), "UPDATE agent_messages SET message_data = 'nope' WHERE id = 3");
    assert.deepEqual(texts(await s.getItems()), ['1', '2', '4']);
    assert.deepEqual(texts(await s.getItems(2)), ['2', '4']);
  });

  it('reads a BLOB message_data as UTF-8 JSON on either driver, with and without a limit', async () => {
    // node:sqlite hands a BLOB over as a Uint8Array, which JSON.parse read as "123,34,…": the row was skipped.
    const s = plain();
    await s.addItems([mk.user('a'), mk.assistant('b'), mk.user('c')]);
    execSql(ws.path(), 'UPDATE agent_messages SET message_data = CAST(message_data AS BLOB) WHERE id IN (2, 3)');
    assert.equal((await s.getItems()).length, 3);
    assert.equal(texts(await s.getItems())[2], 'c');
    assert.equal((await s.getItems(2)).length, 2);
    assert.deepEqual(texts(await s.getItems(1)), ['c']);
  });

  it('pops the newest item, undefined when empty; keeps the sessions row', async () => {
    const s = plain();
    assert.equal(await s.popItem(), undefined);
    await s.addItems([mk.user('1'), mk.user('2')]);
    assert.deepEqual(await s.popItem(), mk.user('2'));
    assert.deepEqual(texts(await s.getItems()), ['1']);
    assert.deepEqual(await s.popItem(), mk.user('1'));
    assert.equal(await s.popItem(), undefined);
    assert.equal(query(ws.path(), 'SELECT * FROM agent_sessions').length, 1);
  });

  it('clears only its own session', async () => {
    const a = plain();
    const b = plain({ sessionId: 's2' });
    await a.addItems([mk.user('a')]);
    await b.addItems([mk.user('b')]);
    await a.clearSession();
    assert.deepEqual(await a.getItems(), []);
    assert.deepEqual(texts(await b.getItems()), ['b']);
    assert.deepEqual(query(ws.path(), 'SELECT session_id FROM agent_sessions'), [{ session_id: 's2' }]);
  });

  it('throws SessionClosedError after close (addItems([]) too); close is idempotent', async () => {
    const s = plain();
    s.close();
    s.close();
    for (const call of [
      () => s.getItems(),
      () => s.addItems([]),
      () => s.addItems([mk.user('x')]),
      () => s.popItem(),
      () => s.clearSession(),
    ]) {
      await rejectsWith(call, SessionClosedError, 'SQLiteSession is closed');
    }
    assert.equal(await s.getSessionId(), 's1');
  });

  it('uses custom table names', async () => {
    const s = plain({ sessionsTable: 'my_sessions', messagesTable: 'my_messages' });
    await s.addItems([mk.user('x')]);
    assert.deepEqual(tableNames(ws.path()), ['my_sessions', 'my_messages', 'sqlite_sequence']);
  });

  describe('files shared with AdvancedSQLiteSession', () => {
    it('an advanced session can claim a file a plain session created, and both see the same base rows', async () => {
      const p = plain();
      await p.addItems([mk.user('plain 1')]);
      const adv = ws.open();
      await adv.addItems([mk.user('advanced 1')]);
      // The plain session reads every message row of the session, in id order.
      assert.deepEqual(texts(await p.getItems()), ['plain 1', 'advanced 1']);
      // The advanced session reads through its structure rows only.
      assert.deepEqual(texts(await adv.getItems()), ['advanced 1']);
      await p.addItems([mk.user('plain 2')]);
      assert.deepEqual(texts(await p.getItems()), ['plain 1', 'advanced 1', 'plain 2']);
      assert.deepEqual(query(ws.path(), 'SELECT session_id FROM agent_sessions'), [{ session_id: 's1' }]);
    });

    it("the advanced popItem's orphan cleanup deletes the plain session's rows of that session (quirk 15)", async () => {
      const p = plain();
      const otherPlain = plain({ sessionId: 'other' });
      await otherPlain.addItems([mk.user('other plain')]);
      await p.addItems([mk.user('plain 1')]);
      const adv = ws.open();
      await adv.addItems([mk.user('advanced 1'), mk.user('advanced 2')]);
      assert.deepEqual(await adv.popItem(), mk.user('advanced 2'));
      assert.deepEqual(texts(await p.getItems()), ['advanced 1']);
      assert.deepEqual(texts(await otherPlain.getItems()), ['other plain']);
    });

    it("a plain session can read and write an advanced session's file", async () => {
      const adv = ws.open();
      await adv.addItems([mk.user('q'), mk.assistant('a')]);
      const p = plain();
      assert.deepEqual(await p.getItems(), [mk.user('q'), mk.assistant('a')]);
      assert.deepEqual(await p.popItem(), mk.assistant('a'));
      // The plain pop removes the message; the advanced session skips the structure row whose message is missing.
      assert.deepEqual(await adv.getItems(), [mk.user('q')]);
    });

    it('a plain clearSession leaves the advanced structure rows, whose messages are then missing', async () => {
      const adv = ws.open();
      await adv.addItems([mk.user('q')]);
      const p = plain();
      await p.clearSession();
      assert.deepEqual(await adv.getItems(), []);
      assert.equal(query(ws.path(), 'SELECT * FROM message_structure').length, 1);
    });
  });
});
