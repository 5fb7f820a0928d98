/**
 * Opening a session database with the connection settings of spec §3.1, shared by both session classes and the
 * inspector: WAL (persisted in the file), foreign keys off (better-sqlite3 builds enable them by default), a busy
 * timeout, and a read-only mode that issues nothing that writes.
 */
import { existsSync } from 'node:fs';
import { openDatabase } from './drivers/openDatabase';
import { SessionDatabaseError, describeDatabaseError } from './errors';
import type { DriverName, SqliteDatabase } from './sqliteDatabase';

export interface ConnectionOptions {
  readonly?: boolean;
  /** Fail if the file does not exist (the inspector never creates files). */
  fileMustExist?: boolean;
  driver?: DriverName | 'auto';
  busyTimeoutMs?: number;
}

/** Opens `dbPath`, translating the errors a user can act on into `SessionDatabaseError`. */
export function openSessionConnection(dbPath: string, options: ConnectionOptions = {}): SqliteDatabase {
  const memory = dbPath === ':memory:' || dbPath === '';
  const readonly = options.readonly ?? false;
  if ((readonly || options.fileMustExist) && !memory && !existsSync(dbPath)) {
    throw new SessionDatabaseError('not-found', `${dbPath} does not exist.`);
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
    if (!readonly && db.readonly) {
      throw new SessionDatabaseError(
        'read-only',
        `${dbPath} is read-only, so it cannot be opened for writing. Open it with readonly: true to inspect it.`,
      );
    }
    db.exec('PRAGMA foreign_keys = OFF');
    // journal_mode=WAL writes the file header once; a read-only connection must not (and need not) set it.
    if (!readonly) db.prepare('PRAGMA journal_mode = WAL').get();
    else db.prepare('SELECT count(*) FROM sqlite_master').get(); // fail now on a file that is not SQLite
    return db;
  } catch (err) {
    db?.close();
    throw describeDatabaseError(err, dbPath);
  }
}
