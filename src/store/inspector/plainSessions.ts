/**
 * Reading sessions that have no `message_structure` rows: files written by a plain `SQLiteSession` (Python's or
 * ours), and sessions a plain session wrote into an advanced file. They are shown as one branch, `main`, whose items
 * are the messages table's rows in id order; the message id stands in for the sequence number.
 *
 * The file records no turns for them, so item entries carry null turn numbers, while the turn calls number turns as
 * `AdvancedSQLiteSession` would (spec §7: each user item opens the next turn, items before the first are turn 0).
 * Deriving turns means decoding every row up to the requested turn, which is fine for the small files plain
 * sessions produce; item pages stay one index range read.
 */
import { TOOL_CALL_MESSAGE_TYPES, messageTypeOf, toolNameOf } from '../format/itemClassification';
import { contentPreview } from '../format/conversationText';
import type { BranchNode, ItemEntry, ItemPage, TurnEntry, TurnPage } from './inspectorTypes';
import type { TurnSummary } from './usageTables';
import type { QueryContext } from './queryContext';
import { decodeMessageData, keysetPage, textOrNull, userContentOf } from './rowDecoding';
import { quoteIdentifier } from './tableDiscovery';

/** The one branch a plain session has. */
export const PLAIN_BRANCH_ID = 'main';

interface MessageRecord {
  id: number;
  message_data: unknown;
  created_at: unknown;
}

function messagesSql(ctx: QueryContext, options: { after: boolean; limit: boolean }): string {
  const t = ctx.tables;
  const createdAt = t.messagesHasCreatedAt ? 'created_at' : 'NULL';
  // (session_id, id) is the messages table's index, so this is one range read in id order.
  return `SELECT id, message_data, ${createdAt} AS created_at FROM ${quoteIdentifier(t.messages)}
    WHERE session_id = ?${options.after ? ' AND id > ?' : ''} ORDER BY id${options.limit ? ' LIMIT ?' : ''}`;
}

function plainEntry(r: MessageRecord): ItemEntry {
  const meta = {
    structureId: null,
    messageId: Number(r.id),
    sequenceNumber: Number(r.id),
    userTurnNumber: null,
    branchTurnNumber: null,
    createdAt: textOrNull(r.created_at),
  };
  const decoded = decodeMessageData(r.message_data);
  if (!decoded.ok) return { ...meta, type: null, toolName: null, corrupt: true, raw: decoded.raw, error: decoded.error };
  // Classified as AdvancedSQLiteSession would classify the item when storing it (spec §6).
  return { ...meta, type: messageTypeOf(decoded.value), toolName: toolNameOf(decoded.value), corrupt: false, item: decoded.value };
}

/** A page of a plain session's items. */
export function plainItemsPage(ctx: QueryContext, sessionId: string, after: number | null, limit: number): ItemPage {
  const sql = messagesSql(ctx, { after: after !== null, limit: true });
  const page = keysetPage(
    ctx.stmt(sql),
    [sessionId],
    after,
    limit,
    (r: MessageRecord) => plainEntry(r),
    (e) => e.sequenceNumber,
  );
  return { items: page.entries, nextAfterSequence: page.next };
}

/** A plain session's items in order, each with its derived turn. Stops reading when the caller stops. */
function* scanWithTurns(ctx: QueryContext, sessionId: string): Generator<{ entry: ItemEntry; turn: number; isUser: boolean }> {
  let turn = 0;
  for (const r of ctx.stmt(messagesSql(ctx, { after: false, limit: false })).iterate<MessageRecord>(sessionId)) {
    const entry = plainEntry(r);
    const isUser = entry.type === 'user';
    if (isUser) turn++;
    yield { entry, turn, isUser };
  }
}

/** The items of derived turn `turn` (0 = before the first user item). */
export function plainTurnItems(ctx: QueryContext, sessionId: string, turn: number): ItemEntry[] {
  const out: ItemEntry[] = [];
  for (const r of scanWithTurns(ctx, sessionId)) {
    if (r.turn > turn) break;
    if (r.turn === turn) out.push(r.entry);
  }
  return out;
}

/** Item counts and tool names of a plain session's derived turns `fromTurn`..`toTurn` (turn 0 included when asked). */
export function plainTurnSummaries(ctx: QueryContext, sessionId: string, fromTurn: number, toTurn: number): TurnSummary[] {
  const out = new Map<number, { items: number; tools: Set<string> }>();
  for (const r of scanWithTurns(ctx, sessionId)) {
    if (r.turn > toTurn) break;
    if (r.turn < fromTurn) continue;
    const summary = out.get(r.turn) ?? { items: 0, tools: new Set<string>() };
    summary.items++;
    if (r.entry.toolName !== null && r.entry.type !== null && TOOL_CALL_MESSAGE_TYPES.includes(r.entry.type))
      summary.tools.add(r.entry.toolName);
    out.set(r.turn, summary);
  }
  return [...out].map(([turn, s]) => ({ turn, itemCount: s.items, tools: [...s.tools].sort() }));
}

/** A page of a plain session's user turns (no usage: plain files have no turn_usage rows for them). */
export function plainTurnsPage(ctx: QueryContext, sessionId: string, afterTurn: number | null, limit: number): TurnPage {
  const turns: TurnEntry[] = [];
  let more = false;
  for (const r of scanWithTurns(ctx, sessionId)) {
    if (!r.isUser || (afterTurn !== null && r.turn <= afterTurn)) continue;
    if (turns.length === limit) {
      more = true;
      break;
    }
    const e = r.entry;
    turns.push({
      turn: r.turn,
      branchTurnNumber: null,
      structureId: null,
      messageId: e.messageId,
      sequenceNumber: e.sequenceNumber,
      createdAt: e.createdAt,
      // isUser implies the row decoded.
      preview: e.corrupt ? null : contentPreview(userContentOf(e.item), true),
      error: null,
      totalTokens: null,
    });
  }
  const last = turns[turns.length - 1];
  return { turns, nextAfterTurn: more && last ? last.turn : null };
}

/** The single `main` node of a plain session, or null when it has no messages. */
export function plainBranchNode(ctx: QueryContext, sessionId: string): BranchNode | null {
  let messageCount = 0;
  let userTurns = 0;
  let createdAt: string | null = null;
  for (const r of scanWithTurns(ctx, sessionId)) {
    messageCount++;
    if (r.isUser) userTurns++;
    if (r.entry.createdAt !== null && (createdAt === null || r.entry.createdAt < createdAt)) createdAt = r.entry.createdAt;
  }
  if (messageCount === 0) return null;
  return {
    branchId: PLAIN_BRANCH_ID,
    messageCount,
    userTurns,
    createdAt,
    parentBranchId: null,
    forkTurn: null,
    sharedItemCount: 0,
  };
}
