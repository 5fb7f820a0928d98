/**
 * The floors of the two cold answers of issue 43, on the driver the run uses (the store's `openDatabase` adapter, so a
 * node:sqlite run measures node:sqlite on both sides): the cheapest SQL that computes the same figures the view gets.
 *
 * - `tools/get` for the whole session: one statement. Each stored call once, as the row its branch wrote first (the
 *   smallest sequence number of its message: SQLite takes the bare columns from the MIN row), materialised once; from
 *   it the calls and the distinct (branch, turn) pairs per tool, and each tool's first `listed` turns and first
 *   `listed` (branch, turn) pairs by window functions.
 * - `tables/get` for a branch: the count and sums of the branch's own usage rows and of its shared ranges on their
 *   origin branches in one aggregate; the page as a compound SELECT ordered by turn (SQLite merges the index ranges);
 *   the own turns without usage as one count of the index and the first few found by NOT EXISTS, per branch.
 *
 * Shares no code with src/store/inspector; `agree` in the report compares the figures with the store's answer.
 */
import { openDatabase, type SqliteDatabase, type SqliteStatement } from '../../src/store';

const TOOL_TYPES_SQL = [
  'tool_call',
  'function_call',
  'computer_call',
  'file_search_call',
  'web_search_call',
  'code_interpreter_call',
  'tool_search_call',
  'custom_tool_call',
]
  .map((t) => `'${t}'`)
  .join(', ');

/** A read-only connection with a statement cache (a statement is prepared once, as the store's are). */
export class ColdFloor {
  private readonly db: SqliteDatabase;
  private readonly cache = new Map<string, SqliteStatement>();
  constructor(path: string) {
    this.db = openDatabase(path, { readonly: true, fileMustExist: true });
  }
  private stmt(sql: string): SqliteStatement {
    let s = this.cache.get(sql);
    if (!s) this.cache.set(sql, (s = this.db.prepare(sql)));
    return s;
  }
  all<T>(sql: string, ...params: (string | number)[]): T[] {
    return this.stmt(sql).all<T>(...params);
  }
  get<T>(sql: string, ...params: (string | number)[]): T | undefined {
    return this.stmt(sql).get<T>(...params);
  }
  close(): void {
    this.db.close();
  }
}

export interface FloorToolTotal {
  toolName: string;
  calls: number;
  turnCount: number;
  turns: number[];
  branchTurns: { branchId: string; turn: number }[];
}

/** The whole session's tool totals (`tools/get` with `branchId` null) in one statement. */
export function floorSessionTools(c: ColdFloor, sessionId: string, listed: number): FloorToolTotal[] {
  const rows = c.all<{ k: string; tool: string; a: number; b: unknown }>(
    `WITH f AS MATERIALIZED (
       SELECT COALESCE(tool_name, '') AS tool, branch_id AS branch, user_turn_number AS turn, MIN(sequence_number)
       FROM message_structure WHERE session_id = ? AND message_type IN (${TOOL_TYPES_SQL}) GROUP BY message_id)
     SELECT 'c' AS k, tool, COUNT(*) AS a,
       COUNT(DISTINCT CASE WHEN turn IS NOT NULL THEN CAST(branch AS BLOB) || x'00' || turn END) AS b FROM f GROUP BY tool
     UNION ALL
     SELECT 't', tool, turn, NULL FROM (
       SELECT tool, turn, ROW_NUMBER() OVER (PARTITION BY tool ORDER BY turn) AS n
       FROM (SELECT DISTINCT tool, turn FROM f WHERE turn IS NOT NULL)) WHERE n <= ?
     UNION ALL
     SELECT 'r', tool, turn, branch FROM (
       SELECT tool, turn, branch, ROW_NUMBER() OVER (PARTITION BY tool ORDER BY branch, turn) AS n
       FROM (SELECT DISTINCT tool, branch, turn FROM f WHERE turn IS NOT NULL)) WHERE n <= ?`,
    sessionId,
    listed,
    listed,
  );
  const byTool = new Map<string, FloorToolTotal>();
  const of = (tool: string): FloorToolTotal => {
    let t = byTool.get(tool);
    if (!t) byTool.set(tool, (t = { toolName: tool, calls: 0, turnCount: 0, turns: [], branchTurns: [] }));
    return t;
  };
  for (const r of rows) {
    const t = of(r.tool);
    if (r.k === 'c') {
      t.calls = Number(r.a);
      t.turnCount = Number(r.b);
    } else if (r.k === 't') t.turns.push(Number(r.a));
    else t.branchTurns.push({ branchId: String(r.b), turn: Number(r.a) });
  }
  for (const t of byTool.values()) {
    t.turns.sort((a, b) => a - b);
    t.branchTurns.sort((x, y) => (x.branchId < y.branchId ? -1 : x.branchId > y.branchId ? 1 : x.turn - y.turn));
  }
  return [...byTool.values()].sort((a, b) => (a.toolName < b.toolName ? -1 : a.toolName > b.toolName ? 1 : 0));
}

