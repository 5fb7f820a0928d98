/**
 * The history guard on a file the Python SDK wrote (test/fixtures/conformance/ref-multisession.db), compacted by
 * ANOTHER PROCESS while guarded (test/support/pythonCompactionChild.ts: the branch's older items deleted and a
 * compaction item written, as Python's compaction leaves a branch): the removed items are readable from the layer,
 * restorable as a new branch, and the restored branch reads back through the session class exactly as the file held
 * the items before (the conformance suite's reader, spec §13: Python's result shapes), the other branch untouched.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../../../src/store';
import { HistoryGuardStore } from '../../../../src/store/guard/guardStore';
import { observeSessionFile } from '../../../../src/store/guard/guardObserver';
import { restoreLayerAsBranch } from '../../../../src/store/guard/layerRestore';
import { runSupportScript } from '../../../support/childProcess';
import { query } from '../../../support/sessionHelpers';
import { py } from '../../../support/pythonShapes';
import { copyFixture, tempDir } from '../../../support/tempFiles';

const FIXTURE = join(__dirname, '..', '..', '..', 'fixtures', 'conformance', 'ref-multisession.db');

const branchRows = (path: string, sessionId: string, branchId: string) =>
  query<{ message_data: string; message_type: string; user_turn_number: number | null }>(
    path,
    `SELECT m.message_data, s.message_type, s.user_turn_number FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
     WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number`,
    sessionId,
    branchId,
  );

describe('history guard on a Python-written file compacted by another process', function () {
  this.timeout(60000);
  const tmp = tempDir('asi-guard-py-');
  after(() => tmp.cleanup());

  it('keeps the removed items readable, restores them as a branch Python reads, and leaves the rest alone', async () => {
    const file = copyFixture(FIXTURE, tmp.dir);
    const guard = HistoryGuardStore.open(join(tmp.dir, 'guard.db'));
    const reader = openSessionDatabase(file, { readonly: true });
    try {
      assert.equal(observeSessionFile(guard, reader).kind, 'first');
      const mainBefore = branchRows(file, 'alice', 'main');
      const altBefore = branchRows(file, 'alice', 'alt');
      assert.equal(mainBefore.length, 4);

      const child = runSupportScript('pythonCompactionChild.ts', [file, 'alice', 'main'], 50000);
      const out = await child.done;
      assert.equal(out.code, 0, out.stderr);
      assert.deepEqual(JSON.parse(out.stdout), { removed: 4, written: 2 });
      assert.deepEqual(
        branchRows(file, 'alice', 'main').map((r) => r.message_type),
        ['compaction', 'user'],
      );

      const look = observeSessionFile(guard, reader);
      assert.equal(look.kind, 'rescanned');
      assert.deepEqual(
        look.layers.map((l) => [l.sessionId, l.branchId, l.removedCount]),
        [['alice', 'main', 4]],
      );
      const [layer] = guard.layersOf(file, 'alice', 'main');
      assert.equal(layer?.cause, 'another-writer');
      const items = guard.layerItems(layer!.layerId);
      assert.deepEqual(
        items.map((i) => i.messageData),
        mainBefore.map((r) => r.message_data),
      );
      assert.ok(items.every((i) => i.removed));

      const restored = await restoreLayerAsBranch(guard, layer!.layerId, { branchName: 'before-compaction' });
      assert.equal(restored.items, 4);
      assert.deepEqual(
        branchRows(file, 'alice', 'before-compaction'),
        mainBefore,
        'the same texts, types and user turn numbers as the branch had',
      );
      assert.deepEqual(branchRows(file, 'alice', 'alt'), altBefore);

      // Read back as Python would: a new session on the file, the fixture's own reader and Python's result shapes.
      const session = new AdvancedSQLiteSession({ sessionId: 'alice', dbPath: file });
      try {
        const branches = py.branches(await session.listBranches());
        // Sorted by id: main's rows and the restored branch were written within the same second (their created_at).
        assert.deepEqual(branches.map((b) => [b.branch_id, b.message_count, b.user_turns]).sort(), [
          ['alt', 4, 2],
          ['before-compaction', 4, 2],
          ['main', 2, 1],
        ]);
        assert.deepEqual(
          await session.getStoredItems(null, 'before-compaction'),
          mainBefore.map((r) => JSON.parse(r.message_data) as unknown),
        );
        assert.deepEqual(
          py.turns(await session.getConversationTurns('before-compaction')).map((t) => [t.turn, t.full_content, t.can_branch]),
          mainBefore
            .filter((r) => r.message_type === 'user')
            .map((r, i) => [i + 1, (JSON.parse(r.message_data) as { content: string }).content, true]),
        );
      } finally {
        session.close();
      }

      // The guard sees the restored rows as new rows, and records no removal for them.
      const after = observeSessionFile(guard, reader);
      assert.equal(after.kind, 'grown');
      assert.equal(after.rowsSeen, 4);
      assert.equal(guard.layersOf(file, 'alice').length, 1);
    } finally {
      reader.close();
      guard.close();
    }
  });
});
