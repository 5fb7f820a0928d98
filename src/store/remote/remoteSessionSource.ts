/**
 * A server-backed store read through the inspector's interface (`SessionReader`), so the tree and the conversation
 * view show it like a plain `SQLiteSession` file: one branch, `main`, whose turns are derived from the items (each
 * user item opens the next turn, spec §7), no usage rows.
 *
 * The stores record no turns, so turn numbers come from a per-session **turn index**: the positions where turns
 * start, built by reading the session's rows in order, a batch at a time, only as far as the request needs (the
 * first page of turns reads the first batch). The index keeps one small record per turn, never the items, and is
 * dropped when the session's change token moves (`pollChanges`).
 */
import { contentPreview } from '../format/conversationText';
import { InvalidArgumentError } from '../errors';
import type {
  BranchNode,
  ItemEntry,
  ItemPage,
  ItemPageRequest,
  SessionSummary,
  SessionTables,
  TurnEntry,
  TurnPage,
  TurnPageRequest,
} from '../inspector/inspectorTypes';
import type { ToolTotal, TurnSummary, TurnsWithoutUsage, UsagePage, UsageRow, UsageTab } from '../inspector/usageTables';
import type { TurnPageBefore } from '../inspector/turnPages';
import type { SessionReader } from '../inspector/sessionReader';
import { decodeMessageData, userContentOf } from '../inspector/rowDecoding';
import { TOOL_CALL_MESSAGE_TYPES, messageTypeOf, toolNameOf } from '../format/itemClassification';
import type { RemoteRow, RemoteSessionListRequest, RemoteSessionSummary, RemoteStoreBrowser } from './remoteStore';
import { PostgresStoreBrowser } from './postgresBrowser';
import { PostgresSession } from './postgresSession';
import { RedisStoreBrowser } from './redisBrowser';
import { RedisSession } from './redisSession';

/** The one branch a server-backed session has. */
export const REMOTE_BRANCH_ID = 'main';
/** Rows read per round trip while building a turn index. */
const INDEX_BATCH = 1000;
/** Sessions whose change tokens are polled (the ones the user looked at most recently). */
const WATCHED_SESSIONS = 32;
const TOOL_TYPES = new Set(TOOL_CALL_MESSAGE_TYPES);

type RowMark = { cursor: string; position: number };

interface IndexedTurn {
  entry: TurnEntry;
  /** Position of the turn's first row (its user item). */
  start: number;
  /** The row before it (where `readRowsAfter` starts the turn), or null for a turn that starts the session. */
  before: RowMark | null;
  tools: Set<string>;
  toolCalls: Map<string, number>;
}

interface TurnIndex {
  /** Rows before the first user item (turn 0), and the tools they called. */
  preamble: number;
  preambleTools: Set<string>;
  turns: IndexedTurn[];
  /** Rows read so far (positions 1..scanned). */
  scanned: number;
  /** The last row read, where the next batch starts. */
  last: RowMark | null;
  complete: boolean;
}

/** A row as an inspector item entry: the position is its sequence number (and its message id on Redis). */
export function remoteEntry(r: RemoteRow): ItemEntry {
  const meta = {
    structureId: null,
    messageId: r.id ?? r.position,
    sequenceNumber: r.position,
    userTurnNumber: null,
    branchTurnNumber: null,
    createdAt: r.createdAt,
  };
  if (r.text === null) {
    const error = r.textIsNull ? 'message_data is NULL: there is no stored text' : 'the stored bytes are not UTF-8 text';
    return { ...meta, type: null, toolName: null, corrupt: true, raw: null, error };
  }
  const decoded = decodeMessageData(r.text);
  if (!decoded.ok) return { ...meta, type: null, toolName: null, corrupt: true, raw: decoded.raw, error: decoded.error };
  return { ...meta, type: messageTypeOf(decoded.value), toolName: toolNameOf(decoded.value), corrupt: false, item: decoded.value };
}

const NO_TABLES: SessionTables = {
  sessions: null,
  messages: '',
  messageStructure: false,
  turnUsage: false,
  branchReservations: false,
  sessionClearGenerations: false,
  warnings: [],
};

export class RemoteSessionSource implements SessionReader {
  private readonly indexes = new Map<string, TurnIndex>();
  private readonly building = new Map<string, Promise<void>>();
  /** Session id → last token seen, most recently used last. */
  private readonly watched = new Map<string, string>();
  private storeToken: string | undefined;
  private closed = false;

