/**
 * The small structural database interface the store is written against. Drivers adapt a concrete SQLite binding
 * (better-sqlite3, node:sqlite) to it, so the store never depends on a driver's types and can run on either.
 */

/** A value SQLite can bind or return. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** A result row as the drivers return it: column name → value. */
export type SqlRow = Record<string, unknown>;

/** What `run()` reports. */
export interface RunInfo {
  changes: number;
  lastInsertRowid: number | bigint;
}

/** A prepared statement with positional parameters. */
export interface SqliteStatement {
  run(...params: SqlValue[]): RunInfo;
  get<T = SqlRow>(...params: SqlValue[]): T | undefined;
  all<T = SqlRow>(...params: SqlValue[]): T[];
  /** Rows one at a time, so a caller that stops early never materialises the rest. */
  iterate<T = SqlRow>(...params: SqlValue[]): IterableIterator<T>;
  /**
   * The first column of every row, with no object made per row (better-sqlite3's `pluck()`, node:sqlite's arrays):
   * what a read of one column costs SQLite, where `all()` builds an object per row (a quarter to half again of
   * `getItems()`'s floor on 8,000 rows).
   */
  column<T = unknown>(...params: SqlValue[]): T[];
  /**
   * Every row as an array of its columns, in the statement's order, with no object made per row: a search's hits
   * carry nine columns, and building an object of them cost a sixth of `role:user`'s scan of the bench's file A.
   * Name every column apart (`NULL AS a, NULL AS b`): node:sqlite before Node 22.16 hands rows over as objects, where
   * two columns of one name are one property, and the columns after it move up.
   */
  arrays<T extends unknown[] = unknown[]>(...params: SqlValue[]): T[];
}

/** Which binding a connection runs on. */
export type DriverName = 'better-sqlite3' | 'node:sqlite';

/** An open SQLite connection. */
export interface SqliteDatabase {
  readonly driver: DriverName;
  /** The path as given when opening (`:memory:` included). */
  readonly path: string;
  /** True when the connection can never write (opened read-only, or SQLite fell back to read-only). */
  readonly readonly: boolean;
  readonly isOpen: boolean;
  readonly inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  close(): void;
}

/**
 * Runs `fn` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it throws. IMMEDIATE takes the write lock up
 * front, so a concurrent writer makes us wait (busy timeout) instead of failing half-way through with a
 * lock-upgrade deadlock. Nested calls join the outer transaction.
 */
export function immediateTransaction<T>(db: SqliteDatabase, fn: () => T): T {
  if (db.inTransaction) return fn();
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/**
 * Runs `fn` inside a deferred read transaction, so several SELECTs see one snapshot while another process writes.
 * It holds no lock once it returns.
 */
export function readTransaction<T>(db: SqliteDatabase, fn: () => T): T {
  if (db.inTransaction) return fn();
  db.exec('BEGIN');
  try {
    return fn();
  } finally {
    if (db.inTransaction) db.exec('COMMIT');
  }
}
