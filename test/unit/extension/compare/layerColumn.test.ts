/**
 * *Compare with Branch Now* (docs/history-guard.md): a history guard layer as a compare column read from the guard
 * store (src/extension/compare/layerColumn.ts) beside its branch as it is now, with nothing restored into the file:
 * its own turns (counted in the layer), aligned with the branch by content (a layer shares no rows with it), its tools
 * counted from its calls, no usage; the session file gets no branch.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { CompareData, type ColumnSource } from '../../../../src/extension/compare/compareData';
import { LayerReader } from '../../../../src/extension/compare/layerColumn';
import type { CompareTarget } from '../../../../src/shared/protocol/compareViews';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../../../src/store';
import { guardLayerItems, guardLayers, lookAtGuardedFile, stopLookingAt } from '../../../../src/store/guard/guardedFiles';
import { layerEntries } from '../../../../src/store/guard/layerEntries';
import { Workspace, mk } from '../../../support/sessionHelpers';

describe('a history layer as a compare column', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-layer-column-')));
  afterEach(() => {
    stopLookingAt(ws.path());
    ws.cleanup();
  });

  it('compares the layer with the branch as it is now, without restoring it', async () => {
    const guardPath = join(ws.dir, 'guard.db');
    const s = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: ws.path(), createTables: true }));
    await s.addItems([mk.user('q1'), mk.call('lookup'), mk.output('c_lookup'), mk.assistant('a1')]);
    await s.addItems([mk.user('q2'), mk.call('lookup', { callId: 'c2' }), mk.output('c2'), mk.assistant('a2')]);
    lookAtGuardedFile(ws.path(), guardPath);
    await s.replaceHistoryWithCompaction([mk.raw({ type: 'compaction', encrypted_content: 'summary' })]);
    await s.addItems([mk.user('q3'), mk.assistant('a3')]);
    lookAtGuardedFile(ws.path(), guardPath);
    const [layer] = guardLayers(guardPath, ws.path(), 's1');
    assert.ok(layer);

    const db = openSessionDatabase(ws.path());
    try {
      const branchesBefore = db.getBranchTree('s1').map((b) => b.branchId);
      const source = (t: CompareTarget): ColumnSource =>
        t.layerId !== undefined
          ? {
              reader: new LayerReader(t.branchId, async () => ({ entries: layerEntries(guardLayerItems(guardPath, t.layerId!)) })),
              dbName: 'guard',
              pricing: { model: null, price: null },
            }
          : { reader: db, dbName: 'file', pricing: { model: null, price: null } };
      const data = new CompareData(
        [
          { dbPath: ws.path(), sessionId: 's1', branchId: 'main', layerId: layer.layerId, label: 'before compaction' },
          { dbPath: ws.path(), sessionId: 's1', branchId: 'main' },
        ],
        source,
      );
      const view = await data.view();
      assert.deepEqual(
        view.columns.map((c) => [c.label, c.turns, c.problem]),
        [
          ['before compaction', 2, null],
          [null, 1, null],
        ],
      );
      assert.equal(view.sharedBy, 'content', 'a layer shares no structure rows with its branch');
      assert.equal(view.sharedTurns, 0);

      const { rows } = await data.rows(0, 10);
      const texts = rows.map((r) => r.sides.map((side) => (side ? JSON.stringify(side) : null)));
      assert.equal(rows.length, 2);
      assert.ok(texts[0]![0]!.includes('q1') && texts[0]![1]!.includes('q3'), JSON.stringify(texts[0]));
      assert.ok(texts[1]![0]!.includes('q2') && texts[1]![1] === null, JSON.stringify(texts[1]));

      const summary = await data.summary();
      assert.deepEqual(summary.columns[0]?.tools, [{ name: 'lookup', calls: 2 }]);
      assert.equal(summary.columns[0]?.usage.totalTokens, null, 'the guard keeps items, not usage');
      assert.deepEqual(
        db.getBranchTree('s1').map((b) => b.branchId),
        branchesBefore,
        'nothing restored into the session file',
      );
    } finally {
      db.close();
    }
  });

  it('refuses the reads a layer cannot answer, by name', async () => {
    const reader = new LayerReader('main', async () => ({ entries: [] }));
    assert.deepEqual(await reader.getBranchTree(), [
      { branchId: 'main', messageCount: 0, userTurns: 0, createdAt: null, parentBranchId: null, forkTurn: null },
    ]);
    assert.throws(() => reader.getItemsPage(), /A history layer has no item pages/);
  });
});
