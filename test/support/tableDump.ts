import { openDatabase, type SqliteDatabase } from '../../src/store';

export const MASK = '<TIMESTAMP>';
const TIMESTAMP_COLUMNS = new Set(['created_at', 'updated_at', 'timestamp']);

export interface TableDump {
  columns: string[];
  rows: Record<string, unknown>[];
}

/** Every table's columns and rows in rowid order, timestamps masked, as the conformance JSON records them. */
export function dumpTables(db: SqliteDatabase): Record<string, TableDump> {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
    .all<{ name: string }>()
    .map((r) => r.name);
  const out: Record<string, TableDump> = {};
  for (const t of tables) {
    const columns = db
      .prepare('SELECT name FROM pragma_table_info(?)')
      .all<{ name: string }>(t)
      .map((r) => r.name);
    const rows = db
      .prepare(`SELECT * FROM "${t.replace(/"/g, '""')}" ORDER BY rowid`)
      .all<Record<string, unknown>>()
      .map((r) => {
        const row: Record<string, unknown> = {};
        for (const c of columns) row[c] = TIMESTAMP_COLUMNS.has(c) && r[c] !== null ? MASK : r[c];
        return row;
      });
    out[t] = { columns, rows };
  }
  return out;
}

/** `sqlite_master` rows (type, name, tbl_name, sql) in rowid order. */
export function dumpSchema(db: SqliteDatabase): Record<string, unknown>[] {
  return db
    .prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid')
    .all<Record<string, unknown>>()
    .map((r) => ({ ...r }));
}

/** The pragmas the conformance files record. */
export function dumpPragmas(db: SqliteDatabase): Record<string, unknown> {
  const one = (p: string): unknown => Object.values(db.prepare(`PRAGMA ${p}`).get<Record<string, unknown>>() ?? {})[0];
  return {
    journal_mode: one('journal_mode'),
    encoding: one('encoding'),
    user_version: one('user_version'),
    application_id: one('application_id'),
    auto_vacuum: one('auto_vacuum'),
    page_size: one('page_size'),
    foreign_keys: one('foreign_keys'),
  };
}

/** Opens a file read-only for inspection with whichever driver the tests run on. */
export function inspect<T>(path: string, fn: (db: SqliteDatabase) => T): T {
  const db = openDatabase(path, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** The first column of `sql`'s one row, as a number, read from `path` on a read-only connection (a `COUNT(*)`). */
export function countRows(path: string, sql: string): number {
  return inspect(path, (db) => Number(Object.values(db.prepare(sql).get<Record<string, unknown>>()!)[0]));
}
