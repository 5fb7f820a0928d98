/**
 * The inspector when the file changes under it in ways data_version cannot see: deleted (or moved away), or another
 * file renamed over the path. The connection would go on reading the old file, so every call must say so.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { moveStaleWalAside } from '../../../../src/store';
import { TempFolder, expectDatabaseError, mk, writeBranchedFile } from './inspectorFixtures';

describe('inspector: files deleted or replaced while open', () => {
  let folder: TempFolder;
  beforeEach(async () => {
    folder = new TempFolder();
    await writeBranchedFile(folder);
  });
  afterEach(() => folder.cleanup());

  async function otherFile(): Promise<string> {
    const p = folder.path('other.db');
    const s = folder.session({ sessionId: 'newcomer', dbPath: p });
    await s.addItems([mk.user('in the new file')]);
    s.close();
    return p;
  }

  it('replaced: fileState says so, hasChanged and every read throw SessionDatabaseError replaced', async () => {
    const db = folder.inspect();
    assert.equal(db.fileState(), 'ok');
    assert.equal(db.hasChanged(), false);
    renameSync(await otherFile(), folder.path());
    assert.equal(db.fileState(), 'replaced');
    const e = expectDatabaseError(() => db.hasChanged(), 'replaced');
    assert.match(e.message, /Reopen the file/);
    assert.ok(e.message.includes(folder.path()), e.message);
    expectDatabaseError(() => db.listSessions(), 'replaced');
    expectDatabaseError(() => db.getBranchTree('branched'), 'replaced');
    expectDatabaseError(() => db.getItemsPage('branched', 'main', { limit: 5 }), 'replaced');
    expectDatabaseError(() => db.createChangeWatcher().hasChanged(), 'replaced');
    // Opening the path again reads the new file.
    db.close();
    const reopened = folder.inspect();
    assert.ok(reopened.listSessions().some((x) => x.sessionId === 'newcomer'));
  });

  it('deleted: fileState says so, hasChanged and reads throw SessionDatabaseError deleted; a restored file reads again', () => {
    const db = folder.inspect();
    const watcher = db.createChangeWatcher();
    const aside = folder.path('aside.db');
    renameSync(folder.path(), aside);
    assert.equal(db.fileState(), 'deleted');
    expectDatabaseError(() => db.hasChanged(), 'deleted');
    expectDatabaseError(() => watcher.hasChanged(), 'deleted');
    expectDatabaseError(() => db.getTurnsPage('branched', 'main', { limit: 5 }), 'deleted');
    renameSync(aside, folder.path());
    assert.equal(db.fileState(), 'ok');
    assert.equal(db.hasChanged(), false);
    assert.ok(db.listSessions().length > 0);
  });

  it('a writable SessionDatabase refuses reads of a deleted file the same way', () => {
    const db = folder.inspect(folder.path(), { readonly: false });
    unlinkSync(folder.path());
    expectDatabaseError(() => db.usedBranchIds('branched'), 'deleted');
  });

  it('a replaced file whose -wal stays at the path: a reopen refuses, the -wal moves aside only when asked, then the new file reads', async () => {
    // A writer with committed items still in the -wal (not checkpointed), and a reader: the extension's situation.
    const writer = folder.session({ sessionId: 'old-one', dbPath: folder.path() });
    await writer.addItems([mk.user('old content')]);
    const db = folder.inspect();
    renameSync(await otherFile(), folder.path());
    const e = expectDatabaseError(() => db.hasChanged(), 'replaced');
    assert.match(e.message, /sessions\.db-wal belongs to the file that sessions\.db replaced: SQLite would apply it to the new file/);
    db.close();
    writer.close();
    const wal = `${folder.path()}-wal`;
    assert.ok(existsSync(wal), "the old file's -wal is still at the path after both connections closed");
    const walBytes = readFileSync(wal);
    // Opening the path now would show the old file's sessions: refused, with the reason, and nothing touched.
    const refused = expectDatabaseError(() => folder.inspect(), 'stale-wal');
    assert.match(refused.message, /Move sessions\.db-wal aside/);
    expectDatabaseError(() => folder.session({ sessionId: 'newcomer', dbPath: folder.path() }), 'stale-wal');
    assert.deepEqual(readFileSync(wal), walBytes, 'the -wal is untouched until the user agrees');
    // The user agrees: the -wal (and its index) are renamed beside the file, never deleted.
    const moved = moveStaleWalAside(folder.path(), () => new Date('2026-12-02T10:00:00.000Z'));
    assert.equal(moved[0], `${wal}.replaced-2026-12-02T10-00-00-000Z`);
    // Its index goes with it when there is one (SQLite rebuilds an index for the new file's own -wal).
    if (moved.length > 1) assert.equal(moved[1], `${folder.path()}-shm.replaced-2026-12-02T10-00-00-000Z`);
    assert.deepEqual(readFileSync(moved[0] as string), walBytes);
    const reopened = folder.inspect();
    assert.deepEqual(
      reopened.listSessions().map((x) => x.sessionId),
      ['newcomer'],
    );
    reopened.close();
    // Moving aside again is refused: what is at the path now is the new file's own.
    expectDatabaseError(() => moveStaleWalAside(folder.path()), 'io');
  });
});
