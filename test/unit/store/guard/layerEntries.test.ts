/**
 * A history guard layer as the views read it (src/store/guard/layerEntries.ts, guardedFiles.ts): its items as entries
 * with the turns counted as the SDKs count them, the removed ones marked, an unreadable one reported (not skipped),
 * and the view's bound (the first `limit` items) applied by the store's read.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { guardLayer, guardLayerItems, guardLayers, lookAtGuardedFile, stopLookingAt } from '../../../../src/store/guard/guardedFiles';
import { layerEntries } from '../../../../src/store/guard/layerEntries';
import type { GuardLayerItem } from '../../../../src/store/guard/guardStore';
import { HistoryGuardError } from '../../../../src/store/guard/guardErrors';
import { Workspace, mk } from '../../../support/sessionHelpers';

describe('history guard layer entries', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-layer-entries-')));
  afterEach(() => {
    stopLookingAt(ws.path());
    ws.cleanup();
  });

  it("numbers a compacted branch's turns as the SDKs do, marks what was removed, and reads the first items only when asked", async () => {
    const guardPath = join(ws.dir, 'guard.db');
    const s = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: ws.path(), createTables: true }));
    await s.addItems([mk.raw({ role: 'system', content: 'be brief' }), mk.user('q1'), mk.assistant('a1')]);
    await s.addItems([mk.user('q2'), mk.call('lookup'), mk.output('c_lookup'), mk.assistant('a2')]);
    lookAtGuardedFile(ws.path(), guardPath);
    // Another writer compacts: everything goes, a compaction item takes its place.
    await s.replaceHistoryWithCompaction([mk.raw({ type: 'compaction', encrypted_content: 'summary' })]);
    const look = lookAtGuardedFile(ws.path(), guardPath);
    assert.equal(look.layers.length, 1);
    const [layer] = guardLayers(guardPath, ws.path(), 's1');
    assert.ok(layer);
    assert.deepEqual(guardLayer(guardPath, layer.layerId), layer);

    const entries = layerEntries(guardLayerItems(guardPath, layer.layerId));
    assert.deepEqual(
      entries.map((e) => [e.sequenceNumber, e.userTurnNumber, e.type, e.removed]),
      [
        [1, 0, 'other', true],
        [2, 1, 'user', true],
        [3, 1, 'assistant', true],
        [4, 2, 'user', true],
        [5, 2, 'function_call', true],
        [6, 2, 'function_call_output', true],
        [7, 2, 'assistant', true],
      ],
    );
    assert.equal(entries[4]?.toolName, 'lookup');
    assert.deepEqual(entries[1]?.corrupt === false && entries[1].item, { role: 'user', content: 'q1' });

    const firstThree = guardLayerItems(guardPath, layer.layerId, 3);
    assert.deepEqual(
      firstThree.map((i) => i.position),
      [0, 1, 2],
    );
    assert.throws(
      () => guardLayer(guardPath, layer.layerId + 100),
      (e: unknown) => e instanceof HistoryGuardError && e.problem === 'unknown-layer',
    );
  });

  it('reports an item whose stored text is not JSON as unreadable, in its place', () => {
    const items: GuardLayerItem[] = [
      { position: 0, messageData: '{"role": "user", "content": "hi"}', hash: 'a', removed: false },
      { position: 1, messageData: '{not json', hash: 'b', removed: true },
      { position: 2, messageData: '{"role": "user", "content": "again"}', hash: 'c', removed: true },
    ];
    const entries = layerEntries(items);
    assert.deepEqual(
      entries.map((e) => [e.corrupt, e.userTurnNumber, e.removed]),
      [
        [false, 1, false],
        [true, 1, true],
        [false, 2, true],
      ],
    );
    assert.equal(entries[1]?.corrupt === true && entries[1].raw, '{not json');
  });
});
