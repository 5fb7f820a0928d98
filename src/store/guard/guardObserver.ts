/**
 * The history guard's look at a session file (docs/history-guard.md): what the file holds now compared with what the
 * guard saw last, recorded in the guard store. A look that finds rows gone from a branch (a compaction, `pop_item`,
 * `clear_session`, a history rewrite re-pointing a row) records the branch's previous list as a layer.
 *
 * Cost: like the kept totals (keptTotals.ts), a file that only grew is told from one where rows went by the counts
 * of both tables and the rows past the last look's highest ids (ids are AUTOINCREMENT, so they are exactly the new
 * rows): then only the new rows are read, hashed and kept, and nothing else. Only when rows went are the structure
 * rows of the file (ids, no item text) compared with the last list, and only the changed sessions' branches written.
 */
import type { SessionDatabase } from '../inspector/sessionDatabase';
import type { QueryContext } from '../inspector/queryContext';
import { quoteIdentifier } from '../inspector/tableDiscovery';
import { captureFileIdentity } from '../sqlite/fileIdentity';
import { immediateTransaction } from '../sqlite/sqliteDatabase';
import type { FileMarks, GuardedFile, HistoryGuardStore, SeenRow } from './guardStore';

/** Rows read (with their item text) per read snapshot on a first look or a large append: bounds memory. */
export const GUARD_BATCH_ROWS = 2_000;

/**
 * The file record each open connection's last look used, with the identity it was for: every later look then costs
 * one `stat` instead of the store's queries (the guard's share of a live refresh, docs/history-guard.md). Only this
 * module writes a file's marks, so the copy stays right while the identity does.
 */
const lastRecord = new WeakMap<HistoryGuardStore, WeakMap<SessionDatabase, GuardedFile & { dev: bigint; ino: bigint }>>();

function fileOf(store: HistoryGuardStore, db: SessionDatabase, nowMs: number): GuardedFile {
  const identity = captureFileIdentity(db.path);
  const known = lastRecord.get(store)?.get(db);
  if (known && identity && known.dev === identity.dev && known.ino === identity.ino) return known;
  const file = store.fileRecord(db.path, nowMs);
  if (identity) remember(store, db, file, identity);
  return file;
}

function remember(store: HistoryGuardStore, db: SessionDatabase, file: GuardedFile, identity?: { dev: bigint; ino: bigint }): void {
  let byDb = lastRecord.get(store);
  if (!byDb) lastRecord.set(store, (byDb = new WeakMap()));
  const id = identity ?? byDb.get(db);
  if (id) byDb.set(db, { ...file, dev: id.dev, ino: id.ino });
}

/** What one look did. */
export interface GuardLook {
  /**
   * `first`: the file's first look (what it holds now is kept); `unchanged`; `grown`: only new rows; `rescanned`: rows
   * went, the lists were compared; `unsupported`: a plain `SQLiteSession` file (no branches to guard).
   */
  kind: 'first' | 'unchanged' | 'grown' | 'rescanned' | 'unsupported';
  /** Structure rows added to the guard's list. */
  rowsSeen: number;
  /** Layers recorded by this look. */
  layers: { layerId: number; sessionId: string; branchId: string; removedCount: number }[];
  /** Branches whose removal our own compaction had already recorded (no second layer). */
  credited: number;
}

interface FileRow {
  id: number;
  session_id: string;
  branch_id: string;
  sequence_number: number;
  message_id: number;
}

interface DataRow extends FileRow {
  message_data: string | null;
}

/**
 * The counts and highest ids of both tables. Four statements, not two: a bare `COUNT(*)` is answered from the smallest
 * index's page cells (0.05 ms on 40,000 rows), `MAX(id)` by one seek, but `COUNT(*), MAX(id)` together walks every
 * row (3.6 ms there, scripts/bench/historyGuard.ts).
 */
function marksOf(ctx: QueryContext): FileMarks {
  const m = quoteIdentifier(ctx.tables.messages);
  const one = (sql: string): number => Number(ctx.stmt(sql).get<{ v: number | null }>()?.v ?? 0);
  return {
    structureCount: one('SELECT COUNT(*) AS v FROM message_structure'),
    maxStructureId: one('SELECT MAX(id) AS v FROM message_structure'),
    messageCount: one(`SELECT COUNT(*) AS v FROM ${m}`),
    maxMessageId: one(`SELECT MAX(id) AS v FROM ${m}`),
  };
}

