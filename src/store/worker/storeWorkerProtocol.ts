/**
 * What crosses between a host thread and a store worker (storeWorker.ts). The host opens *handles* (a read-only
 * `SessionDatabase`, or an `AdvancedSQLiteSession` for one write action) and calls their methods by name; every
 * request has an id and gets exactly one answer: a result, an error, or `cancelled` when the host cancelled it before
 * the worker started it. Requests run one at a time, in the order sent, so a write and the reads after it are ordered.
 */
import type { GuardedSessionOptions } from '../guard/guardStore';
import type { OpenSessionDatabaseOptions, SessionTables } from '../inspector/inspectorTypes';
import type { WalIdentity } from '../sqlite/fileIdentity';
import type { DriverName } from '../sqlite/sqliteDatabase';
import type { AdvancedSQLiteSessionOptions } from '../types';
import type { RepairOptions } from '../doctor/repairs';
import type { WorkerCodeCache } from '../files/workerCodeCache';

/** What the client hands the worker at its start (`workerData`): where V8's code cache of the worker lives, if anywhere. */
export type StoreWorkerData = WorkerCodeCache;

/**
 * What a handle is: the inspector's read connection, a writable session, or a store of our own: the trace store
 * (docs/traces.md), the review store (docs/reviews.md) or the replay marks store (docs/replay.md).
 */
export type HandleKind = 'database' | 'session' | OwnStoreKind;
/** Our own stores: SQLite files of ours, never session files, opened by path (created unless read-only). */
export type OwnStoreKind = 'traces' | 'reviews' | 'replay';

/** The methods the host may call on each kind of handle: the reads of `SessionReader` and the session API. */
export const DATABASE_METHODS = [
  'listSessions',
  'countSessionRows',
  'getBranchTree',
  'getItemsPage',
  'getTurnItems',
  'getTurnItemsMany',
  'getTurnsPage',
  'getTurnsPageBefore',
  'usedBranchIds',
  'getUsagePage',
  'getUsageRows',
  'getTurnUsage',
  'getTurnSummaries',
  'getTurnsWithoutUsage',
  'getUsageTab',
  'getToolTotals',
  'olderCompaction',
  'hasChanged',
  'fileState',
] as const;
/** The session methods that write: each is one transaction, so one stopped before it starts leaves the file as it was. */
export const SESSION_WRITE_METHODS = [
  'addItems',
  'popItem',
  'clearSession',
  'clearCurrentBranch',
  'applyHistoryMutations',
  'applyHistoryTransaction',
  'replaceHistoryWithCompaction',
  'storeRunUsage',
  'createBranchFromTurn',
  'forkWithTurnItems',
  'createBranchFromContent',
  'deleteBranch',
  'restoreBranch',
] as const;
export const SESSION_METHODS = [
  'getSessionId',
  'getItems',
  'getStoredItems',
  'getTurnStoredItems',
  'getSessionUsage',
  'getTurnUsage',
  'getConversationTurns',
  'getLatestTurnNumber',
  'findTurnsByContent',
  'getConversationByTurns',
  'getToolUsage',
  'switchToBranch',
  'listBranches',
  'isBranchIdUsed',
  'getCurrentBranchId',
  ...SESSION_WRITE_METHODS,
] as const;
/** The trace store's methods (`TraceStore`): decoding and storing OTLP bodies, and the timeline's reads. */
export const TRACE_METHODS = [
  'ingestOtlp',
  'addSpans',
  'spansOfTrace',
  'trace',
  'tracesOfTurn',
  'spansOfTurn',
  'turnLatencies',
  'tracesOfSession',
  'unlinkedTraces',
  'linkTrace',
  'clearSession',
  'counts',
  'prune',
] as const;
export type TraceMethod = (typeof TRACE_METHODS)[number];
/** The review store's methods (`ReviewStore`). */
export const REVIEW_METHODS = [
  'setTurnReview',
  'turnReviews',
  'tagsInUse',
  'setPairwise',
  'pairwiseReviews',
  'deletePairwise',
  'setCorrection',
  'corrections',
  'deleteCorrection',
  'exportData',
  'importData',
  'counts',
] as const;
export type ReviewMethod = (typeof REVIEW_METHODS)[number];
/** The replay marks store's methods (`ReplayMarkStore`). */
export const REPLAY_METHODS = ['recordRun', 'marksOfBranch', 'runsOfBranch', 'deleteBranch', 'deleteSession'] as const;
export type ReplayMethod = (typeof REPLAY_METHODS)[number];
export type DatabaseMethod = (typeof DATABASE_METHODS)[number];
export type SessionMethod = (typeof SESSION_METHODS)[number];
export const CALLABLE: Record<HandleKind, ReadonlySet<string>> = {
  database: new Set(DATABASE_METHODS),
  session: new Set(SESSION_METHODS),
  traces: new Set(TRACE_METHODS),
  reviews: new Set(REVIEW_METHODS),
  replay: new Set(REPLAY_METHODS),
};

