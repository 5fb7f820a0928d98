/** Builds the conversation view's models from the inspector's reads (no vscode here beyond types). */
import { basename } from 'node:path';
import type { BranchNode, ItemEntry, SessionDatabase, TurnEntry, TurnSummary } from '../store';
import { MAX_TURN_REQUEST } from '../shared/pageSizes';
import type { BranchView, ItemView, SessionView, TablesView, TurnPageView, TurnUsageView, TurnView } from '../shared/viewModels';

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

export function turnPage(db: SessionDatabase, sessionId: string, branchId: string, afterTurn: number | null, limit: number): TurnPageView {
  const page = db.getTurnsPage(sessionId, branchId, { afterTurn, limit: Math.max(1, Math.min(limit, MAX_TURN_REQUEST)) });
  const first = page.turns[0];
  const last = page.turns[page.turns.length - 1];
  const summaries = first && last ? db.getTurnSummaries(sessionId, branchId, first.turn, last.turn) : [];
  const byTurn = new Map(summaries.map((s) => [s.turn, s]));
  return { branchId, turns: page.turns.map((t) => turnView(t, byTurn.get(t.turn))), nextAfterTurn: page.nextAfterTurn };
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
    messageCount: b.messageCount,
    createdAt: b.createdAt,
    isCurrent: b.branchId === current,
  }));
}

export interface SessionInput {
  db: SessionDatabase | undefined;
  dbPath: string;
  sessionId: string;
  readonly: boolean;
  currentBranch: string;
  /** The session's branch tree, read by the caller (which may reuse it until the next change). */
  branchTree: () => readonly BranchNode[];
  problem: string | undefined;
}

/** The session's header and branch list; a database that cannot be read gives its problem and no branches. */
export function sessionView(input: SessionInput): SessionView {
  const view: SessionView = {
    dbPath: input.dbPath,
    dbName: basename(input.dbPath),
    sessionId: input.sessionId,
    readonly: input.readonly,
    branches: [],
    usedBranchIds: [],
    currentBranchId: input.currentBranch,
    problem: input.problem ?? null,
  };
  const db = input.db;
  if (!db) return { ...view, problem: input.problem ?? 'The database is not open.' };
  return { ...view, branches: branchViews(input.branchTree(), input.currentBranch), usedBranchIds: db.usedBranchIds(input.sessionId) };
}

/** The usage and tool tables of a branch or (`branchId` null) the session; `branches` give the fork turns. */
export function tables(
  db: SessionDatabase,
  sessionId: string,
  branchId: string | null,
  branches: readonly Pick<BranchNode, 'branchId' | 'parentBranchId' | 'forkTurn'>[],
): TablesView {
  const usage = db.getUsageRows(sessionId, branchId);
  const tools = db.getToolTotals(sessionId, branchId);
  // Own turns (not copied from the parent) that have no usage row: the agent never called storeRunUsage. Copied
  // turns have their usage on the parent branch.
  const fromTurns = new Map<string, number>();
  for (const b of branches) if (b.parentBranchId !== null && b.forkTurn !== null) fromTurns.set(b.branchId, b.forkTurn);
  const missing = db.getTurnsWithoutUsage(sessionId, branchId, { fromTurns }).turns;
  return {
    branchId,
    usage: usage.map((u): TurnUsageView => ({ ...u })),
    turnsWithoutUsage: missing,
    tools: tools.map((t) => ({ toolName: t.toolName, calls: t.calls, turns: t.turns, turnCount: t.turnCount })),
  };
}
