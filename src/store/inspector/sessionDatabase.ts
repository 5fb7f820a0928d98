/**
 * `SessionDatabase`: the inspector's read-side view of a session file. It finds the session tables whatever they are
 * called, lists sessions, derives branch trees, pages through items and turns, and tells cheaply whether the file
 * changed. It never writes when opened read-only (the default).
 */
import { findOlderCompaction, type OlderCompaction } from '../context/olderCompaction';
import type { SessionReader } from './sessionReader';
import { InvalidArgumentError, describeDatabaseError } from '../errors';
import { assertSameFile, captureFileIdentity, fileStateOf, noteWal, type FileIdentity, type FileState } from '../sqlite/fileIdentity';
import { ConnectionLifetime } from '../sqlite/connectionLifetime';
import { openSessionConnection } from '../sqlite/sessionConnection';
import { applyPageCache, checkPageCacheKiB } from '../sqlite/pageCache';
import { readTransaction, type DriverName, type SqliteDatabase, type SqliteStatement } from '../sqlite/sqliteDatabase';
import { readBranchTree } from './branchTree';
import { KeptTotals, type KeptProgress, type KeptTotalsStats } from './keptTotals';
import { createChangeWatcher, type ChangeWatcher } from './changeWatcher';
import type {
  BranchNode,
  ItemEntry,
  ItemPage,
  ItemPageRequest,
  OpenSessionDatabaseOptions,
  SessionSummary,
  SessionTables,
  TurnPage,
  TurnPageRequest,
} from './inspectorTypes';
import { readItemsPage, readTurnItems } from './itemPages';
import { isStructuredSession, type QueryContext } from './queryContext';
import { PLAIN_BRANCH_ID, plainTurnSummaries } from './plainSessions';
import { readSessionSummaries } from './sessionList';
import { discoverSessionTables, quoteIdentifier, type DiscoveredTables } from './tableDiscovery';
import { readTurnsPage, readTurnsPageBefore, type TurnPageBefore } from './turnPages';
import { readUsedBranchIds } from './usedBranchIds';
import {
  readToolTotals,
  readTurnSummaries,
  readTurnUsage,
  readUsageRowsAfter,
  type UsageRowKey,
  readTurnsWithoutUsage,
  readUsagePage,
  readUsageTab,
  readUsageRows,
  sqlUsageSums,
  type ToolTotal,
  type TurnsWithoutUsage,
  type UsagePage,
  type UsagePageRequest,
  type UsageTab,
  type TurnSummary,
  type UsageRow,
} from './usageTables';

/**
 * Opens a session database for inspection. Errors are `SessionDatabaseError`s whose `problem` says what is wrong:
 * `not-found` (no such file), `not-sqlite`, `not-session-database` (SQLite, but no messages table; the message names
 * what is missing), `corrupt` (truncated or damaged), `locked` (another connection held a lock beyond the busy
 * timeout), `driver-unavailable`, `io`. Once open, calls throw `deleted` or `replaced` when the path no longer names the
 * file that was opened (see `fileState`).
 *
 * Read-only (the default) issues no schema statements and no `journal_mode` pragma, so the database file's bytes
 * never change. SQLite itself may create an empty `-wal` and a `-shm` file next to a WAL-mode database, as any reader
 * does, to coordinate with writers.
 */
export function openSessionDatabase(path: string, options: OpenSessionDatabaseOptions = {}): SessionDatabase {
  return SessionDatabase.open(path, options);
}

/** A session file opened for inspection; see `openSessionDatabase`. Methods are synchronous, as the drivers are. */
export class SessionDatabase implements SessionReader {
  /** The path as passed. */
  readonly path: string;
  /** True when the connection cannot write (asked for, or SQLite opened the file read-only). */
  readonly readonly: boolean;
  readonly driver: DriverName;
  private readonly db: SqliteDatabase;
  private discovered: DiscoveredTables;
  private schemaVersion: number;
  private readonly statements = new Map<string, SqliteStatement>();
  private readonly context: QueryContext;
  private readonly watcher: ChangeWatcher;
  private readonly file: FileIdentity | undefined;
  private readonly lifetime: ConnectionLifetime;
  /** Counts and totals kept between reads (`keepTotals`), or undefined to compute every answer afresh. */
  private readonly kept: KeptTotals | undefined;

