/**
 * The change check: reports commits by other connections and this connection's own writes, nothing else; costs
 * microseconds; holds no lock; and never waits out a busy timeout.
 */
import { strict as assert } from 'node:assert';
import { AdvancedSQLiteSession, createChangeWatcher, openDatabase } from '../../../../src/store';
import { TempFolder, mk, writeBranchedFile } from './inspectorFixtures';

describe('change detection', () => {
  let folder: TempFolder;
  beforeEach(async () => {
    folder = new TempFolder();
    await writeBranchedFile(folder);
  });
  afterEach(() => folder.cleanup());

  it('SessionDatabase.hasChanged: false while nobody writes, even when others read; true once after a write', async () => {
    const db = folder.inspect();
    assert.equal(db.hasChanged(), false, 'nothing changed since opening');
    db.listSessions();
    db.getItemsPage('branched', 'main', { limit: 5 });
    assert.equal(db.hasChanged(), false, 'our own reads are not changes');

    const writer = folder.track(new AdvancedSQLiteSession({ sessionId: 'branched', dbPath: folder.path() }));
    await writer.getItems();
    await writer.listBranches();
    await writer.getConversationTurns();
    assert.equal(db.hasChanged(), false, "another connection's reads are not changes");

    await writer.addItems([mk.user('a new turn')]);
    assert.equal(db.hasChanged(), true, "another connection's commit is");
    assert.equal(db.hasChanged(), false, 'reported once');
    assert.equal(db.getTurnsPage('branched', 'main', { afterTurn: 4, limit: 5 }).turns[0]?.preview, 'a new turn');

    await writer.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 } } });
    assert.equal(db.hasChanged(), true, 'usage rows count too');
  });

  it('independent watchers keep their own marks', async () => {
    const db = folder.inspect();
    const a = db.createChangeWatcher();
    const b = db.createChangeWatcher();
    const other = folder.raw();
    other.exec("INSERT INTO agent_sessions (session_id) VALUES ('new')");
    assert.equal(a.hasChanged(), true);
    assert.equal(a.hasChanged(), false);
    assert.equal(b.hasChanged(), true, 'b has not looked yet');
    assert.equal(db.hasChanged(), true, "the database's own watcher has not looked either");
  });

  it("createChangeWatcher(connection) also reports the connection's own writes, which data_version does not count", () => {
    const conn = folder.raw();
    const watcher = createChangeWatcher(conn);
    assert.equal(watcher.hasChanged(), false);
    conn.prepare('SELECT COUNT(*) FROM agent_messages').get();
    assert.equal(watcher.hasChanged(), false);
    conn.exec("UPDATE agent_sessions SET updated_at = '2000-01-01 00:00:00' WHERE session_id = 'other'");
    assert.equal(watcher.hasChanged(), true);
    assert.equal(watcher.hasChanged(), false);
  });

  it('costs microseconds per call', () => {
    const db = folder.inspect();
    const calls = 2000;
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) db.hasChanged();
    const perCallUs = Number(process.hrtime.bigint() - started) / 1000 / calls;
    // About 2 µs on a laptop; the bound leaves room for a loaded CI machine while excluding any real I/O or waiting.
    assert.ok(perCallUs < 200, `${perCallUs.toFixed(1)} µs per call`);
  });

  it('holds no lock between calls: a writer can take an exclusive lock right after', () => {
    const path = folder.path();
    const locker = folder.raw(path);
    locker.prepare('PRAGMA journal_mode = DELETE').get(); // rollback journal: any open read would block EXCLUSIVE
    locker.exec('PRAGMA busy_timeout = 0');
    const db = folder.inspect(path);
    db.hasChanged();
    db.listSessions();
    db.hasChanged();
    locker.exec('BEGIN EXCLUSIVE');
    locker.exec('COMMIT');
  });

  it('answers true at once, without waiting out the busy timeout, while a writer holds an exclusive lock', () => {
    const path = folder.path();
    const locker = folder.raw(path);
    locker.prepare('PRAGMA journal_mode = DELETE').get();
    const db = folder.inspect(path, { busyTimeoutMs: 5000 });
    assert.equal(db.hasChanged(), false);
    locker.exec('BEGIN EXCLUSIVE');
    const started = Date.now();
    assert.equal(db.hasChanged(), true);
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
    locker.exec('COMMIT');
    assert.deepEqual(
      db
        .listSessions()
        .map((s) => s.sessionId)
        .sort(),
      ['branched', 'other'],
    );
  });

  it("restores the connection's busy timeout after looking", () => {
    const path = folder.path();
    const locker = folder.raw(path);
    locker.prepare('PRAGMA journal_mode = DELETE').get();
    const conn = folder.track(openDatabase(path, { readonly: true, busyTimeoutMs: 1234 }));
    const watcher = createChangeWatcher(conn);
    const timeout = () => conn.prepare('PRAGMA busy_timeout').get<{ timeout: number }>()?.timeout;
    watcher.hasChanged();
    assert.equal(timeout(), 1234);
    locker.exec('BEGIN EXCLUSIVE');
    assert.equal(watcher.hasChanged(), true);
    assert.equal(timeout(), 1234, 'also after a busy answer');
    locker.exec('COMMIT');
  });
});
