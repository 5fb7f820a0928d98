/**
 * A session file whose ids hold U+0000, as Python or better-sqlite3 write them (spec §12 f): node:sqlite reads such
 * TEXT only up to the U+0000. The rows with such ids are written with `CAST(? AS TEXT)` from bytes, so the file is
 * the same whichever driver writes it.
 */
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession, openDatabase } from '../../src/store';

/** The branch id with a U+0000 that the file holds next to a branch `a`. */
export const NUL_BRANCH = 'a\u0000b';
/** A session id with a U+0000, next to a session `s`. */
export const NUL_SESSION = 's\u0000x';

const user = (content: string) => ({ role: 'user', content }) as unknown as AgentInputItem;
const assistant = (text: string) =>
  ({ role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text }] }) as unknown as AgentInputItem;

/**
 * Writes, for each of `sessionIds`: main with turns 1–3 (`question N` / `answer N`), branch `a` from turn 3 with a turn
 * of its own and a usage row; then copies main's rows into branch `a\u0000b` (never reserved, so the next backfill
 * has to walk past it) with a usage row of its own. Also a session `s` with one item.
 */
export async function writeControlCharFile(path: string, sessionIds: readonly string[]): Promise<void> {
  for (const sessionId of sessionIds) {
    const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, createTables: true });
    try {
      await s.addItems([user('question 1'), assistant('answer 1'), user('question 2'), assistant('answer 2'), user('question 3')]);
      await s.createBranchFromTurn(3, 'a');
      await s.addItems([user('question on a'), assistant('answer on a')]);
      await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 3, outputTokens: 4, totalTokens: 7 } } });
    } finally {
      s.close();
    }
  }
  const plain = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path });
  await plain.addItems([user('in session s')]);
  plain.close();

  const db = openDatabase(path);
  try {
    const nul = Buffer.from(NUL_BRANCH, 'utf8');
    for (const sessionId of sessionIds) {
      const sid = Buffer.from(sessionId, 'utf8');
      db.prepare(
        `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number,
           user_turn_number, branch_turn_number, tool_name)
         SELECT session_id, message_id, CAST(? AS TEXT), message_type, sequence_number + 1000, user_turn_number,
           branch_turn_number, tool_name
         FROM message_structure WHERE session_id = CAST(? AS TEXT) AND branch_id = 'main' ORDER BY sequence_number`,
      ).run(nul, sid);
      db.prepare(
        `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens)
         VALUES (CAST(? AS TEXT), CAST(? AS TEXT), 2, 1, 10, 20, 30)`,
      ).run(sid, nul);
    }
  } finally {
    db.close();
  }
}
