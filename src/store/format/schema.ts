/**
 * The session schema as verbatim DDL text (spec §4) and the introspection the store and the inspector use.
 * SQLite stores each statement's text in `sqlite_master` as written, so the indentation below is part of the file
 * format: files are byte-identical to Python's only if these strings are.
 */
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';

/** The configured base-table names (spec §3.4); structure-table names are fixed. */
export interface TableNames {
  sessions: string;
  messages: string;
}

export const DEFAULT_TABLE_NAMES: TableNames = { sessions: 'agent_sessions', messages: 'agent_messages' };

// Python writes each statement as a triple-quoted string: newline, the body indented by 12 spaces, newline and the
// 8 spaces before the closing quotes. Keep these literals exactly as they are.
const INDENT_TAIL = '\n        ';

/** `CREATE TABLE` for the sessions table. */
export function sessionsTableDdl(t: TableNames): string {
  return `
            CREATE TABLE IF NOT EXISTS ${t.sessions} (
                session_id TEXT PRIMARY KEY,
                created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
            )${INDENT_TAIL}`;
}

/** `CREATE TABLE` for the messages table. */
export function messagesTableDdl(t: TableNames): string {
  return `
            CREATE TABLE IF NOT EXISTS ${t.messages} (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL,
                message_data TEXT NOT NULL,
                created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                FOREIGN KEY (session_id) REFERENCES ${t.sessions} (session_id)
                    ON DELETE CASCADE
            )${INDENT_TAIL}`;
}

/** `CREATE INDEX` on the messages table; its name follows the configured table name. */
export function messagesIndexDdl(t: TableNames): string {
  return `
            CREATE INDEX IF NOT EXISTS idx_${t.messages}_session_id
            ON ${t.messages} (session_id, id)${INDENT_TAIL}`;
}

export function messageStructureDdl(t: TableNames): string {
  return `
            CREATE TABLE IF NOT EXISTS message_structure (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL,
                message_id INTEGER NOT NULL,
                branch_id TEXT NOT NULL DEFAULT 'main',
                message_type TEXT NOT NULL,
                sequence_number INTEGER NOT NULL,
                user_turn_number INTEGER,
                branch_turn_number INTEGER,
                tool_name TEXT,
                created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                FOREIGN KEY (session_id)
                    REFERENCES ${t.sessions}(session_id) ON DELETE CASCADE,
                FOREIGN KEY (message_id)
                    REFERENCES ${t.messages}(id) ON DELETE CASCADE
            )${INDENT_TAIL}`;
}

export function turnUsageDdl(t: TableNames): string {
  return `
            CREATE TABLE IF NOT EXISTS turn_usage (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL,
                branch_id TEXT NOT NULL DEFAULT 'main',
                user_turn_number INTEGER NOT NULL,
                requests INTEGER DEFAULT 0,
                input_tokens INTEGER DEFAULT 0,
                output_tokens INTEGER DEFAULT 0,
                total_tokens INTEGER DEFAULT 0,
                input_tokens_details JSON,
                output_tokens_details JSON,
                created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                FOREIGN KEY (session_id)
                    REFERENCES ${t.sessions}(session_id) ON DELETE CASCADE,
                UNIQUE(session_id, branch_id, user_turn_number)
            )${INDENT_TAIL}`;
}

export const BRANCH_RESERVATIONS_DDL = `
            CREATE TABLE IF NOT EXISTS branch_reservations (
                session_id TEXT NOT NULL,
                branch_id TEXT NOT NULL,
                PRIMARY KEY (session_id, branch_id)
            )${INDENT_TAIL}`;

export const CLEAR_GENERATIONS_DDL = `
            CREATE TABLE IF NOT EXISTS session_clear_generations (
                session_id TEXT PRIMARY KEY,
                generation INTEGER NOT NULL DEFAULT 0
            )${INDENT_TAIL}`;

/** The five structure indexes, in creation order. */
export const STRUCTURE_INDEX_DDL: readonly string[] = [
  ['idx_structure_session_seq', 'message_structure(session_id, sequence_number)'],
  ['idx_structure_branch', 'message_structure(session_id, branch_id)'],
  ['idx_structure_turn', 'message_structure(session_id, branch_id, user_turn_number)'],
  ['idx_structure_branch_seq', 'message_structure(session_id, branch_id, sequence_number)'],
  ['idx_turn_usage_session_turn', 'turn_usage(session_id, branch_id, user_turn_number)'],
].map(
  ([name, on]) => `
            CREATE INDEX IF NOT EXISTS ${name}
            ON ${on}${INDENT_TAIL}`,
);

/** The base tables and their index, as `SQLiteSession` creates them. */
export function baseSchemaDdl(t: TableNames): string[] {
  return [sessionsTableDdl(t), messagesTableDdl(t), messagesIndexDdl(t)];
}

/** ASCII-only case folding, as SQLite compares identifiers. */
export function foldIdentifier(name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The table name an identifier denotes: SQL quoting (`"…"`, `` `…` ``, `[…]`) removed. */
export function unquoteIdentifier(identifier: string): string {
  const s = identifier.trim();
  const first = s[0];
  const last = s[s.length - 1];
  if (s.length >= 2) {
    if (first === '"' && last === '"') return s.slice(1, -1).replace(/""/g, '"');
    if (first === '`' && last === '`') return s.slice(1, -1).replace(/``/g, '`');
    if (first === '[' && last === ']') return s.slice(1, -1);
  }
  return s;
}

/** Names of the tables in the main and temp schemas. */
export function listTables(db: SqliteDatabase): string[] {
  return db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' UNION ALL SELECT name FROM sqlite_temp_master WHERE type = 'table'")
    .all<{ name: string }>()
    .map((r) => r.name);
}

/** Whether a table exists (ASCII case-insensitive, as SQLite resolves names). */
export function tableExists(db: SqliteDatabase, name: string): boolean {
  const folded = foldIdentifier(name);
  return listTables(db).some((t) => foldIdentifier(t) === folded);
}

/** One foreign key of a table, with its columns in order. */
export interface ForeignKey {
  id: number;
  table: string;
  from: string[];
  to: (string | null)[];
}

/** The foreign keys a table declares (none for a missing table). */
export function foreignKeys(db: SqliteDatabase, table: string): ForeignKey[] {
  const rows = db
    .prepare('SELECT id, seq, "table" AS tbl, "from" AS src, "to" AS dst FROM pragma_foreign_key_list(?) ORDER BY id, seq')
    .all<{ id: number; seq: number; tbl: string; src: string; dst: string | null }>(table);
  const keys = new Map<number, ForeignKey>();
  for (const r of rows) {
    let key = keys.get(r.id);
    if (!key) keys.set(r.id, (key = { id: r.id, table: r.tbl, from: [], to: [] }));
    key.from.push(r.src);
    key.to.push(r.dst);
  }
  return [...keys.values()];
}

/** Column names of a table (empty for a missing table). */
export function tableColumns(db: SqliteDatabase, table: string): string[] {
  return db
    .prepare('SELECT name FROM pragma_table_info(?)')
    .all<{ name: string }>(table)
    .map((r) => r.name);
}
