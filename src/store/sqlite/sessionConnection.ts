/**
 * Opening a session database with the connection settings of spec §3.1, shared by both session classes and the
 * inspector: WAL (persisted in the file), foreign keys off (better-sqlite3 builds enable them by default), the schema
 * not trusted (`trusted_schema = OFF`), a busy timeout, and a read-only mode that issues nothing that writes.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DEFAULT_BUSY_TIMEOUT_MS, openDatabase } from '../drivers/openDatabase';
import { SessionDatabaseError, describeDatabaseError, sqliteCodeOf } from '../errors';
import { assertNoStaleWal, assertSameFile, type FileIdentity } from './fileIdentity';
import { immediateTransaction, type DriverName, type SqliteDatabase } from './sqliteDatabase';

export interface ConnectionOptions {
  readonly?: boolean;
  /** Fail if the file does not exist (the inspector never creates files). */
  fileMustExist?: boolean;
  driver?: DriverName | 'auto';
  busyTimeoutMs?: number;
  /**
   * Durability of commits in WAL mode. FULL (default, as Python's sqlite3 leaves it) syncs the WAL on every commit,
   * so a committed turn survives a power cut; NORMAL may lose the last commits then, never corrupting the file; OFF
   * never syncs (not even a checkpoint), for throwaway files only: a power cut may corrupt the file.
   */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
  /**
   * Leave the journal mode alone; the caller switches to WAL with `enableWal` once its checks passed (spec §12 h: a
   * constructor that fails must not have rewritten the file's header).
   */
  deferWal?: boolean;
}

/** Opens `dbPath`, translating the errors a user can act on into `SessionDatabaseError`. */
export function openSessionConnection(dbPath: string, options: ConnectionOptions = {}): SqliteDatabase {
  const memory = dbPath === ':memory:' || dbPath === '';
  const readonly = options.readonly ?? false;
  if ((readonly || options.fileMustExist) && !memory && !existsSync(dbPath)) {
    throw new SessionDatabaseError('not-found', `${dbPath} does not exist.`);
  }
  // SQLite opens a folder and then fails the first read with "disk I/O error", which says nothing of the mistake; a
  // pipe it would read forever, waiting for a writer (and a device is no database either).
  const here = memory ? undefined : statSync(dbPath, { throwIfNoEntry: false });
  if (here?.isDirectory()) {
    throw new SessionDatabaseError('not-sqlite', `${dbPath} is a folder, not a session database file.`);
  }
  if (here && !here.isFile()) {
    throw new SessionDatabaseError(
      'not-sqlite',
      `${dbPath} is not a regular file (a pipe, a device or a socket), so not a session database file.`,
    );
  }
  if (!memory && !existsSync(dirname(dbPath))) {
    throw new SessionDatabaseError('not-found', `${dbPath} cannot be opened: the folder ${dirname(dbPath)} does not exist.`);
  }
  if (readonly && memory) {
    throw new SessionDatabaseError('io', 'A read-only session needs a database file; :memory: starts empty.');
  }
  // Opening would apply a replaced file's -wal to the file now at the path (spec §11, stale-wal).
  if (!memory) assertNoStaleWal(dbPath);
  let db: SqliteDatabase | undefined;
  try {
    db = openDatabase(dbPath, {
      readonly,
      fileMustExist: options.fileMustExist ?? false,
      driver: options.driver,
      busyTimeoutMs: options.busyTimeoutMs,
    });
    // SQLite silently falls back to read-only for a file it cannot write, and better-sqlite3 then still reports the
    // mode we asked for; ask the file system too, so the problem shows at open and not at the first write.
    if (!readonly && !db.readonly && !memory && existsSync(dbPath) && !canWrite(dbPath)) throw readOnlyForWriting(dbPath);
    if (!readonly && db.readonly) throw readOnlyForWriting(dbPath);
    // A session file comes from anywhere (a colleague, a bug report): its schema must not be able to run functions
    // with side effects from its views, triggers or defaults (SQLite's default trusts them). Per connection, writes
    // nothing, and comes before the first statement that reads the schema.
    db.exec('PRAGMA trusted_schema = OFF');
    db.exec('PRAGMA foreign_keys = OFF');
    if (readonly) {
      db.prepare('SELECT count(*) FROM sqlite_master').get(); // fail now on a file that is not SQLite
    } else if (!options.deferWal) {
      // journal_mode=WAL writes the file header once; a read-only connection must not (and need not) set it.
      enableWal(db, options.busyTimeoutMs);
    }
    // Set explicitly: better-sqlite3 is built with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1, which would silently turn a
    // WAL connection to NORMAL at its first transaction. The pragma is per connection and writes nothing.
    db.exec(`PRAGMA synchronous = ${options.synchronous === 'NORMAL' || options.synchronous === 'OFF' ? options.synchronous : 'FULL'}`);
    return db;
  } catch (err) {
    db?.close();
    throw describeDatabaseError(err, dbPath, { readonly });
  }
}

