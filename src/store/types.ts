/** Public types of the session store (spec §10). Keys are camelCase; detail records keep the API's snake_case. */
import type { DriverName } from './sqlite/sqliteDatabase';

/** Python's `SessionSettings`: `limit` caps `getItems()` when no limit is passed. */
export interface SessionSettings {
  limit?: number | null;
}

/** Where the store reports problems it does not throw (`storeRunUsage` never throws). */
export interface SessionLogger {
  error(message: string, err: unknown): void;
  warn?(message: string): void;
}

/** Options shared by `SQLiteSession` and `AdvancedSQLiteSession`. */
export interface SQLiteSessionOptions {
  sessionId: string;
  /** File path, or `:memory:` (private to the instance). */
  dbPath?: string;
  sessionsTable?: string;
  messagesTable?: string;
  sessionSettings?: SessionSettings | null;
  /** Open without ever writing: no schema creation, no pragmas that write; write methods fail. */
  readonly?: boolean;
  /** Force a SQLite driver; default: better-sqlite3, falling back to node:sqlite. */
  driver?: DriverName | 'auto';
  /** How long to wait for another writer's lock (default 5000 ms, as Python). */
  busyTimeoutMs?: number;
  /**
   * Commit durability in WAL mode: FULL (default) survives a power cut; NORMAL is faster; OFF never syncs, for
   * throwaway files only (a check's scratch files): a crash of the machine may corrupt the file.
   */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
}

export interface AdvancedSQLiteSessionOptions extends SQLiteSessionOptions {
  /** Create and claim the structure tables (default false, as in Python). */
  createTables?: boolean;
  logger?: SessionLogger;
  /** Unix seconds for auto-generated branch ids. */
  clock?: () => number;
}

/** The part of a run result `storeRunUsage` reads (a JS `RunResult` satisfies it). */
export interface UsageLike {
  requests?: number | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  totalTokens?: number | null;
  inputTokensDetails?: unknown;
  outputTokensDetails?: unknown;
}
export interface RunUsageSource {
  state?: { usage?: UsageLike | null } | null;
  runContext?: { usage?: UsageLike | null } | null;
}

export interface SessionUsage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  totalTurns: number;
}

export interface TurnUsage {
  requests: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  inputTokensDetails: unknown;
  outputTokensDetails: unknown;
}

export interface TurnUsageRow extends TurnUsage {
  userTurnNumber: number;
}

export interface ConversationTurn {
  turn: number;
  content: string;
  fullContent: unknown;
  timestamp: string | null;
  canBranch: true;
}

export interface TurnItem {
  type: string;
  toolName: string | null;
}

export interface ToolUsage {
  toolName: string | null;
  count: number;
  turn: number;
}

export interface BranchInfo {
  branchId: string;
  messageCount: number;
  userTurns: number;
  isCurrent: boolean;
  createdAt: string | null;
}
