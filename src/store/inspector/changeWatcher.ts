/**
 * A cheap "did the file change?" test, so the extension can poll (or react to a file-system event) without
 * re-reading anything: two counters SQLite keeps per connection, read with one prepared statement.
 */
import { describeDatabaseError, sqliteCodeOf } from '../errors';
import type { SqliteDatabase, SqliteStatement } from '../sqlite/sqliteDatabase';

/** Reports whether the database changed since the watcher last looked. */
export interface ChangeWatcher {
  /**
   * True when anything was committed to the database since this watcher was created or last called: by another
   * connection or process (`PRAGMA data_version`), or by row changes on this connection (`total_changes()`, which
   * `data_version` does not count). Each call moves the mark, so call it *before* re-reading: a change that lands
   * between the call and the read is then reported again by the next call, never lost.
   *
   * Costs one prepared statement step (about 2 µs) and holds no transaction: the statement's implicit read
   * transaction ends when it returns. When another connection holds a lock that stops even reads (a rollback-journal
   * file mid-write, or a WAL file in exclusive locking mode) it answers true at once instead of waiting out the busy
   * timeout: the file is being written. Not counted: schema changes made on this connection, which the inspector
   * never makes.
   */
  hasChanged(): boolean;
}

/** A watcher on `db`, starting from the database's current state. Errors become `SessionDatabaseError`s. */
export function createChangeWatcher(db: SqliteDatabase): ChangeWatcher {
  const path = db.path;
  const read: SqliteStatement = db.prepare('SELECT (SELECT data_version FROM pragma_data_version) AS v, total_changes() AS c');
  const timeoutMs = db.prepare('PRAGMA busy_timeout').get<{ timeout: number }>()?.timeout ?? 0;
  const noWait = db.prepare('PRAGMA busy_timeout = 0');
  const restore = db.prepare(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
  const sample = (): { v: number; c: number } | 'busy' => {
    // Reading data_version takes a shared lock for an instant; never wait for it (the busy handler would sleep).
    noWait.get();
    try {
      const row = read.get<{ v: number | bigint; c: number | bigint }>();
      return { v: Number(row?.v ?? 0), c: Number(row?.c ?? 0) };
    } catch (err) {
      const code = sqliteCodeOf(err);
      if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return 'busy';
      throw describeDatabaseError(err, path);
    } finally {
      restore.get();
    }
  };
  let mark = sample();
  return {
    hasChanged(): boolean {
      const now = sample();
      if (now === 'busy') return true;
      const changed = mark === 'busy' || now.v !== mark.v || now.c !== mark.c;
      mark = now;
      return changed;
    },
  };
}