  private constructor(
    path: string,
    db: SqliteDatabase,
    file: FileIdentity | undefined,
    tables: DiscoveredTables,
    schemaVersion: number,
    keepTotals: boolean,
  ) {
    this.path = path;
    this.db = db;
    this.lifetime = new ConnectionLifetime(db, this.statements);
    // Not watched: the registry asks `hasChanged` every second, and a read-only connection cannot checkpoint.
    this.lifetime.hold(file, false);
    this.file = file;
    this.readonly = db.readonly;
    this.driver = db.driver;
    this.discovered = tables;
    this.schemaVersion = schemaVersion;
    // A getter, because the tables are re-discovered when the schema changes.
    const currentTables = (): DiscoveredTables => this.discovered;
    this.context = {
      db,
      get tables() {
        return currentTables();
      },
      stmt: (sql) => this.stmt(sql),
    };
    this.watcher = createChangeWatcher(db);
    this.kept = keepTotals ? new KeptTotals(this.context) : undefined;
  }

  /** See `openSessionDatabase`. */
  static open(path: string, options: OpenSessionDatabaseOptions = {}): SessionDatabase {
    const readonly = options.readonly ?? true;
    checkPageCacheKiB(options.pageCacheKiB);
    // fileMustExist: the inspector never creates files, not even when opened for writing.
    const connect = (ro: boolean) =>
      translateOpen(path, ro, () =>
        openSessionConnection(path, { readonly: ro, fileMustExist: true, driver: options.driver, busyTimeoutMs: options.busyTimeoutMs }),
      );
    if (!readonly) {
      // A writable connection switches the file to WAL as it opens (spec §3.1). Check read-only first that the file
      // is a session database, so a wrong pick in the file dialog never has its header rewritten.
      const probe = connect(true);
      try {
        readTransaction(probe, () => discoverSessionTables(probe, path));
      } catch (err) {
        throw translate(err, path, true);
      } finally {
        probe.close();
      }
    }
    const db = connect(readonly);
    try {
      applyPageCache(db, options.pageCacheKiB);
      const file = captureFileIdentity(path);
      const { tables, schemaVersion } = readTransaction(db, () => {
        const found = discoverSessionTables(db, path);
        probeTables(db, found);
        return { tables: found, schemaVersion: readSchemaVersion(db) };
      });
      noteWal(file);
      return new SessionDatabase(path, db, file, tables, schemaVersion, options.keepTotals ?? false);
    } catch (err) {
      db.close();
      throw translate(err, path, readonly);
    }
  }

  /** The session tables found in the file (re-read when another connection changes the schema). */
  get tables(): SessionTables {
    const t = this.discovered;
    return {
      sessions: t.sessions,
      messages: t.messages,
      messageStructure: t.messageStructure,
      turnUsage: t.turnUsage,
      branchReservations: t.branchReservations,
      sessionClearGenerations: t.sessionClearGenerations,
      warnings: [...t.warnings],
    };
  }

  get isOpen(): boolean {
    return this.lifetime.isOpen;
  }

  /**
   * Every session in the file with its times, counts and usage totals; see `SessionSummary`. Sessions known only
   * from messages, structure or usage rows are included (with null times): counting them costs nothing extra, since
   * the counts already scan those tables' session indexes. Most recently updated first.
   */
  listSessions(): SessionSummary[] {
    return this.read(() => (this.kept ? this.kept.sessionList() : readSessionSummaries(this.context)));
  }

  /**
   * The rows of the sessions table (one per session the SDKs made), or null without one: a count for a file's label
   * that costs one small table's count, where `listSessions` scans every table's session index.
   */
  countSessionRows(): number | null {
    const table = this.context.tables.sessions;
    if (table === null) return null;
    return this.read(() => Number(this.context.stmt(`SELECT COUNT(*) AS n FROM ${quoteIdentifier(table)}`).get<{ n: number }>()?.n ?? 0));
  }

