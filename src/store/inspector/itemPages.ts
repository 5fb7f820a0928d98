/**
 * A branch's items a page at a time, with their structure metadata, reporting rows that cannot be decoded instead
 * of skipping them (the session API's `getItems` skips them, as Python does; an inspector has to show them).
 */
import type { ItemEntry, ItemPage, ItemPageRequest } from './inspectorTypes';
import { PLAIN_BRANCH_ID, plainItemsPage, plainTurnItems } from './plainSessions';
import { isStructuredSession, type QueryContext } from './queryContext';
import { checkCursor, checkLimit, decodeMessageData, keysetPage, numberOrNull, textOrNull } from './rowDecoding';
import { quoteIdentifier } from './tableDiscovery';

/** A structure row joined to its message (`found_id` is null when the message row is missing). */
interface StructureItemRecord {
  structure_id: number;
  message_id: number;
  sequence_number: number;
  message_type: unknown;
  tool_name: unknown;
  user_turn_number: unknown;
  branch_turn_number: unknown;
  created_at: unknown;
  found_id: unknown;
  message_data: unknown;
}

const SELECT_ITEMS = `SELECT s.id AS structure_id, s.message_id, s.sequence_number, s.message_type, s.tool_name,
    s.user_turn_number, s.branch_turn_number, s.created_at, m.id AS found_id, m.message_data`;

/**
 * The SQL of one item page. The WHERE and ORDER BY match idx_structure_branch_seq (session_id, branch_id,
 * sequence_number), so SQLite seeks to the cursor and stops after LIMIT rows: a page costs the same on a branch of
 * ten items or of a million. The join also requires the message's session to match, as `getItems` does, so a row
 * pointing into another session shows as missing rather than as someone else's item.
 */
export function itemPageSql(messagesTable: string, withCursor: boolean): string {
  return `${SELECT_ITEMS}
    FROM message_structure s LEFT JOIN ${quoteIdentifier(messagesTable)} m ON m.id = s.message_id AND m.session_id = s.session_id
    WHERE s.session_id = ? AND s.branch_id = ?${withCursor ? ' AND s.sequence_number > ?' : ''}
    ORDER BY s.sequence_number LIMIT ?`;
}

/**
 * The SQL of one turn's items. idx_structure_turn (session_id, branch_id, user_turn_number) finds just the turn's
 * rows; the unary `+` keeps SQLite from preferring idx_structure_branch_seq to avoid sorting, which would walk the
 * whole branch to find one turn. Sorting one turn's rows is cheap.
 */
export function turnItemsSql(messagesTable: string): string {
  return `${SELECT_ITEMS}
    FROM message_structure s LEFT JOIN ${quoteIdentifier(messagesTable)} m ON m.id = s.message_id AND m.session_id = s.session_id
    WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number = ?
    ORDER BY +s.sequence_number`;
}

function structureEntry(r: StructureItemRecord, messagesTable: string): ItemEntry {
  const meta = {
    structureId: Number(r.structure_id),
    messageId: Number(r.message_id),
    sequenceNumber: Number(r.sequence_number),
    type: textOrNull(r.message_type),
    toolName: textOrNull(r.tool_name),
    userTurnNumber: numberOrNull(r.user_turn_number),
    branchTurnNumber: numberOrNull(r.branch_turn_number),
    createdAt: textOrNull(r.created_at),
  };
  if (r.found_id === null || r.found_id === undefined) {
    return {
      ...meta,
      corrupt: true,
      raw: null,
      error: `The structure row references message ${meta.messageId}, which is not in ${messagesTable} for this session.`,
    };
  }
  const decoded = decodeMessageData(r.message_data);
  return decoded.ok ? { ...meta, corrupt: false, item: decoded.value } : { ...meta, corrupt: true, raw: decoded.raw, error: decoded.error };
}

/** See `SessionDatabase.getItemsPage`. */
export function readItemsPage(ctx: QueryContext, sessionId: string, branchId: string, request: ItemPageRequest): ItemPage {
  const limit = checkLimit(request.limit);
  const after = checkCursor('afterSequence', request.afterSequence);
  if (!isStructuredSession(ctx, sessionId)) {
    return branchId === PLAIN_BRANCH_ID ? plainItemsPage(ctx, sessionId, after, limit) : { items: [], nextAfterSequence: null };
  }
  const messages = ctx.tables.messages;
  const page = keysetPage(
    ctx.stmt(itemPageSql(messages, after !== null)),
    [sessionId, branchId],
    after,
    limit,
    (r: StructureItemRecord) => structureEntry(r, messages),
    (e) => e.sequenceNumber,
  );
  return { items: page.entries, nextAfterSequence: page.next };
}

/** See `SessionDatabase.getTurnItems`. */
export function readTurnItems(ctx: QueryContext, sessionId: string, branchId: string, turn: number): ItemEntry[] {
  if (!isStructuredSession(ctx, sessionId)) {
    return branchId === PLAIN_BRANCH_ID ? plainTurnItems(ctx, sessionId, turn) : [];
  }
  const messages = ctx.tables.messages;
  return ctx
    .stmt(turnItemsSql(messages))
    .all<StructureItemRecord>(sessionId, branchId, turn)
    .map((r) => structureEntry(r, messages));
}
