/**
 * Child process for the history guard test: compacts one branch of a session file the way the Python SDK's compaction
 * leaves it (openai-agents-python #4630, #5010: the older items are deleted by design), in plain SQL on a connection
 * of its own, as another program would: the branch's structure rows deleted, the messages no row references any more
 * deleted, then a compaction item and the retained last user message written as the branch's new rows (one message
 * row and one structure row each, numbered as Python numbers them), in one transaction. Prints a JSON summary.
 *
 * Usage: node --import tsx test/support/pythonCompactionChild.ts <dbPath> <sessionId> <branchId>
 */
import { openDatabase } from '../../src/store';

function main(): void {
  const [dbPath, sessionId, branchId] = process.argv.slice(2);
  if (!dbPath || !sessionId || !branchId) throw new Error('usage: pythonCompactionChild.ts <dbPath> <sessionId> <branchId>');
  const db = openDatabase(dbPath, { fileMustExist: true });
  try {
    db.exec('BEGIN IMMEDIATE');
    const lastUser = db
      .prepare(
        `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
         WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = 'user' ORDER BY s.sequence_number DESC LIMIT 1`,
      )
      .get<{ message_data: string }>(sessionId, branchId);
    const removed = db.prepare('DELETE FROM message_structure WHERE session_id = ? AND branch_id = ?').run(sessionId, branchId).changes;
    db.prepare(
      `DELETE FROM agent_messages WHERE session_id = ? AND id NOT IN (SELECT message_id FROM message_structure WHERE session_id = ?)`,
    ).run(sessionId, sessionId);
    // Python's json.dumps separators and key order, as the SDK writes a compaction item.
    const kept = ['{"type": "compaction", "encrypted_content": "summary-of-older-turns"}', ...(lastUser ? [lastUser.message_data] : [])];
    const seq = db
      .prepare('SELECT COALESCE(MAX(sequence_number), 0) AS n FROM message_structure WHERE session_id = ?')
      .get<{ n: number }>(sessionId)!.n;
    kept.forEach((text, i) => {
      const messageId = db
        .prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)')
        .run(sessionId, text).lastInsertRowid;
      const isUser = i === 1;
      db.prepare(
        `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
           branch_turn_number, tool_name) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
      ).run(sessionId, messageId, branchId, isUser ? 'user' : 'compaction', Number(seq) + i + 1, isUser ? 1 : 0, isUser ? 1 : 0);
    });
    db.exec('COMMIT');
    process.stdout.write(JSON.stringify({ removed, written: kept.length }));
  } finally {
    db.close();
  }
}

main();