/** The `AdvancedSQLiteSession` options a worker can take: only data (no logger or clock functions cross threads). */
export type WorkerSessionOptions = Pick<
  AdvancedSQLiteSessionOptions,
  'sessionId' | 'dbPath' | 'sessionsTable' | 'messagesTable' | 'busyTimeoutMs' | 'createTables' | 'sessionSettings' | 'synchronous'
> &
  GuardedSessionOptions;

/** The store's functions over a whole file that the host may call in the worker (they open their own connection). */
export const FILE_FUNCTIONS = [
  'markWrites',
  'writesSince',
  // The history guard (docs/history-guard.md): its connections stay open in the worker between calls.
  'lookAtGuardedFile',
  'stopLookingAt',
  'guardLayers',
  'guardLayerItems',
  'guardLayer',
  'guardDiskUse',
] as const;
export type FileFunction = (typeof FILE_FUNCTIONS)[number];

/**
 * Long jobs over a whole file, with progress and Cancel: they run beside the queue (their SQLite work comes in pages,
 * and other requests run between two pages), each on its own connection.
 */
export const JOBS = [
  'exportSessionToFile',
  'importSessionFile',
  'exportDatasetToFile',
  'copyBranchPrefixToFile',
  // A check's prefix chains in the worker (src/store/export/prefixChain.ts), closed when its scratch folder goes.
  'releasePrefixChains',
] as const;
export type JobName = (typeof JOBS)[number];

export type StoreWorkerRequest =
  /** `staleWal`: the host knows the path's `-wal` belongs to a replaced file (format spec §11): the worker refuses too. */
  | { type: 'open-database'; id: number; handle: number; path: string; options: OpenSessionDatabaseOptions; staleWal?: WalIdentity }
  /** `lockWaitMs`: how long its writes wait for another connection's write lock (default 5,000 ms, the busy timeout). */
  | { type: 'open-session'; id: number; handle: number; options: WorkerSessionOptions; lockWaitMs?: number; staleWal?: WalIdentity }
  /** A store of ours (created when missing unless `readonly`). */
  | { type: 'open-own-store'; id: number; handle: number; store: OwnStoreKind; path: string; readonly?: boolean }
  /**
   * `cancelFlag` (shared memory), set by the host when it no longer needs the answer: a read that computes kept totals
   * for the first time (seconds on a big session) checks it every few thousand rows and stops, answering `cancelled`.
   */
  | { type: 'call'; id: number; handle: number; method: string; args: unknown[]; cancelFlag?: Int32Array }
  | { type: 'file-call'; id: number; fn: FileFunction; args: unknown[] }
  /**
   * `args` without the progress options (`signal`, `onProgress`): the worker makes them (see `JOBS`). `cancelFlag`
   * (shared memory) is set by the host when it cancels: a job's synchronous loop (an import is one transaction) sees
   * it at once, where a message would wait for the loop to end.
   */
  | { type: 'job'; id: number; job: JobName; args: unknown[]; cancelFlag?: Int32Array }
  | { type: 'close'; id: number; handle: number }
  /**
   * The doctor on a session file (docs/doctor.md), on connections of its own, in the queue like any read or write:
   * `check` reads; `repair` first waits for the write lock as a session's write does (`waiting` sent, cancellable
   * while it waits, `locked` after `lockWaitMs`), then backs up, repairs and checks again.
   */
  | { type: 'doctor'; id: number; op: 'check' | 'repair'; path: string; options: RepairOptions; lockWaitMs?: number }
  /**
   * Drops request `id` if it has not started; a write still waiting for another connection's lock stops waiting
   * (answered `cancelled`: nothing was written). A read or a write under way finishes, and its answer says so.
   */
  | { type: 'cancel'; id: number };

/** What an open database tells the host once, so its synchronous properties need no round trip. */
export interface OpenedDatabase {
  path: string;
  readonly: boolean;
  driver: DriverName;
  tables: SessionTables;
}

export type StoreWorkerResponse =
  /** `tables`: a database handle's tables after the call (another process may have upgraded the schema). */
  | { type: 'result'; id: number; value: unknown; tables?: SessionTables }
  /** `staleWal`: the call found the file replaced and its `-wal` stale; the host remembers it as the worker does. */
  | { type: 'error'; id: number; error: SerializedError; staleWal?: { path: string; wal: WalIdentity } }
  /** Not done yet: a write is waiting for another connection's write lock (sent once, before its answer). */
  | { type: 'waiting'; id: number }
  /** What a session's logger said (the store logs instead of throwing where the SDK's `Session` must not throw). */
  | { type: 'log'; handle: number; level: 'error' | 'warn'; message: string; detail?: string }
  /** A job's progress, or a read's first computation of kept totals: rows done and the total (0 when unknown). */
  | { type: 'progress'; id: number; done: number; total: number }
  | { type: 'cancelled'; id: number };

/**
 * An error as data: the store's error classes are rebuilt from `name` on the host (so `instanceof` and `problem` work
 * there as they do in-thread), and a driver error keeps the `code`/`errcode` that `sqliteCodeOf` reads.
 */
export interface SerializedError {
  name: string;
  message: string;
  problem?: string;
  code?: string;
  errcode?: number;
  /** `TransferError`'s position of a malformed value. */
  line?: number;
  jsonPath?: string;
  stack?: string;
}
