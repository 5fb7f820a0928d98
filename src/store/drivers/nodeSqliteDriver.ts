import { accessSync, constants, existsSync } from 'node:fs';
import type { DriverName, RunInfo, SqlValue, SqliteDatabase, SqliteStatement } from '../sqlite/sqliteDatabase';
import type { OpenOptions } from './openOptions';

/** The parts of `node:sqlite` we use (typed here because @types/node for Node 20 does not describe it). */
interface NodeSqliteStatement {
  run(...params: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): unknown;
  all(...params: SqlValue[]): unknown[];
  iterate(...params: SqlValue[]): IterableIterator<unknown>;
  /** Node ≥ 22.16 and 24: rows as arrays instead of objects. */
  setReturnArrays?(enabled: boolean): void;
  /** INTEGER values as BigInts (Node ≥ 22.5, so every Node this driver loads on). */
  setReadBigInts(enabled: boolean): void;
}
interface NodeSqliteDatabase {
  prepare(sql: string): NodeSqliteStatement;
  exec(sql: string): void;
  close(): void;
  readonly isOpen?: boolean;
  readonly isTransaction?: boolean;
}
export interface NodeSqliteModule {
  DatabaseSync: new (path: string, options?: Record<string, unknown>) => NodeSqliteDatabase;
}

/**
 * Loads Node's built-in SQLite (Node ≥ 22.13 without a flag; 22.5–22.12 throw `ERR_UNKNOWN_BUILTIN_MODULE`).
 * Node 22 emits "ExperimentalWarning: SQLite is an experimental feature" on first load; an editor's extension host
 * logs warnings as errors, so that one warning (and only it) is swallowed while the module loads.
 */
