/** Builds the conversation view's models from the inspector's reads (no vscode here beyond types). */
import { basename } from 'node:path';
import type { ItemEntry, SessionDatabase, TurnEntry, TurnSummary } from '../store';
import { MAX_TURN_REQUEST, VIEW_TURN_PAGE } from '../shared/pageSizes';
import type { BranchView, ItemView, SnapshotView, TablesView, TurnPageView, TurnView } from '../shared/viewModels';

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

export function branchViews(db: SessionDatabase, sessionId: string, current: string): BranchView[] {
  return db.getBranchTree(sessionId).map((b) => ({
    branchId: b.branchId,
    parentBranchId: b.parentBranchId,
    forkTurn: b.forkTurn,
    userTurns: b.userTurns,
    messageCount: b.messageCount,
    createdAt: b.createdAt,
    isCurrent: b.branchId === current,
  }));
}

export interface SnapshotInput {
  db: SessionDatabase | undefined;
  dbPath: string;
  sessionId: string;
  readonly: boolean;
  currentBranch: string;
  selectedBranch: string | undefined;
  revealTurn: number | null;
  problem: string | undefined;
}

export function snapshot(input: SnapshotInput): SnapshotView {
  const empty: SnapshotView = {
    dbPath: input.dbPath,
    dbName: basename(input.dbPath),
    sessionId: input.sessionId,
    readonly: input.readonly,
    branches: [],
    usedBranchIds: [],
    selectedBranchId: input.selectedBranch ?? input.currentBranch,
    firstPage: { branchId: input.selectedBranch ?? input.currentBranch, turns: [], nextAfterTurn: null },
    revealTurn: input.revealTurn,
    problem: input.problem ?? null,
  };
  const db = input.db;
  if (!db) return { ...empty, problem: input.problem ?? 'The database is not open.' };
  const branches = branchViews(db, input.sessionId, input.currentBranch);
  const has = (id: string | undefined): id is string => id !== undefined && branches.some((b) => b.branchId === id);
  const selected = has(input.selectedBranch)
    ? input.selectedBranch
    : has(input.currentBranch)
      ? input.currentBranch
      : (branches[0]?.branchId ?? 'main');
  // Start the first page a little before a turn to reveal, so it is on the first screen.
  const after = input.revealTurn !== null ? Math.max(0, input.revealTurn - 10) : null;
  return {
    ...empty,
    branches,
    usedBranchIds: db.usedBranchIds(input.sessionId),
    selectedBranchId: selected,
    firstPage: turnPage(db, input.sessionId, selected, after === 0 ? null : after, VIEW_TURN_PAGE),
  };
}

export function tables(db: SessionDatabase, sessionId: string, branchId: string | null, branches: BranchView[]): TablesView {
  const usage = db.getUsageRows(sessionId, branchId);
  const tools = db.getToolTotals(sessionId, branchId);
  // Own turns (not copied from the parent) that have no usage row: the agent never called storeRunUsage. Copied
  // turns have their usage on the parent branch.
  const forkOf = new Map(branches.map((b) => [b.branchId, b.parentBranchId !== null ? b.forkTurn : null]));
  const missing = db.getTurnsWithoutUsage(sessionId, branchId).filter((m) => {
    const fork = forkOf.get(m.branchId);
    return fork === null || fork === undefined || m.turn >= fork;
  });
  return {
    branchId,
    usage: usage.map((u) => ({ ...u })),
    turnsWithoutUsage: missing,
    tools: tools.map((t) => ({ toolName: t.toolName, calls: t.calls, turns: t.turns })),
  };
}
