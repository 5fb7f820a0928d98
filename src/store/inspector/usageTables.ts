/**
 * The token tables of the conversation view, for one branch or the whole session, and the turn list's summaries.
 * Usage rows are never copied between branches, so session totals are plain sums. (The tool table: toolTotals.ts.)
 */
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import { TOOL_CALL_TYPES_SQL } from '../format/itemClassification';
import { pythonJsonLoads } from '../format/pythonJson';
import { readBranchIds } from './branchIds';
export { TOOL_TURNS_LISTED, readToolTotals, type ToolTotal } from './toolTotals';
import type { QueryContext } from './queryContext';

/** One `turn_usage` row with the detail counts the view shows. */
export interface UsageRow {
  branchId: string;
  turn: number;
  /**
   * Set on a shared turn's row in a branch's page (`UsagePageRequest.shared`): the branch that ran the turn and holds
   * the row; `branchId` is then the branch the page is for.
   */
  sharedFrom?: string;
  requests: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  cachedTokens: number | null;
  reasoningTokens: number | null;
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
  return rows.map((r) => usageRowOf(r));
}

/** A usage row; `pageBranch` names the branch of a row that carries none (a shared turn's row in a branch's page). */
/** Where a page of `readUsageRowsAfter` starts: after this row (null: at the first). */
export interface UsageRowKey {
  branchId: string;
  turn: number;
}

/**
 * The next `limit` usage rows of a branch (or of every branch when `branchId` is null) after `after`, in the order
 * `readUsageRows` returns them (branch, then turn): one seek on the (session, branch, turn) index per page, so a
 * reader walks any number of rows holding one page, each page costing what it returns.
 */
export function readUsageRowsAfter(
  ctx: QueryContext,
  sessionId: string,
  branchId: string | null,
  after: UsageRowKey | null,
  limit: number,
): UsageRow[] {
  if (!ctx.tables.turnUsage) return [];
  const columns = `${exactTextSql('branch_id')} AS branch, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
      input_tokens_details, output_tokens_details`;
  type Row = Record<string, unknown>;
  let rows: Row[];
  if (branchId !== null) {
    rows = ctx
      .stmt(
        `SELECT ${columns} FROM turn_usage WHERE session_id = ? AND branch_id = ? AND user_turn_number > ?
         ORDER BY user_turn_number LIMIT ?`,
      )
      .all<Row>(sessionId, branchId, after?.turn ?? Number.MIN_SAFE_INTEGER, limit);
  } else if (after === null) {
    rows = ctx
      .stmt(`SELECT ${columns} FROM turn_usage WHERE session_id = ? ORDER BY branch_id, user_turn_number LIMIT ?`)
      .all<Row>(sessionId, limit);
  } else {
    rows = ctx
      .stmt(
        `SELECT ${columns} FROM turn_usage WHERE session_id = ? AND (branch_id, user_turn_number) > (?, ?)
         ORDER BY branch_id, user_turn_number LIMIT ?`,
      )
      .all<Row>(sessionId, after.branchId, after.turn, limit);
  }
  return rows.map((r) => usageRowOf(r));
}

/**
 * A count as the row holds it: a number, or a whole number stored as text (a column whose type was altered, the doctor's
 * altered-schema file), which SQLite's `sum()` counts too, so a row's figures add up to the totals shown beside them
 * (they read "–" and summed to 0 while the session's total said 150). Anything else is no figure.
 */
function countOf(v: unknown): number | null {
  if (typeof v === 'number') return v;
  return typeof v === 'string' && /^\s*[+-]?\d{1,15}\s*$/.test(v) ? Number(v) : null;
}

function usageRowOf(r: Record<string, unknown>, pageBranch?: string): UsageRow {
  const num = countOf;
  return {
    branchId: pageBranch !== undefined && (r.branch === null || r.branch === undefined) ? pageBranch : textFromSql(r.branch),
    turn: Number(r.user_turn_number),
    ...(r.shared_from !== null && r.shared_from !== undefined ? { sharedFrom: textFromSql(r.shared_from) } : {}),
    requests: num(r.requests),
    inputTokens: num(r.input_tokens),
    outputTokens: num(r.output_tokens),
    totalTokens: num(r.total_tokens),
    cachedTokens: detail(r.input_tokens_details, 'cached_tokens'),
    reasoningTokens: detail(r.output_tokens_details, 'reasoning_tokens'),
  };
}

