/**
 * What the store worker runs for the extension's history guard (src/store/guard/guardedFiles.ts), called in this
 * thread: looks through a connection kept open between calls, a file replaced at its path opened again (its first
 * look, the old file's layers kept and marked), layers and disk use read while no guard store exists yet (none, and
 * nothing created), and a stopped file's connection closed.
 */
import { strict as assert } from 'node:assert';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { guardDiskUse, guardLayerItems, guardLayers, lookAtGuardedFile, stopLookingAt } from '../../../../src/store/guard/guardedFiles';
import { HistoryGuardError } from '../../../../src/store/guard/guardErrors';
import { Workspace, mk, withDb } from '../../../support/sessionHelpers';

describe('history guard in the store worker', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-guarded-')));
  afterEach(() => {
    stopLookingAt(ws.path());
    ws.cleanup();
  });

  it('answers reads with nothing while no guard store exists, and creates none', () => {
    const guardPath = join(ws.dir, 'guard.db');
    assert.deepEqual(guardLayers(guardPath, ws.path(), 's1'), []);
    assert.equal(guardDiskUse(guardPath), null);
    assert.throws(
      () => guardLayerItems(guardPath, 1),
      (e: unknown) => e instanceof HistoryGuardError && e.problem === 'unknown-layer',
    );
    assert.equal(existsSync(guardPath), false);
  });

  it('looks through one connection, and opens a file replaced at its path again', async () => {
    const guardPath = join(ws.dir, 'guard.db');
    const s = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: ws.path(), createTables: true }));
    await s.addItems([mk.user('q1'), mk.assistant('a1')]);
    assert.equal(lookAtGuardedFile(ws.path(), guardPath).kind, 'first');
    await s.addItems([mk.user('q2')]);
    assert.equal(lookAtGuardedFile(ws.path(), guardPath).kind, 'grown');
    await s.popItem();
    const popped = lookAtGuardedFile(ws.path(), guardPath);
    assert.equal(popped.layers.length, 1);
    s.close();

    const other = join(ws.dir, 'other.db');
    withDb(ws.path(), (db) => db.prepare('VACUUM INTO ?').run(other));
    for (const sidecar of ['-wal', '-shm']) rmSync(ws.path() + sidecar, { force: true });
    renameSync(other, ws.path());
    assert.equal(lookAtGuardedFile(ws.path(), guardPath).kind, 'first');
    // The pop's layer and the old file's list as last seen, both under the old identity.
    const [lastSeen, layer] = guardLayers(guardPath, ws.path(), 's1');
    assert.deepEqual([lastSeen?.removedCount, lastSeen?.oldIdentity], [0, true]);
    assert.equal(layer?.oldIdentity, true);
    assert.deepEqual(
      guardLayerItems(guardPath, layer!.layerId).map((i) => i.removed),
      [false, false, true],
    );
    assert.equal(guardDiskUse(guardPath)?.layers, 2);
  });
});