  /**
   * The session's branches (those with rows) in creation order, each with its parent and fork turn derived from
   * shared message rows (the file does not record them); see `deriveBranchTree` for the heuristic. A plain session
   * (no structure rows) is one branch, `main`. Unknown session → `[]`.
   */
  getBranchTree(sessionId: string): BranchNode[] {
    return this.read(() => readBranchTree(this.context, sessionId, this.kept?.branchRowCounts(sessionId)));
  }

  /**
   * Up to `limit` items of a branch after `afterSequence`, in sequence order, read by an index range scan (never the
   * whole branch). Each entry carries its structure metadata and either the decoded `item` or, when the stored JSON
   * does not decode or the message row is gone, `corrupt: true` with the raw text and the error. For a plain session
   * the branch is `main` and the cursor is the message id. Unknown session or branch → an empty page.
   */
  getItemsPage(sessionId: string, branchId: string, request: ItemPageRequest): ItemPage {
    return this.read(() => readItemsPage(this.context, sessionId, branchId, request));
  }

  /** The items of one turn (`user_turn_number`; 0 = items before the first user message), as `getItemsPage` shapes them. */
  getTurnItems(sessionId: string, branchId: string, turn: number): ItemEntry[] {
    if (typeof turn !== 'number' || !Number.isInteger(turn)) {
      throw new InvalidArgumentError(`turn must be an integer, got ${String(turn)}`);
    }
    return this.read(() => readTurnItems(this.context, sessionId, branchId, turn));
  }

  /**
   * The items of several turns of a branch, in the order asked, in one read (one snapshot, and in the store worker one
   * round trip): what checking many reviews against their turns needs (src/extension/reviews/turnReviews.ts).
   */
  getTurnItemsMany(sessionId: string, branchId: string, turns: readonly number[]): ItemEntry[][] {
    if (!Array.isArray(turns) || turns.some((t) => typeof t !== 'number' || !Number.isInteger(t)))
      throw new InvalidArgumentError('turns must be a list of integers');
    return this.read(() => turns.map((turn) => readTurnItems(this.context, sessionId, branchId, turn)));
  }

  /**
   * Up to `limit` user turns of a branch after `afterTurn`, each with the user message's preview (as
   * `getConversationTurns` cuts it) and the turn's `total_tokens` from `turn_usage` (null without a row).
   */
  getTurnsPage(sessionId: string, branchId: string, request: TurnPageRequest): TurnPage {
    return this.read(() => readTurnsPage(this.context, sessionId, branchId, request));
  }

  /**
   * Up to `limit` user turns of a branch before `beforeTurn` (omitted or null: the branch's last turns), in ascending
   * order, as `getTurnsPage` gives them; `previousBeforeTurn` pages on backwards. The conversation view's End key
   * reads the last page with it in one index seek instead of walking every page from the first.
   */
  getTurnsPageBefore(sessionId: string, branchId: string, request: { beforeTurn?: number | null; limit: number }): TurnPageBefore {
    return this.read(() => readTurnsPageBefore(this.context, sessionId, branchId, request));
  }

  /**
   * Every branch id the session can no longer give to a new branch: reserved ids (deleted branches' included), ids
   * with rows, and `main`. Sorted. For validating a new branch name before trying to create it.
   */
  usedBranchIds(sessionId: string): string[] {
    return this.read(() => readUsedBranchIds(this.context, sessionId));
  }

  /** A sorted page of usage rows of a branch or (`branchId` null) the session, with the row count and SQL totals. */
  getUsagePage(sessionId: string, branchId: string | null, request: UsagePageRequest): UsagePage {
    return this.read(() => readUsagePage(this.context, sessionId, branchId, request, this.kept?.usageSums ?? sqlUsageSums));
  }

  /** `turn_usage` rows of a branch, or of every branch when `branchId` is null, with cached and reasoning counts. */
  getUsageRows(sessionId: string, branchId: string | null): UsageRow[] {
    return this.read(() => readUsageRows(this.context, sessionId, branchId));
  }