/**
 * The usage rows of a branch's turns `fromTurn`…`toTurn`, by turn: one range seek on turn_usage's unique index
 * (session_id, branch_id, user_turn_number). The compare view reads the rows of the turns it shows with it.
 */
export function readTurnUsage(ctx: QueryContext, sessionId: string, branchId: string, fromTurn: number, toTurn: number): UsageRow[] {
  if (!ctx.tables.turnUsage) return [];
  return ctx
    .stmt(
      `SELECT ${exactTextSql('branch_id')} AS branch, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
         input_tokens_details, output_tokens_details FROM turn_usage
       WHERE session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ? ORDER BY user_turn_number`,
    )
    .all<Record<string, unknown>>(sessionId, branchId, fromTurn, toTurn)
    .map((r) => usageRowOf(r));
}

/** What a usage page can be sorted by. */
export type UsageSortKey =
  'turn' | 'branchId' | 'requests' | 'inputTokens' | 'outputTokens' | 'totalTokens' | 'cachedTokens' | 'reasoningTokens';

export interface UsagePageRequest {
  sort?: UsageSortKey;
  descending?: boolean;
  offset?: number;
  limit: number;
  /**
   * For a branch's page: the turns it shares with its ancestors, each range with the branch that ran it
   * (`sharedTurnRanges` in src/shared/turnOrigin.ts). Branching copies no usage rows (spec §8.3), so what the
   * branch's conversation cost is its own rows plus these ranges' rows on their origin branches; they join the page
   * (and its count and totals) marked `sharedFrom`, but for a turn the branch has its own row for, which is the turn's.
   * Ignored for the session (null branch), which counts each row once.
   */
  shared?: readonly SharedTurnRange[];
}

/** Turns `fromTurn`…`toTurn` (inclusive) of a branch were run by `originBranchId`, which holds their usage rows. */
export interface SharedTurnRange {
  originBranchId: string;
  fromTurn: number;
  toTurn: number;
}

/** A page of usage rows, the number of rows in the scope, and the scope's totals (summed in SQL, never in the view). */
export interface UsagePage {
  rows: UsageRow[];
  rowCount: number;
  totals: Omit<UsageRow, 'branchId' | 'turn'>;
}

const CACHED_SQL =
  "CAST(json_extract(CASE WHEN json_valid(input_tokens_details) THEN input_tokens_details END, '$.cached_tokens') AS INTEGER)";
const REASONING_SQL =
  "CAST(json_extract(CASE WHEN json_valid(output_tokens_details) THEN output_tokens_details END, '$.reasoning_tokens') AS INTEGER)";

const SORT_SQL: Record<UsageSortKey, string> = {
  turn: 'user_turn_number',
  branchId: 'branch_id',
  requests: 'requests',
  inputTokens: 'input_tokens',
  outputTokens: 'output_tokens',
  totalTokens: 'total_tokens',
  cachedTokens: CACHED_SQL,
  reasoningTokens: REASONING_SQL,
};

/** The number of usage rows in a scope and their sums (SQL `SUM` semantics: null when no row has a value). */
export interface UsageSums {
  rowCount: number;
  totals: UsagePage['totals'];
}

/** Rows of one branch (all its turns, or `fromTurn`…`toTurn`) or, with a null branch, of the whole session. */
export interface UsageSumsScope {
  branchId: string | null;
  turns?: { from: number; to: number };
}

/** Where a page's count and totals come from: summed in SQL (`sqlUsageSums`), or kept (keptTotals.ts). */
export type UsageSumsSource = (ctx: QueryContext, sessionId: string, scope: UsageSumsScope) => UsageSums;

export function emptyUsageSums(): UsageSums {
  return {
    rowCount: 0,
    totals: { requests: null, inputTokens: null, outputTokens: null, totalTokens: null, cachedTokens: null, reasoningTokens: null },
  };
}

