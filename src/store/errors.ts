/**
 * Error classes of the session store. The session API's classes and messages follow the Python SDK verbatim
 * (spec §11); `pythonType` names the Python exception so conformance tests can compare. The inspector's open errors
 * (`SessionDatabaseError`) say what is wrong with a file and what to do about it.
 */

/** Base class of every error the session API raises itself (SQLite's own errors pass through unchanged). */
/** The end of a writable connection's `locked` message: reading the file read-only may get past the lock. */
export const LOCKED_READ_ONLY_ADVICE = ', or open the database read-only.';

export class SessionError extends Error {
  readonly pythonType: string = 'Exception';
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A session method was called after `close()`. */
export class SessionClosedError extends SessionError {
  override readonly pythonType = 'RuntimeError';
  constructor() {
    super('SQLiteSession is closed');
  }
}

/** Any branch-method failure; nothing was changed. */
export class BranchError extends SessionError {
  override readonly pythonType = 'ValueError';
}

/** The file's structure tables belong to other base tables, or are missing (spec §3.3). */
export class TableOwnershipError extends SessionError {
  override readonly pythonType = 'ValueError';
}

/** An argument the API cannot accept (unknown settings, unserialisable items). */
export class InvalidArgumentError extends SessionError {
  override readonly pythonType = 'TypeError';
}

/** What is wrong with a database file, for the inspector to show. */
export type SessionDatabaseProblem =
  | 'not-found'
  | 'not-sqlite'
  | 'corrupt'
  | 'not-session-database'
  | 'locked'
  | 'read-only'
  | 'driver-unavailable'
  | 'io'
  /** The file was deleted (or moved away) while open; a write would have gone to the unlinked file. */
  | 'deleted'
  /** Another file now sits at the path (renamed or copied over it) while the connection still reads the old one. */
  | 'replaced'
  /**
   * The path's `-wal` file belongs to the file that was replaced (spec §11, stale-wal): SQLite would apply it to the new file
   * and show the old content. Move it aside (`moveStaleWalAside`) to open the new file.
   */
  | 'stale-wal'
  /**
   * A hot rollback journal: a writer of a rollback-journal (DELETE mode) file was killed mid-transaction and left its
   * `-journal`, and the file cannot be read as it is until that transaction is rolled back, which only a connection
   * that can write the file does (SQLite does it as such a connection opens the file; `repairSessionFile` does).
   */
  | 'hot-journal'
  /**
   * The disk had no room for a write (SQLITE_FULL): SQLite rolled the write back, so none of it is in the file.
   * Reading the file still works; writing it again needs space on its disk.
   */
  | 'disk-full';

/** A database could not be opened or read; `problem` classifies it and the message says what to do. */
export class SessionDatabaseError extends SessionError {
  override readonly pythonType = 'Exception';
  constructor(
    readonly problem: SessionDatabaseProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message);
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** SQLite result codes we translate (primary codes; extended codes reduce to these by `& 0xff`). */
const SQLITE_CODES: Record<number, string> = {
  3: 'SQLITE_PERM',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  26: 'SQLITE_NOTADB',
};

/** The primary SQLite code name of a driver error (`SQLITE_BUSY`, …), or undefined for non-SQLite errors. */
export function sqliteCodeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; errcode?: unknown };
  // better-sqlite3: code is the (extended) name, e.g. SQLITE_BUSY_SNAPSHOT.
  if (typeof e.code === 'string' && e.code.startsWith('SQLITE_')) {
    const name = e.code.replace(/^(SQLITE_[A-Z]+)(_.*)?$/, '$1');
    return name;
  }
  // node:sqlite: code is ERR_SQLITE_ERROR and errcode the numeric (extended) code.
  if (typeof e.errcode === 'number') return SQLITE_CODES[e.errcode & 0xff] ?? `SQLITE_${e.errcode & 0xff}`;
  return undefined;
}

/**
 * SQLITE_READONLY_ROLLBACK, the extended code of a read-only connection that met a hot journal: better-sqlite3 names
 * it, node:sqlite gives the number (SQLITE_READONLY | 3 << 8).
 */
function isHotJournalError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; errcode?: unknown };
  return e.code === 'SQLITE_READONLY_ROLLBACK' || e.errcode === 776;
}

/**
 * The extended codes of SQLITE_IOERR that name a write (of the file or its -wal/-journal, a sync, a truncation) or the
 * -shm a WAL database needs even to be read: on a full disk these, not a read, fail. By number for node:sqlite, whose
 * `errcode` is the extended code; better-sqlite3 names them in `code`.
 */
const IOERR_WRITES: Record<number, string> = {
  778: 'SQLITE_IOERR_WRITE',
  1034: 'SQLITE_IOERR_FSYNC',
  1290: 'SQLITE_IOERR_DIR_FSYNC',
  1546: 'SQLITE_IOERR_TRUNCATE',
};
const IOERR_SHM: Record<number, string> = {
  4618: 'SQLITE_IOERR_SHMOPEN',
  4874: 'SQLITE_IOERR_SHMSIZE',
  5386: 'SQLITE_IOERR_SHMMAP',
};

