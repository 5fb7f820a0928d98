/** Builds the conversation view's models from the inspector's reads (no vscode here beyond types). */
import { basename } from 'node:path';
import {
  readBeforeFirstTurn,
  type ToolTotal,
  type BranchNode,
  type ItemEntry,
  type SessionReader,
  type TurnEntry,
  type TurnSummary,
  type UsageSortKey,
} from '../../store';
import { MAX_TURN_REQUEST, MAX_USAGE_REQUEST, MISSING_USAGE_LISTED } from '../../shared/pageSizes';
import type { Requests } from '../../shared/protocol/conversation';
import { sharedTurnRanges } from '../../shared/turnOrigin';
import { itemPreview } from '../../shared/itemText';
import type {
  BranchView,
  ItemView,
  SessionView,
  TablesView,
  ToolsView,
  ToolUsageView,
  TurnPageView,
  TurnUsageView,
  TurnView,
  UsageWindow,
} from '../../shared/protocol/conversationViews';
import * as l10n from '@vscode/l10n';

/** One row of the Tools table. */
export function toolUsageView(t: ToolTotal): ToolUsageView {
  return {
    toolName: t.toolName,
    calls: t.calls,
    turns: t.turns,
    ...(t.branchTurns ? { branchTurns: t.branchTurns } : {}),
    turnCount: t.turnCount,
  };
}

/** The tool totals of a branch or (null) the session, for the Tools tab's own scope (`tools/get`). */
export async function toolsView(db: SessionReader, sessionId: string, branchId: string | null): Promise<ToolsView> {
  const tools = await db.getToolTotals(sessionId, branchId);
  return { branchId, tools: tools.map(toolUsageView) };
}

export function turnView(t: TurnEntry, summary?: TurnSummary): TurnView {
  return {
    turn: t.turn,
    branchTurnNumber: t.branchTurnNumber,
    preview: t.preview ?? '',
    error: t.error,
    createdAt: t.createdAt,
    totalTokens: t.totalTokens,
    itemCount: summary?.itemCount ?? 1,
    tools: summary?.tools ?? [],
  };
}

/** The fork facts of the session's branches (the branch tree the panel read for `session/get`). */
type ForkTree = readonly Pick<BranchNode, 'branchId' | 'parentBranchId' | 'forkTurn'>[];

/**
 * A page of a branch's turns with their summaries (`turns/get`). Forwards it is a keyset page from `afterTurn`;
 * backwards (End, or scrolling up from a window that does not start at turn 1) it is the page before `beforeTurn`,
 * one index seek wherever that is, so the view never walks the pages in between. Turns the branch shares with an
 * ancestor (`branches` say which) are marked with the branch that ran them and carry that branch's usage.
 */
export async function turnPage(
  db: SessionReader,
  sessionId: string,
  request: Requests['turns/get']['params'],
  branches: ForkTree = [],
): Promise<TurnPageView> {
  const { branchId, afterTurn, beforeTurn } = request;
  const clamped = Math.max(1, Math.min(request.limit, MAX_TURN_REQUEST));
  let turns: TurnEntry[];
  let nextAfterTurn: number | null;
  let previousBeforeTurn: number | null;
  if (beforeTurn !== undefined) {
    const page = await db.getTurnsPageBefore(sessionId, branchId, { beforeTurn, limit: clamped });
    turns = page.turns;
    previousBeforeTurn = page.previousBeforeTurn;
    const last = turns[turns.length - 1];
    // The last page ends the branch; a page before a turn is followed by that turn.
    nextAfterTurn = beforeTurn === null ? null : (last?.turn ?? beforeTurn - 1);
  } else {
    const page = await db.getTurnsPage(sessionId, branchId, { afterTurn, limit: clamped });
    turns = page.turns;
    nextAfterTurn = page.nextAfterTurn;
    previousBeforeTurn = afterTurn === null ? null : (turns[0]?.turn ?? null);
  }
  const first = turns[0];
  const last = turns[turns.length - 1];
  const summaries = first && last ? await db.getTurnSummaries(sessionId, branchId, first.turn, last.turn) : [];
  const byTurn = new Map(summaries.map((s) => [s.turn, s]));
  const shared = first && last ? await sharedTurnUsage(db, sessionId, branchId, branches, first.turn, last.turn) : new Map();
  const views = turns.map((t) => {
    const view = turnView(t, byTurn.get(t.turn));
    const origin = shared.get(t.turn);
    return origin ? { ...view, sharedFrom: origin.branchId, totalTokens: origin.totalTokens } : view;
  });
  // A page that starts the branch starts with what came before its first user message (turn 0): often the agent's
  // instructions, the first thing to read when debugging it.
  const startsBranch = beforeTurn !== undefined ? previousBeforeTurn === null : afterTurn === null;
  const before = startsBranch ? await beforeFirstTurn(db, sessionId, branchId) : null;
  return { branchId, turns: before ? [before, ...views] : views, nextAfterTurn, previousBeforeTurn };
}

/**
 * The items stored before a branch's first user message as one entry of the turn list (turn 0), or null when there
 * are none: their count and tools, and the first one's preview. Never branchable (no user message to branch before).
 */
export async function beforeFirstTurn(db: SessionReader, sessionId: string, branchId: string): Promise<TurnView | null> {
  const before = await readBeforeFirstTurn(db, sessionId, branchId);
  if (!before) return null;
  const { first } = before;
  return {
    turn: 0,
    branchTurnNumber: null,
    preview: first && !first.corrupt ? itemPreview(first.item) : '',
    error: first?.corrupt ? first.error : null,
    createdAt: first?.createdAt ?? null,
    totalTokens: null,
    itemCount: before.itemCount,
    tools: before.tools,
  };
}