/** A batch of structure rows with ids in (after, upTo], with their item text. */
function rowsWithData(ctx: QueryContext, after: number, upTo: number): DataRow[] {
  const m = quoteIdentifier(ctx.tables.messages);
  return ctx
    .stmt(
      `SELECT s.id, s.session_id, s.branch_id, s.sequence_number, s.message_id, g.message_data
       FROM message_structure s LEFT JOIN ${m} g ON g.id = s.message_id
       WHERE s.id > ? AND s.id <= ? ORDER BY s.id LIMIT ${GUARD_BATCH_ROWS}`,
    )
    .all<DataRow>(after, upTo);
}

/**
 * Keeps rows read with their text: their items once each, and the rows in the guard's list. A row whose message is
 * missing (a damaged file) is skipped: there is nothing to keep of it.
 */
function keepRows(store: HistoryGuardStore, fileId: number, rows: readonly DataRow[]): number {
  const usable = rows.filter((r): r is DataRow & { message_data: string } => typeof r.message_data === 'string');
  if (usable.length === 0) return 0;
  immediateTransaction(store.db, () => {
    const ids = store.putItems(usable.map((r) => r.message_data));
    const bySession = new Map<string, SeenRow[]>();
    usable.forEach((r, i) => {
      const list = bySession.get(r.session_id) ?? [];
      list.push({
        structureId: Number(r.id),
        branchId: r.branch_id,
        sequenceNumber: Number(r.sequence_number),
        messageId: Number(r.message_id),
        itemId: ids[i] as number,
      });
      bySession.set(r.session_id, list);
    });
    for (const [sessionId, list] of bySession) store.putSeen(fileId, sessionId, list);
  });
  return usable.length;
}

/**
 * Reads and keeps every row with an id in (after, upTo], a batch per read snapshot; `last` runs in the last batch's
 * transaction (the marks: one commit for an append's few rows).
 */
function keepRange(store: HistoryGuardStore, db: SessionDatabase, fileId: number, after: number, upTo: number, last: () => void): number {
  let kept = 0;
  let from = after;
  for (;;) {
    const batch = db.readWith((ctx) => rowsWithData(ctx, from, upTo));
    const done = batch.length < GUARD_BATCH_ROWS;
    immediateTransaction(store.db, () => {
      kept += keepRows(store, fileId, batch);
      if (done) last();
    });
    if (done) return kept;
    from = Number(batch[batch.length - 1]!.id);
  }
}

/**
 * Whether the file only grew since `marks`: every row counted then is still there (the counts add up with the rows past
 * the old highest ids), and no new message is without a new structure row pointing to it (a row re-pointed in place).
 */
function onlyGrew(ctx: QueryContext, marks: FileMarks, now: FileMarks): boolean {
  const m = quoteIdentifier(ctx.tables.messages);
  const newRows = ctx.stmt('SELECT COUNT(*) AS n FROM message_structure WHERE id > ?').get<{ n: number }>(marks.maxStructureId)?.n ?? 0;
  const newMessages = ctx.stmt(`SELECT COUNT(*) AS n FROM ${m} WHERE id > ?`).get<{ n: number }>(marks.maxMessageId)?.n ?? 0;
  if (now.structureCount !== marks.structureCount + Number(newRows)) return false;
  if (now.messageCount !== marks.messageCount + Number(newMessages)) return false;
  if (Number(newMessages) === 0) return true;
  const loose = ctx
    .stmt(
      `SELECT COUNT(*) AS n FROM ${m} g WHERE g.id > ?
       AND NOT EXISTS (SELECT 1 FROM message_structure s WHERE s.id > ? AND s.message_id = g.id)`,
    )
    .get<{ n: number }>(marks.maxMessageId, marks.maxStructureId)?.n;
  return Number(loose ?? 0) === 0;
}

/**
 * Looks at the file `db` has open (read-only is enough) and records in `store` what changed since the last look. The
 * first look of a file keeps what it holds; it cannot know what was removed before (docs/history-guard.md).
 */