export interface FloorTokensPage {
  rowCount: number;
  totals: Record<string, number | null>;
  rows: { turn: number; sharedFrom: string | null }[];
  missingCount: number;
  missing: { branchId: string; turn: number }[];
}

const SUMS = `COUNT(*) AS rowCount, SUM(requests) AS requests, SUM(input_tokens) AS inputTokens,
  SUM(output_tokens) AS outputTokens, SUM(total_tokens) AS totalTokens,
  SUM(CAST(json_extract(CASE WHEN json_valid(input_tokens_details) THEN input_tokens_details END, '$.cached_tokens') AS INTEGER)) AS cachedTokens,
  SUM(CAST(json_extract(CASE WHEN json_valid(output_tokens_details) THEN output_tokens_details END, '$.reasoning_tokens') AS INTEGER)) AS reasoningTokens`;

/**
 * A branch's Tokens page (`tables/get` in turn order from the first row) with its shared ranges (`originBranchId`,
 * `fromTurn`…`toTurn`) and `fromTurns` (each branch's first own turn), as the host reads it.
 */
export function floorBranchTokens(
  c: ColdFloor,
  sessionId: string,
  branchId: string,
  shared: readonly { originBranchId: string; fromTurn: number; toTurn: number }[],
  fromTurn: number,
  limit: number,
  listed: number,
): FloorTokensPage {
  const legs = [
    { sql: 'session_id = ? AND branch_id = ?', params: [sessionId, branchId] as (string | number)[] },
    ...shared.map((r) => ({
      sql: 'session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ?',
      params: [sessionId, r.originBranchId, r.fromTurn, r.toTurn] as (string | number)[],
    })),
  ];
  const totals = c.get<Record<string, number | null>>(
    `SELECT ${SUMS} FROM (${legs.map((l) => `SELECT * FROM turn_usage WHERE ${l.sql}`).join(' UNION ALL ')})`,
    ...legs.flatMap((l) => l.params),
  )!;
  const rows = c.all<{ turn: number; shared_from: string | null }>(
    `${legs
      .map(
        (l, i) => `SELECT user_turn_number AS turn, ${i === 0 ? 'NULL' : 'branch_id'} AS shared_from, requests, input_tokens,
          output_tokens, total_tokens, input_tokens_details, output_tokens_details FROM turn_usage WHERE ${l.sql}`,
      )
      .join(' UNION ALL ')} ORDER BY turn LIMIT ?`,
    ...legs.flatMap((l) => l.params),
    limit,
  );
  const last =
    c.get<{ t: number | null }>(
      'SELECT MAX(user_turn_number) AS t FROM message_structure WHERE session_id = ? AND branch_id = ?',
      sessionId,
      branchId,
    )?.t ?? null;
  let missingCount = 0;
  let missing: { branchId: string; turn: number }[] = [];
  if (last !== null && last >= fromTurn) {
    const used =
      c.get<{ n: number }>(
        'SELECT COUNT(*) AS n FROM turn_usage WHERE session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ?',
        sessionId,
        branchId,
        fromTurn,
        last,
      )?.n ?? 0;
    missingCount = last - fromTurn + 1 - Number(used);
    if (missingCount > 0) {
      missing = c
        .all<{ turn: number }>(
          `SELECT DISTINCT s.user_turn_number AS turn FROM message_structure s
           WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number >= ? AND NOT EXISTS (SELECT 1 FROM turn_usage u
             WHERE u.session_id = s.session_id AND u.branch_id = s.branch_id AND u.user_turn_number = s.user_turn_number)
           ORDER BY s.user_turn_number LIMIT ?`,
          sessionId,
          branchId,
          fromTurn,
          listed,
        )
        .map((r) => ({ branchId, turn: Number(r.turn) }));
    }
  }
  const { rowCount, ...sums } = totals;
  return {
    rowCount: Number(rowCount),
    totals: sums,
    rows: rows.map((r) => ({ turn: Number(r.turn), sharedFrom: r.shared_from })),
    missingCount,
    missing,
  };
}
