/** What the inspector's query modules share: the connection, the discovered tables, and a statement cache. */
import type { SqliteDatabase, SqliteStatement } from '../sqlite/sqliteDatabase';
import type { DiscoveredTables } from './tableDiscovery';

/** The connection, tables and statement cache a `SessionDatabase` hands to its query functions. */
export interface QueryContext {
  readonly db: SqliteDatabase;
  readonly tables: DiscoveredTables;
  /**
   * A statement prepared once per SQL text. Keyed by the text itself because the text embeds table names, which can
   * change when the file's schema does.
   */
  stmt(sql: string): SqliteStatement;
}

/** Whether a session's items live in `message_structure` (branches, turns) rather than only in the messages table. */
export function isStructuredSession(ctx: QueryContext, sessionId: string): boolean {
  if (!ctx.tables.messageStructure) return false;
  // One probe of idx_structure_session_seq.
  return ctx.stmt('SELECT 1 AS one FROM message_structure WHERE session_id = ? LIMIT 1').get(sessionId) !== undefined;
}
