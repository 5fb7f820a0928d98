/**
 * The plain-data results of the inspector's read-side API (`SessionDatabase`). Keys are camelCase; values are what
 * the file holds (timestamps as SQLite's `YYYY-MM-DD HH:MM:SS` text), so the extension can turn them into view
 * models without another query.
 */
import type { DriverName } from '../sqlite/sqliteDatabase';
import type { TableNames } from '../format/schema';
import type { SessionUsage } from '../types';

/** How `openSessionDatabase` opens a file. */
export interface OpenSessionDatabaseOptions {
  /**
   * Default `true`: the inspector never writes unless asked to. Read-only connections issue no schema statements and
   * no `journal_mode` pragma, so the database file's bytes stay as they are.
   */
  readonly?: boolean;
  /** Force a SQLite driver; default: better-sqlite3, falling back to node:sqlite. */
  driver?: DriverName | 'auto';
  /** How long a read waits for another connection's lock before failing with `locked` (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * Keep tool totals, usage totals and branch row counts between calls and bring them up to date from the rows
   * written since, instead of re-reading the session each time (keptTotals.ts; memory only, never the file). For a
   * connection that answers many calls, as the extension's does; default false.
   */
  keepTotals?: boolean;
  /**
   * SQLite's page cache of this connection in KiB, 64 to 1,048,576 (default: the driver's, 16 MB with better-sqlite3,
   * 2 MB with node:sqlite): a reader that passes over the file once (the CLI) sets SQLite's 2 MB (`pageCache.ts`).
   */
  pageCacheKiB?: number;
}

/**
 * The session tables found in a file: the base tables' names (as stored in `sqlite_master`, custom names included,
 * spec §3.4) and which other tables can be used.
 */
export interface SessionTables extends Omit<TableNames, 'sessions'> {
  /** The sessions table, or null when the messages table names none that exists (sessions then come from rows). */
  sessions: string | null;
  /** True when `message_structure` exists and belongs to `messages`, so sessions can have branches and turns. */
  messageStructure: boolean;
  /** True when `turn_usage` exists with the columns the usage totals need. */
  turnUsage: boolean;
  branchReservations: boolean;
  sessionClearGenerations: boolean;
  /** Tables that exist but were ignored, and why (for the inspector to show; empty for files the SDKs write). */
  warnings: readonly string[];
}

/** One session of a file, as `listSessions()` reports it. */
export interface SessionSummary {
  sessionId: string;
  /** From the sessions table; null when the session has no row there (known only from its other rows). */
  createdAt: string | null;
  updatedAt: string | null;
  /** Stored items: rows of the messages table, each counted once however many branches share it. */
  messageCount: number;
  /** Branches with rows: distinct `branch_id`s, or 1 for a plain session that has messages. */
  branchCount: number;
  /** True when the session has `message_structure` rows (written by `AdvancedSQLiteSession`), false when plain. */
  structured: boolean;
  /** All branches' `turn_usage` totals, exactly what `getSessionUsage()` returns; null without usage rows. */
  usage: SessionUsage | null;
}

/** One branch with rows, with where it was (probably) forked from; see `SessionDatabase.getBranchTree`. */
export interface BranchNode {
  branchId: string;
  /** Structure rows on the branch (copied prefix included). */
  messageCount: number;
  /** `user` rows on the branch (copies included), as `listBranches()` counts them. */
  userTurns: number;
  /**
   * True when `userTurns` is a lower bound: server stores record no turns, and counting them all would mean reading
   * the whole session (the inspector counts what it has read so far).
   */
  userTurnsAtLeast?: boolean;
  /** Earliest row time (the copy time for a branch's copied rows). */
  createdAt: string | null;
  /** The branch it was forked from, or null (`main`, the first branch, or a branch sharing no rows). */
  parentBranchId: string | null;
  /** The turn it was forked from (`createBranchFromTurn(forkTurn)`), or null for `main` and the first branch. */
  forkTurn: number | null;
  /** Leading rows shared with the parent (the copied prefix). */
  sharedItemCount: number;
}

/** Structure metadata of one item. For plain sessions (no structure rows) the structure-only fields are null. */
export interface ItemMetadata {
  /** `message_structure.id`; null for plain sessions. */
  structureId: number | null;
  /** The messages-table row id. */
  messageId: number;
  /** Ordering key and paging cursor: `sequence_number`, or the message id for plain sessions. */
  sequenceNumber: number;
  /** `message_type`; for plain sessions computed from the item (null when it cannot be decoded). */
  type: string | null;
  /**
   * `tool_name`; for a tool output without one (the Responses shape names only the call), the name of the call with
   * the same `call_id` in the same page or turn.
   */
  toolName: string | null;
  /** Null for plain sessions, which record no turns. */
  userTurnNumber: number | null;
  branchTurnNumber: number | null;
  /**
   * When the item was first stored: the message row's time, which a branch's copies share (the structure row's copy
   * time only when the messages table has no `created_at`).
   */
  createdAt: string | null;
}

/** An item whose stored JSON decodes. */
export interface DecodedItemEntry extends ItemMetadata {
  corrupt: false;
  item: unknown;
}

/**
 * An item that cannot be shown as an item: `message_data` is not valid JSON (`raw` holds the text), or the message
 * row the structure row references is gone (`raw` null). The session API skips such rows silently, as Python does.
 */
export interface CorruptItemEntry extends ItemMetadata {
  corrupt: true;
  raw: string | null;
  error: string;
}

/** One item of a branch: decoded, or reported as corrupt (discriminated by `corrupt`). */
export type ItemEntry = DecodedItemEntry | CorruptItemEntry;

/** A page of a branch's items in sequence order. */
export interface ItemPage {
  items: ItemEntry[];
  /** Pass as `afterSequence` for the next page; null when this page is the last. */
  nextAfterSequence: number | null;
}

/** One user turn of a branch, for the turn list. */
export interface TurnEntry {
  /** `user_turn_number` (the paging key, and the key of the turn's usage row); derived for plain sessions. */
  turn: number;
  /** `branch_turn_number`, the number `createBranchFromTurn` takes; equal to `turn` in files the SDKs write. */
  branchTurnNumber: number | null;
  structureId: number | null;
  messageId: number;
  sequenceNumber: number;
  createdAt: string | null;
  /** The user message's content preview (100 code points, as `getConversationTurns`); null when corrupt. */
  preview: string | null;
  /** Why there is no preview (the row is corrupt or its message is missing); null otherwise. */
  error: string | null;
  /** `turn_usage.total_tokens` of the turn, or null without a usage row. */
  totalTokens: number | null;
}

/** A page of a branch's user turns. */
export interface TurnPage {
  turns: TurnEntry[];
  /** Pass as `afterTurn` for the next page; null when this page is the last. */
  nextAfterTurn: number | null;
}

/** Where an item page starts and how long it is. */
export interface ItemPageRequest {
  /** Items with a larger sequence number; omitted = from the start. */
  afterSequence?: number | null;
  /** Page size, a positive integer. */
  limit: number;
}

/** Where a turn page starts and how long it is. */
export interface TurnPageRequest {
  /** Turns with a larger turn number; omitted = from the first. */
  afterTurn?: number | null;
  /** Page size, a positive integer. */
  limit: number;
}
