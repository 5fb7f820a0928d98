/**
 * Ids holding U+0000 (spec §12 f): Python and better-sqlite3 store them whole, node:sqlite reads TEXT only up to the
 * U+0000. The inspector must neither merge such an id with its prefix nor lose its rows.
 */
import { strict as assert } from 'node:assert';
import { NUL_BRANCH, NUL_SESSION, writeControlCharFile } from '../../../support/controlCharFile';
import { TempFolder } from './inspectorFixtures';

describe('inspector: ids holding U+0000 (spec §12 f)', () => {
  let folder: TempFolder;
  beforeEach(async () => {
    folder = new TempFolder();
    await writeControlCharFile(folder.path(), ['s1', NUL_SESSION]);
  });
  afterEach(() => folder.cleanup());

  it('listSessions keeps a session id with U+0000 apart from its prefix', () => {
    const db = folder.inspect();
    const sessions = db.listSessions();
    assert.deepEqual(sessions.map((s) => s.sessionId).sort(), ['s', NUL_SESSION, 's1'].sort());
    const nul = sessions.find((s) => s.sessionId === NUL_SESSION);
    assert.equal(nul?.messageCount, 7);
    assert.equal(nul?.branchCount, 3);
    assert.equal(sessions.find((s) => s.sessionId === 's')?.messageCount, 1);
    assert.equal(db.getBranchTree(NUL_SESSION).length, 3, 'the id read back finds its rows');
  });

  it('branch trees, used ids, usage rows and turns without usage keep a\\u0000b apart from a', () => {
    const db = folder.inspect();
    for (const sid of ['s1', NUL_SESSION]) {
      assert.deepEqual(
        db
          .getBranchTree(sid)
          .map((b) => b.branchId)
          .sort(),
        ['a', NUL_BRANCH, 'main'].sort(),
      );
      assert.ok(db.usedBranchIds(sid).includes(NUL_BRANCH));
      assert.deepEqual(
        db.getUsageRows(sid, null).map((r) => [r.branchId, r.turn, r.totalTokens]),
        [
          ['a', 3, 7],
          [NUL_BRANCH, 2, 30],
        ],
      );
      assert.deepEqual(
        db
          .getTurnsWithoutUsage(sid, null)
          .turns.filter((t) => t.branchId === NUL_BRANCH)
          .map((t) => t.turn),
        [1, 3],
      );
      assert.equal(db.getItemsPage(sid, NUL_BRANCH, { limit: 50 }).items.length, 5);
    }
  });
});
