import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DriverName, RunInfo, SqlValue, SqliteDatabase, SqliteStatement } from '../sqlite/sqliteDatabase';
import type { OpenOptions } from './openOptions';

type BetterSqlite3Module = typeof import('better-sqlite3');
type BetterStatement = import('better-sqlite3').Statement<unknown[], unknown>;
type BetterDatabase = import('better-sqlite3').Database;

/** better-sqlite3 as loaded: its `Database` class, and where its addon is when it is where its install puts it. */
export interface BetterSqlite3 {
  Database: BetterSqlite3Module;
  /** The addon's path, handed to every connection (`nativeBinding`); undefined: better-sqlite3 finds it itself. */
  addonPath: string | undefined;
}

/**
 * Loads the better-sqlite3 addon. Throws when it cannot be loaded (not installed, or built for another Node ABI,
 * as inside an editor whose Electron differs from the Node that built it).
 */
export function loadBetterSqlite3(): BetterSqlite3 {
  // A plain require keeps the addon external to bundles and defers loading until a database is opened.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Database = require('better-sqlite3') as BetterSqlite3Module;
  const addonPath = installedAddon();
  // Loading the JS wrapper succeeds even when the native part would not; opening a memory database proves it.
  new Database(':memory:', addonPath === undefined ? {} : { nativeBinding: addonPath }).close();
  return { Database, addonPath };
}

/**
 * The addon where better-sqlite3's install puts it (`build/Release`, built or prebuilt), or undefined. Named to each
 * connection, it spares better-sqlite3's own search with the `bindings` package, which works out its caller's package
 * from a stack trace and then tries each of a dozen paths by a `require` that fails: 3–4 ms of the CPU of a CLI
 * command's start, which the issue holds to 1.5× `node -e 0` (docs/benchmarks.md, "A light start").
 */
function installedAddon(): string | undefined {
  try {
    // From its main module (lib/index.js), which the require above resolved already: Node keeps that answer.
    const file = join(dirname(require.resolve('better-sqlite3')), '..', 'build', 'Release', 'better_sqlite3.node');
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

class BetterStatementAdapter implements SqliteStatement {
  constructor(private readonly stmt: BetterStatement) {}
  run(...params: SqlValue[]): RunInfo {
    return this.stmt.run(...params);
  }
  get<T>(...params: SqlValue[]): T | undefined {
    return this.stmt.get(...params) as T | undefined;
  }
  all<T>(...params: SqlValue[]): T[] {
    return this.stmt.all(...params) as T[];
  }
  iterate<T>(...params: SqlValue[]): IterableIterator<T> {
    return this.stmt.iterate(...params) as IterableIterator<T>;
  }
  column<T>(...params: SqlValue[]): T[] {
    // Pluck mode is a flag of the statement: set for this call only (a busy statement refuses both calls alike).
    this.stmt.pluck(true);
    try {
      return this.stmt.all(...params) as T[];
    } finally {
      this.stmt.pluck(false);
    }
  }
  arrays<T extends unknown[]>(...params: SqlValue[]): T[] {
    // Raw mode is a flag of the statement too: set for this call only.
    this.stmt.raw(true);
    try {
      return this.stmt.all(...params) as T[];
    } finally {
      this.stmt.raw(false);
    }
  }
}

class BetterDatabaseAdapter implements SqliteDatabase {
  readonly driver: DriverName = 'better-sqlite3';
  constructor(
    private readonly db: BetterDatabase,
    readonly path: string,
  ) {}
  get readonly(): boolean {
    return this.db.readonly;
  }
  get isOpen(): boolean {
    return this.db.open;
  }
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }
  prepare(sql: string): SqliteStatement {
    return new BetterStatementAdapter(this.db.prepare(sql));
  }
  exec(sql: string): void {
    this.db.exec(sql);
  }
  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** Opens `path` with better-sqlite3. */
export function openWithBetterSqlite3(loaded: BetterSqlite3, path: string, options: OpenOptions): SqliteDatabase {
  const db = new loaded.Database(path, {
    readonly: options.readonly,
    fileMustExist: options.fileMustExist || options.readonly,
    timeout: options.busyTimeoutMs,
    ...(loaded.addonPath === undefined ? {} : { nativeBinding: loaded.addonPath }),
  });
  // better-sqlite3 is compiled with SQLITE_DEFAULT_FOREIGN_KEYS=1; session files declare keys that Python never
  // enforces (usage rows may exist without a sessions row), so enforcement is off on every connection.
  db.pragma('foreign_keys = OFF');
  return new BetterDatabaseAdapter(db, path);
}
