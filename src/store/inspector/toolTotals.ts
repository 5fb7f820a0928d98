/**
 * The Tools tab's table: calls per tool, for one branch or the whole session. The counting lives in an accumulator fed
 * structure rows in sequence order, so the same code answers a one-off read (`readToolTotals`) and keeps a session's
 * totals up to date from the rows written since (keptTotals.ts), without a second definition of what is counted.
 */
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import { TOOL_CALL_TYPES_SQL } from '../format/itemClassification';
import type { QueryContext } from './queryContext';

/** Calls of one tool and the turns they ran in. */
export interface ToolTotal {
  toolName: string;
  calls: number;
  /** The first turns it ran in, ascending (at most `TOOL_TURNS_LISTED`). */
  turns: number[];
  /**
   * The whole session's totals only: the first turns it ran in with the branch that ran each (by branch, then turn; at
   * most `TOOL_TURNS_LISTED`), since turn numbers alone repeat across branches. `turnCount` then counts these pairs.
   */
  branchTurns?: { branchId: string; turn: number }[];
  /** How many turns it ran in. */
  turnCount: number;
}

/** How many of a tool's turns a table lists; `turnCount` says how many there are in all. */
export const TOOL_TURNS_LISTED = 20;

/** A structure row of a tool call, as the accumulator reads it. */
export interface ToolCallRow {
  tool: string;
  turn: number | null;
  messageId: number;
  /** The row's branch (needed for the session's totals only). */
  branchId: string;
}

/** The smallest `TOOL_TURNS_LISTED` values seen, ascending, and how many distinct values in all. */
class FirstDistinct<T> {
  private readonly all = new Set<string | number>();
  readonly first: T[] = [];
  constructor(
    private readonly key: (v: T) => string | number,
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  get size(): number {
    return this.all.size;
  }

  add(v: T): void {
    const k = this.key(v);
    if (this.all.has(k)) return;
    this.all.add(k);
    const first = this.first;
    if (first.length === TOOL_TURNS_LISTED && !this.less(v, first[first.length - 1]!)) return;
    // Rows mostly come in ascending turns, so the value usually goes last or nowhere: a linear walk from the end.
    let i = first.length;
    while (i > 0 && this.less(v, first[i - 1]!)) i--;
    first.splice(i, 0, v);
    if (first.length > TOOL_TURNS_LISTED) first.pop();
  }
}

// A turn is its own key (a number: no string made per row).
const turnKey = (t: number): number => t;
const runKey = (r: { branchId: string; turn: number }): string => `${r.branchId}\u0000${r.turn}`;
const runLess = (a: { branchId: string; turn: number }, b: { branchId: string; turn: number }): boolean =>
  a.branchId < b.branchId || (a.branchId === b.branchId && a.turn < b.turn);

interface ToolAcc {
  calls: number;
  turns: FirstDistinct<number>;
  runs: FirstDistinct<{ branchId: string; turn: number }> | undefined;
}

/**
 * Tool totals built from rows fed in sequence order. For the whole session (`wholeSession`), a call copied into several
 * branches keeps its message id, so each stored call counts once, under the branch that wrote it first: in sequence
 * order a copied call's first row is the one its branch wrote when it ran (a branch's copies get new, larger sequence
 * numbers). Memory grows with the number of tools, their distinct turns and (session) the stored calls.
 */
export class ToolTotalsAccumulator {
  private readonly byTool = new Map<string, ToolAcc>();
  private readonly seen: Set<number> | undefined;

  constructor(readonly wholeSession: boolean) {
    this.seen = wholeSession ? new Set() : undefined;
  }

  add(r: ToolCallRow): void {
    if (this.seen) {
      if (this.seen.has(r.messageId)) return;
      this.seen.add(r.messageId);
    }
    let t = this.byTool.get(r.tool);
    if (!t) {
      t = {
        calls: 0,
        turns: new FirstDistinct(turnKey, (a, b) => a < b),
        runs: this.seen ? new FirstDistinct(runKey, runLess) : undefined,
      };
      this.byTool.set(r.tool, t);
    }
    t.calls++;
    if (r.turn === null) return;
    t.turns.add(r.turn);
    t.runs?.add({ branchId: r.branchId, turn: r.turn });
  }

