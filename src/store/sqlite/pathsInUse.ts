/**
 * The database paths this process has SQLite connections open on. POSIX advisory locks belong to the process, and
 * closing any descriptor of a file drops all of the process's locks on that file: reading a database's `-shm` with
 * an open and a close of our own would silently release the locks SQLite holds on it for this process's
 * connections (SQLite itself shares one descriptor per file among its connections for this reason). So
 * `foreignWal.ts` reads a `-shm` only when no connection of this process was opened at that path. Counted by
 * `openDatabase`, the one place a driver connection is made; a connection its owner never closes stays counted,
 * which only makes that check more careful.
 */
import { resolve } from 'node:path';

const openAt = new Map<string, number>();

/** Counts a connection opened at `path`; returns the function that uncounts it (idempotent). */
export function countConnection(path: string): () => void {
  if (path === ':memory:' || path === '' || path.startsWith('file:')) return () => undefined;
  const key = resolve(path);
  openAt.set(key, (openAt.get(key) ?? 0) + 1);
  let counted = true;
  return () => {
    if (!counted) return;
    counted = false;
    const left = (openAt.get(key) ?? 1) - 1;
    if (left > 0) openAt.set(key, left);
    else openAt.delete(key);
  };
}

/** Whether a connection of this process is open at `absolutePath` (to whichever file was there when it opened). */
export function hasConnectionAt(absolutePath: string): boolean {
  return openAt.has(absolutePath);
}
