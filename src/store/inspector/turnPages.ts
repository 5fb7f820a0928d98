/** A branch's user turns a page at a time, with previews and each turn's token total. */
import { contentPreview } from '../format/conversationText';
import type { TurnEntry, TurnPage, TurnPageRequest } from './inspectorTypes';
import { PLAIN_BRANCH_ID, plainTurnsPage } from './plainSessions';
import { isStructuredSession, type QueryContext } from './queryContext';
import { checkCursor, checkLimit, decodeMessageData, keysetPage, numberOrNull, structureRowMeta, userContentOf } from './rowDecoding';
import { itemTimeSql } from './itemPages';
import { quoteIdentifier } from './tableDiscovery';

interface TurnRecord {
  structure_id: number;
  message_id: number;
  sequence_number: number;
  user_turn_number: unknown;
  branch_turn_number: unknown;
  created_at: unknown;
  found_id: unknown;
  message_data: unknown;
  total_tokens: unknown;
}

/**
 * The SQL of one turn page. Keyed by `user_turn_number` because idx_structure_turn (session_id, branch_id,
 * user_turn_number) covers it, so a page seeks to the cursor instead of sorting the branch; `branch_turn_number`
 * has no index (it equals `user_turn_number` in files the SDKs write, spec §12 e 8). Each user row opens its own
 * turn, so turn numbers of user rows are unique per branch and work as a cursor.
 */
export function turnPageSql(
  messagesTable: string,
  withUsage: boolean,
  withCursor: boolean,
  backward = false,
  messagesHaveTimes = false,
): string {
  const usage = withUsage
    ? `LEFT JOIN turn_usage u ON u.session_id = s.session_id AND u.branch_id = s.branch_id AND u.user_turn_number = s.user_turn_number`
    : '';
  return `SELECT s.id AS structure_id, s.message_id, s.sequence_number, s.user_turn_number, s.branch_turn_number,
      ${itemTimeSql(messagesHaveTimes)} AS created_at, m.id AS found_id, m.message_data, ${withUsage ? 'u.total_tokens' : 'NULL'} AS total_tokens
    FROM message_structure s
    LEFT JOIN ${quoteIdentifier(messagesTable)} m ON m.id = s.message_id AND m.session_id = s.session_id
    ${usage}
    WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = 'user' AND s.user_turn_number IS NOT NULL${withCursor ? ` AND s.user_turn_number ${backward ? '<' : '>'} ?` : ''}
    ORDER BY s.user_turn_number${backward ? ' DESC' : ''}, s.sequence_number${backward ? ' DESC' : ''} LIMIT ?`;
}

function turnEntry(r: TurnRecord, messagesTable: string): TurnEntry {
  const base = { turn: Number(r.user_turn_number), ...structureRowMeta(r), totalTokens: numberOrNull(r.total_tokens) };
  if (r.found_id === null || r.found_id === undefined) {
    return { ...base, preview: null, error: `The user message ${base.messageId} is not in ${messagesTable} for this session.` };
  }
  const decoded = decodeMessageData(r.message_data);
  if (!decoded.ok) return { ...base, preview: null, error: decoded.error };
  // The same preview getConversationTurns gives (spec §10.2): content cut to 100 code points.
  return { ...base, preview: contentPreview(userContentOf(decoded.value), true), error: null };
}

/** See `SessionDatabase.getTurnsPage`. */
export function readTurnsPage(ctx: QueryContext, sessionId: string, branchId: string, request: TurnPageRequest): TurnPage {
  const limit = checkLimit(request.limit);
  const after = checkCursor('afterTurn', request.afterTurn);
  if (!isStructuredSession(ctx, sessionId)) {
    return branchId === PLAIN_BRANCH_ID ? plainTurnsPage(ctx, sessionId, after, limit) : { turns: [], nextAfterTurn: null };
  }
  const messages = ctx.tables.messages;
  const page = keysetPage(
    ctx.stmt(turnPageSql(messages, ctx.tables.turnUsage, after !== null, false, ctx.tables.messagesHasCreatedAt)),
    [sessionId, branchId],
    after,
    limit,
    (r: TurnRecord) => turnEntry(r, messages),
    (e) => e.turn,
  );
  return { turns: page.entries, nextAfterTurn: page.next };
}

/** A page of turns read backwards from a cursor (or from the end), in ascending order. */
export interface TurnPageBefore {
  turns: TurnEntry[];
  /** Pass as `beforeTurn` for the page before this one; null when this page starts at the branch's first turn. */
  previousBeforeTurn: number | null;
}

/**
 * See `SessionDatabase.getTurnsPageBefore`: the mirror of `readTurnsPage`, the same SQL walking idx_structure_turn
 * backwards (`ORDER BY user_turn_number DESC`), so the last page of a branch is one seek however long the branch is.
 */
export function readTurnsPageBefore(
  ctx: QueryContext,
  sessionId: string,
  branchId: string,
  request: { beforeTurn?: number | null; limit: number },
): TurnPageBefore {
  const limit = checkLimit(request.limit);
  const before = checkCursor('beforeTurn', request.beforeTurn);
  if (!isStructuredSession(ctx, sessionId)) {
    if (branchId !== PLAIN_BRANCH_ID) return { turns: [], previousBeforeTurn: null };
    // A plain session has no turn index: its pages are scans anyway (plainSessions.ts), so read the turns forward.
    const all = plainTurnsPage(ctx, sessionId, null, Number.MAX_SAFE_INTEGER).turns.filter((t) => before === null || t.turn < before);
    const turns = all.slice(Math.max(0, all.length - limit));
    return { turns, previousBeforeTurn: all.length > limit && turns[0] ? turns[0].turn : null };
  }
  const messages = ctx.tables.messages;
  const page = keysetPage(
    ctx.stmt(turnPageSql(messages, ctx.tables.turnUsage, before !== null, true, ctx.tables.messagesHasCreatedAt)),
    [sessionId, branchId],
    before,
    limit,
    (r: TurnRecord) => turnEntry(r, messages),
    (e) => e.turn,
  );
  return { turns: page.entries.reverse(), previousBeforeTurn: page.next };
}
