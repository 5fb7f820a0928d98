/**
 * The session store: SQLite sessions for `@openai/agents`, file-compatible with the Python SDK, plus the read-side
 * helpers the inspector uses. This file is the package's one public entry (bundled as `dist/store.js`).
 */
export { AdvancedSQLiteSession } from './session/advancedSqliteSession';
export { SQLiteSession } from './session/sqliteSession';
export { CurrentBranchSession } from './session/currentBranchSession';
export { fromStoredItems, isJsShapedItem, normalizeForComparison, toStoredItem } from './format/itemShape';
export { HistoryConflictError } from './session/historyTransactions';
export {
  BranchError,
  InvalidArgumentError,
  SessionClosedError,
  SessionDatabaseError,
  SessionError,
  TableOwnershipError,
  type SessionDatabaseProblem,
} from './errors';
export {
  DRIVER_ENV_VAR,
  NODE_SQLITE_MIN_NODE,
  describeDriverChoice,
  nodeAtLeast,
  openDatabase,
  resolveDriver,
  type DriverChoice,
} from './drivers/openDatabase';
export type { DriverName, SqliteDatabase, SqliteStatement, SqlValue } from './sqlite/sqliteDatabase';
export { pythonJsonDumps, pythonJsonDumpsCompact, pythonJsonLoads } from './format/pythonJson';
export { PostgresSession, type PostgresSessionOptions } from './remote/postgresSession';
export { RedisSession, DEFAULT_REDIS_PREFIX, redisSessionKeys, type RedisSessionOptions } from './remote/redisSession';
export { createPostgresPool, describePostgresUrl, type PostgresConnectionOptions } from './remote/postgresConnection';
export { connectRedis, describeRedisUrl, type RedisConnectionOptions } from './remote/redisConnection';
export { DEFAULT_POSTGRES_TABLES, postgresDdl, type PostgresTableNames } from './remote/postgresSchema';
export { RemoteStoreError, redactUrl, type RemoteStoreProblem } from './remote/remoteErrors';
export { openRemoteStore } from './remote/openRemoteStore';
export { CopyCancelledError, copyRemoteSessionToFile, type CopyResult } from './remote/copyToFile';
export { OutputFileError, type OutputFileProblem } from './files/outputFileError';
export { PostgresStoreBrowser } from './remote/postgresBrowser';
export { RedisStoreBrowser } from './remote/redisBrowser';
export { RemoteSessionSource, REMOTE_BRANCH_ID } from './remote/remoteSessionSource';
export {
  remoteKindOf,
  type OpenRemoteStoreOptions,
  type RemoteRow,
  type RemoteSessionSummary,
  type RemoteStoreBrowser,
  type RemoteStoreKind,
} from './remote/remoteStore';
export type { TableNames } from './format/schema';
export { messageTypeOf, toolNameOf } from './format/itemClassification';
export type * from './types';
export { SessionDatabase, openSessionDatabase } from './inspector/sessionDatabase';
export type { BeforeFirstTurn, MaybePromise, SessionReader } from './inspector/sessionReader';
export { readBeforeFirstTurn } from './inspector/sessionReader';
export { markWrites, writesSince, type WriteMark, type WritesByBranch } from './inspector/writesSince';
export type { FileState, WalIdentity } from './sqlite/fileIdentity';
export { markStaleWal, moveStaleWalAside, staleWalAt, staleWalMessage } from './sqlite/fileIdentity';
export { createChangeWatcher, type ChangeWatcher } from './inspector/changeWatcher';
export type * from './inspector/inspectorTypes';
export type {
  ToolTotal,
  TurnSummary,
  TurnsWithoutUsage,
  UsagePage,
  UsagePageRequest,
  SharedTurnRange,
  UsageRow,
  UsageRowKey,
  UsageSortKey,
  UsageTab,
} from './inspector/usageTables';
export * from './export/index';
export * from './search/index';
export {
  TraceStore,
  type StoredSpan,
  type TraceSummary,
  type TurnQuery,
  type UnlinkedTrace,
  type TraceRetention,
} from './traces/traceStore';
export { OtlpReceiver, OtlpReceiverError, DEFAULT_OTLP_PORT, type OtlpReceiverOptions, type BatchInfo } from './traces/otlpReceiver';
export { parseOtlpJson } from './traces/otlpRequest';
export { parseOtlpProtobuf } from './traces/otlpProtobuf';
export { exportOtlpJson } from './traces/otlpExport';
export { spanRecordOf } from './traces/spanConventions';
export { turnWindows, type TurnWindow } from './traces/turnWindows';
export { TraceInputError, TraceStoreError } from './traces/traceErrors';
export type { SpanRecord, SpanKind, SpanSource, TraceLink } from './traces/spanRecord';
export { ReviewStore, checkReviewData, normalizeTag } from './reviews/reviewStore';
export { ReviewStoreError, type ReviewStoreProblem } from './reviews/reviewErrors';
export { contentKey, canonicalJson } from './reviews/contentKey';
export { matchReviews, turnKeyOf, type TurnNow } from './reviews/reviewMatching';
export * from './reviews/reviewTypes';
