/**
 * Which file a connection has open. SQLite keeps using the file it opened, even after that file is deleted or another
 * file is renamed over its path: writes then land in an unlinked file (lost when the connection closes) or in a file
 * nobody sees, and reads show stale data. Comparing the path's device and inode with those seen at open tells, with
 * one `stat` (about a microsecond), whether the path still names the open file.
 */
import { existsSync, renameSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { SessionDatabaseError } from '../errors';
import { foreignWalAt, walSaltsAt, walUnwrittenSinceReplaced, walWrittenSinceMainChanged, type WalIdentity } from './foreignWal';
import type { SqliteDatabase } from './sqliteDatabase';

export type { WalIdentity } from './foreignWal';

/** What the path names now, compared with what was opened. */
export type FileState = 'ok' | 'deleted' | 'replaced';

export interface FileIdentity {
  /** The path as the caller gave it (for messages). */
  readonly path: string;
  /** The path made absolute at open, so a later `process.chdir` does not change which file is checked. */
  readonly absolutePath: string;
  readonly dev: bigint;
  readonly ino: bigint;
  /**
   * The `-wal` file this connection had open (set by `noteWal` once the connection is in WAL mode): when another file
   * replaces the database, that `-wal` stays at the path and would be applied to the new file (spec §11, stale-wal).
   */
  wal?: WalIdentity;
}

/** The identity of the file at `path` now, or undefined for `:memory:`, `''` (temporary) or a path that is gone. */
export function captureFileIdentity(path: string): FileIdentity | undefined {
  if (path === ':memory:' || path === '' || path.startsWith('file:')) return undefined;
  const absolutePath = resolve(path);
  const st = statSync(absolutePath, { bigint: true, throwIfNoEntry: false });
  if (!st) return undefined;
  return { path, absolutePath, dev: st.dev, ino: st.ino };
}

/** The `-wal` at the path, when it holds at least one frame: an empty one, or a bare 32-byte header, changes nothing. */
function walIdentityAt(absolutePath: string): WalIdentity | undefined {
  const st = statSync(`${absolutePath}-wal`, { bigint: true, throwIfNoEntry: false });
  return st && st.size > 32n ? { dev: st.dev, ino: st.ino } : undefined;
}

/** Notes which `-wal` the connection has open now (call once it is in WAL mode and has read). */
export function noteWal(identity: FileIdentity | undefined): void {
  if (!identity || fileStateOf(identity) !== 'ok') return;
  const st = statSync(`${identity.absolutePath}-wal`, { bigint: true, throwIfNoEntry: false });
  // Noted even while empty: it fills as the connection (or another on the same file) writes.
  identity.wal = st ? { dev: st.dev, ino: st.ino } : undefined;
}

/**
 * `-wal` files known to belong to a replaced database, by the database's absolute path. Process-wide, so that a fresh
 * open of the path in this process refuses instead of showing the old file's content; the extension also keeps them
 * across restarts (`markStaleWal`).
 */
const staleWals = new Map<string, WalIdentity>();

/** Records that the `-wal` at `dbPath` (if it is still `wal`) belongs to a replaced file. */
export function markStaleWal(dbPath: string, wal: WalIdentity): void {
  staleWals.set(resolve(dbPath), wal);
}

/**
 * The stale `-wal` at `dbPath`: one recorded as belonging to a replaced file, or one whose times and frames say it
 * cannot belong to the main file now at the path (`foreignWal.ts`), whoever held the replaced file.
 */
export function staleWalAt(dbPath: string): WalIdentity | undefined {
  const absolutePath = resolve(dbPath);
  const known = staleWals.get(absolutePath);
  if (known) {
    const now = walIdentityAt(absolutePath);
    const sameStart = known.salts === undefined || known.salts === walSaltsAt(absolutePath);
    if (now && now.dev === known.dev && now.ino === known.ino && sameStart) return known;
    // Gone, another -wal, or this one started over by the new file's connections: nothing stale any more.
    staleWals.delete(absolutePath);
  }
  return foreignWalAt(absolutePath);
}

/** The message for a stale `-wal` at `path`. */
export function staleWalMessage(path: string): string {
  const name = basename(path);
  return (
    `${name}-wal belongs to the file that ${name} replaced: SQLite would apply it to the new file, which would then ` +
    `show the old file's content (and the first writer would merge the old pages into it). Move ${name}-wal aside ` +
    `(it is kept, renamed) to open the new file.`
  );
}

/** Refuses to open `dbPath` while a stale `-wal` sits beside it. */
export function assertNoStaleWal(dbPath: string): void {
  if (staleWalAt(dbPath)) throw new SessionDatabaseError('stale-wal', staleWalMessage(dbPath));
}

/**
 * Moves the stale `-wal` (and its `-shm`, which indexes it) beside the database under a new name
 * (`<name>-wal.replaced-<time>`); never deletes anything. Returns the new paths. Refuses when the path's `-wal` is not
 * stale by `staleWalAt` (recorded, or found by its times and frames): a live database's `-wal` holds committed data.
 */
export function moveStaleWalAside(dbPath: string, clock: () => Date = () => new Date()): string[] {
  const absolutePath = resolve(dbPath);
  if (!staleWalAt(absolutePath)) {
    throw new SessionDatabaseError('io', `${basename(dbPath)}-wal is not known to belong to a replaced file, so it was left where it is.`);
  }
  const stamp = clock().toISOString().replace(/[:.]/g, '-');
  const moved: string[] = [];
  for (const suffix of ['-wal', '-shm']) {
    const from = `${absolutePath}${suffix}`;
    if (!existsSync(from)) continue;
    const to = `${from}.replaced-${stamp}`;
    if (existsSync(to)) throw new SessionDatabaseError('io', `${to} exists already; nothing was moved.`);
    renameSync(from, to);
    moved.push(to);
  }
  staleWals.delete(absolutePath);
  return moved;
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

/** What a refused call did not do, for the messages. */
const OUTCOME = { write: 'nothing was written', read: 'it was not read', call: 'nothing was read or written' } as const;

/**
 * Throws `SessionDatabaseError('deleted' | 'replaced')` when the path no longer names the open file. `doing` says
 * what was refused ("nothing was written", "it was not read") for the message.
 */
export function assertSameFile(identity: FileIdentity | undefined, doing: 'write' | 'read'): void {
  const state = fileStateOf(identity);
  if (state === 'ok' || !identity) return;
  if (state === 'deleted') {
    throw new SessionDatabaseError(
      'deleted',
      `${identity.path} was deleted or moved while it was open, so ${OUTCOME[doing]}. Restore the file and reopen it, or close it.`,
    );
  }
  throw replacedError(identity, doing);
}

/**
 * The `replaced` error for a connection whose path names another file now. When the connection's `-wal` is still
 * at the path with frames in it, and nobody wrote it since the new file arrived, it is remembered as stale, so a
 * reopen in this process refuses instead of showing the old content, and the message says what to do.
 */
export function replacedError(identity: FileIdentity, doing: keyof typeof OUTCOME): SessionDatabaseError {
  const wal = identity.wal;
  const walNow = walIdentityAt(identity.absolutePath);
  // Not when someone wrote it since the new file arrived: those frames are the new file's.
  const stale =
    wal !== undefined &&
    walNow !== undefined &&
    walNow.dev === wal.dev &&
    walNow.ino === wal.ino &&
    !walWrittenSinceMainChanged(identity.absolutePath);
  if (stale) {
    const salts = walSaltsAt(identity.absolutePath);
    markStaleWal(identity.absolutePath, { dev: wal.dev, ino: wal.ino, ...(salts ? { salts } : {}) });
  }
  return new SessionDatabaseError(
    'replaced',
    `${identity.path} was replaced by another file while it was open, so ${OUTCOME[doing]}. ` +
      (stale ? staleWalMessage(identity.path) : 'Reopen the file to use the new one.'),
  );
}

/**
 * A holder's step aside once its path names another file (spec §11): a writable connection copies its `-wal`'s
 * frames into its own, old file and empties the `-wal` (`wal_checkpoint(TRUNCATE)`), so the path's `-wal` no longer
 * hides the new file from fresh connections. Only when nobody wrote the path's `-wal` since the replacement
 * (`walUnwrittenSinceReplaced`): frames written after it are the new file's, and must not go into the old one.
 * (When the path's `-wal` is not the one this connection has open, the checkpoint only empties our own: harmless.)
 * A read-only connection cannot write its old file (SQLite fails the checkpoint), so it leaves the `-wal` to the
 * fresh opens' check. Never throws: the caller refuses the call either way.
 */
export function releaseReplacedWal(db: SqliteDatabase, identity: FileIdentity): void {
  if (db.readonly || !walUnwrittenSinceReplaced(identity.absolutePath)) return;
  try {
    db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
  } catch {
    // Busy past the timeout (another process reads the old file), say: the -wal stays, and fresh opens refuse it.
  }
}
