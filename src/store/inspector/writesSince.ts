/**
 * What other programs wrote to a file between two moments, by session and branch: an agent command is given one
 * branch, and the extension checks afterwards what it wrote there and that it wrote nowhere else
 * (docs/agent-command.md §3). Both tables' ids are AUTOINCREMENT (spec §4): a new row always gets a larger id than
 * any before it, even after deletions, so a mark is the two largest ids, and what came after is two rowid ranges —
 * no scan of either table, however long the session (message_structure has no index on message_id to join through).
 * `NOT INDEXED` keeps it so: with a GROUP BY, SQLite otherwise walks the whole session index (idx_agent_messages_session_id,
 * idx_structure_branch) to have its groups in order, 10–20 ms on a 400,000-item branch instead of 0.03 ms; the rowid
 * range stays usable, since `id` is the rowid.
 */
import { openDatabase } from '../drivers/openDatabase';
import type { TableNames } from '../format/schema';
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';
import { quoteIdentifier } from './tableDiscovery';

/** The largest ids when the mark was taken. */
export interface WriteMark {
  message: number;
  structure: number;
}

/**
 * New messages written since a mark, grouped. `branchId` is null for new messages with no structure row (a plain
 * session's writes). Structure rows that point at older messages (a branch copied from another) are not writes.
 */
export interface WritesByBranch {
  sessionId: string;
  branchId: string | null;
  items: number;
  /** The largest `user_turn_number` among the new user messages, or null when none. */
  lastUserTurn: number | null;
}

function withReader<T>(dbPath: string, fn: (db: SqliteDatabase) => T): T {
  const db = openDatabase(dbPath, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function hasStructure(db: SqliteDatabase): boolean {
  return db.prepare(`SELECT 1 AS ok FROM sqlite_master WHERE type = 'table' AND name = 'message_structure'`).get() !== undefined;
}

/** The largest ids now (0 for none): pass the mark to `writesSince` later. */
export function markWrites(dbPath: string, tables: TableNames): WriteMark {
  return withReader(dbPath, (db) => markWritesOn(db, tables));
}

/** `markWrites` on a connection the caller holds (a check's scratch file: one reader for the mark and the writes). */
export function markWritesOn(db: SqliteDatabase, tables: TableNames): WriteMark {
  const max = (table: string) => Number(db.prepare(`SELECT MAX(id) AS id FROM ${table}`).get<{ id: number | null }>()?.id ?? 0);
  return { message: max(quoteIdentifier(tables.messages)), structure: hasStructure(db) ? max('message_structure') : 0 };
}

/**
 * The two queries of `writesSince` (exported for the test of their plans): new messages per session, and new
 * structure rows per session and branch, both bounded by a rowid range.
 */
export function writesSinceSql(messagesTable: string): { perSession: string; perBranch: string } {
  return {
    perSession: `SELECT ${exactTextSql('session_id')} AS session_id, COUNT(*) AS n, MIN(id) AS first
      FROM ${quoteIdentifier(messagesTable)} NOT INDEXED WHERE id > ? GROUP BY session_id`,
    perBranch: `SELECT ${exactTextSql('session_id')} AS session_id, ${exactTextSql('branch_id')} AS branch_id, COUNT(*) AS n,
        MIN(message_id) AS first, MAX(CASE WHEN message_type = 'user' THEN user_turn_number END) AS turn
      FROM message_structure NOT INDEXED WHERE id > ? AND message_id > ? GROUP BY session_id, branch_id`,
  };
}

/** Messages written since `mark`, by session and branch, in the order of their first message. */
export function writesSince(dbPath: string, tables: TableNames, mark: WriteMark): WritesByBranch[] {
  return withReader(dbPath, (db) => writesSinceOn(db, tables, mark));
}

/** `writesSince` on a connection the caller holds. */
export function writesSinceOn(db: SqliteDatabase, tables: TableNames, mark: WriteMark): WritesByBranch[] {
  const sql = writesSinceSql(tables.messages);
  const perSession = db.prepare(sql.perSession).all<{ session_id: unknown; n: number; first: number }>(mark.message);
  const perBranch = hasStructure(db)
    ? db
        .prepare(sql.perBranch)
        .all<{ session_id: unknown; branch_id: unknown; n: number; first: number; turn: number | null }>(mark.structure, mark.message)
    : [];
  const out: (WritesByBranch & { first: number })[] = perBranch.map((r) => ({
    sessionId: textFromSql(r.session_id),
    branchId: textFromSql(r.branch_id),
    items: Number(r.n),
    lastUserTurn: r.turn === null ? null : Number(r.turn),
    first: Number(r.first),
  }));
  // Messages of a session beyond those its structure rows account for have no branch.
  for (const s of perSession) {
    const sessionId = textFromSql(s.session_id);
    const placed = out.filter((w) => w.sessionId === sessionId).reduce((n, w) => n + w.items, 0);
    if (Number(s.n) > placed)
      out.push({ sessionId, branchId: null, items: Number(s.n) - placed, lastUserTurn: null, first: Number(s.first) });
  }
  return out.sort((a, b) => a.first - b.first).map(({ first: _first, ...w }) => w);
}
