/**
 * The file search as it was before messages got verdicts (commit 981481a's src/store/search/searchDatabase.ts and
 * sqlPrefilter.ts, kept verbatim but for the imports, this name and `+s.session_id`): every structure row joined to its
 * message and tested on the message's text, copies included. The `+` is the one fix: without it, a search of one
 * session read its rows by branch name (the planner chose an index on the session), not in id order, and reported a
 * shared turn under a copy when the copy's branch name sorted first. The differential test (test/unit/store/differential/searchScan.test.ts)
 * holds the scan to exactly its hits, in its order.
 */
import type { SessionDatabase } from '../../src/store/inspector/sessionDatabase';
import type { BranchNode } from '../../src/store/inspector/inspectorTypes';
import type { QueryContext } from '../../src/store/inspector/queryContext';
import { decodeMessageData } from '../../src/store/inspector/rowDecoding';
import { quoteIdentifier } from '../../src/store/inspector/tableDiscovery';
import { PLAIN_BRANCH_ID } from '../../src/store/inspector/plainSessions';
import { foldForSearch } from '../../src/store/format/conversationText';
import { displayType } from '../../src/shared/itemText';
import { turnOrigin } from '../../src/shared/turnOrigin';
import { messageTypeOf } from '../../src/store/format/itemClassification';
import { itemFacts, rawCouldMatch } from '../../src/store/search/itemMatch';
import type { TurnSet } from '../../src/store/search/reviewTurns';
import {
  HitTester,
  ScanProgress,
  type HitPlace,
  type SearchHit,
  type SearchOptions,
  type SearchSummary,
} from '../../src/store/search/searchHits';
import { isRawSearchable, sqlPrefilter, structureTypeCondition } from './searchOraclePrefilter';
import type { SearchQuery } from '../../src/store/search/searchQuery';

/** A batch aims at this much time: short enough for a prompt first hit and cancel, long enough to cost little. */
const TARGET_BATCH_MS = 40;
// Small: a common word matches nearly every row, and the first batch's hits (each with its snippet) are what the user
// waits for; 1,000 rows put the first hits of `weather` on the 1 GB bench file at 280–380 ms, 200 rows at 130–230 ms.
const FIRST_BATCH_ROWS = 200;
const MAX_BATCH_ROWS = 50_000;

interface StructureRow {
  sid: number;
  session_id: string;
  branch_id: string;
  message_id: number;
  sequence_number: number;
  message_type: string | null;
  tool_name: string | null;
  turn: number | null;
  data: unknown;
}

interface PlainRow {
  id: number;
  data: unknown;
  is_user: number | null;
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Searches every session and branch of `db`; see the module comment. Errors of the file are `SessionDatabaseError`s. */
export async function oracleSearchDatabase(db: SessionDatabase, query: SearchQuery, options: SearchOptions): Promise<SearchSummary> {
  const progress = new ScanProgress(options);
  const summary = progress.summary;
  const state = new ScanState(db, query, options.sessionId, options.turns);
  const structured = db.tables.messageStructure;
  const maxId = (sql: string): number => Number(db.readWith((ctx) => ctx.stmt(sql).get<{ m: number | null }>()?.m ?? 0));
  const structureMax = structured ? maxId('SELECT max(id) AS m FROM message_structure') : 0;
  // An estimate for progress: the plain pass reads only the plain sessions' rows, which are not known yet.
  let total = structureMax;

  let batch = FIRST_BATCH_ROWS;
  const adapt = (ms: number): void => {
    batch = Math.max(FIRST_BATCH_ROWS, Math.min(MAX_BATCH_ROWS, Math.round(batch * Math.min(4, TARGET_BATCH_MS / Math.max(ms, 1)))));
  };

  if (structured) {
    for (let after = 0; after < structureMax && !progress.stopped();) {
      const t0 = performance.now();
      const to = Math.min(structureMax, after + batch);
      const hits = state.structureBatch(after, to);
      summary.rowsScanned += to - after;
      after = to;
      progress.emit(hits);
      options.onProgress?.(summary.rowsScanned, total);
      adapt(performance.now() - t0);
      await yieldToLoop();
    }
  }
  // Plain sessions are found after the structured pass, so listing them never delays the first hits.
  const plain = progress.stopped() ? [] : state.plainSessions().filter((id) => options.sessionId === undefined || id === options.sessionId);
  if (plain.length > 0) total += maxId(`SELECT max(id) AS m FROM ${quoteIdentifier(db.tables.messages)}`);
  for (const sessionId of plain) {
    let after = 0;
    let turn = 0;
    while (!progress.stopped()) {
      const t0 = performance.now();
      const page = state.plainBatch(sessionId, after, turn, batch);
      summary.rowsScanned += page.rows;
      progress.emit(page.hits);
      options.onProgress?.(summary.rowsScanned, total);
      adapt(performance.now() - t0);
      if (page.next === null) break;
      after = page.next;
      turn = page.turn;
      await yieldToLoop();
    }
  }
  // Every message row of the sessions searched, each once, read and counted here rather than counted by SQLite.
  return progress.finish(() =>
    db.readWith(
      (ctx) =>
        ctx
          .stmt(`SELECT session_id FROM ${quoteIdentifier(ctx.tables.messages)}`)
          .all<{ session_id: string }>()
          .filter((r) => options.sessionId === undefined || r.session_id === options.sessionId).length,
    ),
  );
}

/** What the scan remembers between batches: statements' SQL, branch trees, reported messages and known call names. */
class ScanState {
  /** The folded text when the raw-text check applies to it (see `rawCouldMatch`), else null. */
  private readonly rawNeedle: string | null;
  private readonly structureSql: string;
  private readonly plainSql: string;
  private readonly params: unknown[];
  private readonly trees = new Map<string, BranchNode[]>();
  /** Messages already reported, per session (a shared message is reported at its first structure row). */
  private readonly reported = new Map<string, Set<number>>();
  private readonly tester: HitTester;
  private readonly reviewed: boolean;