/** The extended SQLITE_IOERR code of a driver error when it is one of `codes`, or undefined. */
function ioErrorOf(err: unknown, codes: Record<number, string>): string | undefined {
  const e = err as { code?: unknown; errcode?: unknown };
  if (typeof e.code === 'string' && Object.values(codes).includes(e.code)) return e.code;
  return typeof e.errcode === 'number' ? codes[e.errcode] : undefined;
}

/**
 * Turns a driver error met while opening or reading `path` into a `SessionDatabaseError` with a remedy, or returns
 * the error unchanged when it is not one of the cases a user can act on.
 */
export function describeDatabaseError(err: unknown, path: string, options: { readonly?: boolean } = {}): unknown {
  if (err instanceof SessionDatabaseError) return err;
  const code = sqliteCodeOf(err);
  const detail = err instanceof Error ? err.message : String(err);
  // Before the read-only cases below: its message is SQLITE_READONLY's ("attempt to write a readonly database"), but
  // neither the folder nor a -shm is the matter.
  if (isHotJournalError(err)) {
    return new SessionDatabaseError(
      'hot-journal',
      `${path} cannot be read as it is (${detail}): a writer was killed in the middle of a transaction and left ${path}-journal, a hot rollback journal holding the pages it had begun to change. Opening the file once with a connection that can write it rolls that unfinished transaction back and keeps every commit: the doctor's repair does (agent-sessions doctor --fix, repairSessionFile), as do Python's sqlite3 and the sqlite3 shell; a read-only connection cannot. Where the file or its folder cannot be written, copy the file and its -journal together to a writable folder and open the copy.`,
      { cause: err },
    );
  }
  switch (code) {
    case 'SQLITE_NOTADB':
      return new SessionDatabaseError('not-sqlite', `${path} is not a SQLite database (${detail}).`, { cause: err });
    case 'SQLITE_CORRUPT':
      return new SessionDatabaseError(
        'corrupt',
        `${path} is corrupt or truncated (${detail}). Restore it from a backup, or recover what is left with the sqlite3 shell's .recover command.`,
        { cause: err },
      );
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return new SessionDatabaseError(
        'locked',
        `${path} is locked by another connection beyond the busy timeout (${detail}). Try again when the writer has finished` +
          (options.readonly ? '.' : LOCKED_READ_ONLY_ADVICE),
        { cause: err },
      );
    case 'SQLITE_READONLY':
    case 'SQLITE_CANTOPEN':
      if (options.readonly && (code === 'SQLITE_READONLY' || /wal|shm|shared memory/i.test(detail) || /unable to open/i.test(detail))) {
        // A reader of a WAL database needs its -shm file, and creates it when missing; in a folder it cannot write
        // that is impossible, even read-only.
        return new SessionDatabaseError(
          'read-only',
          `${path} cannot be read here (${detail}): SQLite needs to create ${path}-shm next to a WAL database to read it, and its folder cannot be written. Copy the file to a writable folder, or make the folder writable.`,
          { cause: err },
        );
      }
      if (code === 'SQLITE_CANTOPEN') {
        return new SessionDatabaseError(
          'io',
          `${path} cannot be opened (${detail}). Check that the file and its folder exist and are accessible.`,
          { cause: err },
        );
      }
      return new SessionDatabaseError(
        'read-only',
        `${path} cannot be written (${detail}). Open it read-only to inspect it, or make the file and its folder writable.`,
        { cause: err },
      );
    case 'SQLITE_FULL':
      // SQLite rolls back the statement or the whole transaction on SQLITE_FULL, and the callers roll back the rest.
      return new SessionDatabaseError(
        'disk-full',
        `${path} cannot be written: its disk is full (${detail}). SQLite rolled the write back, so nothing of it was written. Free space on that disk, or write to a file on another disk.`,
        { cause: err },
      );
    case 'SQLITE_IOERR': {
      // SQLite's message is "disk I/O error" whatever failed: its extended code says when it was not a read.
      const shm = ioErrorOf(err, IOERR_SHM);
      if (shm) {
        return new SessionDatabaseError(
          'io',
          `${path}-shm, the shared-memory file SQLite keeps beside a WAL database even to read it, cannot be created or grown (${detail}, ${shm}): its disk may be full. Free space on that disk, or copy the file to another disk.`,
          { cause: err },
        );
      }
      const write = ioErrorOf(err, IOERR_WRITES);
      if (write) {
        return new SessionDatabaseError(
          'io',
          `Writing ${path} failed (${detail}, ${write}): its disk may be full, or the file system refused the write.`,
          { cause: err },
        );
      }
      return new SessionDatabaseError('io', `Reading ${path} failed (${detail}).`, { cause: err });
    }
    default:
      return err;
  }
}