/** `a` + `b`, as SQL would sum the union of their rows (null + null stays null). */
export function addUsageSums(a: UsageSums, b: UsageSums): UsageSums {
  const add = (x: number | null, y: number | null): number | null => (x === null ? y : y === null ? x : x + y);
  const x = a.totals;
  const y = b.totals;
  return {
    rowCount: a.rowCount + b.rowCount,
    totals: {
      requests: add(x.requests, y.requests),
      inputTokens: add(x.inputTokens, y.inputTokens),
      outputTokens: add(x.outputTokens, y.outputTokens),
      totalTokens: add(x.totalTokens, y.totalTokens),
      cachedTokens: add(x.cachedTokens, y.cachedTokens),
      reasoningTokens: add(x.reasoningTokens, y.reasoningTokens),
    },
  };
}

/**
 * The sum of a column of counts for display: `total()` adds as a double and never raises, where `sum()` stops the
 * whole query with "integer overflow" on one huge row (then no list, no Tokens tab); exact for any sum up to 2^53, as
 * the number handed to JS is anyway. NULL when no row has a value, as `sum()` gives.
 */
export function displaySumSql(expression: string): string {
  return `CASE WHEN COUNT(${expression}) > 0 THEN TOTAL(${expression}) END`;
}

/**
 * The sums of the `turn_usage` rows matching `where` (SQL `sum()` semantics but for overflow, `displaySumSql`). The
 * details' counts are worked out once per row, in a subquery that `LIMIT -1` keeps from being flattened into the
 * aggregate (which would decode each row's JSON twice: once to count, once to total).
 */
function sumsSql(where: string): string {
  return `SELECT COUNT(*) AS n, ${displaySumSql('requests')} AS requests, ${displaySumSql('input_tokens')} AS input,
    ${displaySumSql('output_tokens')} AS output, ${displaySumSql('total_tokens')} AS total, ${displaySumSql('cached')} AS cached,
    ${displaySumSql('reasoning')} AS reasoning
    FROM (SELECT requests, input_tokens, output_tokens, total_tokens, ${CACHED_SQL} AS cached, ${REASONING_SQL} AS reasoning
      FROM turn_usage WHERE ${where} LIMIT -1)`;
}

/** A row of `sumsSql` as `UsageSums`. */
export function usageSumsOf(t: Record<string, unknown> | undefined): UsageSums {
  const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  return {
    rowCount: Number(t?.n ?? 0),
    totals: {
      requests: num(t?.requests),
      inputTokens: num(t?.input),
      outputTokens: num(t?.output),
      totalTokens: num(t?.total),
      cachedTokens: num(t?.cached),
      reasoningTokens: num(t?.reasoning),
    },
  };
}

/** Sums over `turn_usage` rows matching `where` (after `FROM turn_usage WHERE`), for keptTotals.ts's deltas too. */
export function sumUsageWhere(ctx: QueryContext, where: string, params: readonly (string | number)[]): UsageSums {
  return usageSumsOf(ctx.stmt(sumsSql(where)).get<Record<string, unknown>>(...params));
}

/** The scope's sums in SQL: one range of the (session, branch, turn) index, then the rows' columns. */
export const sqlUsageSums: UsageSumsSource = (ctx, sessionId, scope) => {
  if (scope.branchId === null) return sumUsageWhere(ctx, 'session_id = ?', [sessionId]);
  if (!scope.turns) return sumUsageWhere(ctx, 'session_id = ? AND branch_id = ?', [sessionId, scope.branchId]);
  return sumUsageWhere(ctx, 'session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ?', [
    sessionId,
    scope.branchId,
    scope.turns.from,
    scope.turns.to,
  ]);
};

/** `a` − `b`, `b`'s rows being some of `a`'s (a sum of the rest; no row left: none). */
function lessUsageSums(a: UsageSums, b: UsageSums): UsageSums {
  if (b.rowCount === 0) return a;
  if (a.rowCount <= b.rowCount) return emptyUsageSums();
  const less = (x: number | null, y: number | null): number | null => (x === null ? null : x - (y ?? 0));
  const x = a.totals;
  const y = b.totals;
  return {
    rowCount: a.rowCount - b.rowCount,
    totals: {
      requests: less(x.requests, y.requests),
      inputTokens: less(x.inputTokens, y.inputTokens),
      outputTokens: less(x.outputTokens, y.outputTokens),
      totalTokens: less(x.totalTokens, y.totalTokens),
      cachedTokens: less(x.cachedTokens, y.cachedTokens),
      reasoningTokens: less(x.reasoningTokens, y.reasoningTokens),
    },
  };
}

