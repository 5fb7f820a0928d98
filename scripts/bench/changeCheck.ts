/**
 * The store side of the change check, on a second connection to the file: the store's `createChangeWatcher` (what
 * the extension polls), and for reference a bare `PRAGMA data_version` through the store's `openDatabase` adapter.
 */
import { createChangeWatcher, openDatabase } from '../../src/store';

export interface ChangeCheck {
  /** What performs the check, for the report. */
  readonly via: string;
  /** Runs the check; the result is whatever the API answers (a flag or a counter). */
  check(): unknown;
  close(): void;
}

/** `createChangeWatcher(openDatabase(path, { readonly: true })).hasChanged()`. */
export function openStoreChangeWatcher(path: string): ChangeCheck {
  const db = openDatabase(path, { readonly: true, fileMustExist: true });
  const watcher = createChangeWatcher(db);
  return {
    via: 'createChangeWatcher(openDatabase(path, { readonly: true })).hasChanged() from src/store',
    check: () => watcher.hasChanged(),
    close: () => db.close(),
  };
}

/** `PRAGMA data_version` through the store's driver adapter: the watcher's floor on the store's own interface. */
export function openStorePragmaCheck(path: string): ChangeCheck {
  const db = openDatabase(path, { readonly: true, fileMustExist: true });
  const stmt = db.prepare('PRAGMA data_version');
  return {
    via: "openDatabase(path, { readonly: true }).prepare('PRAGMA data_version').get() from src/store",
    check: () => stmt.get<{ data_version: number }>()?.data_version ?? -1,
    close: () => db.close(),
  };
}