export function observeSessionFile(store: HistoryGuardStore, db: SessionDatabase, nowMs: number = Date.now()): GuardLook {
  const look: GuardLook = { kind: 'unchanged', rowsSeen: 0, layers: [], credited: 0 };
  if (!db.tables.messageStructure) return { ...look, kind: 'unsupported' };
  const file = fileOf(store, db, nowMs);
  const state = db.readWith((ctx) => {
    const now = marksOf(ctx);
    if (file.marks === null) return { now, grew: false, first: true };
    const same =
      now.structureCount === file.marks.structureCount &&
      now.maxStructureId === file.marks.maxStructureId &&
      now.messageCount === file.marks.messageCount &&
      now.maxMessageId === file.marks.maxMessageId;
    if (same) return { now, grew: false, first: false, same: true };
    const grew = onlyGrew(ctx, file.marks, now);
    // An append's few rows are read in this snapshot: one read transaction per look, not two.
    const rows = grew ? rowsWithData(ctx, file.marks.maxStructureId, now.maxStructureId) : [];
    return { now, grew, first: false, rows };
  });
  if ('same' in state && state.same) return look;
  const setMarks = () => {
    store.setMarks(file.fileId, state.now, nowMs);
    remember(store, db, { ...file, marks: state.now, observedMs: nowMs });
  };
  if (state.grew && 'rows' in state && state.rows && state.rows.length < GUARD_BATCH_ROWS) {
    store.durability('relaxed');
    const rows = state.rows;
    immediateTransaction(store.db, () => {
      look.rowsSeen = keepRows(store, file.fileId, rows);
      setMarks();
    });
    look.kind = 'grown';
    return look;
  }
  if (state.first || state.grew) {
    const after = state.first ? 0 : (file.marks as FileMarks).maxStructureId;
    store.durability('relaxed');
    look.rowsSeen = keepRange(store, db, file.fileId, after, state.now.maxStructureId, setMarks);
    look.kind = state.first ? 'first' : 'grown';
    return look;
  }
  store.durability('full');
  rescan(store, db, file, nowMs, look);
  look.kind = 'rescanned';
  return look;
}

/** Rows went somewhere: compare each session's rows with the guard's list, record layers, keep the new rows. */
function rescan(store: HistoryGuardStore, db: SessionDatabase, file: GuardedFile, nowMs: number, look: GuardLook): void {
  // The whole file's rows without item text, and the text of only the rows the guard has not seen, in one snapshot.
  const read = db.readWith((ctx) => {
    const now = marksOf(ctx);
    const rows = ctx
      .stmt('SELECT id, session_id, branch_id, sequence_number, message_id FROM message_structure ORDER BY session_id, id')
      .all<FileRow>();
    const bySession = new Map<string, FileRow[]>();
    for (const r of rows) {
      const list = bySession.get(r.session_id) ?? [];
      list.push(r);
      bySession.set(r.session_id, list);
    }
    const sessions = new Set([...bySession.keys(), ...store.seenSessions(file.fileId)]);
    const fresh: DataRow[] = [];
    const changes: { sessionId: string; gone: SeenRow[]; seen: Map<number, SeenRow> }[] = [];
    const text = ctx.stmt(`SELECT message_data FROM ${quoteIdentifier(ctx.tables.messages)} WHERE id = ?`);
    for (const sessionId of sessions) {
      const seen = store.seenRows(file.fileId, sessionId);
      const present = bySession.get(sessionId) ?? [];
      const presentIds = new Map(present.map((r) => [Number(r.id), r]));
      // A row gone, or re-pointed to another message (the item it held was replaced).
      const gone = [...seen.values()].filter((s) => presentIds.get(s.structureId)?.message_id !== s.messageId);
      for (const r of present) {
        const before = seen.get(Number(r.id));
        if (before && before.messageId === Number(r.message_id)) continue;
        fresh.push({ ...r, message_data: text.get<{ message_data: string }>(r.message_id)?.message_data ?? null });
      }
      if (gone.length > 0) changes.push({ sessionId, gone, seen });
    }
    return { now, fresh, changes };
  });
  immediateTransaction(store.db, () => {
    for (const { sessionId, gone, seen } of read.changes) {
      const goneIds = new Set(gone.map((g) => g.structureId));
      for (const branchId of new Set(gone.map((g) => g.branchId))) {
        const before = [...seen.values()].filter((s) => s.branchId === branchId).sort((a, b) => a.sequenceNumber - b.sequenceNumber);
        const removedItems = before.filter((s) => goneIds.has(s.structureId)).map((s) => s.itemId);
        // Our own compaction recorded these items before removing them: one layer, ours, not a second one.
        if (store.ourCompactionCovering(file.fileId, sessionId, branchId, file.observedMs ?? 0, removedItems) !== null) {
          look.credited++;
          continue;
        }
        const layerId = store.addLayer(
          file.fileId,
          sessionId,
          branchId,
          'another-writer',
          before.map((s) => ({ itemId: s.itemId, removed: goneIds.has(s.structureId) })),
          nowMs,
        );
        look.layers.push({ layerId, sessionId, branchId, removedCount: removedItems.length });
      }
      store.dropSeen(file.fileId, sessionId, goneIds);
    }
    look.rowsSeen = keepRows(store, file.fileId, read.fresh);
    store.setMarks(file.fileId, read.now, nowMs);
  });
  remember(store, db, { ...file, marks: read.now, observedMs: nowMs });
}
