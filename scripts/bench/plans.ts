/**
 * EXPLAIN QUERY PLAN for the store's hot statements. The SQL is reproduced from src/store/advancedSqliteSession.ts
 * (default table names) and can drift from it; it is a diagnostic, not part of the measured figures.
 */
import Database from 'better-sqlite3';
import { TOOL_TYPES_SQL } from './floor';

/** Statement name → [SQL, parameters with `S` = session id, `B` = branch, numbers as given]. */
function storeStatements(turn: number): Record<string, [string, unknown[]]> {
  return {
    'getItems(20) [itemsDesc]': [
      `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND m.session_id = ? ORDER BY s.sequence_number DESC`,
      ['S', 'B', 'S'],
    ],
    'getItems() [itemsAsc]': [
      `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND m.session_id = ? ORDER BY s.sequence_number ASC`,
      ['S', 'B', 'S'],
    ],
    'getConversationTurns/findTurnsByContent [userRows]': [
      `SELECT s.branch_turn_number AS turn, m.message_data, s.created_at FROM message_structure s
       JOIN agent_messages m ON s.message_id = m.id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = 'user'
       ORDER BY s.branch_turn_number, s.sequence_number`,
      ['S', 'B'],
    ],
    'getToolUsage [toolUsage]': [
      `SELECT s.tool_name, COUNT(*) AS count, s.user_turn_number AS turn FROM message_structure s
       WHERE s.session_id = ? AND s.branch_id = ? AND (s.message_type IN (${TOOL_TYPES_SQL})
         OR (s.message_type = 'tool_search_output' AND NOT EXISTS (
           SELECT 1 FROM message_structure c WHERE c.session_id = s.session_id AND c.branch_id = s.branch_id
             AND c.user_turn_number = s.user_turn_number AND c.message_type = 'tool_search_call'
             AND c.tool_name = s.tool_name)))
       GROUP BY s.user_turn_number, s.tool_name
       ORDER BY s.user_turn_number ASC, s.tool_name COLLATE BINARY ASC`,
      ['S', 'B'],
    ],
    'getSessionUsage [usageAll]': [
      `SELECT SUM(requests) AS requests, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
       SUM(total_tokens) AS total, COUNT(*) AS turns FROM turn_usage WHERE session_id = ?`,
      ['S'],
    ],
    'listBranches [listBranches]': [
      `SELECT branch_id, COUNT(*) AS message_count,
         COUNT(CASE WHEN message_type = 'user' THEN 1 END) AS user_turns, MIN(created_at) AS created_at
       FROM message_structure WHERE session_id = ? GROUP BY branch_id
       ORDER BY created_at ASC, branch_id COLLATE BINARY ASC`,
      ['S'],
    ],
    'createBranchFromTurn [userAtTurn]': [
      `SELECT 1 FROM message_structure s JOIN agent_messages m ON s.message_id = m.id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.branch_turn_number = ? AND s.message_type = 'user' LIMIT 1`,
      ['S', 'B', turn],
    ],
    'createBranchFromTurn [copyPrefix]': [
      `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number,
         user_turn_number, branch_turn_number, tool_name)
       SELECT session_id, message_id, ?, message_type,
         (SELECT COALESCE(MAX(sequence_number), 0) FROM message_structure WHERE session_id = ?)
           + ROW_NUMBER() OVER (ORDER BY sequence_number),
         user_turn_number, branch_turn_number, tool_name
       FROM message_structure WHERE session_id = ? AND branch_id = ? AND branch_turn_number < ?
       ORDER BY sequence_number`,
      ['new_branch', 'S', 'S', 'B', turn],
    ],
    'backfillReservations [unreserved] (branch creation, popItem, deleteBranch)': [
      `SELECT DISTINCT s.branch_id FROM message_structure s WHERE s.session_id = ? AND NOT EXISTS (
         SELECT 1 FROM branch_reservations r WHERE r.session_id = s.session_id AND r.branch_id = s.branch_id)
       ORDER BY s.branch_id COLLATE BINARY`,
      ['S'],
    ],
    'addItems [maxSeq]': ['SELECT MAX(sequence_number) AS seq FROM message_structure WHERE session_id = ?', ['S']],
    'addItems/storeRunUsage [maxUserTurn/latestTurn]': [
      'SELECT MAX(user_turn_number) AS turn FROM message_structure WHERE session_id = ? AND branch_id = ?',
      ['S', 'B'],
    ],
  };
}

/** The plans of the store's statements on the file at `path`, one indented line per plan node. */
export function explainStoreQueries(path: string, sessionId: string, branch: string, turn: number): Record<string, string[]> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const out: Record<string, string[]> = {};
    for (const [name, [sql, params]] of Object.entries(storeStatements(turn))) {
      const bound = params.map((p) => (p === 'S' ? sessionId : p === 'B' ? branch : p));
      try {
        const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...bound) as { id: number; parent: number; detail: string }[];
        const depth = new Map<number, number>([[0, -1]]);
        out[name] = rows.map((r) => {
          const d = (depth.get(r.parent) ?? -1) + 1;
          depth.set(r.id, d);
          return `${'  '.repeat(d)}${r.detail}`;
        });
      } catch (err) {
        out[name] = [`(could not explain: ${err instanceof Error ? err.message : String(err)})`];
      }
    }
    return out;
  } finally {
    db.close();
  }
}
