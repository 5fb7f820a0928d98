/**
 * The JSON export: a session (or one branch) exactly as stored, re-importable without loss (`importJson`).
 *
 * What it holds, and why the round trip export → import → export is byte-identical:
 * - `messages`: every message row the scope references, in row-id order, with `message_data` as the stored string
 *   (never decoded and re-encoded, so corrupt rows and Python's spacing survive) and `created_at` as stored. A BLOB
 *   `message_data` (written as bytes by another tool) is its bytes as UTF-8 text, marked `message_data_type: "blob"`
 *   so the import stores it as a BLOB again; bytes that are not UTF-8 are carried in `message_data_base64` too. An
 *   import of an earlier version ignores both and stores the text, as earlier exports held it.
 *   Row ids are NOT exported: each message has `ref`, its index in this list; structure rows point at it by
 *   `message_ref`. An import inserts the messages in `ref` order, so their new ids keep that order and the next export
 *   numbers them the same.
 * - `structure`: the `message_structure` rows (branch, sequence number, message type, tool name, user and branch turn
 *   numbers, `created_at`), by sequence number; kept as stored, not recomputed.
 * - `usage`: the `turn_usage` rows (token details as the stored JSON text).
 * - `session`: the sessions-table row (id and times), or null when the session has none.
 * Only `session.session_id` changes when the import is given a new id. The file is written one row per line, so
 * it can be diffed and streamed.
 *
 * Every text is read whole: node:sqlite returns TEXT cut at its first U+0000, which would export `alt\u0000x` as
 * `alt` (and the import would merge it into branch `alt`), so text columns are selected through `exactTextSql`.
 */
import { isUtf8 } from 'node:buffer';
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';
import { quoteIdentifier, type DiscoveredTables } from '../inspector/tableDiscovery';
import { TransferError, throwIfCancelled } from './exportErrors';
import { hasReviews, sessionReviewData } from './reviewsInExport';
import type { ExportRequest, ExportSummary, TextSink } from './transferTypes';

export const JSON_EXPORT_FORMAT = 'agent-session-inspector/session';
export const JSON_EXPORT_VERSION = 1;

export interface ExportedSessionRow {
  session_id: string;
  created_at: string | null;
  updated_at: string | null;
}

export interface ExportedMessage {
  ref: number;
  created_at: string | null;
  /** The stored text; for a BLOB, its bytes as UTF-8 (a byte sequence that is not UTF-8 as U+FFFD). */
  message_data: string;
  /** `blob`: the row's `message_data` is a BLOB, of `message_data`'s UTF-8 bytes unless `message_data_base64` says. */
  message_data_type?: 'blob';
  /** A BLOB's bytes when they are not UTF-8 (so `message_data` could not carry them). */
  message_data_base64?: string;
}

export interface ExportedStructureRow {
  branch_id: string;
  sequence_number: number;
  message_ref: number;
  message_type: string;
  user_turn_number: number | null;
  branch_turn_number: number | null;
  tool_name: string | null;
  created_at: string | null;
}

export interface ExportedUsageRow {
  branch_id: string;
  user_turn_number: number;
  requests: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  input_tokens_details: string | null;
  output_tokens_details: string | null;
  created_at: string | null;
}

/** The whole document, as `parseJsonExport` returns it. */
export interface SessionExport {
  format: typeof JSON_EXPORT_FORMAT;
  version: typeof JSON_EXPORT_VERSION;
  /** `session`, or `branch` for a one-branch export (then `branch` names it). */
  scope: 'session' | 'branch';
  branch: string | null;
  /** False for a plain `SQLiteSession` session (no structure rows, no turns). */
  structured: boolean;
  session: ExportedSessionRow | null;
  /**
   * A whole structured session's `branch_reservations` (spec §8.1): every branch id it ever used, those of deleted
   * branches too, so the imported copy refuses them as the original does. Absent from branch exports, plain sessions,
   * files without the table, and exports written before it was carried (they import as before).
   */
  reserved_branches?: string[];
  messages: ExportedMessage[];
  structure: ExportedStructureRow[];
  usage: ExportedUsageRow[];
}

/**
 * Each exported message's `ref` by its row id. The messages come in row-id order, so the ids are kept in one growing
 * array (their refs are their places) and found again by binary search: 8 bytes a message, where a Map of 404,000
 * entries held about 14 MB for the whole export (file A of the benchmarks).
 */
class MessageRefs {
  private ids = new Float64Array(1024);
  private size = 0;

  /** The next ref, for `id` (greater than every id added before). */
  add(id: number): number {
    if (this.size === this.ids.length) {
      const grown = new Float64Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.size] = id;
    return this.size++;
  }