/**
 * The rows of a shared range on its origin whose turn the branch has a row of its own for (a run's usage stored
 * right after branching lands on the branch's latest turn, a copied one): the branch's own row is the turn's, as the
 * SDK reads its own branch's row, so these are left out of the branch's page. Always summed in SQL, never kept: an
 * own row written later changes them without touching the origin's rows. Driven by the branch's own rows in the range
 * (the `IN` list: normally none or one), one origin seek each.
 */
function overriddenSums(ctx: QueryContext, sessionId: string, branchId: string, r: SharedTurnRange): UsageSums {
  return sumUsageWhere(
    ctx,
    `session_id = ? AND branch_id = ? AND user_turn_number IN (SELECT user_turn_number FROM turn_usage
       WHERE session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ?)`,
    [sessionId, r.originBranchId, sessionId, branchId, r.fromTurn, r.toTurn],
  );
}

/**
 * A page's count and totals: the session's rows, or a branch's own rows plus its shared ranges' rows on their origin
 * branches (`UsagePageRequest.shared`) less those of turns it has its own row for, each part from `sums`.
 */
function scopeSums(
  ctx: QueryContext,
  sessionId: string,
  branchId: string | null,
  shared: readonly SharedTurnRange[],
  sums: UsageSumsSource,
): UsageSums {
  if (branchId === null) return sums(ctx, sessionId, { branchId: null });
  let out = sums(ctx, sessionId, { branchId });
  for (const r of sharedRanges(branchId, shared)) {
    const range = sums(ctx, sessionId, { branchId: r.originBranchId, turns: { from: r.fromTurn, to: r.toTurn } });
    out = addUsageSums(out, lessUsageSums(range, overriddenSums(ctx, sessionId, branchId, r)));
  }
  return out;
}

function sharedRanges(branchId: string, shared: readonly SharedTurnRange[]): SharedTurnRange[] {
  return shared.filter((r) => r.fromTurn <= r.toTurn && r.originBranchId !== branchId);
}

/**
 * One page of a branch's (or the session's) usage rows in the order asked for, with the row count and totals. In
 * (branch, turn) order the page is read straight from the turn_usage index; another order sorts the scope's rows in
 * SQLite (no index covers token counts), which still sends only `limit` rows on.
 */
export function readUsagePage(
  ctx: QueryContext,
  sessionId: string,
  branchId: string | null,
  request: UsagePageRequest,
  sums: UsageSumsSource = sqlUsageSums,
): UsagePage {
  const empty: UsagePage = { rows: [], rowCount: 0, totals: emptyUsageSums().totals };
  if (!ctx.tables.turnUsage) return empty;
  const shared = branchId === null ? [] : (request.shared ?? []);
  const t = scopeSums(ctx, sessionId, branchId, shared, sums);
  const direction = request.descending ? 'DESC' : 'ASC';
  const key = SORT_SQL[request.sort ?? 'turn'] ?? SORT_SQL.turn;
  const offset = Math.max(0, request.offset ?? 0);
  if (branchId !== null && sharedRanges(branchId, shared).length > 0) {
    const rows = readSharedPage(ctx, sessionId, branchId, sharedRanges(branchId, shared), request, direction, offset);
    return { rows: rows.map((r) => usageRowOf(r, branchId)), rowCount: t.rowCount, totals: t.totals };
  }
  const { from, params } = usageScope(sessionId, branchId);
  // Ties (and the default) in (branch, turn) order, so pages never overlap or skip.
  const order =
    request.sort === undefined || request.sort === 'turn'
      ? `branch_id ${direction}, user_turn_number ${direction}`
      : `${key} ${direction}, branch_id, user_turn_number`;
  const rows = ctx
    .stmt(
      `SELECT ${exactTextSql('branch_id')} AS branch, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
         input_tokens_details, output_tokens_details FROM ${from}
       ORDER BY ${order} LIMIT ? OFFSET ?`,
    )
    .all<Record<string, unknown>>(...params, request.limit, offset);
  return { rows: rows.map((r) => usageRowOf(r)), rowCount: t.rowCount, totals: t.totals };
}