  constructor(readonly browser: RemoteStoreBrowser) {}

  get kind(): RemoteStoreBrowser['kind'] {
    return this.browser.kind;
  }

  get label(): string {
    return this.browser.label;
  }

  get tables(): SessionTables {
    const b = this.browser;
    if (b instanceof PostgresStoreBrowser) return { ...NO_TABLES, sessions: b.tables.sessions, messages: b.tables.messages };
    return { ...NO_TABLES, messages: 'messages list' };
  }

  /** A page of sessions as the tree shows them (see `RemoteStoreBrowser.listSessions` for the order). */
  async listSessionsPage(request: RemoteSessionListRequest): Promise<{ sessions: SessionSummary[]; nextCursor: string | null }> {
    // The token first, then the read: a write between the two shows up at the next poll instead of being missed.
    this.storeToken ??= await this.browser.storeToken();
    const page = await this.browser.listSessions(request);
    return { sessions: page.sessions.map(sessionSummary), nextCursor: page.nextCursor };
  }

  /** The first page only (pickers); the tree pages with `listSessionsPage`. */
  async listSessions(): Promise<SessionSummary[]> {
    return (await this.listSessionsPage({ limit: 200 })).sessions;
  }

  async countSessions(prefix?: string): Promise<number | null> {
    return this.browser.countSessions(prefix);
  }

  async getSession(sessionId: string): Promise<SessionSummary | null> {
    const s = await this.browser.getSession(sessionId);
    return s ? sessionSummary(s) : null;
  }

  /**
   * The single `main` branch, or none for a missing or empty session. The item count is the store's count; the turn
   * count is exact once the turn index covers the session, and otherwise what the first batch showed, marked
   * `userTurnsAtLeast` (counting every turn of a 100,000-item session would mean reading all of it).
   */
  async getBranchTree(sessionId: string): Promise<BranchNode[]> {
    await this.watch(sessionId);
    const [summary, index] = await Promise.all([this.browser.getSession(sessionId), this.indexTo(sessionId, 0)]);
    const count = index.complete ? index.scanned : (summary?.itemCount ?? index.scanned);
    if (count === 0) return [];
    return [
      {
        branchId: REMOTE_BRANCH_ID,
        messageCount: count,
        userTurns: index.turns.length,
        ...(index.complete ? {} : { userTurnsAtLeast: true }),
        createdAt: index.turns[0]?.entry.createdAt ?? null,
        parentBranchId: null,
        forkTurn: null,
        sharedItemCount: 0,
      },
    ];
  }

  async getItemsPage(sessionId: string, branchId: string, request: ItemPageRequest): Promise<ItemPage> {
    this.checkBranch(branchId);
    await this.watch(sessionId);
    const after = request.afterSequence ?? 0;
    const rows = await this.browser.readRows(sessionId, after, request.limit + 1);
    const more = rows.length > request.limit;
    const items = rows.slice(0, request.limit).map(remoteEntry);
    return { items, nextAfterSequence: more ? after + request.limit : null };
  }

  async getTurnItems(sessionId: string, branchId: string, turn: number): Promise<ItemEntry[]> {
    this.checkBranch(branchId);
    if (!Number.isInteger(turn)) throw new InvalidArgumentError(`turn must be an integer, got ${String(turn)}`);
    await this.watch(sessionId);
    const index = await this.indexTo(sessionId, turn + 1);
    const start = turn === 0 ? 1 : index.turns[turn - 1]?.start;
    if (start === undefined || (turn === 0 && index.preamble === 0)) return [];
    const next = index.turns[turn]?.start;
    const end = next !== undefined ? next - 1 : index.scanned;
    const entries: ItemEntry[] = [];
    let after: RowMark | null = turn === 0 ? null : (index.turns[turn - 1]?.before ?? null);
    while (entries.length < end - start + 1) {
      const rows = await this.browser.readRowsAfter(sessionId, after, Math.min(INDEX_BATCH, end - start + 1 - entries.length));
      if (rows.length === 0) break;
      entries.push(...rows.map(remoteEntry));
      const last = rows[rows.length - 1] as RemoteRow;
      after = { cursor: last.cursor, position: last.position };
    }
    return entries;
  }

