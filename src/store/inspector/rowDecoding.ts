/** Decoding of stored values for display (corrupt rows are reported, not skipped), and the page arguments and reads. */
import { InvalidArgumentError } from '../errors';
import { pythonJsonLoads } from '../format/pythonJson';
import type { SqliteStatement, SqlValue } from '../sqlite/sqliteDatabase';

/** The outcome of decoding one `message_data` value. */
export type DecodedMessage = { ok: true; value: unknown } | { ok: false; raw: string; error: string };

/**
 * Decodes `message_data` as Python's `json.loads` would. Other writers may have stored a BLOB (json.loads accepts
 * UTF-8 bytes) or a number, so those are read as text rather than rejected.
 */
export function decodeMessageData(value: unknown): DecodedMessage {
  const raw = typeof value === 'string' ? value : value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : String(value);
  const decoded = pythonJsonLoads(raw);
  return decoded.ok ? decoded : { ok: false, raw, error: decoded.error };
}

/** A timestamp or other text column as text (other writers may store numbers), or null. */
/** The columns of a structure row joined to its message that every entry carries. */
export interface StructureRowColumns {
  structure_id: number;
  message_id: number;
  sequence_number: number;
  branch_turn_number: unknown;
  created_at: unknown;
}

/** Those columns as entry fields (one owner for the item, turn and plain pages). */
export function structureRowMeta(r: StructureRowColumns) {
  return {
    structureId: Number(r.structure_id),
    messageId: Number(r.message_id),
    sequenceNumber: Number(r.sequence_number),
    branchTurnNumber: numberOrNull(r.branch_turn_number),
    createdAt: textOrNull(r.created_at),
  };
}

export function textOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : String(value);
}

/** An integer column as a number (node:sqlite may hand back a bigint), or null. */
export function numberOrNull(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'number' ? value : Number(value);
}

/** The `content` of a decoded user item as `getConversationTurns` reads it: missing → `""`, non-objects → `""`. */
export function userContentOf(item: unknown): unknown {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return '';
  return 'content' in item ? (item as { content: unknown }).content : '';
}

/** Checks a page size: a positive integer. */
export function checkLimit(limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new InvalidArgumentError(`limit must be a positive integer, got ${String(limit)}`);
  }
  return limit;
}

/** Checks an optional cursor: a finite number, or null/undefined for "from the start". */
export function checkCursor(name: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(`${name} must be a finite number, got ${String(value)}`);
  }
  return value;
}

/**
 * One keyset page: runs `stmt` with `keys`, then the cursor when there is one, then `limit + 1`. The one row more
 * than asked says whether another page follows, without a COUNT over the branch; `next` is then the cursor of the
 * page's last entry, otherwise null.
 */
export function keysetPage<R, E>(
  stmt: SqliteStatement,
  keys: SqlValue[],
  after: number | null,
  limit: number,
  entry: (row: R) => E,
  cursorOf: (entry: E) => number,
): { entries: E[]; next: number | null } {
  const rows = stmt.all<R>(...keys, ...(after !== null ? [after] : []), limit + 1);
  const entries = rows.slice(0, limit).map(entry);
  const last = entries[entries.length - 1];
  return { entries, next: rows.length > limit && last ? cursorOf(last) : null };
}
