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

class NodeStatementAdapter implements SqliteStatement {
  constructor(private readonly stmt: NodeSqliteStatement) {}
  run(...params: SqlValue[]): RunInfo {
    const r = this.stmt.run(...params);
    return { changes: Number(r.changes), lastInsertRowid: r.lastInsertRowid };
  }
  get<T>(...params: SqlValue[]): T | undefined {
    return this.stmt.get(...params) as T | undefined;
  }
  all<T>(...params: SqlValue[]): T[] {
    return this.stmt.all(...params) as T[];
  }
  /**
   * A generator, not node:sqlite's iterator itself: up to Node 22.16 that iterator does not keep its statement alive,
   * so a garbage collection during a long iteration (rows of a megabyte, an `await` between rows) finalizes the
   * statement under it: "statement has been finalized", or a segfault (Node 22.15.1, VS Code 1.101–1.102). The
   * generator's frame holds the statement until the iteration ends.
   */
  *iterate<T>(...params: SqlValue[]): IterableIterator<T> {
    const stmt = this.stmt;
    for (const row of stmt.iterate(...params)) yield row as T;
  }
  column<T>(...params: SqlValue[]): T[] {
    const stmt = this.stmt;
    if (typeof stmt.setReturnArrays === 'function') {
      // Arrays for this call only: the statement's other callers read objects.
      stmt.setReturnArrays(true);
      try {
        const rows = stmt.all(...params) as unknown[][];
        const out: T[] = new Array<T>(rows.length);
        for (let i = 0; i < rows.length; i++) out[i] = rows[i]![0] as T;
        return out;
      } finally {
        stmt.setReturnArrays(false);
      }
    }
    // Older Node: objects, and the first property of each.
    return stmt.all(...params).map((row) => {
      for (const key in row as Record<string, unknown>) return (row as Record<string, unknown>)[key] as T;
      return undefined as T;
    });
  }
  arrays<T extends unknown[]>(...params: SqlValue[]): T[] {
    const stmt = this.stmt;
    if (typeof stmt.setReturnArrays === 'function') {
      // Arrays for this call only, as in `column`.
      stmt.setReturnArrays(true);
      try {
        return stmt.all(...params) as T[];
      } finally {
        stmt.setReturnArrays(false);
      }
    }
    // Older Node: each object's values, in column order (property order is the column order). Two columns of one
    // name would be one property: the callers name every column apart.
    return stmt.all(...params).map((row) => Object.values(row as Record<string, unknown>) as T);
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
    return new NodeStatementAdapter(this.db.prepare(sql));
  }
  exec(sql: string): void {
    this.db.exec(sql);
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