  async getTurnsPage(sessionId: string, branchId: string, request: TurnPageRequest): Promise<TurnPage> {
    this.checkBranch(branchId);
    await this.watch(sessionId);
    const after = request.afterTurn ?? 0;
    const index = await this.indexTo(sessionId, after + request.limit + 1);
    const turns = index.turns.slice(after, after + request.limit).map((t) => t.entry);
    const last = turns[turns.length - 1];
    return { turns, nextAfterTurn: index.turns.length > after + request.limit && last ? last.turn : null };
  }

  async getTurnsPageBefore(
    sessionId: string,
    branchId: string,
    request: { beforeTurn?: number | null; limit: number },
  ): Promise<TurnPageBefore> {
    this.checkBranch(branchId);
    await this.watch(sessionId);
    const before = request.beforeTurn ?? null;
    const index = await this.indexTo(sessionId, before === null ? Infinity : before);
    const end = before === null ? index.turns.length : Math.min(before - 1, index.turns.length);
    const start = Math.max(0, end - request.limit);
    const turns = index.turns.slice(start, end).map((t) => t.entry);
    return { turns, previousBeforeTurn: start > 0 ? (turns[0]?.turn ?? null) : null };
  }

  async getTurnSummaries(sessionId: string, branchId: string, fromTurn: number, toTurn: number): Promise<TurnSummary[]> {
    this.checkBranch(branchId);
    const index = await this.indexTo(sessionId, toTurn + 1);
    const out: TurnSummary[] = [];
    // Turn 0 (rows before the first user item) is listed when asked for and not empty, as the SQLite reader does.
    if (fromTurn <= 0 && toTurn >= 0 && index.preamble > 0)
      out.push({ turn: 0, itemCount: index.preamble, tools: [...index.preambleTools].sort() });
    for (let t = Math.max(1, fromTurn); t <= toTurn && t <= index.turns.length; t++) {
      const turn = index.turns[t - 1] as IndexedTurn;
      const next = index.turns[t]?.start ?? index.scanned + 1;
      out.push({ turn: t, itemCount: next - turn.start, tools: [...turn.tools] });
    }
    return out;
  }

  async usedBranchIds(): Promise<string[]> {
    return [REMOTE_BRANCH_ID];
  }

  /** Server-backed stores record no usage. */
  async getUsagePage(): Promise<UsagePage> {
    return {
      rows: [],
      rowCount: 0,
      totals: { requests: null, inputTokens: null, outputTokens: null, totalTokens: null, cachedTokens: null, reasoningTokens: null },
    };
  }

  async getTurnUsage(): Promise<UsageRow[]> {
    return [];
  }

  async getTurnsWithoutUsage(): Promise<TurnsWithoutUsage> {
    return { turns: [], count: 0 };
  }

  async getUsageTab(): Promise<UsageTab> {
    return { page: await this.getUsagePage(), offset: 0, missing: await this.getTurnsWithoutUsage() };
  }

  /** Tool calls per tool over the whole session (from the complete turn index). */
  async getToolTotals(sessionId: string): Promise<ToolTotal[]> {
    const index = await this.indexTo(sessionId, Infinity);
    const totals = new Map<string, ToolTotal>();
    for (const t of index.turns) {
      for (const [name, calls] of t.toolCalls) {
        const total = totals.get(name) ?? { toolName: name, calls: 0, turns: [], turnCount: 0 };
        total.calls += calls;
        total.turnCount++;
        if (total.turns.length < 20) total.turns.push(t.entry.turn);
        totals.set(name, total);
      }
    }
    // By name, as the SQLite inspector lists them.
    return [...totals.values()].sort((a, b) => (a.toolName < b.toolName ? -1 : a.toolName > b.toolName ? 1 : 0));
  }

  /**
   * Polls the change tokens (the store's, and each watched session's): one cheap query each, no scan. Returns the
   * sessions that changed (their turn indexes are dropped) and whether the session list may have changed.
   */
  async pollChanges(): Promise<{ list: boolean; sessions: string[] }> {
    const store = await this.browser.storeToken();
    const list = this.storeToken !== undefined && store !== this.storeToken;
    this.storeToken = store;
    const sessions: string[] = [];
    for (const [sessionId, seen] of [...this.watched]) {
      const token = await this.browser.sessionToken(sessionId);
      if (token !== seen) {
        sessions.push(sessionId);
        this.forget(sessionId);
      }
      if (this.watched.has(sessionId)) this.watched.set(sessionId, token);
    }
    return { list: list || sessions.length > 0, sessions };
  }

