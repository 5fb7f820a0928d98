/**
 * The history guard as the store worker runs it (docs/history-guard.md): the functions the host calls by a file's
 * path (`FILE_FUNCTIONS`), each guarded file's read-only connection and each guard store kept open between calls, so
 * a look after a live refresh costs what `observeSessionFile` costs and no open.
 */
import { existsSync } from 'node:fs';
import { openSessionDatabase, type SessionDatabase } from '../inspector/sessionDatabase';
import { HistoryGuardError } from './guardErrors';
import { HistoryGuardStore, type GuardDiskUse, type GuardLayer, type GuardLayerItem } from './guardStore';
import { observeSessionFile, type GuardLook } from './guardObserver';

/**
 * How long the extension's look at a guarded file waits after the change event that asks for it
 * (src/extension/guard/guardService.ts). The same event makes the live refresh: the view's requests reach the store
 * worker a few ms later, and a look queued before them made the user's catch-up after an append about twice as long
 * (scripts/bench/guardCatchUp.ts, docs/history-guard.md "Performance"); after the wait the look runs behind them. A
 * change that comes during the wait joins the same look.
 */
export const GUARD_LOOK_DELAY_MS = 250;

const stores = new Map<string, HistoryGuardStore>();
const files = new Map<string, SessionDatabase>();

/**
 * The guard store at `guardPath`, kept open between calls while the path names the file it opened: a store deleted or
 * replaced at its path (a cleanup, a restore from backup) is closed and the path opened again (created when gone), so
 * no layer goes into an unlinked file that is lost when the worker ends.
 */
function storeAt(guardPath: string): HistoryGuardStore {
  let store = stores.get(guardPath);
  if (store && !store.atItsPath()) {
    store.close();
    stores.delete(guardPath);
    store = undefined;
  }
  if (!store) {
    store = HistoryGuardStore.open(guardPath);
    stores.set(guardPath, store);
  }
  return store;
}

/**
 * The guard store for reading, or undefined while none exists (nothing was guarded or compacted yet): a read never
 * creates one, as the other stores of ours are created by their first write (storeOnDemand.ts).
 */
function existingStore(guardPath: string): HistoryGuardStore | undefined {
  if (!stores.get(guardPath)?.atItsPath() && !existsSync(guardPath)) return undefined;
  try {
    return storeAt(guardPath);
  } catch (err) {
    if (err instanceof HistoryGuardError && (err.problem === 'not-found' || err.problem === 'read-only')) return undefined;
    throw err;
  }
}

/**
 * A look at the guarded file `sessionPath`, recorded in the guard store at `guardPath` (see `observeSessionFile`). A
 * file replaced or deleted at its path is opened again: its first look starts the new file's list.
 */
export function lookAtGuardedFile(sessionPath: string, guardPath: string): GuardLook {
  const store = storeAt(guardPath);
  let db = files.get(sessionPath);
  if (db && (!db.isOpen || db.fileState() !== 'ok')) {
    db.close();
    db = undefined;
  }
  if (!db) {
    db = openSessionDatabase(sessionPath, { readonly: true });
    files.set(sessionPath, db);
  }
  return observeSessionFile(store, db);
}

/** Closes the guard's connection to `sessionPath` (the guard was turned off, or the file closed). */
export function stopLookingAt(sessionPath: string): void {
  files.get(sessionPath)?.close();
  files.delete(sessionPath);
}

/** The layers of a session (one branch with `branchId`), newest first; none while no guard store exists. */
export function guardLayers(guardPath: string, sessionPath: string, sessionId: string, branchId?: string): GuardLayer[] {
  return existingStore(guardPath)?.layersOf(sessionPath, sessionId, branchId) ?? [];
}

/** A layer's items, its first `limit` (default all; `HistoryGuardError('unknown-layer')` when there is none). */
export function guardLayerItems(guardPath: string, layerId: number, limit?: number): GuardLayerItem[] {
  const store = existingStore(guardPath);
  if (!store) throw new HistoryGuardError('unknown-layer', `There is no history guard store at ${guardPath}, so no layer ${layerId}.`);
  return store.layerItems(layerId, limit);
}

/** Layer `layerId`'s summary (`HistoryGuardError('unknown-layer')` when there is none). */
export function guardLayer(guardPath: string, layerId: number): GuardLayer {
  const store = existingStore(guardPath);
  if (!store) throw new HistoryGuardError('unknown-layer', `There is no history guard store at ${guardPath}, so no layer ${layerId}.`);
  const { path: _path, ...layer } = store.layer(layerId);
  return layer;
}

/** What the guard store holds, or null while there is none. */
export function guardDiskUse(guardPath: string): GuardDiskUse | null {
  return existingStore(guardPath)?.diskUse() ?? null;
}
