/**
 * Which file a connection has open. SQLite keeps using the file it opened, even after that file is deleted or another
 * file is renamed over its path: writes then land in an unlinked file (lost when the connection closes) or in a file
 * nobody sees, and reads show stale data. Comparing the path's device and inode with those seen at open tells, with
 * one `stat` (about a microsecond), whether the path still names the open file.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { SessionDatabaseError } from '../errors';

/** What the path names now, compared with what was opened. */
export type FileState = 'ok' | 'deleted' | 'replaced';

export interface FileIdentity {
  /** The path as the caller gave it (for messages). */
  readonly path: string;
  /** The path made absolute at open, so a later `process.chdir` does not change which file is checked. */
  readonly absolutePath: string;
  readonly dev: bigint;
  readonly ino: bigint;
}

/** The identity of the file at `path` now, or undefined for `:memory:`, `''` (temporary) or a path that is gone. */
export function captureFileIdentity(path: string): FileIdentity | undefined {
  if (path === ':memory:' || path === '' || path.startsWith('file:')) return undefined;
  const absolutePath = resolve(path);
  const st = statSync(absolutePath, { bigint: true, throwIfNoEntry: false });
  if (!st) return undefined;
  return { path, absolutePath, dev: st.dev, ino: st.ino };
}

/** Whether the path still names the file that was opened. */
export function fileStateOf(identity: FileIdentity | undefined): FileState {
  if (!identity) return 'ok';
  let st;
  try {
    st = statSync(identity.absolutePath, { bigint: true, throwIfNoEntry: false });
  } catch {
    // A folder that became unreadable, say: the file cannot be confirmed, which for writing means it is gone.
    return 'deleted';
  }
  if (!st) return 'deleted';
  return st.dev === identity.dev && st.ino === identity.ino ? 'ok' : 'replaced';
}

/**
 * Throws `SessionDatabaseError('deleted' | 'replaced')` when the path no longer names the open file. `doing` says
 * what was refused ("nothing was written", "it was not read") for the message.
 */
export function assertSameFile(identity: FileIdentity | undefined, doing: 'write' | 'read'): void {
  const state = fileStateOf(identity);
  if (state === 'ok' || !identity) return;
  const outcome = doing === 'write' ? 'nothing was written' : 'it was not read';
  if (state === 'deleted') {
    throw new SessionDatabaseError(
      'deleted',
      `${identity.path} was deleted or moved while it was open, so ${outcome}. Restore the file and reopen it, or close it.`,
    );
  }
  throw new SessionDatabaseError(
    'replaced',
    `${identity.path} was replaced by another file while it was open, so ${outcome}. Reopen the file to use the new one.`,
  );
}
