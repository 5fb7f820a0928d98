/**
 * The `-wal` and `-shm` files a read-only connection leaves beside a WAL database. Reading one creates them (an empty
 * `-wal` and the shared-memory index) and a read-only connection cannot remove them when it closes: that is the last
 * connection's checkpoint, which needs write access. A reader that should leave a folder as it found it (the MCP
 * server, which a coding agent may run over any session file) marks which existed before it opened the file and,
 * after closing, lets SQLite remove the ones it left.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { openDatabase } from '../drivers/openDatabase';

/** Which of a database's `-wal` and `-shm` files existed before a reader opened it. */
export interface SidecarMark {
  path: string;
  hadWal: boolean;
  hadShm: boolean;
}

/** Notes which of `path`'s `-wal` and `-shm` exist now; call it before opening the file. */
export function markSidecars(path: string): SidecarMark {
  const abs = resolve(path);
  return { path: abs, hadWal: existsSync(`${abs}-wal`), hadShm: existsSync(`${abs}-shm`) };
}

/**
 * After the reader closed: when neither file existed before and the `-wal` is still empty (nobody wrote since), opens
 * a read-write connection that reads one row and closes. SQLite then removes both, but only when that connection is
 * the last one on the file, decided under its own locks: a file another process has open keeps them, and an empty
 * `-wal` means the close checkpoints nothing, so the database file is not written. Best effort: a file that cannot
 * be written, or any error, leaves them where they are. Returns whether they are gone.
 */
export function removeSidecarsLeft(mark: SidecarMark): boolean {
  const wal = `${mark.path}-wal`;
  const shm = `${mark.path}-shm`;
  if (mark.hadWal || mark.hadShm) return false;
  try {
    if (!existsSync(wal) && !existsSync(shm)) return true;
    if (!existsSync(mark.path) || (existsSync(wal) && statSync(wal).size !== 0)) return false;
    const db = openDatabase(mark.path, { fileMustExist: true });
    try {
      // No write can happen on this connection, whatever it is asked.
      db.exec('PRAGMA query_only = 1');
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
  return !existsSync(wal) && !existsSync(shm);
}
