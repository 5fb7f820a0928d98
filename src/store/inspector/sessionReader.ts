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
import type { ToolTotal, TurnSummary, TurnsWithoutUsage, UsagePage, UsagePageRequest, UsageRow } from './usageTables';

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
}
