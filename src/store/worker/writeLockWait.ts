/**
 * Waiting for another connection's write lock without holding the worker's thread. SQLite's own busy wait (the busy
 * timeout, or `retryWhileBusy`) blocks the thread it runs on, and a cancel cannot reach it; so before a write the
 * worker asks for the lock itself, with no busy timeout, and between tries sleeps on its event loop, where the host's
 * `cancel` arrives. Once the lock was free the write runs as always (with its own busy timeout for the rare writer
 * that slips in between).
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { openDatabase } from '../drivers/openDatabase';
import { SessionDatabaseError, sqliteCodeOf } from '../errors';
import { staleWalAt } from '../sqlite/fileIdentity';
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';

/** How long a write waits for the lock unless told otherwise: the SDKs' busy timeout. */
export const DEFAULT_LOCK_WAIT_MS = 5000;
/** The pause between two tries. */
const RETRY_MS = 25;

/** Thrown when the host cancelled the write while it waited: nothing was written. */
export class WriteCancelledWhileWaiting extends Error {}

export interface LockWait {
  /** Give up after this long with `locked`. */
  budgetMs: number;
  /** True once the host has cancelled the request. */
  cancelled(): boolean;
  /** Called once, when the first try finds the lock taken. */
  onWaiting(): void;
}

/**
 * Resolves once `path`'s write lock was free (taken and released at once), or at once when the file does not exist
 * yet, cannot be written or has a stale `-wal` beside it (the write then reports that itself). Rejects with `SessionDatabaseError('locked')` after
 * `budgetMs`, and with `WriteCancelledWhileWaiting` when cancelled.
 */
export async function waitForWriteLock(path: string, wait: LockWait): Promise<void> {
  // A replaced file's -wal beside the path (format spec §11): this connection, closing as the last one on the new
  // file, would checkpoint the old frames into it. The write that follows refuses the path with stale-wal.
  if (!existsSync(path) || staleWalAt(path)) return;
  let db: SqliteDatabase;
  try {
    db = openDatabase(path, { fileMustExist: true, busyTimeoutMs: 0 });
  } catch {
    return;
  }
  const started = Date.now();
  let announced = false;
  try {
    for (;;) {
      try {
        db.exec('BEGIN IMMEDIATE');
        db.exec('ROLLBACK');
        return;
      } catch (err) {
        const code = sqliteCodeOf(err);
        if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') return;
      }
      if (!announced) {
        announced = true;
        wait.onWaiting();
      }
      if (wait.cancelled()) throw new WriteCancelledWhileWaiting();
      if (Date.now() - started >= wait.budgetMs) {
        throw new SessionDatabaseError(
          'locked',
          `${basename(path)} is locked by another connection (another process is writing) beyond ${wait.budgetMs} ms, so nothing was written. Try again when the writer has finished.`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  } finally {
    db.close();
  }
}
