/** usedBranchIds: the names a new branch can no longer take. */
import { strict as assert } from 'node:assert';
import { BranchError, SQLiteSession } from '../../../../src/store';
import { TempFolder, mk, writeBranchedFile } from './inspectorFixtures';

describe('SessionDatabase.usedBranchIds', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  it('lists branches with rows, deleted branches (still reserved) and main; each is refused by createBranchFromTurn', async () => {
    const m = await writeBranchedFile(folder);
    const s = folder.session({ sessionId: 'branched' });
    await s.deleteBranch('late');
    const used = folder.inspect().usedBranchIds('branched');
    assert.deepEqual(used, [...m.branches.keys()].sort());
    assert.ok(used.includes('late'), 'a deleted branch keeps its reservation');
    for (const id of used) {
      await assert.rejects(
        s.createBranchFromTurn(1, id),
        (err: unknown) => err instanceof BranchError && /has already been used/.test(err.message),
      );
    }
  });

  it('includes ids that have rows but no reservation yet, and main even before it has rows', async () => {
    const s = folder.session({ sessionId: 'x' });
    await s.addItems([mk.user('one')]);
    // A branch written only by addItems (as another writer could): rows, no reservation.
    folder
      .raw()
      .exec(
        "INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number) SELECT 'x', id, 'side', 'user', 99 FROM agent_messages LIMIT 1",
      );
    const db = folder.inspect();
    assert.deepEqual(db.usedBranchIds('x'), ['main', 'side']);
    assert.deepEqual(db.usedBranchIds('nobody'), ['main']);
  });

  it('a plain session: main only', async () => {
    const s = folder.track(new SQLiteSession({ sessionId: 'p', dbPath: folder.path() }));
    await s.addItems([mk.user('q')]);
    assert.deepEqual(folder.inspect().usedBranchIds('p'), ['main']);
  });
});
