/**
 * The cost floor: the rows and reads of the workload done with plain better-sqlite3 prepared statements and minimal
 * JS, no session logic. It commits as often as the session API must (one transaction per `addItems`, one per
 * `storeRunUsage`) and keeps its counters in memory, so it is a lower bound no correct session can beat.
 *
 * scripts/bench is the one place outside src/store/drivers allowed to load better-sqlite3 directly.
 */
import Database from 'better-sqlite3';
import type { AgentInputItem } from '@openai/agents';
import type { BranchInfo, ConversationTurn, RunUsageSource, SessionUsage, ToolUsage } from '../../src/store';

export type SyncMode = 'FULL' | 'NORMAL';

type Statement = Database.Statement<unknown[], unknown>;

/**
 * The message types getToolUsage counts (spec §10.2), as SQL literals: written out here, once for every floor and plan
 * of the benchmarks, never imported from src/store (a floor must not share code with what it measures).
 */
export const TOOL_TYPES_SQL = [
  'tool_call',
  'function_call',
  'computer_call',
  'file_search_call',
  'web_search_call',
  'code_interpreter_call',
  'tool_search_call',
  'custom_tool_call',
  'mcp_call',
  'mcp_approval_request',
]
  .map((t) => `'${t}'`)
  .join(', ');

interface UserRow {
  turn: number;
  message_data: string;
  created_at: string | null;
}

function sumDetail(records: unknown, key: string): number {
  let total = 0;
  if (Array.isArray(records)) for (const r of records) total += Number((r as Record<string, unknown>)[key]) || 0;
  return total;
}

/** A writer and reader of one session in a file whose schema the store created, on a raw connection. */
export class FloorSession {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Statement>();
  private sequence = 0;
  private userTurn = 0;
  private branch = 'main';
  private readonly addTxn: (rows: { text: string; type: string; tool: string | null }[]) => void;
  private readonly usageTxn: (values: (string | number)[]) => void;