  /**
   * The next `limit` usage rows after `after` (null: from the first), in `getUsageRows`' order: a reader of every row
   * that holds one page at a time (`agent-sessions usage`). Each page is its own read.
   */
  getUsageRowsAfter(sessionId: string, branchId: string | null, after: UsageRowKey | null, limit: number): UsageRow[] {
    return this.read(() => readUsageRowsAfter(this.context, sessionId, branchId, after, limit));
  }

  /** The usage rows of a branch's turns `fromTurn`..`toTurn`, by turn (turns without a row are absent). */
  getTurnUsage(sessionId: string, branchId: string, fromTurn: number, toTurn: number): UsageRow[] {
    return this.read(() => readTurnUsage(this.context, sessionId, branchId, fromTurn, toTurn));
  }

  /**
   * Item counts and tool names of the turns `fromTurn`..`toTurn` of a branch (turn 0: the items before the first user
   * message; absent when there are none). A plain session's turns are derived as `getTurnsPage` derives them.
   */
  getTurnSummaries(sessionId: string, branchId: string, fromTurn: number, toTurn: number): TurnSummary[] {
    return this.read(() =>
      isStructuredSession(this.context, sessionId)
        ? readTurnSummaries(this.context, sessionId, branchId, fromTurn, toTurn)
        : branchId === PLAIN_BRANCH_ID
          ? plainTurnSummaries(this.context, sessionId, fromTurn, toTurn)
          : [],
    );
  }

  /**
   * User turns with no usage row, per branch (one branch, or all when `branchId` is null): the first `limit` (default
   * 50) and how many in all. `fromTurns` gives a branch's first own turn (its fork turn): copied turns have their usage
   * on the parent.
   */
  getTurnsWithoutUsage(
    sessionId: string,
    branchId: string | null,
    options?: { fromTurns?: ReadonlyMap<string, number>; limit?: number },
  ): TurnsWithoutUsage {
    return this.read(() => readTurnsWithoutUsage(this.context, sessionId, branchId, options, this.kept?.usageRowsFrom));
  }

  /** What the Tokens tab shows (a page of usage rows and the turns without usage), in one read; see `UsageTab`. */
  getUsageTab(
    sessionId: string,
    branchId: string | null,
    request: UsagePageRequest,
    missing?: { fromTurns?: ReadonlyMap<string, number>; limit?: number },
  ): UsageTab {
    return this.read(() =>
      readUsageTab(this.context, sessionId, branchId, request, missing, this.kept?.usageSums, this.kept?.usageRowsFrom),
    );
  }

  /** Tool calls per tool for a branch, or the whole session (each stored call counted once) when `branchId` is null. */
  getToolTotals(sessionId: string, branchId: string | null): ToolTotal[] {
    return this.read(() => (this.kept ? this.kept.toolTotals(sessionId, branchId) : readToolTotals(this.context, sessionId, branchId)));
  }

  /** What the kept totals did so far (`keepTotals`), or undefined without them. */
  get keptTotalsStats(): Readonly<KeptTotalsStats> | undefined {
    return this.kept ? { ...this.kept.stats } : undefined;
  }

  /**
   * Runs `fn` (a call of this database) with `progress` told about a long first computation of kept totals, and able
   * to stop it: the store worker's progress messages and Cancel. Without `keepTotals` it just runs `fn`.
   */
  withProgress<T>(progress: KeptProgress, fn: () => T): T {
    if (!this.kept) return fn();
    this.kept.progress = progress;
    try {
      return fn();
    } finally {
      this.kept.progress = undefined;
    }
  }

  /**
   * Whether the file changed since the previous call (or since opening); see `ChangeWatcher.hasChanged`. Costs
   * microseconds (one `stat` and one prepared statement) and holds no transaction. Call it before re-reading.
   *
   * Throws `SessionDatabaseError` with problem `deleted` or `replaced` when the path no longer names the file that was
   * opened (deleted or moved away, or another file renamed over it): the connection would go on reading the old file,
   * so close this `SessionDatabase` and open the path again (once it exists). Every read method throws the same.
   */
  hasChanged(): boolean {
    this.checkFile();
    return this.watcher.hasChanged();
  }