/**
 * The shared turns among `fromTurn`…`toTurn` of a branch, each with the branch that ran it and that branch's total
 * tokens (null without a row). Branching copies no usage rows (spec §8.3), so a shared turn's usage is on its origin:
 * one range read per origin branch the page reaches (the parent, a grandparent for nested forks), never one per turn.
 */
export async function sharedTurnUsage(
  db: SessionReader,
  sessionId: string,
  branchId: string,
  branches: ForkTree,
  fromTurn: number,
  toTurn: number,
): Promise<Map<number, { branchId: string; totalTokens: number | null }>> {
  const out = new Map<number, { branchId: string; totalTokens: number | null }>();
  for (const range of sharedTurnRanges(branches, branchId)) {
    const from = Math.max(range.fromTurn, fromTurn);
    const to = Math.min(range.toTurn, toTurn);
    if (from > to) continue;
    const rows = await db.getTurnUsage(sessionId, range.originBranchId, from, to);
    const tokens = new Map(rows.map((r) => [r.turn, r.totalTokens]));
    for (let turn = from; turn <= to; turn++) out.set(turn, { branchId: range.originBranchId, totalTokens: tokens.get(turn) ?? null });
  }
  return out;
}

export function itemView(e: ItemEntry): ItemView {
  const base = { sequenceNumber: e.sequenceNumber, type: e.type ?? 'unknown', toolName: e.toolName, createdAt: e.createdAt };
  return e.corrupt
    ? { ...base, corrupt: true, raw: e.raw, error: e.error }
    : { ...base, corrupt: false, json: JSON.stringify(e.item, null, 2) ?? 'null', item: e.item };
}

/** The view's branch list: the store's branch tree with the extension's current branch marked. */
export function branchViews(tree: readonly BranchNode[], current: string): BranchView[] {
  return tree.map((b) => ({
    branchId: b.branchId,
    parentBranchId: b.parentBranchId,
    forkTurn: b.forkTurn,
    userTurns: b.userTurns,
    ...(b.userTurnsAtLeast ? { userTurnsAtLeast: true } : {}),
    messageCount: b.messageCount,
    createdAt: b.createdAt,
    isCurrent: b.branchId === current,
  }));
}

export interface SessionInput {
  db: SessionReader | undefined;
  dbPath: string;
  /** What the header shows as the store's name (a file name, or a server address without password). */
  dbName?: string;
  sessionId: string;
  readonly: boolean;
  currentBranch: string;
  /** The session's branch tree, read by the caller (which may reuse it until the next change). */
  branchTree: () => Promise<readonly BranchNode[]>;
  problem: string | undefined;
}

/** The session's header and branch list; a database that cannot be read gives its problem and no branches. */
export async function sessionView(input: SessionInput): Promise<SessionView> {
  const view: SessionView = {
    dbPath: input.dbPath,
    dbName: input.dbName ?? basename(input.dbPath),
    sessionId: input.sessionId,
    readonly: input.readonly,
    branches: [],
    usedBranchIds: [],
    currentBranchId: input.currentBranch,
    problem: input.problem ?? null,
  };
  const db = input.db;
  if (!db) return { ...view, problem: input.problem ?? l10n.t('The database is not open.') };
  return {
    ...view,
    branches: branchViews(await input.branchTree(), input.currentBranch),
    usedBranchIds: await db.usedBranchIds(input.sessionId),
  };
}

/**
 * The usage and tool tables of a branch or (`branchId` null) the session; `branches` give the fork turns. The usage
 * table is the one page `window` asks for, sorted by SQLite, with the scope's row count and totals summed in SQL, so
 * what goes to the view does not grow with the session; a window past the end (rows went away) gives the last page.
 * A branch's table includes its shared turns' rows from the branches that ran them (marked `sharedFrom`): that is what
 * its conversation cost. The session's counts each row once.
 */
export async function tables(
  db: SessionReader,
  sessionId: string,
  branchId: string | null,
  branches: readonly Pick<BranchNode, 'branchId' | 'parentBranchId' | 'forkTurn'>[],
  window: UsageWindow,
): Promise<TablesView> {
  const limit = Math.max(1, Math.min(window.limit, MAX_USAGE_REQUEST));
  // The view's sort keys are the store's (the assignment fails to compile if they drift apart).
  const sort: UsageSortKey = window.sort;
  const shared = branchId === null ? [] : sharedTurnRanges(branches, branchId);
  // Own turns (not copied from the parent) that have no usage row: the agent never called storeRunUsage. Copied
  // turns have their usage on the parent branch.
  const fromTurns = new Map<string, number>();
  for (const b of branches) if (b.parentBranchId !== null && b.forkTurn !== null) fromTurns.set(b.branchId, b.forkTurn);
  // One request and one read for what the tab shows (its tool totals are the Tools tab's, `tools/get`).
  const { page, offset, missing } = await db.getUsageTab(
    sessionId,
    branchId,
    { sort, descending: window.descending, offset: Math.max(0, window.offset), limit, shared },
    { fromTurns, limit: MISSING_USAGE_LISTED },
  );
  return {
    branchId,
    usage: {
      rows: page.rows.map((u): TurnUsageView => ({ ...u })),
      rowCount: page.rowCount,
      offset,
      sort: window.sort,
      descending: window.descending,
      totals: { ...page.totals },
    },
    turnsWithoutUsage: missing.turns,
    turnsWithoutUsageCount: missing.count,
  };
}
