/**
 * The history guard's layer reads through the store worker (VS Code's way, docs/history-guard.md "In VS Code"): the
 * layer's summary and its first items as the conversation view and the compare view ask for them, answered there with
 * the store's shapes; an unknown layer comes back as the same error class.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { HistoryGuardError } from '../../../../src/store/guard/guardErrors';
import { mk } from '../../../support/sessionHelpers';
import { useWorkerClient } from '../../../support/workerClient';

describe('history guard layers in the store worker', function () {
  this.timeout(30_000);
  const worker = useWorkerClient('asi-guard-worker-');

  it("answers a layer's summary and its first items, and refuses an unknown layer", async () => {
    const path = join(worker.dir, 'guarded.db');
    const guardPath = join(worker.dir, 'guard.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: path, createTables: true });
    try {
      await s.addItems([mk.user('q1'), mk.assistant('a1'), mk.user('q2'), mk.assistant('a2')]);
      const client = worker.client();
      await client.fileCall('lookAtGuardedFile', path, guardPath);
      await s.popItem();
      const look = await client.fileCall('lookAtGuardedFile', path, guardPath);
      assert.equal(look.layers.length, 1);
      const [listed] = await client.fileCall('guardLayers', guardPath, path, 's1');
      assert.ok(listed);
      assert.deepEqual(await client.fileCall('guardLayer', guardPath, listed.layerId), listed);
      const first = await client.fileCall('guardLayerItems', guardPath, listed.layerId, 2);
      assert.deepEqual(
        first.map((i) => [i.position, i.removed]),
        [
          [0, false],
          [1, false],
        ],
      );
      assert.equal((await client.fileCall('guardLayerItems', guardPath, listed.layerId)).length, 4);
      await assert.rejects(
        client.fileCall('guardLayer', guardPath, listed.layerId + 1),
        (e: unknown) => e instanceof HistoryGuardError && e.problem === 'unknown-layer',
      );
    } finally {
      s.close();
      await worker.client().fileCall('stopLookingAt', path);
    }
  });
});
