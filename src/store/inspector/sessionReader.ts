/**
 * What the extension reads a session store through: `SessionDatabase` (a SQLite file, answers synchronously) and
 * `RemoteSessionSource` (PostgreSQL or Redis, answers with promises) both fit, so the tree and the conversation view
 * `await` every call and never ask which kind of store they are showing.
 */
import type {
  BranchNode,
  ItemEntry,
  ItemPage,
  ItemPageRequest,
  SessionSummary,
  SessionTables,
  TurnPage,
  TurnPageRequest,
} from './inspectorTypes';
import type { TurnPageBefore } from './turnPages';
import type { ToolTotal, TurnSummary, TurnsWithoutUsage, UsagePage, UsagePageRequest, UsageRow, UsageTab } from './usageTables';

export type MaybePromise<T> = T | Promise<T>;

export interface SessionReader {
  readonly tables: SessionTables;
  listSessions(): MaybePromise<SessionSummary[]>;
  getBranchTree(sessionId: string): MaybePromise<BranchNode[]>;
  getItemsPage(sessionId: string, branchId: string, request: ItemPageRequest): MaybePromise<ItemPage>;
  getTurnItems(sessionId: string, branchId: string, turn: number): MaybePromise<ItemEntry[]>;
  getTurnsPage(sessionId: string, branchId: string, request: TurnPageRequest): MaybePromise<TurnPage>;
  getTurnsPageBefore(
    sessionId: string,
    branchId: string,
    request: { beforeTurn?: number | null; limit: number },
  ): MaybePromise<TurnPageBefore>;
  getTurnSummaries(sessionId: string, branchId: string, fromTurn: number, toTurn: number): MaybePromise<TurnSummary[]>;
  usedBranchIds(sessionId: string): MaybePromise<string[]>;
  getUsagePage(sessionId: string, branchId: string | null, request: UsagePageRequest): MaybePromise<UsagePage>;
  getToolTotals(sessionId: string, branchId: string | null): MaybePromise<ToolTotal[]>;
  /** The usage rows of a branch's turns `fromTurn`…`toTurn`, by turn. */
  getTurnUsage(sessionId: string, branchId: string, fromTurn: number, toTurn: number): MaybePromise<UsageRow[]>;
  getTurnsWithoutUsage(
    sessionId: string,
    branchId: string | null,
    options?: { fromTurns?: ReadonlyMap<string, number>; limit?: number },
  ): MaybePromise<TurnsWithoutUsage>;
  /** The Tokens tab's page and turns without usage, in one read (one request to the store worker). */
  getUsageTab(
    sessionId: string,
    branchId: string | null,
    request: UsagePageRequest,
    missing?: { fromTurns?: ReadonlyMap<string, number>; limit?: number },
  ): MaybePromise<UsageTab>;
}

/** What a branch holds before its first user message (turn 0): often the agent's instructions. */
export interface BeforeFirstTurn {
  itemCount: number;
  /** Tools called among them, by name. */
  tools: string[];
  /** The first of them (a preview's source); undefined if it could not be read. */
  first: ItemEntry | undefined;
}

/**
 * Turn 0 of a branch in any store: its count and tools (one index range for a SQLite file), and its first item (the
 * branch's first item in sequence order). Null when the branch starts with a user message.
 */
export async function readBeforeFirstTurn(reader: SessionReader, sessionId: string, branchId: string): Promise<BeforeFirstTurn | null> {
  const summary = (await reader.getTurnSummaries(sessionId, branchId, 0, 0)).find((s) => s.turn === 0);
  if (!summary || summary.itemCount === 0) return null;
  const first = (await reader.getItemsPage(sessionId, branchId, { afterSequence: null, limit: 1 })).items[0];
  return { itemCount: summary.itemCount, tools: summary.tools, first };
}