  constructor(
    readonly path: string,
    private readonly sessionId: string,
    sync: SyncMode,
  ) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${sync}`);
    // The store turns foreign keys off (better-sqlite3 builds enable them); do the same so the rows cost the same.
    this.db.pragma('foreign_keys = OFF');
    const ensureSession = this.db.prepare('INSERT OR IGNORE INTO agent_sessions (session_id) VALUES (?)');
    const insertMessage = this.db.prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)');
    const touch = this.db.prepare('UPDATE agent_sessions SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?');
    const insertStructure = this.db.prepare(
      `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number,
         user_turn_number, branch_turn_number, tool_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const replaceUsage = this.db.prepare(
      `INSERT OR REPLACE INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens,
         output_tokens, total_tokens, input_tokens_details, output_tokens_details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.addTxn = this.db.transaction((rows: { text: string; type: string; tool: string | null }[]) => {
      const sid = this.sessionId;
      ensureSession.run(sid);
      const ids = rows.map((r) => insertMessage.run(sid, r.text).lastInsertRowid);
      touch.run(sid);
      rows.forEach((r, i) => {
        if (r.type === 'user') this.userTurn++;
        this.sequence++;
        insertStructure.run(sid, ids[i], this.branch, r.type, this.sequence, this.userTurn, this.userTurn, r.tool);
      });
    }).immediate as (rows: { text: string; type: string; tool: string | null }[]) => void;
    this.usageTxn = this.db.transaction((values: (string | number)[]) => {
      replaceUsage.run(...values);
    }).immediate as (values: (string | number)[]) => void;
  }

  /** The connection's effective `PRAGMA synchronous` (0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA). */
  synchronous(): number {
    return Number(this.db.pragma('synchronous', { simple: true }));
  }

  /** Statements prepared on first use, so a first ("cold") call pays preparation as the store's does. */
  private stmt(key: string, sql: string, pluck = false): Statement {
    let s = this.statements.get(key);
    if (!s) {
      s = this.db.prepare(sql);
      if (pluck) s.pluck();
      this.statements.set(key, s);
    }
    return s;
  }

  // ---- writes ----------------------------------------------------------------------------------------------------

  addItems(items: AgentInputItem[]): void {
    const rows = items.map((item) => {
      const o = item as unknown as Record<string, unknown>;
      const type = o.role === 'user' ? 'user' : o.role === 'assistant' ? 'assistant' : String(o.type ?? 'other');
      return { text: JSON.stringify(item), type, tool: typeof o.name === 'string' ? o.name : null };
    });
    this.addTxn(rows);
  }

  storeRunUsage(result: RunUsageSource): void {
    const u = result.state?.usage;
    if (!u || this.userTurn === 0) return;
    this.usageTxn([
      this.sessionId,
      this.branch,
      this.userTurn,
      u.requests ?? 0,
      u.inputTokens ?? 0,
      u.outputTokens ?? 0,
      u.totalTokens ?? 0,
      JSON.stringify({
        cache_write_tokens: sumDetail(u.inputTokensDetails, 'cache_write_tokens'),
        cached_tokens: sumDetail(u.inputTokensDetails, 'cached_tokens'),
      }),
      JSON.stringify({ reasoning_tokens: sumDetail(u.outputTokensDetails, 'reasoning_tokens') }),
    ]);
  }

  // ---- reads -----------------------------------------------------------------------------------------------------

  getItems(limit?: number): AgentInputItem[] {
    if (limit === undefined) {
      const texts = this.stmt(
        'itemsAll',
        `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
         WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number`,
        true,
      ).all(this.sessionId, this.branch) as string[];
      return texts.map((t) => JSON.parse(t) as AgentInputItem);
    }
    const texts = this.stmt(
      'itemsNewest',
      `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number DESC LIMIT ?`,
      true,
    ).all(this.sessionId, this.branch, limit) as string[];
    const out: AgentInputItem[] = new Array(texts.length);
    for (let i = 0; i < texts.length; i++) out[texts.length - 1 - i] = JSON.parse(texts[i] as string) as AgentInputItem;
    return out;
  }

  getConversationTurns(): ConversationTurn[] {
    const rows = this.stmt(
      'userRows',
      `SELECT s.branch_turn_number AS turn, m.message_data, s.created_at FROM message_structure s
       JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = 'user'
       ORDER BY s.branch_turn_number, s.sequence_number`,
    ).all(this.sessionId, this.branch) as UserRow[];
    return rows.map((r) => turnOf(r, true));
  }

  findTurnsByContent(term: string): ConversationTurn[] {
    // SQLite's LIKE folds ASCII case; the JS check keeps only matches in the text, not elsewhere in the JSON.
    const rows = this.stmt(
      'userRowsLike',
      `SELECT s.branch_turn_number AS turn, m.message_data, s.created_at FROM message_structure s
       JOIN agent_messages m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = 'user' AND m.message_data LIKE ?
       ORDER BY s.branch_turn_number, s.sequence_number`,
    ).all(this.sessionId, this.branch, `%${term}%`) as UserRow[];
    const folded = term.toLowerCase();
    return rows
      .map((r) => turnOf(r, false))
      .filter((t) => typeof t.fullContent === 'string' && t.fullContent.toLowerCase().includes(folded));
  }

  getToolUsage(): ToolUsage[] {
    const rows = this.stmt(
      'toolUsage',
      `SELECT s.tool_name, COUNT(*) AS count, s.user_turn_number AS turn FROM message_structure s
       WHERE s.session_id = ? AND s.branch_id = ? AND (s.message_type IN (${TOOL_TYPES_SQL})
         OR (s.message_type = 'tool_search_output' AND NOT EXISTS (
           SELECT 1 FROM message_structure c WHERE c.session_id = s.session_id AND c.branch_id = s.branch_id
             AND c.user_turn_number = s.user_turn_number AND c.message_type = 'tool_search_call'
             AND c.tool_name = s.tool_name)))
       GROUP BY s.user_turn_number, s.tool_name ORDER BY s.user_turn_number, s.tool_name COLLATE BINARY`,
    ).all(this.sessionId, this.branch) as { tool_name: string | null; count: number; turn: number }[];
    return rows.map((r) => ({ toolName: r.tool_name, count: r.count, turn: r.turn }));
  }

  getSessionUsage(): SessionUsage | null {
    const r = this.stmt(
      'sessionUsage',
      `SELECT SUM(requests) AS requests, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
         SUM(total_tokens) AS total, COUNT(*) AS turns FROM turn_usage WHERE session_id = ?`,
    ).get(this.sessionId) as { requests: number | null; input: number; output: number; total: number; turns: number };
    if (r.requests === null) return null;
    return { requests: r.requests, inputTokens: r.input, outputTokens: r.output, totalTokens: r.total, totalTurns: r.turns };
  }

  listBranches(): BranchInfo[] {
    const rows = this.stmt(
      'listBranches',
      `SELECT branch_id, COUNT(*) AS message_count, COUNT(CASE WHEN message_type = 'user' THEN 1 END) AS user_turns,
         MIN(created_at) AS created_at FROM message_structure WHERE session_id = ? GROUP BY branch_id
       ORDER BY created_at, branch_id COLLATE BINARY`,
    ).all(this.sessionId) as { branch_id: string; message_count: number; user_turns: number; created_at: string | null }[];
    return rows.map((r) => ({
      branchId: r.branch_id,
      messageCount: r.message_count,
      userTurns: r.user_turns,
      isCurrent: r.branch_id === this.branch,
      createdAt: r.created_at,
    }));
  }

  // ---- branches --------------------------------------------------------------------------------------------------

  /** The rows a branch creation must write: the reservation and the copied prefix, in one immediate transaction. */
  createBranchFromTurn(turn: number): string {
    const hasUser = this.stmt(
      'userAtTurn',
      `SELECT 1 FROM message_structure WHERE session_id = ? AND branch_id = ? AND branch_turn_number = ?
         AND message_type = 'user' LIMIT 1`,
    );
    const reserve = this.stmt('reserve', 'INSERT OR IGNORE INTO branch_reservations (session_id, branch_id) VALUES (?, ?)');
    const copy = this.stmt(
      'copyPrefix',
      `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number,
         user_turn_number, branch_turn_number, tool_name)
       SELECT session_id, message_id, ?, message_type,
         (SELECT COALESCE(MAX(sequence_number), 0) FROM message_structure WHERE session_id = ?)
           + ROW_NUMBER() OVER (ORDER BY sequence_number),
         user_turn_number, branch_turn_number, tool_name
       FROM message_structure WHERE session_id = ? AND branch_id = ? AND branch_turn_number < ?
       ORDER BY sequence_number`,
    );
    const id = this.db
      .transaction(() => {
        if (!hasUser.get(this.sessionId, this.branch, turn)) throw new Error(`turn ${turn} has no user message`);
        const base = `branch_from_turn_${turn}_${Math.floor(Date.now() / 1000)}`;
        let name = base;
        for (let n = 2; reserve.run(this.sessionId, name).changes !== 1; n++) name = `${base}_${n}`;
        copy.run(name, this.sessionId, this.sessionId, this.branch, turn);
        return name;
      })
      .immediate();
    this.branch = id;
    return id;
  }

  /** Points the floor back at `main` (untimed bookkeeping between branch-creation repetitions). */
  switchToMain(): void {
    this.branch = 'main';
  }

  close(): void {
    this.statements.clear();
    if (this.db.open) this.db.close();
  }
}

function turnOf(r: UserRow, cut: boolean): ConversationTurn {
  const item = JSON.parse(r.message_data) as { content?: unknown };
  const content = item.content ?? '';
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  return {
    turn: r.turn,
    content: cut && text.length > 100 ? text.slice(0, 100) + '...' : text,
    fullContent: content,
    timestamp: r.created_at,
    canBranch: true,
  };
}

/** The SQLite library version better-sqlite3 was built with. */
export function sqliteVersion(): string {
  const db = new Database(':memory:');
  try {
    return String(db.prepare('SELECT sqlite_version()').pluck().get());
  } finally {
    db.close();
  }
}

/** A second, read-only connection that asks `PRAGMA data_version`, as a change watcher polls. */
export class FloorChangeCheck {
  private readonly db: Database.Database;
  private readonly stmt: Statement;
  constructor(path: string) {
    this.db = new Database(path, { readonly: true, fileMustExist: true });
    this.stmt = this.db.prepare('PRAGMA data_version').pluck();
  }
  check(): number {
    return this.stmt.get() as number;
  }
  close(): void {
    this.db.close();
  }
}
