/**
 * What `AdvancedSQLiteSession` hands to its bookkeeping modules (branch reservations, clear generations, history
 * operations, turn numbering): the connection, the session, its tables and the instance's statement cache. The
 * functions over it never open a transaction of their own; each runs inside the caller's one write (or read).
 */
import type { TableNames } from '../format/schema';
import type { SqliteDatabase, SqliteStatement } from '../sqlite/sqliteDatabase';

export interface SessionContext {
  readonly db: SqliteDatabase;
  readonly sessionId: string;
  readonly tables: TableNames;
  /**
   * A statement prepared once per instance under `key` (lazily: tables may appear later). Keys are shared by every
   * module using the context, so each SQL text has its own key.
   */
  stmt(key: string, sql: string): SqliteStatement;
}

/**
 * Whether a table exists now (ASCII case-insensitive, as SQLite resolves names; temp tables included). Asked on
 * every call, never cached: another connection may drop or create the optional tables at any time (spec §8.4).
 */
export function tablePresent(ctx: SessionContext, name: string): boolean {
  return (
    ctx
      .stmt(
        'tablePresent',
        `SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE
         UNION ALL SELECT 1 FROM sqlite_temp_master WHERE type = 'table' AND name = ? COLLATE NOCASE`,
      )
      .get(name, name) !== undefined
  );
}
