/**
 * A branch's items a page at a time, with their structure metadata, reporting rows that cannot be decoded instead
 * of skipping them (the session API's `getItems` skips them, as Python does; an inspector has to show them).
 */
import type { ItemEntry, ItemPage, ItemPageRequest } from './inspectorTypes';
import { PLAIN_BRANCH_ID, plainItemsPage, plainTurnItems } from './plainSessions';
import { isStructuredSession, type QueryContext } from './queryContext';
import { checkCursor, checkLimit, decodeMessageData, keysetPage, numberOrNull, structureRowMeta, textOrNull } from './rowDecoding';
import { quoteIdentifier } from './tableDiscovery';
import { toolNameOf } from '../format/itemClassification';

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

/**
 * An item's time: its message row's `created_at` when the messages table has one. Branching copies structure rows with
 * a new `created_at` (the copy time) but keeps their `message_id`, so the message row holds when the item was first
 * stored, on every branch that shares it; the structure row's time is the fallback for messages tables without it.
 */
export function itemTimeSql(messagesHaveTimes: boolean): string {
  return messagesHaveTimes ? 'COALESCE(m.created_at, s.created_at)' : 's.created_at';
}

const selectItems = (messagesHaveTimes: boolean): string => `SELECT s.id AS structure_id, s.message_id, s.sequence_number,
    s.message_type, s.tool_name, s.user_turn_number, s.branch_turn_number, ${itemTimeSql(messagesHaveTimes)} AS created_at,
    m.id AS found_id, m.message_data`;

/**
 * The SQL of one item page. The WHERE and ORDER BY match idx_structure_branch_seq (session_id, branch_id,
 * sequence_number), so SQLite seeks to the cursor and stops after LIMIT rows: a page costs the same on a branch of
 * ten items or of a million. The join also requires the message's session to match, as `getItems` does, so a row
 * pointing into another session shows as missing rather than as someone else's item.
 */
export function itemPageSql(messagesTable: string, withCursor: boolean, messagesHaveTimes = false): string {
  return `${selectItems(messagesHaveTimes)}
    FROM message_structure s LEFT JOIN ${quoteIdentifier(messagesTable)} m ON m.id = s.message_id AND m.session_id = s.session_id
    WHERE s.session_id = ? AND s.branch_id = ?${withCursor ? ' AND s.sequence_number > ?' : ''}
    ORDER BY s.sequence_number LIMIT ?`;
}

/**
 * The SQL of one turn's items. idx_structure_turn (session_id, branch_id, user_turn_number) finds just the turn's
 * rows; the unary `+` keeps SQLite from preferring idx_structure_branch_seq to avoid sorting, which would walk the
 * whole branch to find one turn. Sorting one turn's rows is cheap.
 */
export function turnItemsSql(messagesTable: string, messagesHaveTimes = false): string {
  return `${selectItems(messagesHaveTimes)}
    FROM message_structure s LEFT JOIN ${quoteIdentifier(messagesTable)} m ON m.id = s.message_id AND m.session_id = s.session_id
    WHERE s.session_id = ? AND s.branch_id = ? AND s.user_turn_number = ?
    ORDER BY +s.sequence_number`;
}