  /**
   * A `Session` on the same connection (pool or client) for one write; it leaves the connection open. Whether the
   * write is allowed is the caller's decision (the extension's per-store toggle); a PostgreSQL store opened
   * read-only also refuses it on the server.
   */
  openSession(sessionId: string): PostgresSession | RedisSession {
    const b = this.browser;
    if (b instanceof PostgresStoreBrowser) {
      return new PostgresSession({ sessionId, pool: b.pool, sessionsTable: b.tables.sessions, messagesTable: b.tables.messages });
    }
    if (b instanceof RedisStoreBrowser) return new RedisSession({ sessionId, client: b.client, keyPrefix: b.keyPrefix });
    throw new InvalidArgumentError('This store cannot open sessions for writing');
  }

  /** Drops what is known about a session (after a write through the extension, or a change). */
  forget(sessionId: string): void {
    this.indexes.delete(sessionId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.indexes.clear();
    await this.browser.close();
  }

  private checkBranch(branchId: string): void {
    if (branchId !== REMOTE_BRANCH_ID)
      throw new InvalidArgumentError(`Branch '${branchId}' does not exist: sessions in PostgreSQL and Redis have one branch, main`);
  }

  /**
   * Marks a session as looked at (its token is polled), reading its token before the first read of its rows, so a
   * write that lands between the token and the read is reported by the next poll rather than missed.
   */
  private async watch(sessionId: string): Promise<void> {
    let seen = this.watched.get(sessionId);
    if (seen === undefined) seen = await this.browser.sessionToken(sessionId);
    this.watched.delete(sessionId);
    this.watched.set(sessionId, seen);
    while (this.watched.size > WATCHED_SESSIONS) {
      const oldest = this.watched.keys().next().value as string;
      this.watched.delete(oldest);
      this.indexes.delete(oldest);
    }
  }

  /** The session's index, extended until it knows turn `turn`'s end (or the session's end). */
  private async indexTo(sessionId: string, turn: number): Promise<TurnIndex> {
    for (;;) {
      const index = this.indexes.get(sessionId) ?? {
        preamble: 0,
        preambleTools: new Set<string>(),
        turns: [],
        scanned: 0,
        last: null,
        complete: false,
      };
      this.indexes.set(sessionId, index);
      // `turn + 1` turns known means turn `turn` has ended (the next one started).
      if (index.complete || index.turns.length > turn) return index;
      const pending = this.building.get(sessionId);
      if (pending) {
        await pending;
        continue;
      }
      const step = this.extend(sessionId, index).finally(() => this.building.delete(sessionId));
      this.building.set(sessionId, step);
      await step;
    }
  }

  /** Reads the next batch of rows into the index. */
  private async extend(sessionId: string, index: TurnIndex): Promise<void> {
    const rows = await this.browser.readRowsAfter(sessionId, index.last, INDEX_BATCH);
    for (const r of rows) {
      const entry = remoteEntry(r);
      const isUser = entry.type === 'user';
      const before = index.last;
      index.last = { cursor: r.cursor, position: r.position };
      if (isUser && !entry.corrupt) {
        index.turns.push({
          start: r.position,
          before,
          tools: new Set(),
          toolCalls: new Map(),
          entry: {
            turn: index.turns.length + 1,
            branchTurnNumber: null,
            structureId: null,
            messageId: entry.messageId,
            sequenceNumber: entry.sequenceNumber,
            createdAt: entry.createdAt,
            preview: contentPreview(userContentOf(entry.item), true),
            error: null,
            totalTokens: null,
          },
        });
      } else {
        const current = index.turns[index.turns.length - 1];
        if (!current) {
          index.preamble++;
          if (entry.type !== null && TOOL_TYPES.has(entry.type) && entry.toolName) index.preambleTools.add(entry.toolName);
        }
        if (current && entry.type !== null && TOOL_TYPES.has(entry.type) && entry.toolName) {
          current.tools.add(entry.toolName);
          current.toolCalls.set(entry.toolName, (current.toolCalls.get(entry.toolName) ?? 0) + 1);
        }
      }
    }
    index.scanned += rows.length;
    if (rows.length < INDEX_BATCH) index.complete = true;
  }
}

function sessionSummary(s: RemoteSessionSummary): SessionSummary {
  return {
    sessionId: s.sessionId,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    messageCount: s.itemCount,
    branchCount: s.itemCount > 0 ? 1 : 0,
    structured: false,
    usage: null,
  };
}