  constructor(
    private readonly db: SessionDatabase,
    query: SearchQuery,
    private readonly sessionId?: string,
    turns?: TurnSet,
  ) {
    this.tester = new HitTester(query, turns);
    this.reviewed = query.review !== undefined;
    const needle = foldForSearch(query.text);
    // Only a text-only query can reject on the text alone: with filters, a non-matching row may still name a tool.
    this.rawNeedle = isRawSearchable(needle) && query.tools.length === 0 ? needle : null;
    const t = db.tables;
    const messages = quoteIdentifier(t.messages);
    const filter = sqlPrefilter(query, 'm.message_data');
    // Tested on the structure row first: a row it rejects is never joined to its message (the planner checks terms on
    // `s` before the lookup into `m`). Not for the learner rows of a tool filter, which need their data either way.
    const types = query.tools.length === 0 ? structureTypeCondition(query, 's.message_type') : null;
    this.params = filter.params;
    // A rowid range of message_structure; the join is a primary-key lookup. Rows the prefilter rejects come back
    // without data (and are not decoded), so the batch still reports the rows it covered.
    this.structureSql = `SELECT s.id AS sid, s.session_id, s.branch_id, s.message_id, s.sequence_number, s.message_type,
        s.tool_name, s.user_turn_number AS turn, m.message_data AS data
      FROM message_structure s JOIN ${messages} m ON m.id = s.message_id AND m.session_id = s.session_id
      WHERE s.id > ? AND s.id <= ?${sessionId === undefined ? '' : ' AND +s.session_id = ?'}${types ? ` AND ${types}` : ''} AND ${filter.sql}`;
    // A plain session's rows in id order (the (session_id, id) index), each with whether it opens a turn; only rows
    // that pass the prefilter carry their data.
    this.plainSql = `SELECT id, CASE WHEN ${filter.sql} THEN message_data END AS data,
        json_valid(message_data) AND json_extract(message_data, '$.role') = 'user' AS is_user
      FROM ${messages} m WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?`;
  }

  /** Sessions with messages but no structure rows, in the order they were first written. */
  plainSessions(): string[] {
    return this.db.readWith((ctx) => {
      const messages = quoteIdentifier(ctx.tables.messages);
      const structureless = ctx.tables.messageStructure
        ? ' WHERE NOT EXISTS (SELECT 1 FROM message_structure s WHERE s.session_id = d.session_id)'
        : '';
      return ctx
        .stmt(
          `SELECT session_id FROM (SELECT session_id, min(id) AS first FROM ${messages} GROUP BY session_id) d${structureless} ORDER BY first`,
        )
        .all<{ session_id: string }>()
        .map((r) => r.session_id);
    });
  }

