/**
 * The history guard's look at a session file (docs/history-guard.md): what the file holds now compared with what the
 * guard saw last, recorded in the guard store. A look that finds rows gone from a branch (a compaction, `pop_item`,
 * `clear_session`, a history rewrite re-pointing a row) records the branch's previous list as a layer.
 *
 * Cost: like the kept totals (keptTotals.ts), a file that only grew is told from one where rows went by the counts
 * of both tables and the rows past the last look's highest ids (ids are AUTOINCREMENT, so they are exactly the new
 * rows), and from one where a row was re-pointed by a checksum of every row's (id, message id), one pass over the
 * structure table without item text: then only the new rows are read, hashed and kept. Only when rows went or were
 * re-pointed are the structure rows of the file compared with the last list, and only the changed sessions' branches
 * written. A look reads one snapshot of the file (one read transaction, however many batches), and compares with the
 * guard's list inside the guard store's write transaction, so two windows' looks never record one removal twice.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { describeDatabaseError } from '../errors';
import type { SessionDatabase } from '../inspector/sessionDatabase';
import type { QueryContext } from '../inspector/queryContext';
import { quoteIdentifier } from '../inspector/tableDiscovery';
import { immediateTransaction } from '../sqlite/sqliteDatabase';
import {
  GUARD_LIMITS,
  fileBirth,
  itemHash,
  type FileMarks,
  type GuardedFile,
  type HistoryGuardStore,
  type RowWitness,
  type SeenRow,
} from './guardStore';

/** Rows read (with their item text) per batch on a first look or a large append: bounds memory. */
export const GUARD_BATCH_ROWS = 2_000;

/**
 * The file record each open connection's last look used, with the identity it was for: every later look then costs
 * one `stat` instead of the store's queries (the guard's share of a live refresh, docs/history-guard.md). Only this
 * module writes a file's marks, so the copy stays right while the identity does.
 */
type Identity = { dev: bigint; ino: bigint; birth: string | undefined };
const lastRecord = new WeakMap<HistoryGuardStore, WeakMap<SessionDatabase, GuardedFile & Identity>>();

/** The device, inode and birth time (`fileBirth`) at the path. */
function identityOf(path: string): Identity | undefined {
  if (path === ':memory:' || path === '' || path.startsWith('file:')) return undefined;
  const st = statSync(resolve(path), { bigint: true, throwIfNoEntry: false });
  return st ? { dev: st.dev, ino: st.ino, birth: fileBirth(resolve(path)) } : undefined;
}

function fileOf(store: HistoryGuardStore, db: SessionDatabase, nowMs: number): GuardedFile {
  const identity = identityOf(db.path);
  const known = lastRecord.get(store)?.get(db);
  if (known && identity && known.dev === identity.dev && known.ino === identity.ino && known.birth === identity.birth) return known;
  const file = store.fileRecord(db.path, nowMs);
  if (identity) remember(store, db, file, identity);
  return file;
}

function remember(store: HistoryGuardStore, db: SessionDatabase, file: GuardedFile, identity?: Identity): void {
  let byDb = lastRecord.get(store);
  if (!byDb) lastRecord.set(store, (byDb = new WeakMap()));
  const id = identity ?? byDb.get(db);
  if (id) byDb.set(db, { ...file, dev: id.dev, ino: id.ino, birth: id.birth });
}

