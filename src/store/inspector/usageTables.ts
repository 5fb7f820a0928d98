/**
 * The token and tool tables of the conversation view, for one branch or the whole session. Usage rows are never
 * copied between branches, so session totals are plain sums; tool calls are shared by the branches that copied
 * them, so session tool counts count each stored call once (distinct message).
 */
import { exactTextSql, textFromSql } from '../exactText';
import { TOOL_CALL_TYPES_SQL } from '../itemClassification';
import { pythonJsonLoads } from '../pythonJson';
import type { QueryContext } from './queryContext';

/** One `turn_usage` row with the detail counts the view shows. */
export interface UsageRow {
  branchId: string;
  turn: number;
  requests: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  cachedTokens: number | null;
  reasoningTokens: number | null;
}

/** Calls of one tool and the turns they ran in. */
export interface ToolTotal {
  toolName: string;
  calls: number;
  turns: number[];
}

function detail(text: unknown, key: string): number | null {
  if (typeof text !== 'string' || text === '') return null;
  const d = pythonJsonLoads(text);
  if (!d.ok || typeof d.value !== 'object' || d.value === null) return null;
  const v = (d.value as Record<string, unknown>)[key];
  return typeof v === 'number' ? v : null;
}

/** Usage rows of a branch (or of every branch when `branchId` is null), by branch then turn. */
export function readUsageRows(ctx: QueryContext, sessionId: string, branchId: string | null): UsageRow[] {
  if (!ctx.tables.turnUsage) return [];
  const sql = `SELECT ${exactTextSql('branch_id')} AS branch, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
      input_tokens_details, output_tokens_details FROM turn_usage WHERE session_id = ?`;
  type Row = Record<string, unknown>;
  const rows =
    branchId === null
      ? ctx.stmt(`${sql} ORDER BY branch_id, user_turn_number`).all<Row>(sessionId)
      : ctx.stmt(`${sql} AND branch_id = ? ORDER BY user_turn_number`).all<Row>(sessionId, branchId);
  const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  return rows.map((r) => ({
    branchId: textFromSql(r.branch),
    turn: Number(r.user_turn_number),
    requests: num(r.requests),
    inputTokens: num(r.input_tokens),
    outputTokens: num(r.output_tokens),
    totalTokens: num(r.total_tokens),
    cachedTokens: detail(r.input_tokens_details, 'cached_tokens'),
    reasoningTokens: detail(r.output_tokens_details, 'reasoning_tokens'),
  }));
}

/** Tool calls per tool (each stored call once), with the turns they ran in; by name. */
export function readToolTotals(ctx: QueryContext, sessionId: string, branchId: string | null): ToolTotal[] {
  if (!ctx.tables.messageStructure) return [];
  const where = branchId === null ? 'session_id = ?' : 'session_id = ? AND branch_id = ?';
  const params = branchId === null ? [sessionId] : [sessionId, branchId];
  const rows = ctx
    .stmt(
      `SELECT COALESCE(tool_name, '') AS tool, user_turn_number AS turn, COUNT(DISTINCT message_id) AS calls
       FROM message_structure WHERE ${where} AND message_type IN (${TOOL_CALL_TYPES_SQL})
       GROUP BY tool, turn ORDER BY tool, turn`,
    )
    .all<{ tool: string; turn: number | null; calls: number }>(...params);
  const byTool = new Map<string, ToolTotal>();
  // A call copied into several branches keeps its message id and turn number, so COUNT(DISTINCT message_id) per
  // (tool, turn) counts it once across branches.
  for (const r of rows) {
    let t = byTool.get(r.tool);
    if (!t) byTool.set(r.tool, (t = { toolName: r.tool, calls: 0, turns: [] }));
    t.calls += r.calls;
    if (r.turn !== null && !t.turns.includes(r.turn)) t.turns.push(r.turn);
  }
  return [...byTool.values()];
}

/** Items and distinct tool names per turn, for the turn list. */
export interface TurnSummary {
  turn: number;
  itemCount: number;
  tools: string[];
}

/** Summaries of the turns `fromTurn`..`toTurn` of a branch: one index range scan of idx_structure_turn. */
export function readTurnSummaries(ctx: QueryContext, sessionId: string, branchId: string, fromTurn: number, toTurn: number): TurnSummary[] {
  if (!ctx.tables.messageStructure) return [];
  const rows = ctx
    .stmt(
      `SELECT user_turn_number AS turn, COUNT(*) AS items,
         GROUP_CONCAT(DISTINCT CASE WHEN message_type IN (${TOOL_CALL_TYPES_SQL}) THEN tool_name END) AS tools
       FROM message_structure WHERE session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ?
       GROUP BY user_turn_number ORDER BY user_turn_number`,
    )
    .all<{ turn: number; items: number; tools: string | null }>(sessionId, branchId, fromTurn, toTurn);
  // GROUP_CONCAT joins with ','. Tool names are function identifiers (optionally namespace.name), never commas.
  return rows.map((r) => ({ turn: r.turn, itemCount: r.items, tools: r.tools ? r.tools.split(',').sort() : [] }));
}

/**
 * User turns without a `turn_usage` row, per branch (one branch, or all when `branchId` is null): one anti-join
 * over the structure rows, without decoding any message.
 */
export function readTurnsWithoutUsage(ctx: QueryContext, sessionId: string, branchId: string | null): { branchId: string; turn: number }[] {
  if (!ctx.tables.messageStructure) return [];
  const noUsage = ctx.tables.turnUsage
    ? `AND NOT EXISTS (SELECT 1 FROM turn_usage u WHERE u.session_id = s.session_id AND u.branch_id = s.branch_id
         AND u.user_turn_number = s.user_turn_number)`
    : '';
  const where = branchId === null ? 's.session_id = ?' : 's.session_id = ? AND s.branch_id = ?';
  const params = branchId === null ? [sessionId] : [sessionId, branchId];
  return ctx
    .stmt(
      `SELECT DISTINCT ${exactTextSql('s.branch_id')} AS branch, s.user_turn_number AS turn FROM message_structure s
       WHERE ${where} AND s.message_type = 'user' AND s.user_turn_number IS NOT NULL ${noUsage}
       ORDER BY s.branch_id, s.user_turn_number`,
    )
    .all<{ branch: unknown; turn: number }>(...params)
    .map((r) => ({ branchId: textFromSql(r.branch), turn: r.turn }));
}