function structureEntry(r: StructureItemRecord, messagesTable: string): ItemEntry {
  const meta = {
    ...structureRowMeta(r),
    type: textOrNull(r.message_type),
    toolName: textOrNull(r.tool_name),
    userTurnNumber: numberOrNull(r.user_turn_number),
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

/**
 * Tool outputs in the Responses shape carry no name (Python's never did; ours no longer do), so their structure row has
 * no `tool_name`. Give each the name of the call with the same `call_id`: from `entries` when the call is among them
 * (a turn holds both), else from the branch before the output (`lookup`, one backward index walk that stops at the
 * call, usually the row just before).
 */
function nameOutputsByCall(entries: ItemEntry[], lookup: (callId: string, beforeSequence: number) => string | undefined): ItemEntry[] {
  const callNames = new Map<string, string>();
  return entries.map((e) => {
    if (e.corrupt) return e;
    const callId = callIdOf(e.item);
    if (callId === undefined) return e;
    if (!isOutputType(e.type)) {
      if (e.toolName !== null) callNames.set(callId, e.toolName);
      return e;
    }
    if (e.toolName !== null) return e;
    const name = callNames.get(callId) ?? lookup(callId, e.sequenceNumber);
    return name === undefined ? e : { ...e, toolName: name };
  });
}

/**
 * See `nameOutputsByCall`: the named call with `callId` before `beforeSequence` on a structured branch. The JSON test
 * is a CASE: SQLite does not promise to skip an AND's right side, so a malformed row would fail the statement.
 */
function structuredCallName(
  ctx: QueryContext,
  sessionId: string,
  branchId: string,
): (callId: string, before: number) => string | undefined {
  return (callId, before) =>
    ctx
      .stmt(
        `SELECT s.tool_name AS name FROM message_structure s
         JOIN ${quoteIdentifier(ctx.tables.messages)} m ON m.id = s.message_id AND m.session_id = s.session_id
         WHERE s.session_id = ? AND s.branch_id = ? AND s.sequence_number < ? AND s.tool_name IS NOT NULL
           AND CASE WHEN json_valid(m.message_data) THEN json_extract(m.message_data, '$.call_id') = ? ELSE 0 END
         ORDER BY s.sequence_number DESC LIMIT 1`,
      )
      .get<{ name: string }>(sessionId, branchId, before, callId)?.name;
}

/** See `nameOutputsByCall`: the same for a plain session, whose sequence is the message id. */
function plainCallName(ctx: QueryContext, sessionId: string): (callId: string, before: number) => string | undefined {
  return (callId, before) => {
    const row = ctx
      .stmt(
        `SELECT message_data FROM ${quoteIdentifier(ctx.tables.messages)}
         WHERE session_id = ? AND id < ?
           AND CASE WHEN json_valid(message_data)
             THEN json_extract(message_data, '$.call_id') = ? AND json_extract(message_data, '$.name') IS NOT NULL ELSE 0 END
         ORDER BY id DESC LIMIT 1`,
      )
      .get<{ message_data: string }>(sessionId, before, callId);
    const decoded = row === undefined ? undefined : decodeMessageData(row.message_data);
    return decoded?.ok ? (toolNameOf(decoded.value) ?? undefined) : undefined;
  };
}

function isOutputType(type: string | null): boolean {
  return type !== null && (type.endsWith('_output') || type.endsWith('_result'));
}

function callIdOf(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const id = (item as { call_id?: unknown; callId?: unknown }).call_id ?? (item as { callId?: unknown }).callId;
  return typeof id === 'string' ? id : undefined;
}

/** See `SessionDatabase.getItemsPage`. */
export function readItemsPage(ctx: QueryContext, sessionId: string, branchId: string, request: ItemPageRequest): ItemPage {
  const limit = checkLimit(request.limit);
  const after = checkCursor('afterSequence', request.afterSequence);
  if (!isStructuredSession(ctx, sessionId)) {
    if (branchId !== PLAIN_BRANCH_ID) return { items: [], nextAfterSequence: null };
    const plain = plainItemsPage(ctx, sessionId, after, limit);
    return { ...plain, items: nameOutputsByCall(plain.items, plainCallName(ctx, sessionId)) };
  }
  const messages = ctx.tables.messages;
  const page = keysetPage(
    ctx.stmt(itemPageSql(messages, after !== null, ctx.tables.messagesHasCreatedAt)),
    [sessionId, branchId],
    after,
    limit,
    (r: StructureItemRecord) => structureEntry(r, messages),
    (e) => e.sequenceNumber,
  );
  return { items: nameOutputsByCall(page.entries, structuredCallName(ctx, sessionId, branchId)), nextAfterSequence: page.next };
}

/** See `SessionDatabase.getTurnItems`. */
export function readTurnItems(ctx: QueryContext, sessionId: string, branchId: string, turn: number): ItemEntry[] {
  if (!isStructuredSession(ctx, sessionId)) {
    return branchId === PLAIN_BRANCH_ID ? nameOutputsByCall(plainTurnItems(ctx, sessionId, turn), plainCallName(ctx, sessionId)) : [];
  }
  const messages = ctx.tables.messages;
  return nameOutputsByCall(
    ctx
      .stmt(turnItemsSql(messages, ctx.tables.messagesHasCreatedAt))
      .all<StructureItemRecord>(sessionId, branchId, turn)
      .map((r) => structureEntry(r, messages)),
    structuredCallName(ctx, sessionId, branchId),
  );
}