  /** The table, by tool name (code-unit order, as SQLite's BINARY collation sorts). */
  result(): ToolTotal[] {
    return [...this.byTool]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([toolName, t]) =>
        t.runs
          ? {
              toolName,
              calls: t.calls,
              turns: [...t.turns.first],
              branchTurns: t.runs.first.map((r) => ({ ...r })),
              turnCount: t.runs.size,
            }
          : { toolName, calls: t.calls, turns: [...t.turns.first], turnCount: t.turns.size },
      );
  }
}

/**
 * The SELECT list and tool-call filter every reader of tool-call rows uses (aliases match `toToolCallRow`). The exact
 * branch id costs a function call per row, so a branch's own rows leave it out (`withBranch` false).
 */
export function toolCallColumnsSql(withBranch: boolean): string {
  return `COALESCE(tool_name, '') AS tool, user_turn_number AS turn, message_id${withBranch ? `, ${exactTextSql('branch_id')} AS branch` : ''}`;
}
export const TOOL_CALL_FILTER_SQL = `message_type IN (${TOOL_CALL_TYPES_SQL})`;

/** A row read with `toolCallColumnsSql`; `branchId` names the branch when the row carries none. */
export function toToolCallRow(r: { tool: string; turn: number | null; message_id: number; branch?: unknown }, branchId = ''): ToolCallRow {
  return {
    tool: r.tool,
    turn: r.turn,
    messageId: Number(r.message_id),
    branchId: r.branch === undefined ? branchId : textFromSql(r.branch),
  };
}

/**
 * Feeds `acc` the tool-call rows of a branch (or, for the whole-session accumulator, the session) in sequence order:
 * one pass over the scope's structure rows. There is no index on `message_type` in Python's DDL, so reading the rows
 * is the floor; what must not happen is work per row that grows with the table. `onRow` lets a caller count rows
 * (progress) or stop (it throws).
 */
export function feedToolCalls(
  ctx: QueryContext,
  acc: ToolTotalsAccumulator,
  sessionId: string,
  branchId: string | null,
  onRow?: () => void,
): void {
  if (!ctx.tables.messageStructure) return;
  const where = branchId === null ? 'session_id = ?' : 'session_id = ? AND branch_id = ?';
  const params = branchId === null ? [sessionId] : [sessionId, branchId];
  const rows = ctx
    .stmt(
      // A branch's totals do not depend on order, so that query reads the rows as they come (no sort).
      `SELECT ${toolCallColumnsSql(branchId === null)} FROM message_structure WHERE ${where} AND ${TOOL_CALL_FILTER_SQL}
       ${branchId === null ? 'ORDER BY sequence_number' : ''}`,
    )
    .iterate<{ tool: string; turn: number | null; message_id: number; branch?: unknown }>(...params);
  for (const r of rows) {
    onRow?.();
    acc.add(toToolCallRow(r, branchId ?? ''));
  }
}

/**
 * Feeds the whole-session accumulator `acc` each stored call of the session once, as the row its branch wrote when it
 * ran: the row with the smallest sequence number of each message (what `feedToolCalls` finds in sequence order, where
 * a branch's copies come later). SQLite groups the rows by message (`MIN` makes the bare columns the first row's), so
 * a long session's copied calls never reach JavaScript: on a file whose branches copy most of `main` that is a
 * quarter of the rows, and the answer costs what the aggregate costs. The accumulator's result does not depend on the
 * order it is fed in once each call comes once (its turn lists keep the smallest values), so the groups come unsorted.
 */
export function feedSessionToolCalls(ctx: QueryContext, acc: ToolTotalsAccumulator, sessionId: string, onRow?: () => void): void {
  if (!ctx.tables.messageStructure) return;
  const rows = ctx
    .stmt(
      `SELECT ${toolCallColumnsSql(true)}, MIN(sequence_number) AS first FROM message_structure
       WHERE session_id = ? AND ${TOOL_CALL_FILTER_SQL} GROUP BY message_id`,
    )
    .iterate<{ tool: string; turn: number | null; message_id: number; branch?: unknown }>(sessionId);
  for (const r of rows) {
    onRow?.();
    acc.add(toToolCallRow(r));
  }
}

/** Tool calls per tool, with the turns they ran in (the first `TOOL_TURNS_LISTED`, and how many in all); by name. */
export function readToolTotals(ctx: QueryContext, sessionId: string, branchId: string | null): ToolTotal[] {
  const acc = new ToolTotalsAccumulator(branchId === null);
  if (branchId === null) feedSessionToolCalls(ctx, acc, sessionId);
  else feedToolCalls(ctx, acc, sessionId, branchId);
  return acc.result();
}
