/**
 * Where a run's session lives. The runs read and write through `RunSession`, the promise-returning part of
 * `AdvancedSQLiteSession` they use; `RunStore` opens one. By default it is the store's class in this thread (the CLI,
 * the tests); the extension passes one whose sessions live in the store worker, so neither the SDK's writes nor
 * their lock waits run on the extension host's thread. Both behave the same: the same class does the work.
 */
import type { AgentInputItem, SessionHistoryRewriteArgs, SessionHistoryTransactionArgs } from '@openai/agents';
// The store's modules by path, not its index: the index evaluates the whole library, which `agent-sessions run` would
// pay for before its agent starts (issue 43).
import { AdvancedSQLiteSession } from '../store/session/advancedSqliteSession';
import { markWrites, writesSince, type WriteMark, type WritesByBranch } from '../store/inspector/writesSince';
import type { TableNames } from '../store/format/schema';
import type { AdvancedSQLiteSessionOptions, ConversationTurn, RunUsageSource, SessionLogger, TurnUsage } from '../store/types';
import type { BranchPrefixCopy, BranchPrefixRequest } from '../store/export/branchPrefixCopy';

/** What a run does with its session. */
export interface RunSession {
  getSessionId(): Promise<string>;
  getItems(limit?: number | null, branchId?: string | null): Promise<AgentInputItem[]>;
  /** The items exactly as stored (`getItems` reshapes them for the SDK): for exact comparisons (replay/writtenCalls.ts). */
  getStoredItems(limit?: number | null, branchId?: string | null): Promise<unknown[]>;
  addItems(items: AgentInputItem[]): Promise<void>;
  /** With `expected`: only if the branch's newest item is that one, else `HistoryConflictError` (spec §14.2). */
  popItem(expected?: AgentInputItem): Promise<AgentInputItem | undefined>;
  applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void>;
  applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void>;
  replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void>;
  /**
   * Plain data only (`runUsageSource` makes it from a run's result): it may cross to the store worker. With `target`,
   * on that turn only if it starts with `expected` (spec §9), not the branch's latest.
   */
  storeRunUsage(result: RunUsageSource | null | undefined, target?: { turn: number; expected?: AgentInputItem }): Promise<void>;
  getConversationTurns(branchId?: string | null): Promise<ConversationTurn[]>;
  /** The newest user turn of the branch (the current one by default): read from its end, however long the branch. */
  getLatestTurnNumber(branchId?: string | null): Promise<number | null>;
  getTurnUsage(userTurnNumber: number, branchId?: string | null): Promise<TurnUsage | Record<string, never>>;
  createBranchFromTurn(turnNumber: number, branchName?: string | null): Promise<string>;
  /** The fork, with the source turn's stored items read in its transaction (what a re-run replays). */
  forkWithTurnItems(turnNumber: number, branchName?: string | null): Promise<{ branchId: string; turnItems: unknown[] }>;
  getTurnStoredItems(turnNumber: number, branchId?: string | null): Promise<unknown[]>;
  switchToBranch(branchId: string): Promise<void>;
  /** Whether a new branch could not take this id (`main`, an id with rows, a reserved one). */
  isBranchIdUsed(branchId: string): Promise<boolean>;
  deleteBranch(branchId: string, force?: boolean): Promise<void>;
  /** Synchronous on the store's class, a promise in the worker: await it. */
  getCurrentBranchId(): string | Promise<string>;
  close(): void | Promise<void>;
}

/** The session options a run may set; `logger` hears what the store logs instead of throwing. */
export type RunSessionOptions = Pick<
  AdvancedSQLiteSessionOptions,
  'sessionId' | 'dbPath' | 'sessionsTable' | 'messagesTable' | 'busyTimeoutMs' | 'createTables' | 'synchronous'
> & { logger: SessionLogger };

/** Opens the sessions of runs, and reads which branches a file's new messages went to (agent commands). */
export interface RunStore {
  openSession(options: RunSessionOptions): Promise<RunSession>;
  markWrites(dbPath: string, tables: TableNames): Promise<WriteMark>;
  writesSince(dbPath: string, tables: TableNames, mark: WriteMark): Promise<WritesByBranch[]>;
  /**
   * Makes `targetPath` (a check's scratch file, not there yet) a copy of a branch through a turn of the session file
   * `sourcePath`, in the store's own thread, on connections of its own (the extension's store worker), through the
   * branch's prefix chain `chain` (src/store/export/prefixChain.ts) kept there until `releasePrefixChains`. Without
   * it, the check copies in its thread.
   */
  copyBranchPrefix?(
    sourcePath: string,
    targetPath: string,
    request: BranchPrefixRequest,
    signal: AbortSignal | undefined,
    chain: { file: string; emptyFile: string },
  ): Promise<BranchPrefixCopy>;
  /** Closes the prefix chains the store's thread keeps for the scratch folder `folder` (about to be removed). */
  releasePrefixChains?(folder: string): Promise<void>;
}

/** The store's classes in this thread. */
export const IN_THREAD_STORE: RunStore = {
  // The class is a RunSession as it is.
  openSession: async (options) => new AdvancedSQLiteSession(options),
  markWrites: async (dbPath, tables) => markWrites(dbPath, tables),
  writesSince: async (dbPath, tables, mark) => writesSince(dbPath, tables, mark),
};

/**
 * The usage of a run's result as plain data: the result itself holds streams and functions, which cannot cross to
 * the store worker. What `storeRunUsage` reads is kept (the numbers and their details).
 */
export function runUsageSource(result: RunUsageSource | null | undefined): RunUsageSource | null {
  const usage = result?.state?.usage ?? result?.runContext?.usage;
  if (!usage) return null;
  return { state: { usage: JSON.parse(JSON.stringify(usage)) as NonNullable<NonNullable<RunUsageSource['state']>['usage']> } };
}
