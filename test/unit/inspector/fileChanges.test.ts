/**
 * The inspector when the file changes under it in ways data_version cannot see: deleted (or moved away), or another
 * file renamed over the path. The connection would go on reading the old file, so every call must say so.
 */
import { strict as assert } from 'node:assert';
import { renameSync, unlinkSync } from 'node:fs';
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
});
