/**
 * What other programs wrote to a file between two moments, by session and branch: an agent command is given one
 * branch, and the extension checks afterwards that it wrote nowhere else (docs/agent-command.md §3). The messages
 * table's id is AUTOINCREMENT (spec §4): a new message always gets a larger id than any before it, even after
 * deletions, so a mark is simply the largest id.
 */
import { openDatabase } from '../drivers/openDatabase';
import type { TableNames } from '../format/schema';
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';
import { quoteIdentifier } from './tableDiscovery';

/** Messages written after a mark, grouped. `branchId` is null for messages with no structure row (a plain session). */
export interface WritesByBranch {
  sessionId: string;
  branchId: string | null;
  items: number;
}

function withReader<T>(dbPath: string, fn: (db: SqliteDatabase) => T): T {
  const db = openDatabase(dbPath, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** The largest message id now (0 for none): pass it to `writesSince` later. */
export function markWrites(dbPath: string, tables: TableNames): number {
  return withReader(dbPath, (db) => {
    const row = db.prepare(`SELECT MAX(id) AS id FROM ${quoteIdentifier(tables.messages)}`).get<{ id: number | null }>();
    return Number(row?.id ?? 0);
  });
}

/** Messages written since `mark`, by session and branch, in the order of their first message. */
export function writesSince(dbPath: string, tables: TableNames, mark: number): WritesByBranch[] {
  return withReader(dbPath, (db) => {
    const hasStructure = db
      .prepare(`SELECT 1 AS ok FROM sqlite_master WHERE type = 'table' AND name = 'message_structure'`)
      .get<{ ok: number }>();
    const branch = hasStructure ? exactTextSql('s.branch_id') : 'NULL';
    const join = hasStructure ? 'LEFT JOIN message_structure s ON s.message_id = m.id' : '';
    const rows = db
      .prepare(
        `SELECT ${exactTextSql('m.session_id')} AS session_id, ${branch} AS branch_id, COUNT(*) AS n, MIN(m.id) AS first
         FROM ${quoteIdentifier(tables.messages)} m ${join} WHERE m.id > ?
         GROUP BY m.session_id, ${hasStructure ? 's.branch_id' : 'NULL'} ORDER BY first`,
      )
      .all<{ session_id: unknown; branch_id: unknown; n: number }>(mark);
    return rows.map((r) => ({
      sessionId: textFromSql(r.session_id),
      branchId: r.branch_id === null ? null : textFromSql(r.branch_id),
      items: Number(r.n),
    }));
  });
}
