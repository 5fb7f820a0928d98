/**
 * Opening a session database with the connection settings of spec §3.1, shared by both session classes and the
 * inspector: WAL (persisted in the file), foreign keys off (better-sqlite3 builds enable them by default), a busy
 * timeout, and a read-only mode that issues nothing that writes.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { openDatabase } from './drivers/openDatabase';
import { SessionDatabaseError, describeDatabaseError } from './errors';
import type { DriverName, SqliteDatabase } from './sqliteDatabase';

export interface ConnectionOptions {
  readonly?: boolean;
  /** Fail if the file does not exist (the inspector never creates files). */
  fileMustExist?: boolean;
  driver?: DriverName | 'auto';
  busyTimeoutMs?: number;
  /**
   * Durability of commits in WAL mode. FULL (default, as Python's sqlite3 leaves it) syncs the WAL on every commit,
   * so a committed turn survives a power cut; NORMAL may lose the last commits then, never corrupting the file.
   */
  synchronous?: 'FULL' | 'NORMAL';
}

/** Opens `dbPath`, translating the errors a user can act on into `SessionDatabaseError`. */
export function openSessionConnection(dbPath: string, options: ConnectionOptions = {}): SqliteDatabase {
  const memory = dbPath === ':memory:' || dbPath === '';
  const readonly = options.readonly ?? false;
  if ((readonly || options.fileMustExist) && !memory && !existsSync(dbPath)) {
    throw new SessionDatabaseError('not-found', `${dbPath} does not exist.`);
  }
  if (!memory && !existsSync(dirname(dbPath))) {
    throw new SessionDatabaseError('not-found', `${dbPath} cannot be opened: the folder ${dirname(dbPath)} does not exist.`);
  }
  if (readonly && memory) {
    throw new SessionDatabaseError('io', 'A read-only session needs a database file; :memory: starts empty.');
  }
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
    if (!readonly && !db.readonly && !memory && existsSync(dbPath) && !canWrite(dbPath)) {
      throw new SessionDatabaseError(
        'read-only',
        `${dbPath} is read-only, so it cannot be opened for writing. Open it with readonly: true to inspect it.`,
      );
    }
    if (!readonly && db.readonly) {
      throw new SessionDatabaseError(
        'read-only',
        `${dbPath} is read-only, so it cannot be opened for writing. Open it with readonly: true to inspect it.`,
      );
    }
    db.exec('PRAGMA foreign_keys = OFF');
    if (readonly) {
      db.prepare('SELECT count(*) FROM sqlite_master').get(); // fail now on a file that is not SQLite
    } else {
      // journal_mode=WAL writes the file header once; a read-only connection must not (and need not) set it.
      db.prepare('PRAGMA journal_mode = WAL').get();
    }
    // Set explicitly: better-sqlite3 is built with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1, which would silently turn a
    // WAL connection to NORMAL at its first transaction. The pragma is per connection and writes nothing.
    db.exec(`PRAGMA synchronous = ${options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
    return db;
  } catch (err) {
    db?.close();
    throw describeDatabaseError(err, dbPath, { readonly });
  }
}

function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
