/**
 * Opening a file for inspection: the errors a user can meet (each a SessionDatabaseError with its problem), table
 * discovery with default, custom and plain layouts, read-only opening that leaves the file untouched, and close().
 */
import { strict as assert } from 'node:assert';
import { existsSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import {
  AdvancedSQLiteSession,
  SQLiteSession,
  SessionClosedError,
  SessionDatabaseError,
  openDatabase,
  openSessionDatabase,
  toStoredItem,
  type SessionDatabase,
} from '../../../../src/store';
import { copyWithHotJournal } from '../../../support/hotJournal';
import { TempFolder, expectDatabaseError, mk, sha256, sizeOf, sql, writeBranchedFile } from './inspectorFixtures';

describe('openSessionDatabase', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  describe('errors', () => {
    it('not-found: a path that does not exist, which is not created', () => {
      const path = folder.path('missing.db');
      const err = expectDatabaseError(() => openSessionDatabase(path), 'not-found');
      assert.match(err.message, /does not exist/);
      assert.ok(err.message.includes(path));
      assert.equal(existsSync(path), false);
      expectDatabaseError(() => openSessionDatabase(path, { readonly: false }), 'not-found');
      assert.equal(existsSync(path), false, 'a writable open must not create the file either');
    });

    it('not-sqlite: a text file', () => {
      const path = folder.path('notes.db');
      writeFileSync(path, 'These are my notes, not a database.\n'.repeat(200));
      const err = expectDatabaseError(() => openSessionDatabase(path), 'not-sqlite');
      assert.match(err.message, /not a SQLite database/);
      expectDatabaseError(() => openSessionDatabase(path, { readonly: false }), 'not-sqlite');
    });

    it('not-session-database: SQLite without session tables, naming what is missing and what is there', () => {
      const path = folder.path('other.db');
      const db = openDatabase(path);
      db.exec('CREATE TABLE foo (a INTEGER, b TEXT)');
      db.exec('CREATE TABLE half (session_id TEXT, payload TEXT)'); // session_id alone is not enough
      db.close();
      const err = expectDatabaseError(() => openSessionDatabase(path), 'not-session-database');
      assert.match(err.message, /no table with session_id and message_data columns/);
      assert.match(err.message, /foo/);
      assert.match(err.message, /half/);
    });

    it('not-session-database, opened for writing: the foreign file is not switched to WAL', () => {
      const path = folder.path('foreign.db');
      const db = openDatabase(path);
      db.exec('CREATE TABLE foo (a INTEGER)');
      db.close();
      assert.deepEqual([...readFileSync(path).subarray(18, 20)], [1, 1], 'a rollback-journal file');
      const before = sha256(path);
      expectDatabaseError(() => openSessionDatabase(path, { readonly: false }), 'not-session-database');
      assert.equal(sha256(path), before);
    });

    it('not-session-database: an empty (0-byte) file, left as it is', () => {
      const path = folder.path('empty.db');
      writeFileSync(path, '');
      const err = expectDatabaseError(() => openSessionDatabase(path), 'not-session-database');
      assert.match(err.message, /no table with session_id and message_data columns \(it has no tables\)/);
      assert.equal(sizeOf(path), 0);
    });

    it('not-session-database: several plain messages tables and no structure table to choose between them', async () => {
      const path = folder.path();
      for (const prefix of ['alpha', 'beta']) {
        const s = folder.track(
          new SQLiteSession({ sessionId: 'x', dbPath: path, sessionsTable: `${prefix}_sessions`, messagesTable: `${prefix}_messages` }),
        );
        await s.addItems([mk.user(prefix)]);
        s.close();
      }
      const err = expectDatabaseError(() => openSessionDatabase(path), 'not-session-database');
      assert.match(err.message, /alpha_messages, beta_messages/);
    });

    it('corrupt: a session file truncated to 3 pages', async () => {
      const path = folder.path();
      const m = await writeBranchedFile(folder, path);
      assert.ok(m.messageCount > 0);
      const pageSize = sql<{ page_size: number }>(path, 'PRAGMA page_size')[0]?.page_size ?? 0;
      assert.ok((sizeOf(path) ?? 0) > 3 * pageSize, 'the fixture spans more than 3 pages');
      truncateSync(path, 3 * pageSize);
      const err = expectDatabaseError(() => openSessionDatabase(path), 'corrupt');
      assert.match(err.message, /corrupt or truncated/);
    });

    it("corrupt: garbage over the messages table's root page is found at open", async () => {
      const path = folder.path();
      await writeBranchedFile(folder, path);
      const [{ rootpage, page_size: pageSize } = { rootpage: 0, page_size: 0 }] = sql<{ rootpage: number; page_size: number }>(
        path,
        "SELECT rootpage, (SELECT page_size FROM pragma_page_size) AS page_size FROM sqlite_master WHERE name = 'agent_messages'",
      );
      assert.ok(rootpage > 1);
      overwrite(path, (rootpage - 1) * pageSize, pageSize, 0xa5);
      expectDatabaseError(() => openSessionDatabase(path), 'corrupt');
    });

    it('corrupt: garbage in the middle of a large file surfaces as corrupt, from open or from the read that meets it', async () => {
      const path = folder.path();
      const s = folder.session({ sessionId: 'big', dbPath: path });
      for (let i = 0; i < 60; i++)
        await s.addItems([mk.user(`question ${i} ${'x'.repeat(400)}`), mk.assistant(`answer ${i} ${'y'.repeat(400)}`)]);
      s.close();
      const size = sizeOf(path) ?? 0;
      const pageSize = sql<{ page_size: number }>(path, 'PRAGMA page_size')[0]?.page_size ?? 4096;
      const pages = size / pageSize;
      assert.ok(pages >= 20, `the fixture has ${pages} pages`);
      // Pages 40%..60%: never page 1, always some b-tree pages in use.
      const from = Math.floor(pages * 0.4);
      overwrite(path, from * pageSize, (Math.ceil(pages * 0.6) - from) * pageSize, 0xa5);
      let error: unknown;
      try {
        const db = folder.inspect(path);
        db.listSessions();
        db.getBranchTree('big');
        for (let after: number | null = null; ;) {
          const page = db.getItemsPage('big', 'main', { afterSequence: after, limit: 7 });
          if (page.nextAfterSequence === null) break;
          after = page.nextAfterSequence;
        }
      } catch (err) {
        error = err;
      }
      assert.ok(error instanceof SessionDatabaseError, `expected a SessionDatabaseError, got ${String(error)}`);
      assert.equal(error.problem, 'corrupt', error.message);
    });

    it('locked: a rollback-journal file under an exclusive lock fails after the busy timeout, without advice to open read-only', () => {
      const path = folder.path();
      const s = folder.session({ sessionId: 'x', dbPath: path });
      s.close();
      const locker = folder.raw(path);
      locker.prepare('PRAGMA journal_mode = DELETE').get();
      locker.exec('BEGIN EXCLUSIVE');
      const started = Date.now();
      const err = expectDatabaseError(() => openSessionDatabase(path, { busyTimeoutMs: 100 }), 'locked');
      assert.ok(Date.now() - started < 3000, 'it waited only about the short busy timeout');
      assert.match(err.message, /locked by another connection/);
      assert.doesNotMatch(err.message, /read-only/, 'the connection already is read-only');
      locker.exec('COMMIT');
      folder.inspect(path, { busyTimeoutMs: 100 }).close();
    });

    it('locked: a WAL file held in exclusive locking mode', () => {
      const path = folder.path();
      folder.session({ sessionId: 'x', dbPath: path }).close();
      const locker = folder.raw(path);
      locker.prepare('PRAGMA locking_mode = EXCLUSIVE').get();
      locker.exec('BEGIN EXCLUSIVE');
      locker.exec('COMMIT'); // exclusive locking mode keeps the lock after the transaction
      expectDatabaseError(() => openSessionDatabase(path, { busyTimeoutMs: 100 }), 'locked');
    });

    it('locked: a read after opening, while another connection holds an exclusive lock; the connection recovers', async () => {
      const path = folder.path();
      await writeBranchedFile(folder, path);
      const locker = folder.raw(path);
      locker.prepare('PRAGMA journal_mode = DELETE').get();
      const db = folder.inspect(path, { busyTimeoutMs: 100 });
      locker.exec('BEGIN EXCLUSIVE');
      expectDatabaseError(() => db.listSessions(), 'locked');
      expectDatabaseError(() => db.getItemsPage('branched', 'main', { limit: 5 }), 'locked');
      locker.exec('COMMIT');
      assert.deepEqual(
        db
          .listSessions()
          .map((s) => s.sessionId)
          .sort(),
        ['branched', 'other'],
      );
    });
  });

  describe('a hot rollback journal (a writer killed mid-transaction)', () => {
    /** A copy of a two-session DELETE-mode file, with a killed writer's transaction in its hot -journal. */
    async function hotCopy(): Promise<string> {
      const source = folder.path('source.db');
      for (const sessionId of ['one', 'two']) {
        const s = new AdvancedSQLiteSession({ sessionId, dbPath: source, createTables: true });
        await s.addItems([mk.user(`${sessionId} asks`), mk.assistant(`${sessionId} answered`)]);
        s.close();
      }
      const db = openDatabase(source);
      db.prepare('PRAGMA journal_mode = DELETE').get();
      db.close();
      const copy = folder.path('hot.db');
      copyWithHotJournal(source, copy, 'one');
      return copy;
    }

    it('hot-journal: a read-only open names the -journal and a writable connection as the remedy, and writes nothing', async () => {
      const path = await hotCopy();
      const bytes = sha256(path);
      const journal = sha256(`${path}-journal`);
      const err = expectDatabaseError(() => openSessionDatabase(path), 'hot-journal');
      assert.ok(err.message.includes(`${path}-journal`), err.message);
      assert.match(err.message, /killed in the middle of a transaction/);
      assert.match(err.message, /connection that can write it rolls that unfinished transaction back/);
      assert.doesNotMatch(err.message, /-shm|WAL/, 'neither a -shm nor WAL is the matter');
      assert.equal(sha256(path), bytes, 'the file is untouched');
      assert.equal(sha256(`${path}-journal`), journal, 'the -journal is untouched');
    });

    it("a writable connection (as Python's sqlite3 is) rolls it back: the last commit reads, and read-only opens again", async () => {
      const path = await hotCopy();
      assert.equal(
        sql<{ n: number }>(path, "SELECT count(*) AS n FROM agent_messages WHERE message_data LIKE '%never committed%'")[0]!.n,
        0,
        'nothing of the unfinished transaction',
      );
      assert.equal(existsSync(`${path}-journal`), false);
      const db = folder.inspect(path);
      assert.deepEqual(
        db
          .listSessions()
          .map((s) => [s.sessionId, s.messageCount])
          .sort(),
        [
          ['one', 2],
          ['two', 2],
        ],
      );
    });
  });

  describe('table discovery', () => {
    it('finds the default tables of an AdvancedSQLiteSession file', async () => {
      await writeBranchedFile(folder);
      assert.deepEqual(folder.inspect().tables, {
        sessions: 'agent_sessions',
        messages: 'agent_messages',
        messageStructure: true,
        turnUsage: true,
        branchReservations: true,
        sessionClearGenerations: true,
        warnings: [],
      });
    });

    for (const [label, sessionsTable, messagesTable, sessions, messages] of [
      ['custom names', 'team_sessions', 'team_messages', 'team_sessions', 'team_messages'],
      // Only the sessions name can be quoted: the messages name also goes into the index name (spec §3.4).
      ['a quoted sessions table name with a space', '"Chat Sessions"', 'chat_items', 'Chat Sessions', 'chat_items'],
    ] as const) {
      it(`finds ${label} through message_structure's foreign keys, and reads through them`, async () => {
        const path = folder.path();
        const s = folder.session({ sessionId: 'c1', dbPath: path, sessionsTable, messagesTable });
        await s.addItems([mk.user('hello'), mk.assistant('hi')]);
        await s.createBranchFromTurn(1, 'again');
        await s.addItems([mk.user('hello again')]);
        s.close();
        const db = folder.inspect(path);
        assert.equal(db.tables.sessions, sessions);
        assert.equal(db.tables.messages, messages);
        assert.equal(db.tables.messageStructure, true);
        const [summary] = db.listSessions();
        assert.equal(summary?.sessionId, 'c1');
        assert.equal(summary?.messageCount, 3);
        assert.equal(summary?.branchCount, 2);
        assert.notEqual(summary?.createdAt, null, 'read from the custom sessions table');
        const page = db.getItemsPage('c1', 'main', { limit: 10 });
        assert.deepEqual(
          page.items.map((i) => (i.corrupt ? null : i.item)),
          [mk.user('hello'), mk.assistant('hi')].map((item) => toStoredItem(item)),
        );
      });
    }

    it('prefers the pair message_structure belongs to over a plain pair with the default names', async () => {
      const path = folder.path();
      const plain = folder.track(new SQLiteSession({ sessionId: 'legacy', dbPath: path }));
      await plain.addItems([mk.user('plain row')]);
      plain.close();
      const adv = folder.session({ sessionId: 'new', dbPath: path, sessionsTable: 'v2_sessions', messagesTable: 'v2_messages' });
      await adv.addItems([mk.user('advanced row')]);
      adv.close();
      const db = folder.inspect(path);
      assert.equal(db.tables.messages, 'v2_messages');
      assert.equal(db.tables.sessions, 'v2_sessions');
      assert.deepEqual(
        db.listSessions().map((s) => s.sessionId),
        ['new'],
      );
    });

    it('finds a plain SQLiteSession file by its columns (default and custom names)', async () => {
      for (const [file, names, sessions, messages] of [
        ['plain.db', {}, 'agent_sessions', 'agent_messages'],
        ['custom.db', { sessionsTable: 'conv_sessions', messagesTable: 'conv_items' }, 'conv_sessions', 'conv_items'],
      ] as const) {
        const path = folder.path(file);
        const s = folder.track(new SQLiteSession({ sessionId: 'p', dbPath: path, ...names }));
        await s.addItems([mk.user('q'), mk.assistant('a')]);
        s.close();
        assert.deepEqual(folder.inspect(path).tables, {
          sessions,
          messages,
          messageStructure: false,
          turnUsage: false,
          branchReservations: false,
          sessionClearGenerations: false,
          warnings: [],
        });
      }
    });

    it('ignores a message_structure table whose foreign keys name no existing table, with a warning', async () => {
      const path = folder.path();
      const s = folder.track(new SQLiteSession({ sessionId: 'p', dbPath: path }));
      await s.addItems([mk.user('q')]);
      s.close();
      const db = openDatabase(path);
      db.exec(`CREATE TABLE message_structure (id INTEGER PRIMARY KEY, session_id TEXT, message_id INTEGER,
        branch_id TEXT, message_type TEXT, sequence_number INTEGER, user_turn_number INTEGER, branch_turn_number INTEGER,
        tool_name TEXT, created_at TIMESTAMP, FOREIGN KEY (message_id) REFERENCES gone_messages(id))`);
      db.close();
      const tables = folder.inspect(path).tables;
      assert.equal(tables.messages, 'agent_messages');
      assert.equal(tables.messageStructure, false);
      assert.equal(tables.warnings.length, 1);
      assert.match(tables.warnings[0] ?? '', /message_structure is ignored: .*gone_messages/);
    });

    it('re-discovers the tables when another connection changes the schema', async () => {
      const path = folder.path();
      const plain = folder.track(new SQLiteSession({ sessionId: 'old', dbPath: path }));
      await plain.addItems([mk.user('plain')]);
      plain.close();
      const db = folder.inspect(path);
      assert.equal(db.tables.messageStructure, false);
      const adv = folder.session({ sessionId: 'new', dbPath: path });
      await adv.addItems([mk.user('structured')]);
      adv.close();
      const summaries = db.listSessions();
      assert.equal(db.tables.messageStructure, true);
      assert.deepEqual(summaries.map((s) => [s.sessionId, s.structured]).sort(), [
        ['new', true],
        ['old', false],
      ]);
    });
  });

  describe('read-only', () => {
    /** Calls every read method (and the change check) once. */
    function readEverything(db: SessionDatabase): void {
      for (const s of db.listSessions()) {
        for (const b of db.getBranchTree(s.sessionId)) {
          db.getItemsPage(s.sessionId, b.branchId, { limit: 3 });
          db.getTurnsPage(s.sessionId, b.branchId, { limit: 3 });
          db.getTurnItems(s.sessionId, b.branchId, 1);
        }
      }
      db.hasChanged();
      db.createChangeWatcher().hasChanged();
    }

    it('leaves a WAL file byte-for-byte unchanged and writes no WAL frames', async () => {
      const path = folder.path();
      await writeBranchedFile(folder, path);
      assert.equal(sizeOf(`${path}-wal`), undefined, 'the writers checkpointed and removed their WAL');
      const before = sha256(path);
      const header = readFileSync(path).subarray(18, 20);
      assert.deepEqual([...header], [2, 2], 'the fixture is in WAL mode');
      const db = openSessionDatabase(path);
      assert.equal(db.readonly, true);
      readEverything(db);
      db.close();
      assert.equal(sha256(path), before);
      // A WAL reader may create -wal/-shm to coordinate with writers, but must not write frames.
      assert.ok((sizeOf(`${path}-wal`) ?? 0) === 0, 'no WAL frames');
    });

    it('does not switch a rollback-journal file to WAL, nor create a -wal file', async () => {
      const path = folder.path();
      await writeBranchedFile(folder, path);
      sql(path, 'PRAGMA journal_mode = DELETE');
      assert.deepEqual([...readFileSync(path).subarray(18, 20)], [1, 1]);
      const before = sha256(path);
      const db = openSessionDatabase(path, { readonly: true });
      readEverything(db);
      db.close();
      assert.equal(sha256(path), before);
      assert.deepEqual([...readFileSync(path).subarray(18, 20)], [1, 1], 'still a rollback-journal file');
      assert.equal(existsSync(`${path}-wal`), false);
    });

    it('opens for writing when asked (readonly: false) and reads the same', async () => {
      const path = folder.path();
      await writeBranchedFile(folder, path);
      const ro = folder.inspect(path);
      const rw = folder.inspect(path, { readonly: false });
      assert.equal(rw.readonly, false);
      assert.deepEqual(rw.listSessions(), ro.listSessions());
      assert.deepEqual(rw.getBranchTree('branched'), ro.getBranchTree('branched'));
    });
  });

  it('close() is idempotent; afterwards every method throws SessionClosedError', async () => {
    await writeBranchedFile(folder);
    const db = folder.inspect();
    assert.equal(db.isOpen, true);
    db.close();
    db.close();
    assert.equal(db.isOpen, false);
    const calls: (() => unknown)[] = [
      () => db.listSessions(),
      () => db.getBranchTree('branched'),
      () => db.getItemsPage('branched', 'main', { limit: 1 }),
      () => db.getTurnItems('branched', 'main', 1),
      () => db.getTurnsPage('branched', 'main', { limit: 1 }),
      () => db.hasChanged(),
      () => db.createChangeWatcher(),
    ];
    for (const call of calls) assert.throws(call, SessionClosedError);
  });

  it('works with a session opened by AdvancedSQLiteSession on the same file at the same time', async () => {
    const path = folder.path();
    const s = folder.track(new AdvancedSQLiteSession({ sessionId: 'live', dbPath: path, createTables: true }));
    const db = folder.inspect(path);
    assert.deepEqual(db.listSessions(), []);
    await s.addItems([mk.user('now')]);
    assert.deepEqual(
      db.listSessions().map((x) => [x.sessionId, x.messageCount]),
      [['live', 1]],
    );
  });
});

/** Overwrites `length` bytes at `offset` with `byte`. */
function overwrite(path: string, offset: number, length: number, byte: number): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.alloc(length, byte), 0, length, offset);
  } finally {
    closeSync(fd);
  }
}