export function loadNodeSqlite(): NodeSqliteModule {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning: string | Error, ...rest: unknown[]): void {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type =
      typeof rest[0] === 'string' ? rest[0] : typeof warning === 'string' ? (rest[0] as { type?: string } | undefined)?.type : warning.name;
    if (type === 'ExperimentalWarning' && /SQLite/i.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('node:sqlite') as NodeSqliteModule;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * node:sqlite refuses an INTEGER value outside ±(2^53 − 1) (`ERR_OUT_OF_RANGE`, "… too large to be represented as a
 * JavaScript number") and fails the whole read, where better-sqlite3 hands over the nearest double: one token count or
 * id past 2^53 in a file made every listing of it throw. Reading every integer as a BigInt and converting it costs a
 * BigInt per cell on every read, the searches' and getItems' hot paths included; so a statement reads numbers until a
 * row holds such a value, then reads that call again, and every later one, with BigInts converted by `Number()`,
 * which rounds to the nearest double exactly as better-sqlite3's `(double)` cast does.
 */
function outOfRange(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'ERR_OUT_OF_RANGE';
}

/** `row` (an object or an array) with its BigInts as numbers, in place. */
function toNumbers<T>(row: T): T {
  const r = row as Record<string, unknown>;
  // for…in covers an array's indices as well as an object's columns (rows have no inherited enumerable keys).
  for (const k in r) if (typeof r[k] === 'bigint') r[k] = Number(r[k]);
  return row;
}

/**
 * Whether running `sql` again is harmless. Only a returned row can hold the value that fails, and a write returns rows
 * only with `RETURNING`: such a write has done its work by the time its row fails, and is never run again.
 */
function readsOnly(sql: string): boolean {
  return !/\bRETURNING\b/i.test(sql);
}

class NodeStatementAdapter implements SqliteStatement {
  /** Set once a row of this statement held an integer past 2^53: it reads BigInts (converted) from then on. */
  private wide = false;
  constructor(
    private readonly stmt: NodeSqliteStatement,
    private readonly db: NodeSqliteDatabase,
    private readonly sql: string,
  ) {}
  run(...params: SqlValue[]): RunInfo {
    const r = this.stmt.run(...params);
    return { changes: Number(r.changes), lastInsertRowid: r.lastInsertRowid };
  }
  get<T>(...params: SqlValue[]): T | undefined {
    if (!this.wide) {
      try {
        return this.stmt.get(...params) as T | undefined;
      } catch (err) {
        this.widen(err);
      }
    }
    const row = this.stmt.get(...params);
    return (row === undefined ? undefined : toNumbers(row)) as T | undefined;
  }
  all<T>(...params: SqlValue[]): T[] {
    return this.rows(params, false) as T[];
  }
  /**
   * A generator, not node:sqlite's iterator itself: up to Node 22.16 that iterator does not keep its statement alive,
   * so a garbage collection during a long iteration (rows of a megabyte, an `await` between rows) finalizes the
   * statement under it: "statement has been finalized", or a segfault (Node 22.15.1, VS Code 1.101–1.102). The
   * generator's frame holds the statement until the iteration ends.
   */
  *iterate<T>(...params: SqlValue[]): IterableIterator<T> {
    const stmt = this.stmt;
    if (this.wide) {
      for (const row of stmt.iterate(...params)) yield toNumbers(row) as T;
      return;
    }
    const rows = stmt.iterate(...params);
    let seen = 0;
    try {
      for (;;) {
        let next: IteratorResult<unknown>;
        try {
          next = rows.next();
        } catch (err) {
          if (!outOfRange(err) || !readsOnly(this.sql)) throw err;
          break;
        }
        if (next.done) return;
        seen++;
        yield next.value as T;
      }
      // A row past 2^53, after `seen` rows were handed out. node:sqlite has stepped past it (its iterator goes on
      // with the next row), so the read starts again, with BigInts, and skips the rows already handed out. On a second
      // statement, while the first is still open: the connection keeps the snapshot those rows came from, so a commit
      // by another process in between cannot shift them.
      this.wide = true;
      stmt.setReadBigInts(true);
      const again = this.db.prepare(this.sql);
      again.setReadBigInts(true);
      let skip = seen;
      for (const row of again.iterate(...params)) {
        if (skip > 0) skip--;
        else yield toNumbers(row) as T;
      }
    } finally {
      rows.return?.();
    }
  }
  column<T>(...params: SqlValue[]): T[] {
    const stmt = this.stmt;
    if (typeof stmt.setReturnArrays === 'function') {
      const rows = this.rows(params, true) as unknown[][];
      const out: T[] = new Array<T>(rows.length);
      for (let i = 0; i < rows.length; i++) out[i] = rows[i]![0] as T;
      return out;
    }
    // Older Node: objects, and the first property of each.
    return this.rows(params, false).map((row) => {
      for (const key in row as Record<string, unknown>) return (row as Record<string, unknown>)[key] as T;
      return undefined as T;
    });
  }
  arrays<T extends unknown[]>(...params: SqlValue[]): T[] {
    if (typeof this.stmt.setReturnArrays === 'function') return this.rows(params, true) as T[];
    // Older Node: each object's values, in column order (property order is the column order). Two columns of one
    // name would be one property: the callers name every column apart.
    return this.rows(params, false).map((row) => Object.values(row as Record<string, unknown>) as T);
  }

  /** `all()`, as arrays for this call only when `asArrays` (the statement's other callers read objects). */
  private rows(params: SqlValue[], asArrays: boolean): unknown[] {
    const stmt = this.stmt;
    if (asArrays) stmt.setReturnArrays!(true);
    try {
      if (!this.wide) {
        try {
          return stmt.all(...params);
        } catch (err) {
          this.widen(err);
        }
      }
      const rows = stmt.all(...params);
      for (let i = 0; i < rows.length; i++) toNumbers(rows[i]);
      return rows;
    } finally {
      if (asArrays) stmt.setReturnArrays!(false);
    }
  }

  /** After `err`: BigInts from now on, when `err` was an integer past 2^53 and the statement can run again; else throws it. */
  private widen(err: unknown): void {
    if (!outOfRange(err) || !readsOnly(this.sql)) throw err;
    this.wide = true;
    this.stmt.setReadBigInts(true);
  }
}

class NodeDatabaseAdapter implements SqliteDatabase {
  readonly driver: DriverName = 'node:sqlite';
  private open = true;
  /** Tracked by us as a fallback for Node versions without `isTransaction`. */
  private txDepth = 0;
  constructor(
    private readonly db: NodeSqliteDatabase,
    readonly path: string,
    readonly readonly: boolean,
  ) {}
  get isOpen(): boolean {
    return this.db.isOpen ?? this.open;
  }
  get inTransaction(): boolean {
    return this.db.isTransaction ?? this.txDepth > 0;
  }
  prepare(sql: string): SqliteStatement {
    return new NodeStatementAdapter(this.db.prepare(sql), this.db, sql);
  }
  exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (err) {
      // Without `isTransaction` (Node before 22.16) the transaction is ours to track, and SQLite ends one by itself on
      // some errors (SQLITE_FULL, an I/O error): the ROLLBACK after such an error finds none, and its own error would
      // hide the one that mattered (a full disk read as "cannot rollback - no transaction is active").
      const gone =
        this.db.isTransaction === undefined &&
        /^\s*ROLLBACK\s*$/i.test(sql) &&
        /no transaction is active/i.test(String((err as Error)?.message));
      if (!gone) throw err;
      this.txDepth = 0;
      return;
    }
    if (this.db.isTransaction === undefined) {
      if (/^\s*BEGIN/i.test(sql)) this.txDepth = 1;
      else if (/^\s*(COMMIT|END|ROLLBACK)\s*$/i.test(sql)) this.txDepth = 0;
    }
  }
  close(): void {
    if (this.open) {
      this.open = false;
      this.db.close();
    }
  }
}

/** Opens `path` with node:sqlite. */
export function openWithNodeSqlite(mod: NodeSqliteModule, path: string, options: OpenOptions): SqliteDatabase {
  const memory = path === ':memory:' || path === '';
  if ((options.fileMustExist || options.readonly) && !memory && !existsSync(path)) {
    // better-sqlite3 says this itself; node:sqlite would create the file (or fail vaguely when read-only).
    throw Object.assign(new Error(`unable to open database file: ${path} does not exist`), { errcode: 14 });
  }
  const db = new mod.DatabaseSync(path, {
    readOnly: options.readonly,
    enableForeignKeyConstraints: false,
    timeout: options.busyTimeoutMs,
  });
  // node:sqlite cannot report whether SQLite fell back to read-only, so ask the file system.
  let readonly = options.readonly;
  if (!readonly && !memory) {
    try {
      accessSync(path, constants.W_OK);
    } catch {
      readonly = true;
    }
  }
  const adapter = new NodeDatabaseAdapter(db, path, readonly);
  // Older node:sqlite builds ignore the timeout option; the pragma works everywhere and writes nothing.
  adapter.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
  return adapter;
}
