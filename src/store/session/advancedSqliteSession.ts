import type { AgentInputItem, Session } from '@openai/agents';
import type { SessionHistoryRewriteArgs, SessionHistoryTransactionArgs } from '@openai/agents';
import { CurrentBranchSession } from './currentBranchSession';
import { checkLimitArgument, checkNewBranchName, checkSessionId, checkTurnNumber } from './argumentChecks';
import { contentMatcher, contentPreview } from '../format/conversationText';
import { BranchError, InvalidArgumentError, SessionDatabaseError, describeDatabaseError, sqliteCodeOf } from '../errors';
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import { HistoryConflictError, checkHistoryMutations, checkHistoryTransaction, comparableItems } from './historyTransactions';
import { appliedOperation, forgetOperations, recordOperation } from './historyOperations';
import { backfillReservations, branchIdUsed, reserveBranchId } from './branchReservations';
import { ensureGenerationRow, generationForWrite, generationRow, raiseGeneration, readGeneration } from './clearGenerations';
import { dataVersion, maxSequence, turnMaxima, type TurnCounters } from './turnNumbering';
import type { SessionContext } from './sessionContext';
import { fromStoredItems, normalizeForComparison, toStoredItem } from '../format/itemShape';
import { captureFileIdentity, noteWal, type FileIdentity } from '../sqlite/fileIdentity';
import { TOOL_CALL_TYPES_SQL, classifyItem } from '../format/itemClassification';
import { pythonJsonDumps, pythonJsonLoads } from '../format/pythonJson';
import {
  DEFAULT_TABLE_NAMES,
  STRUCTURE_INDEX_DDL,
  baseSchemaDdl,
  messageStructureDdl,
  turnUsageDdl,
  type TableNames,
} from '../format/schema';
import { enableWal, openSessionConnection, retryWhileBusy, sessionWrite } from '../sqlite/sessionConnection';
import { checkSessionSettings } from './sessionSettings';
import { decodeAll, decodeMessageValue, decodeTexts, takeNewestValid } from './sqliteSession';
import { readTransaction, type SqliteDatabase, type SqliteStatement } from '../sqlite/sqliteDatabase';
import { claimTableOwnership } from '../format/tableOwnership';
import { ConnectionLifetime } from '../sqlite/connectionLifetime';
import type {
  AdvancedSQLiteSessionOptions,
  BranchInfo,
  ConversationTurn,
  RunUsageSource,
  SessionLogger,
  SessionSettings,
  SessionUsage,
  ToolUsage,
  TurnItem,
  TurnUsage,
  TurnUsageRow,
} from '../types';
import { usageColumns } from '../format/usageRecord';
import { HistoryGuardStore, type GuardedSessionOptions } from '../guard/guardStore';

/** An item ready for `message_data` and its structure columns (spec §5, §6), computed from the stored shape. */
interface EncodedItem {
  text: string;
  messageType: string;
  toolName: string | null;
}

function isFunctionCallWithId(item: unknown, callId: string): boolean {
  if (typeof item !== 'object' || item === null) return false;
  const record = item as Record<string, unknown>;
  return record.type === 'function_call' && (record.call_id ?? record.callId) === callId;
}

/** Converts and encodes every item first, so an unserialisable one rejects the batch before anything is written. */
function encodeItems(items: readonly AgentInputItem[]): EncodedItem[] {
  return items.map((item) => {
    const stored = toStoredItem(item);
    return { text: pythonJsonDumps(stored), ...classifyItem(stored) };
  });
}

const defaultLogger: SessionLogger = {
  error: (message, err) => console.error(message, err),
  warn: (message) => console.warn(message),
};

/**
 * A SQLite session with conversation branches, per-turn usage and structured queries, file-compatible with the
 * Python SDK's `AdvancedSQLiteSession` (see the format spec). Implements the `Session` interface of
 * `@openai/agents`, so it can be passed to `run(agent, input, { session })`.
 *
 * The current branch lives only in this instance; every write is one immediate transaction.
 */
export class AdvancedSQLiteSession implements Session {
  readonly sessionId: string;
  readonly sessionSettings: SessionSettings;
  /** The path as passed (used verbatim in error messages). */
  readonly dbPath: string;
  private readonly db: SqliteDatabase;
  private readonly tables: TableNames;
  private readonly logger: SessionLogger;
  private readonly clock: () => number;
  private readonly statements = new Map<string, SqliteStatement>();
  /** The connection, session, tables and statement cache, for the bookkeeping modules' functions. */
  private readonly ctx: SessionContext;
  private currentBranch = 'main';
  /**
   * Whether the current branch had rows when this instance last wrote or read it (spec §12 g): if it has none at the
   * next `addItems`, another connection deleted it.
   */
  private currentBranchHadRows = false;
  private clearGeneration: number;
  private readonly lifetime: ConnectionLifetime;
  /** The file opened (undefined for `:memory:`), checked before every call (spec §11: deleted or replaced files). */
  private readonly file: FileIdentity | undefined;
  /** Turn maxima of the current branch after our last insert, valid while no other connection has written. */
  private counters: TurnCounters | undefined;
  /** Where our compaction records what it replaces (docs/history-guard.md), or undefined. */
  private readonly guardStorePath: string | undefined;