const USAGE_COLUMNS = `user_turn_number, requests, input_tokens, output_tokens, total_tokens, input_tokens_details,
  output_tokens_details`;

/** The rows a page of the session (null branch) or of a branch without shared turns reads, as SQL after FROM. */
function usageScope(sessionId: string, branchId: string | null): { from: string; params: (string | number)[] } {
  if (branchId === null) return { from: 'turn_usage WHERE session_id = ?', params: [sessionId] };
  return { from: 'turn_usage WHERE session_id = ? AND branch_id = ?', params: [sessionId, branchId] };
}

/**
 * A page of a branch with shared turns: a compound SELECT of the branch's own rows and one range of each origin
 * branch's rows (one index range each), the shared ones with no branch (the page's, filled in by the caller) and
 * the origin in `shared_from`. Every row of the page is the page's branch, so the (branch, turn) order is the turn
 * order, and a sort by a count ties on the turn. The ORDER BY sits on the compound itself, so in turn order SQLite
 * merges the legs, each read in its index's order, and stops after `offset + limit` rows, where a subquery in FROM
 * would sort every row of the scope first (a branch forked late shares tens of thousands: its every page paid that).
 * Another order sorts the scope's rows, as it must (no index covers the counts).
 */
function readSharedPage(
  ctx: QueryContext,
  sessionId: string,
  branchId: string,
  ranges: readonly SharedTurnRange[],
  request: UsagePageRequest,
  direction: 'ASC' | 'DESC',
  offset: number,
): Record<string, unknown>[] {
  const byTurn = request.sort === undefined || request.sort === 'turn' || request.sort === 'branchId';
  const sortKey = byTurn ? '' : `, ${SORT_SQL[request.sort!] ?? SORT_SQL.turn} AS sort_key`;
  const own = `SELECT ${exactTextSql('branch_id')} AS branch, ${USAGE_COLUMNS}, NULL AS shared_from${sortKey}
    FROM turn_usage WHERE session_id = ? AND branch_id = ?`;
  // A turn the branch has its own row for is its own leg's, not the origin's (see `overriddenSums`).
  const copied = `SELECT NULL AS branch, ${USAGE_COLUMNS}, ${exactTextSql('branch_id')} AS shared_from${sortKey}
    FROM turn_usage u WHERE session_id = ? AND branch_id = ? AND user_turn_number BETWEEN ? AND ?
      AND NOT EXISTS (SELECT 1 FROM turn_usage b WHERE b.session_id = u.session_id AND b.branch_id = ?
        AND b.user_turn_number = u.user_turn_number)`;
  // By branch id: one branch, so the turn order (ascending ties, as the single-table page's `branch_id, turn`).
  const order =
    request.sort === 'branchId' ? 'user_turn_number' : byTurn ? `user_turn_number ${direction}` : `sort_key ${direction}, user_turn_number`;
  return ctx
    .stmt(`${[own, ...ranges.map(() => copied)].join(' UNION ALL ')} ORDER BY ${order} LIMIT ? OFFSET ?`)
    .all<Record<string, unknown>>(
      sessionId,
      branchId,
      ...ranges.flatMap((r) => [sessionId, r.originBranchId, r.fromTurn, r.toTurn, branchId]),
      request.limit,
      offset,
    );
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

/** How many usage rows a branch has from turn `from` on: counted (`sqlUsageRowsFrom`), or kept (keptTotals.ts). */
export type UsageRowsFrom = (ctx: QueryContext, sessionId: string, branchId: string, from: number) => number;

/** One count of the unique index's range: no row is read. */
export const sqlUsageRowsFrom: UsageRowsFrom = (ctx, sessionId, branchId, from) =>
  Number(
    ctx
      .stmt('SELECT COUNT(*) AS n FROM turn_usage WHERE session_id = ? AND branch_id = ? AND user_turn_number >= ?')
      .get<{ n: number }>(sessionId, branchId, from)?.n ?? 0,
  );

/** Turns without a usage row: the first `limit` (by branch, then turn) and how many in all. */
export interface TurnsWithoutUsage {
  turns: { branchId: string; turn: number }[];
  count: number;
}

/**
 * Own turns (from `fromTurns.get(branch)`, default 1: copied turns have their usage on the parent) that have no usage
 * row, for one branch or every branch. Per branch, one seek for the last turn and one covering-index count of its
 * usage rows decide whether anything is missing at all (turns are numbered 1, 2, … so a branch with as many usage rows
 * as turns lacks none); only then are the missing turns looked up, and only the first `limit`.
 */
export function readTurnsWithoutUsage(
  ctx: QueryContext,
  sessionId: string,
  branchId: string | null,
  options: { fromTurns?: ReadonlyMap<string, number>; limit?: number } = {},
  usageRowsFrom: UsageRowsFrom = sqlUsageRowsFrom,
): TurnsWithoutUsage {
  const out: TurnsWithoutUsage = { turns: [], count: 0 };
  if (!ctx.tables.messageStructure) return out;
  const limit = options.limit ?? 50;
  const branches = branchId === null ? readBranchIds(ctx, sessionId) : [branchId];
  for (const branch of branches) {
    const from = Math.max(1, options.fromTurns?.get(branch) ?? 1);
    const last = ctx
      .stmt('SELECT MAX(user_turn_number) AS turn FROM message_structure WHERE session_id = ? AND branch_id = ?')
      .get<{ turn: number | null }>(sessionId, branch)?.turn;
    if (last === null || last === undefined || last < from) continue;
    // The branch's usage rows from `from` on (counted, or kept as one open range so appends do not change its key),
    // less any past the last turn (only after a compaction kept older turns' usage, §12 j: a short index range).
    const withUsage = ctx.tables.turnUsage
      ? usageRowsFrom(ctx, sessionId, branch, from) -
        Number(
          ctx
            .stmt('SELECT COUNT(*) AS n FROM turn_usage WHERE session_id = ? AND branch_id = ? AND user_turn_number > ?')
            .get<{ n: number }>(sessionId, branch, last)?.n ?? 0,
        )
      : 0;
    const turns = last - from + 1;
    if (withUsage >= turns) continue;
    const noUsage = ctx.tables.turnUsage
      ? `AND NOT EXISTS (SELECT 1 FROM turn_usage u WHERE u.session_id = s.session_id AND u.branch_id = s.branch_id
           AND u.user_turn_number = s.user_turn_number)`
      : '';
    const room = Math.max(0, limit - out.turns.length);
    const found = ctx
      .stmt(
        // Turn numbers from idx_structure_turn alone (no row lookups): every turn from 1 on opens with its user message.
        `SELECT DISTINCT s.user_turn_number AS turn FROM message_structure s
         WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number >= ? ${noUsage}
         ORDER BY s.user_turn_number LIMIT ?`,
      )
      .all<{ turn: number }>(sessionId, branch, from, room);
    out.turns.push(...found.map((r) => ({ branchId: branch, turn: r.turn })));
    out.count += found.length < room ? found.length : turns - withUsage;
  }
  return out;
}

/**
 * What the Tokens tab shows, in one read: a page of usage rows (moved back to the last page when `offset` is past the
 * end, as after rows were deleted) and the own turns without a usage row (`missing`: see `readTurnsWithoutUsage`).
 */
export interface UsageTab {
  page: UsagePage;
  /** The page's offset (the request's, or the last page's). */
  offset: number;
  missing: TurnsWithoutUsage;
}

export function readUsageTab(
  ctx: QueryContext,
  sessionId: string,
  branchId: string | null,
  request: UsagePageRequest,
  missing: { fromTurns?: ReadonlyMap<string, number>; limit?: number } = {},
  sums: UsageSumsSource = sqlUsageSums,
  usageRowsFrom: UsageRowsFrom = sqlUsageRowsFrom,
): UsageTab {
  let offset = Math.max(0, request.offset ?? 0);
  let page = readUsagePage(ctx, sessionId, branchId, { ...request, offset }, sums);
  if (page.rows.length === 0 && page.rowCount > 0) {
    offset = Math.floor((page.rowCount - 1) / request.limit) * request.limit;
    page = readUsagePage(ctx, sessionId, branchId, { ...request, offset }, sums);
  }
  return { page, offset, missing: readTurnsWithoutUsage(ctx, sessionId, branchId, missing, usageRowsFrom) };
}