function forget(store: HistoryGuardStore, db: SessionDatabase): void {
  lastRecord.get(store)?.delete(db);
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
  /**
   * Branches whose removal was not recorded as a layer because the branch held more than
   * `GUARD_LIMITS.itemsPerLayer` items before it: their items stay in the guard store, the rest of the look goes on.
   */
  skipped: { sessionId: string; branchId: string; itemCount: number; removedCount: number }[];
  /** The file was found to be another one than the guard's record (recreated at a reused inode, overwritten in place). */
  anotherFile?: boolean;
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

/** Another look (another window's store worker) moved the file's marks since this one read them: look again. */
class MarksMoved extends Error {}

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

/** The modulus of `pointerSum`: a prime above 2^32, so a sum modulo it is exact as a JavaScript number. */
const POINTER_PRIME = 4294967291n;

/**
 * A checksum of the (id, message id) of the structure rows with ids in (after, upTo], modulo `POINTER_PRIME`: a sum of
 * one term per row, so the sum up to the last look's highest id plus the new rows' is the sum now (modulo the prime).
 * A row re-pointed from message a to b changes its term by (b − a)·40503, never 0 modulo the prime for ids that
 * differ by less than it. SQLite sums the terms exactly (64-bit) and reduces once. One pass over the structure rows
 * (no item text; 40,000 rows: see docs/history-guard.md "Performance").
 */
function pointerSum(ctx: QueryContext, after: number, upTo: number): bigint {
  const r = ctx
    .stmt(
      `SELECT COALESCE(SUM((id * 2654435761 + message_id * 40503) % ${POINTER_PRIME}), 0) % ${POINTER_PRIME} AS v
       FROM message_structure WHERE id > ? AND id <= ?`,
    )
    .get<{ v: number | bigint }>(after, upTo);
  return BigInt(r?.v ?? 0);
}

/** The row with id `id` and its item text, if present. */
function rowAt(ctx: QueryContext, id: number): DataRow | undefined {
  const m = quoteIdentifier(ctx.tables.messages);
  return ctx
    .stmt(
      `SELECT s.id, s.session_id, s.branch_id, s.sequence_number, s.message_id, g.message_data
       FROM message_structure s LEFT JOIN ${m} g ON g.id = s.message_id WHERE s.id = ?`,
    )
    .get<DataRow>(id);
}

/** The row a look notes to know the file again (its highest-id row, with its item's hash); null when it has none. */
function witnessOf(ctx: QueryContext, now: FileMarks): RowWitness | null {
  const r = now.maxStructureId > 0 ? rowAt(ctx, now.maxStructureId) : undefined;
  if (!r || typeof r.message_data !== 'string') return null;
  return {
    structureId: Number(r.id),
    sessionId: r.session_id,
    branchId: r.branch_id,
    sequenceNumber: Number(r.sequence_number),
    messageId: Number(r.message_id),
    hash: itemHash(r.message_data).toString('hex'),
  };
}

/**
 * Whether the file is still the one the guard's record saw, by what it holds (the device, inode and birth time are
 * checked by `fileRecord`; where there is no birth time, or a file is overwritten in place, only its rows can tell):
 * - the structure table's AUTOINCREMENT counter below the highest id seen: ids never go back in one file;
 * - the row the last look noted (its highest) now in another session, branch or place, or holding the same message id
 *   with other text: no writer of the SDKs changes a row or a message so (a rewrite re-points the row to a NEW
 *   message, which `pointerSum` sees as a rewrite, not as another file).
 * A row that is gone says nothing (a pop removes it). Two seeks and one hash per look.
 */
function sameFileByRows(ctx: QueryContext, file: GuardedFile): boolean {
  if (file.marks === null) return true;
  let seq: number | undefined;
  try {
    const r = ctx.stmt("SELECT seq FROM sqlite_sequence WHERE name = 'message_structure'").get<{ seq: number }>();
    seq = r === undefined ? undefined : Number(r.seq);
  } catch {
    seq = undefined; // no AUTOINCREMENT table in the file: nothing to compare
  }
  if (seq !== undefined && seq < file.marks.maxStructureId) return false;
  const w = file.witness;
  if (!w) return true;
  const r = rowAt(ctx, w.structureId);
  if (!r) return true;
  if (r.session_id !== w.sessionId || r.branch_id !== w.branchId || Number(r.sequence_number) !== w.sequenceNumber) return false;
  if (Number(r.message_id) === w.messageId && typeof r.message_data === 'string')
    return itemHash(r.message_data).toString('hex') === w.hash;
  return true;
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

/** Inside the guard store's write transaction: the marks this look started from are still the store's. */
function assertMarks(store: HistoryGuardStore, file: GuardedFile): void {
  const now = store.currentMarks(file.fileId);
  const same =
    (now === null && file.marks === null) ||
    (now !== null &&
      file.marks !== null &&
      now.structureCount === file.marks.structureCount &&
      now.maxStructureId === file.marks.maxStructureId &&
      now.messageCount === file.marks.messageCount &&
      now.maxMessageId === file.marks.maxMessageId);
  if (!same) throw new MarksMoved();
}

/**
 * Whether the file only grew since `marks`: every row counted then is still there (the counts add up with the rows past
 * the old highest ids), no new message is without a new structure row pointing to it, and no old row points elsewhere
 * (`pointerSum` of the old rows unchanged, when the last look noted one).
 */
function onlyGrew(ctx: QueryContext, file: GuardedFile, marks: FileMarks, now: FileMarks, sumNow: bigint): boolean {
  const m = quoteIdentifier(ctx.tables.messages);
  const newRows = ctx.stmt('SELECT COUNT(*) AS n FROM message_structure WHERE id > ?').get<{ n: number }>(marks.maxStructureId)?.n ?? 0;
  const newMessages = ctx.stmt(`SELECT COUNT(*) AS n FROM ${m} WHERE id > ?`).get<{ n: number }>(marks.maxMessageId)?.n ?? 0;
  if (now.structureCount !== marks.structureCount + Number(newRows)) return false;
  if (now.messageCount !== marks.messageCount + Number(newMessages)) return false;
  // The old rows' sum is the sum now less the new rows' (a range by id): the look's one pass, not a second.
  if (file.pointerSum !== null) {
    const old = (((sumNow - pointerSum(ctx, marks.maxStructureId, now.maxStructureId)) % POINTER_PRIME) + POINTER_PRIME) % POINTER_PRIME;
    if (old.toString() !== file.pointerSum) return false;
  }
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
  for (let attempt = 1; ; attempt++) {
    try {
      return lookOnce(store, db, nowMs);
    } catch (err) {
      if (!(err instanceof MarksMoved)) throw err;
      forget(store, db);
      // Another window looks at the file as often as this one: what it recorded covers this look's changes.
      if (attempt >= 5) return { kind: 'unchanged', rowsSeen: 0, layers: [], credited: 0, skipped: [] };
    }
  }
}

function lookOnce(store: HistoryGuardStore, db: SessionDatabase, nowMs: number): GuardLook {
  const look: GuardLook = { kind: 'unchanged', rowsSeen: 0, layers: [], credited: 0, skipped: [] };
  if (!db.tables.messageStructure) return { ...look, kind: 'unsupported' };
  const file = fileOf(store, db, nowMs);
  // One read transaction for the whole look, however many batches: the marks and every row read come from one
  // snapshot, so rows another process removes meanwhile are read as they were (and its removal is the next look's
  // layer). The reads inside go through `readWith` again (joining this snapshot) so the session file's errors are
  // described as its own; the guard store's are described here, with the guard store's path.
  let failure: { err: unknown } | undefined;
  db.readWith(() => {
    try {
      lookIn(store, db, file, nowMs, look);
    } catch (err) {
      failure = { err };
    }
  });
  if (failure) throw failure.err instanceof MarksMoved ? failure.err : describeDatabaseError(failure.err, store.path);
  return look;
}

function lookIn(store: HistoryGuardStore, db: SessionDatabase, known: GuardedFile, nowMs: number, look: GuardLook): void {
  let file = known;
  const state = db.readWith((ctx) => ({ now: marksOf(ctx), same: sameFileByRows(ctx, file) }));
  if (!state.same) {
    // Another file at the same inode (recreated) or overwritten in place: the record's list becomes layers of the
    // old file, marked replaced, and this file starts a list of its own.
    immediateTransaction(store.db, () => {
      assertMarks(store, file);
      store.retireFile(file.fileId, nowMs, true);
    });
    forget(store, db);
    file = fileOf(store, db, nowMs);
    look.anotherFile = true;
  }
  const { now } = state;
  const setMarks = (seen: { witness: RowWitness | null; pointerSum: string | null }) => {
    store.setMarks(file.fileId, now, nowMs, seen);
    remember(store, db, { ...file, marks: now, observedMs: nowMs, ...seen });
  };
  const seenNow = (upToSum: bigint | null) =>
    db.readWith((ctx) => ({
      witness: witnessOf(ctx, now),
      pointerSum: (upToSum ?? pointerSum(ctx, 0, now.maxStructureId)).toString(),
    }));
  const marks = file.marks;
  if (marks === null) {
    store.durability('relaxed');
    look.rowsSeen = keepRange(store, db, file, 0, now.maxStructureId, () => setMarks(seenNow(null)));
    look.kind = 'first';
    return;
  }
  const counted =
    now.structureCount === marks.structureCount &&
    now.maxStructureId === marks.maxStructureId &&
    now.messageCount === marks.messageCount &&
    now.maxMessageId === marks.maxMessageId;
  const sumNow = db.readWith((ctx) => pointerSum(ctx, 0, now.maxStructureId));
  if (counted && sumNow.toString() === file.pointerSum) return;
  if (counted && file.pointerSum === null) {
    // Marks from a version without the checksum and the row witness: noted once, so the next look can compare them.
    immediateTransaction(store.db, () => {
      assertMarks(store, file);
      setMarks(seenNow(sumNow));
    });
    return;
  }
  const grew = !counted && db.readWith((ctx) => onlyGrew(ctx, file, marks, now, sumNow));
  if (grew) {
    store.durability('relaxed');
    look.rowsSeen = keepRange(store, db, file, marks.maxStructureId, now.maxStructureId, () => setMarks(seenNow(sumNow)));
    look.kind = 'grown';
    return;
  }
  store.durability('full');
  rescan(store, db, file, nowMs, look, () => setMarks(seenNow(sumNow)));
  look.kind = 'rescanned';
}

/**
 * Reads and keeps every row with an id in (after, upTo], a batch at a time (all in the look's one snapshot); `last`
 * runs in the last batch's write transaction (the marks: one commit for an append's few rows).
 */
function keepRange(
  store: HistoryGuardStore,
  db: SessionDatabase,
  file: GuardedFile,
  after: number,
  upTo: number,
  last: () => void,
): number {
  let kept = 0;
  let from = after;
  for (;;) {
    const batch = db.readWith((ctx) => rowsWithData(ctx, from, upTo));
    const done = batch.length < GUARD_BATCH_ROWS;
    immediateTransaction(store.db, () => {
      assertMarks(store, file);
      kept += keepRows(store, file.fileId, batch);
      if (done) last();
    });
    if (done) return kept;
    from = Number(batch[batch.length - 1]!.id);
  }
}

/**
 * Rows went (or were re-pointed): compare each session's rows with the guard's list, record layers, keep the new rows.
 * The guard's list is read and compared inside the guard store's write transaction (and the marks checked there), so a
 * second window's look at the same removal finds it recorded and records nothing.
 */
function rescan(store: HistoryGuardStore, db: SessionDatabase, file: GuardedFile, nowMs: number, look: GuardLook, last: () => void): void {
  // The whole file's rows without item text, in the look's snapshot.
  const bySession = db.readWith((ctx) => {
    const rows = ctx
      .stmt('SELECT id, session_id, branch_id, sequence_number, message_id FROM message_structure ORDER BY session_id, id')
      .all<FileRow>();
    const map = new Map<string, FileRow[]>();
    for (const r of rows) {
      const list = map.get(r.session_id) ?? [];
      list.push(r);
      map.set(r.session_id, list);
    }
    return map;
  });
  immediateTransaction(store.db, () => {
    assertMarks(store, file);
    const sessions = new Set([...bySession.keys(), ...store.seenSessions(file.fileId)]);
    const fresh: FileRow[] = [];
    for (const sessionId of sessions) {
      const seen = store.seenRows(file.fileId, sessionId);
      const present = bySession.get(sessionId) ?? [];
      const presentIds = new Map(present.map((r) => [Number(r.id), r]));
      // A row gone, or re-pointed to another message (the item it held was replaced).
      const gone = [...seen.values()].filter((s) => presentIds.get(s.structureId)?.message_id !== s.messageId);
      for (const r of present) {
        const before = seen.get(Number(r.id));
        if (!before || before.messageId !== Number(r.message_id)) fresh.push(r);
      }
      if (gone.length === 0) continue;
      const goneIds = new Set(gone.map((g) => g.structureId));
      for (const branchId of new Set(gone.map((g) => g.branchId))) {
        const before = [...seen.values()].filter((s) => s.branchId === branchId).sort((a, b) => a.sequenceNumber - b.sequenceNumber);
        const removedItems = before.filter((s) => goneIds.has(s.structureId)).map((s) => s.itemId);
        // Our own compaction recorded these items before removing them: one layer, ours, not a second one.
        if (store.ourCompactionCovering(file.fileId, sessionId, branchId, file.observedMs ?? 0, removedItems) !== null) {
          look.credited++;
          continue;
        }
        // A branch past the bound is not one layer: its items stay kept (they are in the store), the removal is
        // reported, and every other branch and session of the file is still guarded.
        if (before.length > GUARD_LIMITS.itemsPerLayer) {
          look.skipped.push({ sessionId, branchId, itemCount: before.length, removedCount: removedItems.length });
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
    // The text of only the rows the guard has not seen (or that now hold another message), read in the snapshot.
    const withText = db.readWith((ctx) => {
      const text = ctx.stmt(`SELECT message_data FROM ${quoteIdentifier(ctx.tables.messages)} WHERE id = ?`);
      return fresh.map((r) => ({ ...r, message_data: text.get<{ message_data: string }>(r.message_id)?.message_data ?? null }));
    });
    look.rowsSeen = keepRows(store, file.fileId, withText);
    last();
  });
}
