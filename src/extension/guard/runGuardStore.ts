/**
 * Where our runs record what a compaction replaced (runSession's `guardStorePath`, docs/history-guard.md): the guard
 * store the extension's GuardService keeps, once it has started. Kept apart from the service so that the run store
 * (src/extension/runs/workerRunStore.ts) reads it without loading `vscode` — the unit tests run that store in plain
 * Node.
 */
import { mkdirSync } from 'node:fs';

let storeForRuns: { folder: string; path: string } | undefined;

/** Set by the guard service when it starts (`undefined` when it stops). */
export function setGuardStoreForRuns(store: { folder: string; path: string } | undefined): void {
  storeForRuns = store;
}

/** Whether runs record into the store at `path` (a stopped service clears only its own). */
export function guardStoreForRunsIs(path: string): boolean {
  return storeForRuns?.path === path;
}

/**
 * The guard store our runs record their compaction into (even for files not guarded), once the extension has started
 * the guard service; undefined before. Its folder is made here, on a run's first use, not at activation: the store
 * refuses a missing folder as a read-only place.
 */
export function guardStoreForRuns(): string | undefined {
  if (!storeForRuns) return undefined;
  try {
    mkdirSync(storeForRuns.folder, { recursive: true });
  } catch {
    // The store then refuses the place with its own error, which fails the compaction: nothing is lost.
  }
  return storeForRuns.path;
}
