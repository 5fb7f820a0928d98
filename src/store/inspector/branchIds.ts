/**
 * The distinct branch ids of a session, read by skipping through idx_structure_branch (session_id, branch_id): one
 * index seek per branch, instead of visiting every structure row as `SELECT DISTINCT` does (a million rows for a
 * long session). Python's DDL has this index, so the format does not change.
 */
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import type { QueryContext } from './queryContext';

/** Sorted by code unit (SQLite's BINARY collation); exact even for ids holding U+0000 (see exactText.ts). */
export function readBranchIds(ctx: QueryContext, sessionId: string): string[] {
  if (!ctx.tables.messageStructure) return [];
  // MIN() is answered by one seek (SQLite's min/max optimisation); ORDER BY … LIMIT 1 around the exact-text expression
  // made SQLite sort the whole range instead.
  const first = ctx.stmt(
    `SELECT ${exactTextSql('b')} AS branch_id FROM (SELECT MIN(branch_id) AS b FROM message_structure WHERE session_id = ?)`,
  );
  const next = ctx.stmt(
    `SELECT ${exactTextSql('b')} AS branch_id FROM (SELECT MIN(branch_id) AS b FROM message_structure WHERE session_id = ? AND branch_id > ?)`,
  );
  const out: string[] = [];
  let row = first.get<{ branch_id: unknown }>(sessionId);
  while (row !== undefined && row.branch_id !== null) {
    // The exact id (bound as a whole string) is the cursor: the next seek starts just after it.
    const id = textFromSql(row.branch_id);
    out.push(id);
    row = next.get<{ branch_id: unknown }>(sessionId, id);
  }
  return out;
}