  constructor(options: AdvancedSQLiteSessionOptions & GuardedSessionOptions) {
    checkSessionId(options.sessionId);
    this.sessionId = options.sessionId;
    this.sessionSettings = checkSessionSettings(options.sessionSettings);
    this.dbPath = options.dbPath ?? ':memory:';
    this.tables = {
      sessions: options.sessionsTable ?? DEFAULT_TABLE_NAMES.sessions,
      messages: options.messagesTable ?? DEFAULT_TABLE_NAMES.messages,
    };
    this.logger = options.logger ?? defaultLogger;
    this.clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
    this.guardStorePath = options.guardStorePath;
    if (options.readonly && options.createTables) {
      throw new InvalidArgumentError('createTables cannot be combined with readonly: a read-only session never writes');
    }
    // WAL is switched on only after the ownership checks passed (spec §12 h): a file that belongs to another program
    // keeps its header when opening fails.
    this.db = openSessionConnection(this.dbPath, { ...options, deferWal: true });
    this.lifetime = new ConnectionLifetime(this.db, this.statements);
    this.ctx = { db: this.db, sessionId: this.sessionId, tables: this.tables, stmt: (key, sql) => this.stmt(key, sql) };
    try {
      this.file = captureFileIdentity(this.dbPath);
      const timeout = options.busyTimeoutMs;
      if (this.db.readonly) {
        retryWhileBusy(timeout, () => claimTableOwnership(this.db, this.dbPath, this.tables, { readonly: true }));
      } else if (options.createTables) {
        this.createAndClaimTables(timeout);
      } else {
        retryWhileBusy(timeout, () => claimTableOwnership(this.db, this.dbPath, this.tables));
        enableWal(this.db, timeout);
        retryWhileBusy(timeout, () =>
          this.write(() => {
            for (const ddl of baseSchemaDdl(this.tables)) this.db.exec(ddl);
          }),
        );
      }
      this.clearGeneration = readGeneration(this.ctx) ?? 0;
      noteWal(this.file);
      // Watched only when writable: a read-only connection cannot checkpoint its -wal into the old file (spec §11).
      this.lifetime.hold(this.file, !this.db.readonly);
    } catch (err) {
      this.db.close();
      // A lock held past the busy timeout, or damage found while claiming, gets a message with a remedy;
      // ownership errors and other SQLite errors pass through as they are.
      throw describeDatabaseError(err, this.dbPath);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Session interface

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /**
   * The items of a branch (the current one by default) as the JS runner takes them: stored Responses items are
   * converted to the SDK's protocol items (`itemShape.ts`). `getStoredItems` returns them exactly as stored.
   */
  async getItems(limit?: number | null, branchId?: string | null): Promise<AgentInputItem[]> {
    return fromStoredItems(await this.getStoredItems(limit, branchId));
  }

  /** The decoded items exactly as stored (the Responses shape the Python SDK writes), for exact comparisons. */
  async getStoredItems(limit?: number | null, branchId?: string | null): Promise<unknown[]> {
    this.assertOpen();
    const effective = checkLimitArgument('limit', limit) ?? this.sessionSettings.limit ?? null;
    return readTransaction(this.db, () => {
      const branch = branchId ?? this.currentBranchForRead();
      if (effective === 0) return [];
      const m = this.tables.messages;
      if (effective === null || effective < 0) {
        // One column, no object per row: the runner reads the whole history before every turn.
        const texts = this.stmt(
          'itemsAsc',
          `SELECT m.message_data FROM message_structure s JOIN ${m} m ON m.id = s.message_id
           WHERE s.session_id = ? AND s.branch_id = ? AND m.session_id = ? ORDER BY s.sequence_number ASC`,
        ).column<unknown>(this.sessionId, branch, this.sessionId);
        if (texts.length > 0) this.sawRowsOn(branch);
        return decodeTexts(texts);
      }
      const rows = this.stmt(
        'itemsDesc',
        `SELECT m.message_data FROM message_structure s JOIN ${m} m ON m.id = s.message_id
         WHERE s.session_id = ? AND s.branch_id = ? AND m.session_id = ? ORDER BY s.sequence_number DESC`,
      ).iterate<{ message_data: unknown }>(this.sessionId, branch, this.sessionId);
      const items = takeNewestValid(rows, effective);
      if (items.length > 0) this.sawRowsOn(branch);
      return items;
    });
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    this.assertOpen();
    if (items.length === 0) return;
    // Encode everything first: an unserialisable item rejects the batch before anything is written.
    const rows = encodeItems(items);
    this.write(() => {
      this.checkGenerationForWrite();
      this.assertCurrentBranchNotDeleted();
      this.insertRows(rows);
    });
    this.currentBranchHadRows = true;
  }

  /**
   * Pops the current branch's newest item, as Python's `pop_item`. With `expected` (ours: Python's takes no argument),
   * only if that item is `expected`, compared as stored (as `replace_suffix` compares, spec §14.2), in the same
   * transaction: otherwise, or on an empty branch, it throws `HistoryConflictError` and changes nothing. So a writer
   * that removes only its own items never removes one another connection committed a moment before.
   */
  async popItem(expected?: AgentInputItem): Promise<AgentInputItem | undefined> {
    this.assertOpen();
    const wanted = expected === undefined ? undefined : comparableItems([toStoredItem(expected)]);
    return this.write(() => {
      this.counters = undefined;
      this.checkGenerationForWrite();
      backfillReservations(this.ctx);
      const branch = this.currentBranch;
      for (;;) {
        const last = this.stmt(
          'lastStructure',
          `SELECT id, message_id, user_turn_number FROM message_structure
           WHERE session_id = ? AND branch_id = ? ORDER BY sequence_number DESC LIMIT 1`,
        ).get<{ id: number; message_id: number; user_turn_number: number | null }>(this.sessionId, branch);
        const message = last
          ? this.stmt('messageById', `SELECT message_data FROM ${this.tables.messages} WHERE id = ?`).get<{
              message_data: unknown;
            }>(last.message_id)
          : undefined;
        if (wanted !== undefined) {
          if (!holdsItem(message?.message_data, wanted))
            throw new HistoryConflictError("The branch's newest item is not the expected one; nothing was popped.");
        }
        if (!last) return undefined;
        this.stmt('deleteStructure', 'DELETE FROM message_structure WHERE id = ?').run(last.id);
        this.deleteOrphanMessages();
        this.currentBranchHadRows = this.branchHasRows(branch);
        if (last.user_turn_number !== null) this.deleteUsageIfTurnGone(branch, last.user_turn_number);
        if (message) {
          const decoded = decodeMessageValue(message.message_data);
          if (decoded.ok) return fromStoredItems([decoded.value])[0];
        }
        // A missing or corrupt message: it is gone now; pop the next one, as Python does.
      }
    });
  }

  async clearSession(): Promise<void> {
    this.assertOpen();
    const generation = this.write(() => {
      this.counters = undefined;
      backfillReservations(this.ctx);
      this.checkGenerationForWrite();
      const sid = this.sessionId;
      this.db.prepare('DELETE FROM message_structure WHERE session_id = ?').run(sid);
      this.db.prepare('DELETE FROM turn_usage WHERE session_id = ?').run(sid);
      this.db.prepare(`DELETE FROM ${this.tables.messages} WHERE session_id = ?`).run(sid);
      this.db.prepare(`DELETE FROM ${this.tables.sessions} WHERE session_id = ?`).run(sid);
      raiseGeneration(this.ctx);
      forgetOperations(this.ctx, null);
      return generationRow(this.ctx) ?? 0;
    });
    this.clearGeneration = generation;
    this.currentBranch = 'main';
    this.currentBranchHadRows = false;
  }

  /**
   * Clears the current branch only: its structure rows and the messages no other branch shares. Other branches, and
   * every usage row, stay; the branch's next turn is numbered after its last usage row. The branch stays current.
   * `currentBranchSession()` exposes this as `clearSession`, for wrappers such as `OpenAIResponsesCompactionSession`
   * that clear and re-add.
   */
  async clearCurrentBranch(): Promise<void> {
    this.assertOpen();
    this.write(() => {
      this.checkGenerationForWrite();
      this.assertCurrentBranchNotDeleted();
      const rows = this.branchRows();
      this.guardReplaced(rows);
      this.deleteBranchRows(rows, { keepUsage: true });
      forgetOperations(this.ctx, this.currentBranch);
    });
    // Emptied by us, not deleted by another connection: the next addItems may refill it (spec §12 g does not apply).
    this.currentBranchHadRows = false;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // The SDK's optional Session capabilities (docs/session-format.md §14), on the current branch

  /** `replace_function_call`: the first call with that id is replaced, later ones removed (as `MemorySession`). */
  async applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    this.assertOpen();
    const mutations = checkHistoryMutations(args);
    if (mutations.length === 0) return;
    const encoded = mutations.map((m) => ({ callId: m.callId, row: encodeItems([m.replacement])[0] as EncodedItem }));
    this.write(() => {
      this.checkGenerationForWrite();
      this.assertCurrentBranchNotDeleted();
      const insertMessage = this.stmt('insertMessage', `INSERT INTO ${this.tables.messages} (session_id, message_data) VALUES (?, ?)`);
      const repoint = this.stmt(
        'repointStructure',
        'UPDATE message_structure SET message_id = ?, message_type = ?, tool_name = ? WHERE id = ?',
      );
      for (const { callId, row } of encoded) {
        const calls = this.branchRows().filter(({ item }) => isFunctionCallWithId(item, callId));
        const [first, ...later] = calls;
        if (!first) continue;
        // A new message row, never an update in place: another branch may share the old one (spec §8.3).
        const messageId = insertMessage.run(this.sessionId, row.text).lastInsertRowid;
        repoint.run(messageId, row.messageType, row.toolName, first.id);
        this.deleteBranchRows(later, { keepUsage: false });
      }
      this.deleteOrphanMessages();
    });
  }

  /**
   * An atomic, idempotent change of the current branch's history. The operation id is recorded in the same transaction
   * (durably: a retry from another instance or process is a no-op). Reusing an id for a different change, or a suffix
   * that no longer matches, throws `HistoryConflictError` and changes nothing.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    this.assertOpen();
    const op = checkHistoryTransaction(args);
    const rows = encodeItems(op.transaction.type === 'append_items' ? op.transaction.items : op.transaction.replacement);
    this.write(() => {
      this.checkGenerationForWrite();
      this.assertCurrentBranchNotDeleted();
      const applied = appliedOperation(this.ctx, op.operationId);
      if (applied) {
        if (applied.transaction_data !== op.fingerprint) {
          throw new HistoryConflictError('Session history operation was already applied with a different transaction.');
        }
        return;
      }
      if (op.transaction.type === 'replace_suffix') {
        const expected = op.transaction.expectedSuffix;
        const current = this.branchRows();
        const suffix = expected.length === 0 ? [] : current.slice(-expected.length);
        const matches =
          suffix.length === expected.length &&
          suffix.every((r) => r.item !== undefined) &&
          comparableItems(suffix.map((r) => r.item)) === comparableItems(expected.map((item) => toStoredItem(item)));
        if (!matches) throw new HistoryConflictError('Session history suffix no longer matches the transaction precondition.');
        this.deleteBranchRows(suffix, { keepUsage: false });
      }
      if (rows.length > 0) this.insertRows(rows);
      recordOperation(this.ctx, op.operationId, this.currentBranch, op.fingerprint);
    });
    this.currentBranchHadRows = this.branchHasRows(this.currentBranch);
  }

  /**
   * Replaces the current branch's history with a compaction item and its retained suffix, in one transaction. Other
   * branches keep their items; every usage row stays (numbering continues after the last one, see `turnMaxima` in
   * turnNumbering.ts).
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    this.assertOpen();
    const rows = encodeItems(items);
    this.write(() => {
      this.checkGenerationForWrite();
      this.assertCurrentBranchNotDeleted();
      const replaced = this.branchRows();
      this.guardReplaced(replaced);
      this.deleteBranchRows(replaced, { keepUsage: true });
      if (rows.length > 0) this.insertRows(rows);
    });
    this.currentBranchHadRows = rows.length > 0;
  }

  /** What the runner compares when it reconciles its writes: items as they read back once stored. */
  prepareHistoryItemsForPersistenceComparison(items: AgentInputItem[]): AgentInputItem[] {
    return normalizeForComparison(items);
  }

  /**
   * This session seen as its current branch alone: `clearSession` clears only that branch (`clearCurrentBranch`), every
   * other method is this session's. Hand it to wrappers that clear and rebuild history, such as the SDK's
   * `OpenAIResponsesCompactionSession`, so they never wipe the other branches.
   */
  currentBranchSession(): CurrentBranchSession<AdvancedSQLiteSession> {
    return new CurrentBranchSession<AdvancedSQLiteSession>(this);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Usage

  /**
   * Records the run's usage on the current branch's latest turn, as Python's `store_run_usage`. With `target` (ours:
   * Python's always takes the latest turn), on turn `target.turn` (its `user_turn_number`) instead, and only if that
   * turn has a row on the branch and, with `target.expected`, its first item is `expected` (compared as `popItem`
   * compares), checked in the write's transaction; otherwise nothing is written and it is logged as a warning. So a
   * writer that knows its turn never replaces the usage of a turn another connection added after it (spec §9). Never
   * throws; failures are logged.
   */
  async storeRunUsage(result: RunUsageSource | null | undefined, target?: { turn: number; expected?: AgentInputItem }): Promise<void> {
    try {
      const usage = result?.state?.usage ?? result?.runContext?.usage;
      if (!usage) return;
      this.assertOpen();
      const columns = usageColumns(usage);
      if (target !== undefined && !(Number.isInteger(target.turn) && target.turn >= 1)) {
        throw new InvalidArgumentError(`The turn to store usage on must be an integer of at least 1, got ${String(target.turn)}`);
      }
      const wanted = target?.expected === undefined ? undefined : comparableItems([toStoredItem(target.expected)]);
      const skipped = this.write(() => {
        const branch = this.currentBranchForRead();
        let turn: number;
        if (target === undefined) {
          const latest = this.stmt(
            'latestTurn',
            'SELECT MAX(user_turn_number) AS turn FROM message_structure WHERE session_id = ? AND branch_id = ?',
          ).get<{ turn: number | null }>(this.sessionId, branch)?.turn;
          if (latest === null || latest === undefined || latest < 1) return `branch '${branch}' has no user turn yet`;
          turn = latest;
        } else {
          turn = target.turn;
          const first = this.stmt(
            'turnFirstItem',
            `SELECT m.message_data FROM message_structure s LEFT JOIN ${this.tables.messages} m ON m.id = s.message_id
             WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number = ? ORDER BY s.sequence_number LIMIT 1`,
          ).get<{ message_data: unknown }>(this.sessionId, branch, turn);
          if (!first) return `branch '${branch}' has no turn ${turn}`;
          if (wanted !== undefined) {
            if (!holdsItem(first.message_data, wanted)) {
              return `turn ${turn} of branch '${branch}' does not start with the expected item`;
            }
          }
        }
        this.stmt(
          'replaceUsage',
          `INSERT OR REPLACE INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens,
             output_tokens, total_tokens, input_tokens_details, output_tokens_details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          this.sessionId,
          branch,
          turn,
          columns.requests,
          columns.inputTokens,
          columns.outputTokens,
          columns.totalTokens,
          columns.inputTokensDetails,
          columns.outputTokensDetails,
        );
        return undefined;
      });
      if (skipped !== undefined) this.logger.warn?.(`No usage stored for session ${this.sessionId}: ${skipped}`);
    } catch (err) {
      this.logger.error('Failed to store session usage', err);
    }
  }

  async getSessionUsage(branchId?: string | null): Promise<SessionUsage | null> {
    this.assertOpen();
    const sql = `SELECT SUM(requests) AS requests, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
      SUM(total_tokens) AS total, COUNT(*) AS turns FROM turn_usage WHERE session_id = ?`;
    type Row = { requests: number | null; input: number | null; output: number | null; total: number | null; turns: number };
    // Truthiness, as in Python: '' means every branch, like an omitted id.
    const row = branchId
      ? this.stmt('usageBranch', `${sql} AND branch_id = ?`).get<Row>(this.sessionId, branchId)
      : this.stmt('usageAll', sql).get<Row>(this.sessionId);
    if (!row || row.requests === null) return null;
    return {
      requests: row.requests,
      inputTokens: row.input ?? 0,
      outputTokens: row.output ?? 0,
      totalTokens: row.total ?? 0,
      totalTurns: row.turns,
    };
  }

  getTurnUsage(userTurnNumber: number, branchId?: string | null): Promise<TurnUsage | Record<string, never>>;
  getTurnUsage(userTurnNumber?: null, branchId?: string | null): Promise<TurnUsageRow[]>;
  async getTurnUsage(
    userTurnNumber?: number | null,
    branchId?: string | null,
  ): Promise<TurnUsage | Record<string, never> | TurnUsageRow[]> {
    this.assertOpen();
    const branch = branchId ?? this.currentBranchForRead();
    const columns = `requests, input_tokens, output_tokens, total_tokens, input_tokens_details, output_tokens_details`;
    type Row = {
      user_turn_number: number;
      requests: number | null;
      input_tokens: number | null;
      output_tokens: number | null;
      total_tokens: number | null;
      input_tokens_details: string | null;
      output_tokens_details: string | null;
    };
    const usage = (r: Row): TurnUsage => ({
      requests: r.requests,
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
      totalTokens: r.total_tokens,
      inputTokensDetails: decodeDetails(r.input_tokens_details),
      outputTokensDetails: decodeDetails(r.output_tokens_details),
    });
    if (userTurnNumber !== undefined && userTurnNumber !== null) {
      const row = this.stmt(
        'turnUsageOne',
        `SELECT ${columns} FROM turn_usage WHERE session_id = ? AND branch_id = ? AND user_turn_number = ?`,
      ).get<Row>(this.sessionId, branch, userTurnNumber);
      return row ? usage(row) : {};
    }
    return this.stmt(
      'turnUsageAll',
      `SELECT user_turn_number, ${columns} FROM turn_usage WHERE session_id = ? AND branch_id = ? ORDER BY user_turn_number`,
    )
      .all<Row>(this.sessionId, branch)
      .map((r) => ({ userTurnNumber: r.user_turn_number, ...usage(r) }));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Structured queries

  async getConversationTurns(branchId?: string | null): Promise<ConversationTurn[]> {
    this.assertOpen();
    return this.userTurns(branchId ?? null, null);
  }

  /**
   * Not in the Python API: the turn of a branch's newest user message (the current branch by default), or null when
   * it has none: the `turn` of `getConversationTurns()`'s last entry (a user row whose data is not a JSON object is
   * skipped there, so here too). Read from the branch's end by idx_structure_branch_seq, so it costs the last turn's
   * rows, not the branch: settling a run asks it, and getConversationTurns() took 0.8–1 s on a 100,000-turn branch.
   */
  async getLatestTurnNumber(branchId?: string | null): Promise<number | null> {
    this.assertOpen();
    return readTransaction(this.db, () => {
      const rows = this.stmt(
        'latestUserRows',
        `SELECT s.branch_turn_number AS turn, m.message_data FROM message_structure s
         JOIN ${this.tables.messages} m ON s.message_id = m.id
         WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = 'user' ORDER BY s.sequence_number DESC`,
      ).iterate<{ turn: number; message_data: unknown }>(this.sessionId, branchId ?? this.currentBranchForRead());
      for (const r of rows) {
        const decoded = decodeMessageValue(r.message_data);
        if (!decoded.ok || typeof decoded.value !== 'object' || decoded.value === null || Array.isArray(decoded.value)) continue;
        rows.return?.();
        return r.turn;
      }
      return null;
    });
  }

  async findTurnsByContent(searchTerm: string, branchId?: string | null): Promise<ConversationTurn[]> {
    this.assertOpen();
    return this.userTurns(branchId ?? null, String(searchTerm));
  }

  async getConversationByTurns(branchId?: string | null): Promise<Map<number | null, TurnItem[]>> {
    this.assertOpen();
    const branch = branchId ?? this.currentBranchForRead();
    const rows = this.stmt(
      'byTurns',
      `SELECT user_turn_number, message_type, tool_name FROM message_structure
       WHERE session_id = ? AND branch_id = ? ORDER BY sequence_number`,
    ).all<{ user_turn_number: number | null; message_type: string; tool_name: string | null }>(this.sessionId, branch);
    const out = new Map<number | null, TurnItem[]>();
    for (const r of rows) {
      let list = out.get(r.user_turn_number);
      if (!list) out.set(r.user_turn_number, (list = []));
      list.push({ type: r.message_type, toolName: r.tool_name });
    }
    return out;
  }

  async getToolUsage(branchId?: string | null): Promise<ToolUsage[]> {
    this.assertOpen();
    const branch = branchId ?? this.currentBranchForRead();
    // Order spelled out (turn, then name, binary, NULL first) so no SQLite version changes it.
    const rows = this.stmt(
      'toolUsage',
      `SELECT s.tool_name, COUNT(*) AS count, s.user_turn_number AS turn FROM message_structure s
       WHERE s.session_id = ? AND s.branch_id = ? AND (s.message_type IN (${TOOL_CALL_TYPES_SQL})
         OR (s.message_type = 'tool_search_output' AND NOT EXISTS (
           SELECT 1 FROM message_structure c WHERE c.session_id = s.session_id AND c.branch_id = s.branch_id
             AND c.user_turn_number = s.user_turn_number AND c.message_type = 'tool_search_call'
             AND c.tool_name = s.tool_name)))
       GROUP BY s.user_turn_number, s.tool_name
       ORDER BY s.user_turn_number ASC, s.tool_name COLLATE BINARY ASC`,
    ).all<{ tool_name: string | null; count: number; turn: number }>(this.sessionId, branch);
    return rows.map((r) => ({ toolName: r.tool_name, count: r.count, turn: r.turn }));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Branches

  async createBranchFromTurn(turnNumber: number, branchName?: string | null): Promise<string> {
    return (await this.forkFromTurn(turnNumber, branchName, false)).branchId;
  }

  /**
   * Not in the Python API: `createBranchFromTurn`, and the stored items of turn `turnNumber` on the source branch read
   * in the same transaction, so what a re-run replays (its recorded tool calls) is the turn the fork was made from,
   * even while another process writes (docs/replay.md).
   */
  async forkWithTurnItems(turnNumber: number, branchName?: string | null): Promise<{ branchId: string; turnItems: unknown[] }> {
    return this.forkFromTurn(turnNumber, branchName, true);
  }

  /** Not in the Python API: the stored items of one turn (`branch_turn_number`) of a branch (default: the current one). */
  async getTurnStoredItems(turnNumber: number, branchId?: string | null): Promise<unknown[]> {
    this.assertOpen();
    checkTurnNumber(turnNumber);
    return readTransaction(this.db, () => this.turnItems(branchId ?? this.currentBranchForRead(), turnNumber));
  }

  /**
   * The rows of turn N (`branch_turn_number = N`), found through idx_structure_turn as branch creation finds its user
   * row (spec §12 l): both turn columns hold N in every file the SDKs write, and the unary `+` keeps SQLite from
   * walking the whole branch in sequence order instead. Only when that finds nothing does the exact query scan the
   * branch (branch_turn_number has no index): on a 10,000-turn branch that took 4–13 ms, the indexed read 0.3 ms
   * (scripts/bench/replay.ts), and a re-run's preparation has 5 ms for all of replay (docs/replay.md).
   */
  private turnItems(branchId: string, turnNumber: number): unknown[] {
    const m = this.tables.messages;
    const indexed = this.stmt(
      'turnItemsIndexed',
      `SELECT m.message_data FROM message_structure s JOIN ${m} m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number = ? AND s.branch_turn_number = ? AND m.session_id = ?
       ORDER BY +s.sequence_number`,
    ).all<{ message_data: unknown }>(this.sessionId, branchId, turnNumber, turnNumber, this.sessionId);
    if (indexed.length > 0) return decodeAll(indexed);
    const rows = this.stmt(
      'turnItems',
      `SELECT m.message_data FROM message_structure s JOIN ${m} m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.branch_turn_number = ? AND m.session_id = ? ORDER BY s.sequence_number`,
    ).all<{ message_data: unknown }>(this.sessionId, branchId, turnNumber, this.sessionId);
    return decodeAll(rows);
  }

  private async forkFromTurn(
    turnNumber: number,
    branchName: string | null | undefined,
    readTurn: boolean,
  ): Promise<{ branchId: string; turnItems: unknown[] }> {
    this.assertOpen();
    checkTurnNumber(turnNumber);
    checkNewBranchName(branchName);
    let copied = 0;
    let turnItems: unknown[] = [];
    const id = this.write(() => {
      this.counters = undefined;
      backfillReservations(this.ctx);
      // Spec §8.4: read the generation in this transaction (an external clear moves the source to main), then move to
      // the new branch whatever the cache said before the call.
      this.checkGenerationForWrite();
      const source = this.currentBranch;
      // Fast path (spec §12 l): find turn N's user row through idx_structure_turn, since the two turn columns agree in
      // every file the SDKs write, and copy the rows before it in sequence order: O(copied rows), not O(branch). If it
      // is not found that way, Python's exact queries decide (they scan the branch: branch_turn_number has no index).
      const userRow = this.stmt(
        'userAtTurnIndexed',
        `SELECT s.sequence_number AS seq FROM message_structure s JOIN ${this.tables.messages} m ON s.message_id = m.id
         WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number = ? AND s.branch_turn_number = ?
           AND s.message_type = 'user' ORDER BY +s.sequence_number LIMIT 1`,
      ).get<{ seq: number }>(this.sessionId, source, turnNumber, turnNumber);
      const hasUser =
        userRow !== undefined ||
        this.stmt(
          'userAtTurn',
          `SELECT 1 FROM message_structure s JOIN ${this.tables.messages} m ON s.message_id = m.id
           WHERE s.session_id = ? AND s.branch_id = ? AND s.branch_turn_number = ? AND s.message_type = 'user' LIMIT 1`,
        ).get(this.sessionId, source, turnNumber) !== undefined;
      if (!hasUser) throw new BranchError(`Turn ${turnNumber} does not contain a user message in branch '${source}'`);
      const newId = reserveBranchId(this.ctx, turnNumber, branchName ?? null, () => this.clock());
      const copy = (bound: string) => `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number,
           user_turn_number, branch_turn_number, tool_name)
         SELECT session_id, message_id, ?, message_type,
           (SELECT COALESCE(MAX(sequence_number), 0) FROM message_structure WHERE session_id = ?)
             + ROW_NUMBER() OVER (ORDER BY sequence_number),
           user_turn_number, branch_turn_number, tool_name
         FROM message_structure WHERE session_id = ? AND branch_id = ? AND branch_turn_number < ?${bound}
         ORDER BY sequence_number`;
      copied =
        userRow !== undefined
          ? this.stmt('copyPrefixBefore', copy(' AND sequence_number < ?')).run(
              newId,
              this.sessionId,
              this.sessionId,
              source,
              turnNumber,
              userRow.seq,
            ).changes
          : this.stmt('copyPrefix', copy('')).run(newId, this.sessionId, this.sessionId, source, turnNumber).changes;
      if (readTurn) turnItems = this.turnItems(source, turnNumber);
      return newId;
    });
    this.currentBranch = id;
    this.counters = undefined;
    // A branch from turn 1 copies nothing and has no rows until its first item (quirk 6).
    this.currentBranchHadRows = copied > 0;
    return { branchId: id, turnItems };
  }

  async createBranchFromContent(searchTerm: string, branchName?: string | null): Promise<string> {
    this.assertOpen();
    checkNewBranchName(branchName);
    const matches = this.userTurns(null, String(searchTerm));
    const first = matches[0];
    if (!first) throw new BranchError(`No user turns found containing '${searchTerm}'`);
    return this.createBranchFromTurn(first.turn, branchName);
  }

  /**
   * Not in the Python API: a new branch `branchName` holding `texts` (stored items, each its `message_data` exactly as
   * another file held it: a history guard layer's, docs/history-guard.md), numbered from turn 1 as Python numbers a
   * branch's rows, in one transaction; existing rows are never touched. The session moves to the new branch, as after
   * a fork. A text that is not an item (not JSON, not an object) refuses the whole restore before anything is written,
   * unless `keepUndecodable` is set (a layer's restore: those texts were in the file, and Python's `get_items` skips a
   * row it cannot decode and reads the rest, so the restored branch holding the same text reads as the branch did);
   * such a row is typed as an item without a role or type would be. A value that is not text is always refused.
   */
  async restoreBranch(texts: readonly string[], branchName: string, options: { keepUndecodable?: boolean } = {}): Promise<string> {
    this.assertOpen();
    checkNewBranchName(branchName);
    if (typeof branchName !== 'string' || branchName.trim() === '') throw new BranchError('Branch ID cannot be empty');
    // `main` is never a new branch's name (spec §12 e 4, as `branchIdUsed` says), even when no reservation holds it
    // (a file whose rows another writer deleted, main never backfilled): a restore writes a NEW branch.
    if (branchName === 'main') throw new BranchError(`Branch ID 'main' has already been used. Choose a new branch ID.`);
    if (!Array.isArray(texts) || texts.length === 0) throw new InvalidArgumentError('A restored branch needs at least one item');
    const rows: EncodedItem[] = texts.map((text, i) => {
      const decoded = typeof text === 'string' ? pythonJsonLoads(text) : undefined;
      const item = decoded?.ok && typeof decoded.value === 'object' && decoded.value !== null && !Array.isArray(decoded.value);
      if (!item && options.keepUndecodable === true && typeof text === 'string') return { text, ...classifyItem({}) };
      if (!item || !decoded?.ok)
        throw new InvalidArgumentError(`Item ${i + 1} of the restored branch is not a stored item (a JSON object)`);
      return { text, ...classifyItem(decoded.value) };
    });
    let previous = this.currentBranch;
    let id: string;
    try {
      id = this.write(() => {
        this.counters = undefined;
        this.checkGenerationForWrite();
        previous = this.currentBranch;
        backfillReservations(this.ctx);
        // insertRows writes to the current branch: the new one, for this transaction; put back if it rolls back.
        this.currentBranch = reserveBranchId(this.ctx, 1, branchName, () => this.clock());
        this.insertRows(rows);
        return this.currentBranch;
      });
    } catch (err) {
      this.currentBranch = previous;
      this.counters = undefined;
      throw err;
    }
    this.currentBranch = id;
    this.counters = undefined;
    this.currentBranchHadRows = true;
    return id;
  }

  /**
   * Not in the Python API: whether `createBranchFromTurn(…, branchId)` would refuse the id as used (`main`, an id with
   * rows, or one reserved: spec §8.1). Asked by a run that leaves a fork at turn 1 to its agent, before the agent starts.
   */
  async isBranchIdUsed(branchId: string): Promise<boolean> {
    this.assertOpen();
    return readTransaction(this.db, () => branchIdUsed(this.ctx, branchId));
  }

  async switchToBranch(branchId: string): Promise<void> {
    this.assertOpen();
    this.write(() => {
      // Spec §8.4: an external clear seen here resets the pointer to main first; the switch then still happens.
      this.checkGenerationForWrite();
      if (!this.branchHasRows(branchId)) throw new BranchError(`Branch '${branchId}' does not exist`);
    });
    this.currentBranch = branchId;
    this.counters = undefined;
    this.currentBranchHadRows = true;
  }

  async deleteBranch(branchId: string, force = false): Promise<void> {
    if (typeof branchId !== 'string' || branchId.trim() === '') throw new BranchError('Branch ID cannot be empty');
    const id = branchId.trim();
    if (id === 'main') throw new BranchError("Cannot delete the 'main' branch");
    this.assertOpen();
    const isCurrent = id === this.currentBranch;
    if (isCurrent && !force) {
      throw new BranchError(`Cannot delete current branch '${id}'. Use force=True or switch branches first`);
    }
    // Every check runs before anything changes (spec §12 d): a failed delete leaves the pointer where it was.
    this.write(() => {
      this.counters = undefined;
      if (isCurrent) {
        ensureGenerationRow(this.ctx);
        if (!this.branchHasRows('main')) throw new BranchError("Branch 'main' does not exist");
      }
      backfillReservations(this.ctx);
      if (!this.branchHasRows(id)) throw new BranchError(`Branch '${id}' does not exist`);
      this.db.prepare('DELETE FROM turn_usage WHERE session_id = ? AND branch_id = ?').run(this.sessionId, id);
      this.db.prepare('DELETE FROM message_structure WHERE session_id = ? AND branch_id = ?').run(this.sessionId, id);
      this.deleteOrphanMessages();
    });
    if (isCurrent) {
      this.currentBranch = 'main';
      this.currentBranchHadRows = true; // the check above found rows on main
    }
  }

  async listBranches(): Promise<BranchInfo[]> {
    this.assertOpen();
    return readTransaction(this.db, () => {
      const current = this.currentBranchForRead();
      // The id through exactTextSql: node:sqlite would cut 'a\u0000b' to 'a' (see exactText.ts).
      const rows = this.stmt(
        'listBranches',
        `SELECT ${exactTextSql('branch_id')} AS branch_id, COUNT(*) AS message_count,
           COUNT(CASE WHEN message_type = 'user' THEN 1 END) AS user_turns, MIN(created_at) AS created_at
         FROM message_structure WHERE session_id = ? GROUP BY message_structure.branch_id
         ORDER BY created_at ASC, message_structure.branch_id COLLATE BINARY ASC`,
      ).all<{ branch_id: unknown; message_count: number; user_turns: number; created_at: string | null }>(this.sessionId);
      const branches = rows.map((r) => {
        const branchId = textFromSql(r.branch_id);
        return {
          branchId,
          messageCount: r.message_count,
          userTurns: r.user_turns,
          isCurrent: branchId === current,
          createdAt: r.created_at,
        };
      });
      if (branches.some((b) => b.isCurrent)) this.sawRowsOn(current);
      return branches;
    });
  }

  /** The in-memory current branch, unchecked. */
  getCurrentBranchId(): string {
    return this.currentBranch;
  }

  /** Closes the connection; idempotent. */
  close(): void {
    this.lifetime.close();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Internals

  /** Open, and the path still names our file: reads of a replaced file would show the old one (spec §11). */
  private assertOpen(): void {
    this.lifetime.assertFile('call');
  }

  /**
   * One immediate transaction (`sessionWrite`: refused on a read-only session or a file that was replaced). On
   * rollback the turn counters are forgotten, since the rollback undid what they describe.
   */
  private write<T>(fn: () => T): T {
    try {
      return sessionWrite(this.db, this.dbPath, this.file, fn);
    } catch (err) {
      this.counters = undefined;
      throw err;
    }
  }

  /** A statement prepared once per instance (tables may appear later, so preparation is lazy). */
  private stmt(key: string, sql: string): SqliteStatement {
    let s = this.statements.get(key);
    if (!s) this.statements.set(key, (s = this.db.prepare(sql)));
    return s;
  }

  /**
   * The `createTables: true` transaction (spec §3.2). A new, empty file is switched to WAL first, as Python does, so
   * its pages are laid out the same. A file with content is claimed in the journal mode it has and switched to WAL only
   * after the claim committed: when the claim fails, the rollback leaves its bytes and journal mode as they were
   * (spec §12 h). Both steps wait out other connections (see `retryWhileBusy`).
   */
  private createAndClaimTables(busyTimeoutMs: number | undefined): void {
    const empty = retryWhileBusy(busyTimeoutMs, () => this.db.prepare('PRAGMA page_count').get<{ page_count: number }>())?.page_count === 0;
    if (empty) enableWal(this.db, busyTimeoutMs);
    retryWhileBusy(busyTimeoutMs, () =>
      this.write(() => {
        for (const ddl of baseSchemaDdl(this.tables)) this.db.exec(ddl);
        this.db.exec(messageStructureDdl(this.tables));
        this.db.exec(turnUsageDdl(this.tables));
        claimTableOwnership(this.db, this.dbPath, this.tables);
        backfillReservations(this.ctx);
        ensureGenerationRow(this.ctx);
        for (const ddl of STRUCTURE_INDEX_DDL) this.db.exec(ddl);
      }),
    );
    if (!empty) enableWal(this.db, busyTimeoutMs);
  }

  /** Spec §12 g: Python would silently start a prefix-less branch under the deleted branch's name. */
  private assertCurrentBranchNotDeleted(): void {
    const branch = this.currentBranch;
    if (branch !== 'main' && this.currentBranchHadRows && !this.branchHasRows(branch)) {
      throw new BranchError(`Branch '${branch}' was deleted by another connection; switch to an existing branch`);
    }
  }

  /**
   * Appends encoded items to the current branch, inside the caller's transaction: one message row and one structure
   * row each, numbered after the branch's last turn (spec §7).
   */
  private insertRows(rows: readonly EncodedItem[]): void {
    const { sessions, messages } = this.tables;
    const branch = this.currentBranch;
    this.stmt('ensureSession', `INSERT OR IGNORE INTO ${sessions} (session_id) VALUES (?)`).run(this.sessionId);
    const insertMessage = this.stmt('insertMessage', `INSERT INTO ${messages} (session_id, message_data) VALUES (?, ?)`);
    const ids = rows.map((r) => insertMessage.run(this.sessionId, r.text).lastInsertRowid);
    this.stmt('touchSession', `UPDATE ${sessions} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?`).run(this.sessionId);

    const seqBase = maxSequence(this.ctx);
    const { maxUserTurn, maxBranchTurn } = turnMaxima(this.ctx, branch, this.counters);
    const insertStructure = this.stmt(
      'insertStructure',
      `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number,
         user_turn_number, branch_turn_number, tool_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    let turnsOpened = 0;
    rows.forEach((r, i) => {
      if (r.messageType === 'user') turnsOpened++;
      insertStructure.run(
        this.sessionId,
        ids[i] as number | bigint,
        branch,
        r.messageType,
        seqBase + i + 1,
        maxUserTurn + turnsOpened,
        maxBranchTurn + turnsOpened,
        r.toolName,
      );
    });
    this.counters = {
      branch,
      dataVersion: dataVersion(this.ctx),
      maxUserTurn: maxUserTurn + turnsOpened,
      maxBranchTurn: maxBranchTurn + turnsOpened,
    };
  }

  /** The current branch's structure rows with their stored items, oldest first (corrupt rows included as undefined). */
  private branchRows(): { id: number; item: unknown; text: string | null; userTurn: number | null; branchTurn: number | null }[] {
    const rows = this.stmt(
      'branchRowsAsc',
      `SELECT s.id, m.message_data, s.user_turn_number, s.branch_turn_number FROM message_structure s
       LEFT JOIN ${this.tables.messages} m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number ASC`,
    ).all<{ id: number; message_data: string | null; user_turn_number: number | null; branch_turn_number: number | null }>(
      this.sessionId,
      this.currentBranch,
    );
    return rows.map((r) => {
      const decoded = r.message_data === null ? undefined : decodeMessageValue(r.message_data);
      return {
        id: r.id,
        item: decoded?.ok ? decoded.value : undefined,
        text: r.message_data,
        userTurn: r.user_turn_number,
        branchTurn: r.branch_turn_number,
      };
    });
  }

  /**
   * Records the current branch's rows about to be replaced in the history guard store (docs/history-guard.md), inside
   * the write transaction: the guard store's own transaction commits first, and a failure there throws, which rolls
   * this write back, so the items are never gone from both files. Rows whose message is missing hold nothing to keep.
   */
  private guardReplaced(rows: readonly { text: string | null }[]): void {
    if (this.guardStorePath === undefined || this.file === undefined) return;
    const texts = rows.flatMap((r) => (r.text === null ? [] : [r.text]));
    if (texts.length === 0) return;
    const guardPath = this.guardStorePath;
    try {
      const store = HistoryGuardStore.open(guardPath);
      try {
        store.recordReplaced(this.dbPath, this.sessionId, this.currentBranch, texts);
      } finally {
        store.close();
      }
    } catch (err) {
      // Described here, naming the guard store: left raw, the session's write would report the guard store's lock as
      // the session file's (sessionWrite describes a raw SQLITE_BUSY with the session's path).
      const code = sqliteCodeOf(err);
      if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED')
        throw new SessionDatabaseError(
          'locked',
          `The history guard store ${guardPath} is locked by another connection beyond the busy timeout (${err instanceof Error ? err.message : String(err)}), so what this write replaces could not be recorded there and nothing was written to ${this.dbPath}. Try again when that connection has finished.`,
          { cause: err },
        );
      throw describeDatabaseError(err, guardPath);
    }
  }

  /**
   * Removes structure rows of the current branch and the messages nothing references any more. With `keepUsage` off,
   * the usage rows of the removed rows' turns go too when no row of that turn is left (as `popItem` does).
   */
  private deleteBranchRows(rows: readonly { id: number; userTurn: number | null }[], options: { keepUsage: boolean }): void {
    const remove = this.stmt('deleteStructure', 'DELETE FROM message_structure WHERE id = ?');
    for (const row of rows) remove.run(row.id);
    this.deleteOrphanMessages();
    if (!options.keepUsage) {
      const turns = new Set(rows.map((r) => r.userTurn).filter((t): t is number => t !== null));
      for (const turn of turns) this.deleteUsageIfTurnGone(this.currentBranch, turn);
    }
    this.counters = undefined;
  }

  private deleteUsageIfTurnGone(branch: string, turn: number): void {
    const left = this.stmt(
      'turnHasRows',
      'SELECT 1 FROM message_structure WHERE session_id = ? AND branch_id = ? AND user_turn_number = ? LIMIT 1',
    ).get(this.sessionId, branch, turn);
    if (!left) {
      this.stmt('deleteTurnUsage', 'DELETE FROM turn_usage WHERE session_id = ? AND branch_id = ? AND user_turn_number = ?').run(
        this.sessionId,
        branch,
        turn,
      );
    }
  }

  /** Notes that a read found rows on `branch`; for the current branch that arms the §12 g check. */
  private sawRowsOn(branch: string): void {
    if (branch === this.currentBranch) this.currentBranchHadRows = true;
  }

  /** Turns of user rows on a branch: all (`term` null, previews cut) or those matching `term` (uncut). */
  private userTurns(branchId: string | null, term: string | null): ConversationTurn[] {
    // One SELECT: no explicit read transaction (two more statements, which dominate on small sessions).
    {
      const branch = branchId ?? this.currentBranchForRead();
      const matcher = term === null ? null : contentMatcher(term);
      const select = `SELECT s.branch_turn_number AS turn, m.message_data, s.created_at FROM message_structure s
         JOIN ${this.tables.messages} m ON s.message_id = m.id
         WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = 'user'`;
      const order = 'ORDER BY s.branch_turn_number, s.sequence_number';
      type Row = { turn: number; message_data: unknown; created_at: string | null };
      let rows: Row[];
      if (matcher?.likePattern) {
        // Let SQLite drop rows whose raw JSON cannot contain the term (see ContentMatcher); rows with \u escapes or
        // raw non-ASCII text always pass, since their text may fold into the term. (A single GLOB character class
        // for both measured 3x slower than LIKE + instr + the length comparison.) A BLOB passes too: better-sqlite3's
        // SQLite never matches one with LIKE (SQLITE_LIKE_DOESNT_MATCH_BLOBS), node:sqlite's does, and the JS test
        // decodes it either way; typeof() is asked only of the rows the other tests refused, and reads no content.
        rows = this.stmt(
          'userRowsFiltered',
          `${select} AND (m.message_data LIKE ? ESCAPE '\\' OR instr(m.message_data, '\\u') > 0
             OR length(m.message_data) <> length(CAST(m.message_data AS BLOB)) OR typeof(m.message_data) = 'blob') ${order}`,
        ).all<Row>(this.sessionId, branch, matcher.likePattern);
      } else rows = this.stmt('userRows', `${select} ${order}`).all<Row>(this.sessionId, branch);
      const out: ConversationTurn[] = [];
      for (const r of rows) {
        const decoded = decodeMessageValue(r.message_data);
        if (!decoded.ok || typeof decoded.value !== 'object' || decoded.value === null || Array.isArray(decoded.value)) continue;
        const item = decoded.value as Record<string, unknown>;
        const content = 'content' in item ? item.content : '';
        if (matcher && !matcher.matches(content)) continue;
        out.push({
          turn: r.turn,
          content: contentPreview(content, matcher === null),
          fullContent: content,
          timestamp: r.created_at,
          canBranch: true,
        });
      }
      return out;
    }
  }

  private branchHasRows(branch: string): boolean {
    return (
      this.stmt('branchExists', 'SELECT 1 AS one FROM message_structure WHERE session_id = ? AND branch_id = ? LIMIT 1').get(
        this.sessionId,
        branch,
      ) !== undefined
    );
  }

  /** Deletes every message of this session that none of its structure rows references (a shared message survives). */
  private deleteOrphanMessages(): void {
    // References are looked for in this session's structure rows only (spec §12 l): there is no index on message_id,
    // so asking every session's rows made a delete cost the whole file.
    this.stmt(
      'deleteOrphans',
      `DELETE FROM ${this.tables.messages} WHERE session_id = ?
       AND id NOT IN (SELECT message_id FROM message_structure WHERE session_id = ? AND message_id IS NOT NULL)`,
    ).run(this.sessionId, this.sessionId);
  }

  /** Adopts a changed generation: another instance cleared the session, so our branch is gone. */
  private adoptGeneration(generation: number): boolean {
    if (generation === this.clearGeneration) return false;
    this.clearGeneration = generation;
    this.currentBranch = 'main';
    this.currentBranchHadRows = false;
    this.counters = undefined;
    return true;
  }

  /** The write-side generation check (spec §8.4); true when it moved the pointer back to `main`. */
  private checkGenerationForWrite(): boolean {
    return this.adoptGeneration(generationForWrite(this.ctx));
  }

  /** The current branch after the read-side generation check (no table → no check). */
  private currentBranchForRead(): string {
    const generation = readGeneration(this.ctx);
    if (generation !== undefined) this.adoptGeneration(generation);
    return this.currentBranch;
  }
}

function decodeDetails(text: string | null): unknown {
  if (text === null || text === '') return null;
  const d = pythonJsonLoads(text);
  return d.ok ? d.value : null;
}

/**
 * Whether a stored `message_data` is the item whose `comparableItems` form is `wanted`: the one test of "the newest item
 * is the one expected" (`popItem(expected)`) and "the turn starts with the expected item" (`storeRunUsage`'s target).
 * A missing row, NULL or text that does not decode is no item.
 */
function holdsItem(messageData: unknown, wanted: string): boolean {
  if (messageData === undefined || messageData === null) return false;
  const decoded = decodeMessageValue(messageData);
  return decoded.ok && comparableItems([decoded.value]) === wanted;
}