/**
 * The advice on a read-only file opened for writing, in the library's words: it names the option. The command line,
 * which has no such option, says it in its own (`src/cli/readOnlyFile.ts`).
 */
export const READ_ONLY_OPTION_ADVICE = 'Open it with readonly: true to inspect it.';

function readOnlyForWriting(dbPath: string): SessionDatabaseError {
  return new SessionDatabaseError('read-only', `${dbPath} is read-only, so it cannot be opened for writing. ${READ_ONLY_OPTION_ADVICE}`);
}

/** Whether this process may write `path` (its permissions, a read-only mount): one test for every caller. */
export function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Switches the connection to WAL (a no-op when the file already is), waiting out other connections like every write
 * does. SQLite does not always run the busy handler here: when several connections open a new file at once, the switch
 * can fail with SQLITE_BUSY at once (deadlock avoidance between connections upgrading their locks), so it is retried.
 */
export function enableWal(db: SqliteDatabase, busyTimeoutMs: number | undefined): void {
  retryWhileBusy(busyTimeoutMs, () => db.prepare('PRAGMA journal_mode = WAL').get());
}

/**
 * Runs `fn` again while it fails with SQLITE_BUSY/SQLITE_LOCKED, with a growing pause, until the busy timeout has
 * elapsed; then the last error is thrown. For steps that SQLite may fail without consulting the busy handler (the WAL
 * switch of a new file; the first read of a file another connection is switching to WAL). `fn` must be atomic: a
 * failed attempt must have changed nothing.
 */
export function retryWhileBusy<T>(busyTimeoutMs: number | undefined, fn: () => T): T {
  const timeout = Math.max(0, busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (err) {
      const code = sqliteCodeOf(err);
      const waited = Date.now() - started;
      if ((code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') || waited >= timeout) throw err;
      // 1, 2, 4 … 64 ms, with jitter so connections that collided do not collide again in step.
      const pause = Math.min(64, 2 ** Math.min(attempt, 6)) * (0.5 + Math.random());
      sleepSync(Math.min(pause, timeout - waited));
    }
  }
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread for `ms` (the drivers are synchronous, as SQLite's own busy handler is). */
function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(sleepCell, 0, 0, ms);
}

/**
 * One immediate transaction of a session. Refused before anything is touched on a read-only connection, and when
 * `dbPath` no longer names the file that was opened (deleted, or another file moved over it): checked before BEGIN
 * and again once the write lock is held, so a write never lands in a file nobody will see.
 */
export function sessionWrite<T>(db: SqliteDatabase, dbPath: string, file: FileIdentity | undefined, fn: () => T): T {
  if (db.readonly) {
    throw new SessionDatabaseError(
      'read-only',
      `This session was opened with readonly: true, so it cannot write to ${dbPath}. Open another session without readonly to write.`,
    );
  }
  assertSameFile(file, 'write');
  try {
    return immediateTransaction(db, () => {
      assertSameFile(file, 'write');
      return fn();
    });
  } catch (err) {
    // A lock held past the busy timeout is a file that cannot be used now, reported as at open ('locked', both
    // drivers alike); every other SQLite error passes through unchanged (spec §11).
    const code = sqliteCodeOf(err);
    throw code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' ? describeDatabaseError(err, dbPath) : err;
  }
}