  /**
   * Whether the path still names the file that was opened: `ok`, `deleted` (nothing at the path any more) or
   * `replaced` (another file is there now). One `stat`; never throws (except `SessionClosedError`).
   */
  fileState(): FileState {
    if (this.lifetime.retired) return 'replaced';
    this.assertOpen();
    return fileStateOf(this.file);
  }

  /** An independent watcher on this connection, for a consumer that keeps its own "last looked" mark. */
  createChangeWatcher(): ChangeWatcher {
    this.assertOpen();
    const watcher = createChangeWatcher(this.db);
    return {
      hasChanged: () => {
        this.checkFile();
        return watcher.hasChanged();
      },
    };
  }

  /** The newest compaction item of a branch before a sequence number (docs/context.md; `olderCompaction.ts`). */
  olderCompaction(sessionId: string, branchId: string, beforeSequence: number, listed: number): OlderCompaction | null | undefined {
    return this.read(() => findOlderCompaction(this.context, sessionId, branchId, beforeSequence, listed));
  }

  /**
   * Runs `fn` with the connection and tables in one read snapshot, as every method here does: for the store's own
   * modules that need SQL of their own over the whole file (search scans the messages in rowid batches, one call per
   * batch, so no snapshot is held between batches). Not for the extension.
   */
  readWith<T>(fn: (ctx: QueryContext) => T): T {
    return this.read(() => fn(this.context));
  }

  /** Closes the connection; idempotent. Every other method then throws `SessionClosedError`. */
  close(): void {
    this.kept?.clear();
    this.lifetime.close();
  }

  private assertOpen(): void {
    this.lifetime.assertOpen();
  }

  /**
   * Open, and the path still names the file that was opened: a replaced file closes the connection for good (its
   * `-wal` checkpointed when writable, spec §11), a deleted one is refused while it stays gone.
   */
  private checkFile(): void {
    this.lifetime.assertFile('read');
    assertSameFile(this.file, 'read');
  }

  private stmt(sql: string): SqliteStatement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  /**
   * Runs a read in one snapshot (so the several queries of a call agree while another process writes), first
   * re-discovering the tables if the schema changed since the last look (e.g. a plain file that an
   * `AdvancedSQLiteSession` has since upgraded). Driver errors become `SessionDatabaseError`s.
   */
  private read<T>(fn: () => T): T {
    this.checkFile();
    try {
      return readTransaction(this.db, () => {
        const version = Number(this.stmt('PRAGMA schema_version').get<{ schema_version: number }>()?.schema_version ?? 0);
        const schemaChanged = version !== this.schemaVersion;
        if (schemaChanged) {
          this.discovered = discoverSessionTables(this.db, this.path);
          this.schemaVersion = version;
        }
        this.kept?.beginRead(schemaChanged);
        return fn();
      });
    } catch (err) {
      throw translate(err, this.path, this.readonly);
    }
  }
}

/** `PRAGMA schema_version`: bumped by every schema change, from any connection. */
function readSchemaVersion(db: SqliteDatabase): number {
  return Number(db.prepare('PRAGMA schema_version').get<{ schema_version: number }>()?.schema_version ?? 0);
}

/**
 * Reads the first row of every table the inspector will query, so a file whose tables' root pages are damaged or
 * cut off fails at open with `corrupt` rather than at the first click. Damage deeper in a table surfaces, as the
 * same error, from the call that reads it; a full `PRAGMA quick_check` would read the whole file.
 */
function probeTables(db: SqliteDatabase, t: DiscoveredTables): void {
  const tables = [t.messages, t.sessions, t.messageStructure ? 'message_structure' : null, t.turnUsage ? 'turn_usage' : null];
  for (const table of tables) if (table !== null) db.prepare(`SELECT * FROM ${quoteIdentifier(table)} LIMIT 1`).get();
}

function translateOpen<T>(path: string, readonly: boolean, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw translate(err, path, readonly);
  }
}

/** Driver errors → `SessionDatabaseError`, with advice that fits how the connection was opened. */
function translate(err: unknown, path: string, readonly: boolean): unknown {
  return describeDatabaseError(err, path, { readonly });
}
