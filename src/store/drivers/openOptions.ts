import type { DriverName } from '../sqlite/sqliteDatabase';

/** How to open a database file. */
export interface OpenOptions {
  /** Never write: no schema, no pragmas that write, the connection refuses writes. */
  readonly: boolean;
  /** Fail instead of creating a missing file. */
  fileMustExist: boolean;
  /** How long to wait for another connection's lock before failing with SQLITE_BUSY. */
  busyTimeoutMs: number;
  /** Force a driver; `auto` tries better-sqlite3, then node:sqlite. */
  driver: DriverName | 'auto';
}