  structureBatch(after: number, to: number): SearchHit[] {
    const rows = this.db.readWith((ctx) =>
      ctx
        .stmt(this.structureSql)
        .all<StructureRow>(after, to, ...(this.sessionId === undefined ? [] : [this.sessionId]), ...(this.params as never[])),
    );
    const hits: SearchHit[] = [];
    for (const r of rows) {
      const messageId = Number(r.message_id);
      const reported = this.reportedIn(r.session_id);
      if (reported.has(messageId)) continue;
      const turn = r.turn === null ? 0 : Number(r.turn);
      // A review filter names a shared turn by the branch that ran it: a copy's row (which the first row, of that
      // branch, failed) must not match in its place.
      if (this.reviewed && turnOrigin(this.tree(r.session_id), r.branch_id, turn) !== r.branch_id) continue;
      if (this.rawNeedle !== null && typeof r.data === 'string' && !rawCouldMatch(r.data, this.rawNeedle)) continue;
      const decoded = decodeMessageData(r.data);
      if (!decoded.ok) continue;
      const hit = this.test(r.session_id, decoded.value, messageId, r.tool_name, () => ({
        branchId: r.branch_id,
        turn,
        sequenceNumber: Number(r.sequence_number),
        itemType: displayType(r.message_type),
      }));
      if (!hit) continue;
      reported.add(messageId);
      hit.sharedWith = this.sharedWith(r.session_id, r.branch_id, turn);
      hits.push(hit);
    }
    return hits;
  }

  plainBatch(
    sessionId: string,
    after: number,
    turn: number,
    limit: number,
  ): { hits: SearchHit[]; rows: number; next: number | null; turn: number } {
    const rows = this.db.readWith((ctx) => ctx.stmt(this.plainSql).all<PlainRow>(...(this.params as never[]), sessionId, after, limit + 1));
    const page = rows.slice(0, limit);
    const hits: SearchHit[] = [];
    for (const r of page) {
      if (r.is_user) turn++;
      if (r.data === null || r.data === undefined) continue;
      if (this.rawNeedle !== null && typeof r.data === 'string' && !rawCouldMatch(r.data, this.rawNeedle)) continue;
      const decoded = decodeMessageData(r.data);
      if (!decoded.ok) continue;
      const id = Number(r.id);
      const hit = this.test(sessionId, decoded.value, id, null, () => ({
        branchId: PLAIN_BRANCH_ID,
        turn,
        sequenceNumber: id,
        itemType: displayType(messageTypeOf(decoded.value)),
      }));
      if (hit) hits.push(hit);
    }
    const last = page[page.length - 1];
    return { hits, rows: page.length, next: rows.length > limit && last ? Number(last.id) : null, turn };
  }

  private test(
    sessionId: string,
    item: unknown,
    messageId: number,
    storedToolName: string | null,
    where: () => HitPlace,
  ): SearchHit | null {
    return this.tester.test(sessionId, item, messageId, storedToolName, where, (callId) => this.callName(sessionId, messageId, callId));
  }

  private reportedIn(sessionId: string): Set<number> {
    let set = this.reported.get(sessionId);
    if (!set) this.reported.set(sessionId, (set = new Set()));
    return set;
  }

  private tree(sessionId: string): BranchNode[] {
    let tree = this.trees.get(sessionId);
    if (!tree) this.trees.set(sessionId, (tree = this.db.getBranchTree(sessionId)));
    return tree;
  }

  /** The branches that share `turn` of `branchId` (those whose copy of the turn came from it). */
  private sharedWith(sessionId: string, branchId: string, turn: number): string[] {
    const tree = this.tree(sessionId);
    if (tree.length < 2) return [];
    return tree.filter((b) => b.branchId !== branchId && turnOrigin(tree, b.branchId, turn) === branchId).map((b) => b.branchId);
  }

  /** The name of the call an output answers, for showing it: the nearest earlier row of the session with its call id. */
  private callName(sessionId: string, beforeId: number, callId: string): string | null {
    const row = this.db.readWith((ctx: QueryContext) =>
      ctx
        .stmt(
          `SELECT message_data FROM ${quoteIdentifier(ctx.tables.messages)}
           WHERE session_id = ? AND id < ? AND instr(message_data, ?) > 0 ORDER BY id DESC LIMIT 1`,
        )
        .get<{ message_data: unknown }>(sessionId, beforeId, callId),
    );
    if (!row) return null;
    const decoded = decodeMessageData(row.message_data);
    if (!decoded.ok) return null;
    const facts = itemFacts(decoded.value);
    return facts.callId === callId ? facts.toolName : null;
  }
}