  refOf(id: number): number | undefined {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.ids[mid]!;
      if (at === id) return mid;
      if (at < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}

/** A value selected through `exactTextSql`, or null (bytes are UTF-8, as `textFromSql` reads them). */
const nullableText = (v: unknown): string | null => (v === null || v === undefined ? null : textFromSql(v));
const nullableNumber = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * A message row's `message_data` as exported: TEXT as it is, a BLOB (`isBlob`) as its UTF-8 text marked as a BLOB, with
 * its bytes as base64 when they are not UTF-8. Before, a BLOB was `String(value)`: its UTF-8 text on better-sqlite3, on
 * node:sqlite `123,34,99,…` (a Uint8Array's numbers), and either way imported as TEXT.
 */
function exportedData(
  value: unknown,
  isBlob: boolean,
): Pick<ExportedMessage, 'message_data' | 'message_data_type' | 'message_data_base64'> {
  if (!isBlob || !(value instanceof Uint8Array)) return { message_data: textFromSql(value) };
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const text = bytes.toString('utf8');
  return isUtf8(bytes)
    ? { message_data: text, message_data_type: 'blob' }
    : { message_data: text, message_data_type: 'blob', message_data_base64: bytes.toString('base64') };
}

/**
 * Writes the JSON export of `request.sessionId` from `db` (whose session tables are `tables`) to `sink`, in one read
 * transaction (a consistent snapshot while others write), a row at a time. Throws `TransferError('not-found')` for an
 * unknown session or branch.
 */
export async function writeJsonExport(
  db: SqliteDatabase,
  tables: DiscoveredTables,
  request: ExportRequest,
  sink: TextSink,
): Promise<ExportSummary> {
  const { sessionId } = request;
  const branch = request.branchId ?? null;
  const messages = quoteIdentifier(tables.messages);
  const structured =
    tables.messageStructure && db.prepare('SELECT 1 FROM message_structure WHERE session_id = ? LIMIT 1').get(sessionId) !== undefined;
  // The transaction spans the awaits: the connection is ours alone, so nothing else runs on it meanwhile.
  db.exec('BEGIN');
  try {
    const messageCount = Number(
      db.prepare(`SELECT count(*) AS n FROM ${messages} WHERE session_id = ?`).get<{ n: number }>(sessionId)?.n ?? 0,
    );
    const sessionRow =
      tables.sessions === null
        ? undefined
        : db
            .prepare(
              `SELECT ${exactTextSql('session_id')} AS session_id, ${
                tables.sessionsHasCreatedAt ? `${exactTextSql('created_at')} AS created_at` : 'NULL AS created_at'
              }, ${tables.sessionsHasUpdatedAt ? `${exactTextSql('updated_at')} AS updated_at` : 'NULL AS updated_at'} FROM ${quoteIdentifier(
                tables.sessions,
              )} WHERE session_id = ?`,
            )
            .get<{ session_id: unknown; created_at: unknown; updated_at: unknown }>(sessionId);
    if (messageCount === 0 && sessionRow === undefined) throw new TransferError('not-found', `There is no session '${sessionId}'.`);
    if (branch !== null) {
      const has = structured
        ? db.prepare('SELECT 1 FROM message_structure WHERE session_id = ? AND branch_id = ? LIMIT 1').get(sessionId, branch) !== undefined
        : branch === 'main';
      if (!has) throw new TransferError('not-found', `Session '${sessionId}' has no branch '${branch}'.`);
    }
    const total = messageCount;
    let done = 0;
    const session: ExportedSessionRow | null = sessionRow
      ? {
          session_id: textFromSql(sessionRow.session_id),
          created_at: nullableText(sessionRow.created_at),
          updated_at: nullableText(sessionRow.updated_at),
        }
      : null;
    const reserved =
      branch === null && structured && tables.branchReservations
        ? db
            // Named apart: `ORDER BY branch_id` would sort by the alias, where an id with U+0000 is a BLOB (after all TEXT).
            .prepare(`SELECT ${exactTextSql('branch_id')} AS id FROM branch_reservations WHERE session_id = ? ORDER BY branch_id`)
            .all<{ id: unknown }>(sessionId)
            .map((r) => textFromSql(r.id))
        : [];
    await sink(
      `{\n"format": ${JSON.stringify(JSON_EXPORT_FORMAT)},\n"version": ${JSON_EXPORT_VERSION},\n"scope": ${JSON.stringify(
        branch === null ? 'session' : 'branch',
      )},\n"branch": ${JSON.stringify(branch)},\n"structured": ${structured},\n"session": ${JSON.stringify(session)},\n${
        // Header lines of their own, so the line-by-line import (of this version or one before it, which did not know
        // them) reads past them as it reads past any field it does not know.
        reserved.length > 0 ? `"reserved_branches": ${JSON.stringify(reserved)},\n` : ''
      }${hasReviews(request.reviews) ? `"reviews": ${JSON.stringify(sessionReviewData(request.reviews, sessionId))},\n` : ''}"messages": [`,
    );

    const createdAt = tables.messagesHasCreatedAt ? exactTextSql('m.created_at') : 'NULL';
    // The items through `exactTextSql` on node:sqlite only: better-sqlite3 reads them whole, and its `instr` over every
    // item's text cost 0.4 s of CPU for the 404,000 items of the bench's file A. A BLOB stays a BLOB either way.
    const data = db.driver === 'node:sqlite' ? exactTextSql('m.message_data') : 'm.message_data';
    const columns = `m.id, ${data} AS message_data, typeof(m.message_data) = 'blob' AS is_blob, ${createdAt} AS created_at`;
    const messageSql =
      branch !== null && structured
        ? `SELECT ${columns} FROM ${messages} m WHERE m.session_id = ?
             AND m.id IN (SELECT message_id FROM message_structure WHERE session_id = ? AND branch_id = ?) ORDER BY m.id`
        : `SELECT ${columns} FROM ${messages} m WHERE m.session_id = ? ORDER BY m.id`;
    const messageParams = branch !== null && structured ? [sessionId, sessionId, branch] : [sessionId];
    const refs = new MessageRefs();
    let first = true;
    type MessageRow = { id: number; message_data: unknown; is_blob: unknown; created_at: unknown };
    for (const row of db.prepare(messageSql).iterate<MessageRow>(...messageParams)) {
      const ref = refs.add(Number(row.id));
      const message: ExportedMessage = {
        ref,
        created_at: nullableText(row.created_at),
        ...exportedData(row.message_data, Number(row.is_blob) === 1),
      };
      await sink(`${first ? '\n' : ',\n'}${JSON.stringify(message)}`);
      first = false;
      if (++done % 1000 === 0) {
        throwIfCancelled(request.signal);
        request.onProgress?.(done, total);
      }
    }
    await sink(`${first ? '' : '\n'}],\n"structure": [`);

    let skipped = 0;
    first = true;
    if (structured) {
      const structureSql = `SELECT ${exactTextSql('branch_id')} AS branch_id, sequence_number, message_id,
          ${exactTextSql('message_type')} AS message_type, user_turn_number, branch_turn_number,
          ${exactTextSql('tool_name')} AS tool_name, ${exactTextSql('created_at')} AS created_at
          FROM message_structure WHERE session_id = ?${branch !== null ? ' AND branch_id = ?' : ''} ORDER BY sequence_number, id`;
      const params = branch !== null ? [sessionId, branch] : [sessionId];
      type Row = {
        branch_id: unknown;
        sequence_number: number;
        message_id: number;
        message_type: unknown;
        user_turn_number: unknown;
        branch_turn_number: unknown;
        tool_name: unknown;
        created_at: unknown;
      };
      let rows = 0;
      for (const r of db.prepare(structureSql).iterate<Row>(...params)) {
        const ref = refs.refOf(Number(r.message_id));
        // A structure row whose message is gone cannot be imported (message_id is NOT NULL): leave it out, counted.
        if (ref === undefined) {
          skipped++;
          continue;
        }
        const row: ExportedStructureRow = {
          branch_id: textFromSql(r.branch_id),
          sequence_number: Number(r.sequence_number),
          message_ref: ref,
          message_type: textFromSql(r.message_type),
          user_turn_number: nullableNumber(r.user_turn_number),
          branch_turn_number: nullableNumber(r.branch_turn_number),
          tool_name: nullableText(r.tool_name),
          created_at: nullableText(r.created_at),
        };
        await sink(`${first ? '\n' : ',\n'}${JSON.stringify(row)}`);
        first = false;
        if (++rows % 1000 === 0) throwIfCancelled(request.signal);
      }
    }
    await sink(`${first ? '' : '\n'}],\n"usage": [`);

    first = true;
    if (tables.turnUsage) {
      // `branch`, not `branch_id`: the ORDER BY would sort by the alias (see the reservations).
      const usageSql = `SELECT ${exactTextSql('branch_id')} AS branch, user_turn_number, requests, input_tokens, output_tokens,
          total_tokens, ${exactTextSql('input_tokens_details')} AS input_tokens_details,
          ${exactTextSql('output_tokens_details')} AS output_tokens_details, ${exactTextSql('created_at')} AS created_at FROM turn_usage
          WHERE session_id = ?${branch !== null ? ' AND branch_id = ?' : ''} ORDER BY branch_id, user_turn_number`;
      const params = branch !== null ? [sessionId, branch] : [sessionId];
      for (const r of db.prepare(usageSql).iterate<Record<string, unknown>>(...params)) {
        const row: ExportedUsageRow = {
          branch_id: textFromSql(r.branch),
          user_turn_number: Number(r.user_turn_number),
          requests: nullableNumber(r.requests),
          input_tokens: nullableNumber(r.input_tokens),
          output_tokens: nullableNumber(r.output_tokens),
          total_tokens: nullableNumber(r.total_tokens),
          input_tokens_details: nullableText(r.input_tokens_details),
          output_tokens_details: nullableText(r.output_tokens_details),
          created_at: nullableText(r.created_at),
        };
        await sink(`${first ? '\n' : ',\n'}${JSON.stringify(row)}`);
        first = false;
      }
    }
    await sink(`${first ? '' : '\n'}]\n}\n`);
    request.onProgress?.(done, total);
    const branches = structured
      ? branch !== null
        ? 1
        : Number(
            db.prepare('SELECT count(DISTINCT branch_id) AS n FROM message_structure WHERE session_id = ?').get<{ n: number }>(sessionId)
              ?.n ?? 0,
          )
      : 1;
    return { items: done, branches, skipped };
  } finally {
    if (db.inTransaction) db.exec('COMMIT');
  }
}
