/**
 * The history guard store (docs/history-guard.md): every item the guard has seen of a guarded session file, kept once
 * by the SHA-256 of its stored `message_data`, the structure rows last seen per file and session, and the layers — a
 * branch's list as it was before a writer removed or replaced items — in a SQLite file of our own (guardSchema.ts),
 * never the session file. Files are keyed by path and device/inode, told apart also by birth time (and by their rows,
 * guardObserver.ts): a file replaced at its path, or deleted and recreated at a reused inode, gets a new record, and
 * the old one's layers stay, marked replaced, with its list as last seen made layers too (`retireFile`).
 */
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { OpenOptions } from '../drivers/openDatabase';
import { captureFileIdentity, fileStateOf } from '../sqlite/fileIdentity';
import { immediateTransaction, readTransaction, type SqliteDatabase, type SqliteStatement } from '../sqlite/sqliteDatabase';
import { StatementCache, openOwnStore } from '../sqlite/ownStoreFile';
import { HistoryGuardError } from './guardErrors';
import { GUARD_STORE_FILE } from './guardSchema';

/** The option of `AdvancedSQLiteSession` that makes our compaction record what it replaces. */
export interface GuardedSessionOptions {
  /**
   * The history guard store (docs/history-guard.md): `replaceHistoryWithCompaction` and `clearCurrentBranch` record
   * the branch's items there before removing them, in their write transaction (a failure to record fails the write,
   * so nothing is lost). Unset: nothing is recorded.
   */
  guardStorePath?: string;
}

/** The bounds on what the store takes and hands back. */
export const GUARD_LIMITS = {
  /** Characters of a path, session or branch id. */
  idChars: 4096,
  /** Items one layer may hold (a branch longer than this is kept whole in `guard_seen` but a layer is refused). */
  itemsPerLayer: 1_000_000,
  /** Layers `layersOf` returns: the newest. */
  layersRead: 500,
  /**
   * Items of a layer the conversation view and the compare view read (its first ones: a compaction removes the oldest);
   * a longer layer is read whole only by *Restore as Branch*.
   */
  layerItemsShown: 10_000,
} as const;

/** Who removed the items of a layer, when we know. */
export type LayerCause = 'our-compaction' | 'another-writer';

/** One layer: a branch's items as they were before some were removed or replaced. */
export interface GuardLayer {
  layerId: number;
  sessionId: string;
  branchId: string;
  /** When the removal was noticed (our compaction: when it ran), ms since the epoch. */
  noticedMs: number;
  cause: LayerCause;
  itemCount: number;
  removedCount: number;
  /** The file the layer was taken from was replaced at its path since: the layer belongs to that old file. */
  oldIdentity: boolean;
  /** When the path was first seen naming another file (null while it is the same file). */
  replacedMs: number | null;
}

/** One item of a layer, in the branch's order then. */
export interface GuardLayerItem {
  position: number;
  /** The item's stored text, byte for byte as the session file held it. */
  messageData: string;
  /** Hex SHA-256 of `messageData`. */
  hash: string;
  /** The item is no longer on the branch (it was removed or replaced). */
  removed: boolean;
}

/** A row of the session file's `message_structure` as the guard keeps it. */
export interface SeenRow {
  structureId: number;
  branchId: string;
  sequenceNumber: number;
  messageId: number;
  /** The id of its item in this store. */
  itemId: number;
}

/** What the store holds, for the view and `disk use`. */
export interface GuardDiskUse {
  /** The store file with its -wal, in bytes (null when it does not exist). */
  fileBytes: number | null;
  items: number;
  /** Characters of item text (`message_data`) kept, each item once. */
  itemTextChars: number;
  layers: number;
  /** Rows of the lists: seen rows and layer rows. */
  listRows: number;
}

/** The guard store's record of one session file (path and identity). */
export interface GuardedFile {
  fileId: number;
  path: string;
  /** Marks of the last look (`guardObserver.ts`): null before the first. */
  marks: FileMarks | null;
  observedMs: number | null;
  /** The row the last look saw with the highest id, to tell the same file from another at the same inode. */
  witness: RowWitness | null;
  /**
   * A checksum of every structure row's (id, message id) at the last look (`pointerSum` in guardObserver.ts): a row
   * re-pointed to another message changes it even when the counts look like growth or stay the same. Null before.
   */
  pointerSum: string | null;
}

/**
 * One structure row as a look saw it, with its item's hash: a later look that finds this row id holding another
 * session, branch or place, or the same message id with other text, is looking at another file (recreated at a
 * reused inode, or overwritten in place), since no writer of the SDKs changes a row that way.
 */
export interface RowWitness {
  structureId: number;
  sessionId: string;
  branchId: string;
  sequenceNumber: number;
  messageId: number;
  /** Hex SHA-256 of the item's stored text. */
  hash: string;
}

/** What the last look saw of the whole file: tells a file that only grew from one where rows went. */
export interface FileMarks {
  structureCount: number;
  maxStructureId: number;
  messageCount: number;
  maxMessageId: number;
}

/** SHA-256 of an item's stored text (UTF-8): the item's address in the store. */
export function itemHash(messageData: string): Buffer {
  return createHash('sha256').update(messageData, 'utf8').digest();
}

const invalid = (message: string): HistoryGuardError => new HistoryGuardError('invalid', message);

/**
 * The file's birth time in ns as text, when the platform gives a real one (Linux through statx, macOS, Windows), else
 * undefined. A file deleted and recreated may get the same inode (ext4 reuses them), never the same birth time. Where
 * there is none, libuv reports 0 or copies the change time, which moves with every write: a birth time equal to the
 * change time is not used (a file created and written within one clock tick loses only this check, not the others).
 */
export function fileBirth(absolutePath: string): string | undefined {
  const st = statSync(absolutePath, { bigint: true, throwIfNoEntry: false });
  if (!st || st.birthtimeNs <= 0n || st.birthtimeNs === st.ctimeNs) return undefined;
  return st.birthtimeNs.toString();
}

function checkId(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string' || value === '') throw invalid(`The history guard needs ${what}.`);
  if (value.length > GUARD_LIMITS.idChars)
    throw invalid(
      `The ${what} is ${value.length.toLocaleString('en-US')} characters; at most ${GUARD_LIMITS.idChars.toLocaleString('en-US')}.`,
    );
}

/**
 * A store in a folder we cannot write is refused with `read-only` before SQLite tries: SQLite would open it read-only
 * or fail with "unable to open database file", and the guard would then lose what it was asked to keep.
 */
function assertWritableLocation(path: string): void {
  const absolute = resolve(path);
  const target = existsSync(absolute) ? absolute : dirname(absolute);
  try {
    accessSync(target, constants.W_OK);
  } catch {
    throw new HistoryGuardError(
      'read-only',
      `The history guard store ${path} cannot be written (${target} is read-only or missing), so the guard is off. Choose a writable place for it.`,
    );
  }
}

interface LayerRow {
  layer_id: number;
  session_id: string;
  branch_id: string;
  noticed_ms: number;
  cause: string;
  item_count: number;
  removed_count: number;
  file_id: number;
  replaced_ms: number | null;
}

export class HistoryGuardStore {
  private readonly statements: StatementCache;
  /** The store file this connection opened (device and inode), to tell when the path names another file or none. */
  private readonly identity: ReturnType<typeof captureFileIdentity>;

  private constructor(
    readonly db: SqliteDatabase,
    readonly path: string,
  ) {
    this.statements = new StatementCache(db);
    this.identity = captureFileIdentity(path);
  }

  /**
   * Whether the path still names the file this connection has open. SQLite keeps writing a store deleted or replaced
   * under it, into a file nobody will open again: a holder that keeps the store open between calls checks this (one
   * `stat`) and opens the path again when it does not.
   */
  atItsPath(): boolean {
    return this.db.isOpen && fileStateOf(this.identity) === 'ok';
  }

  /**
   * Opens (creating when missing and writable) the history guard store at `path`. A place that cannot be written
   * throws `HistoryGuardError('read-only')` unless `readonly` is asked for (reading layers).
   */
  static open(path: string, options: Partial<OpenOptions> = {}): HistoryGuardStore {
    if (!options.readonly) assertWritableLocation(path);
    return new HistoryGuardStore(openOwnStore(path, options, GUARD_STORE_FILE), path);
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  private stmt(sql: string): SqliteStatement {
    return this.statements.get(sql);
  }

  /**
   * The record of the session file at `sessionPath` as it is now (made on first use). Records of the same path with
   * another identity are marked replaced (their layers stay, under the old identity). Inside the caller's transaction
   * when there is one.
   */
  fileRecord(sessionPath: string, nowMs: number = Date.now()): GuardedFile {
    checkId(sessionPath, 'the session file path');
    const identity = captureFileIdentity(sessionPath);
    if (!identity) throw invalid(`${sessionPath} is not a file the history guard can follow (it does not exist, or it is in memory).`);
    const key = [identity.absolutePath, identity.dev.toString(), identity.ino.toString()] as const;
    const birth = fileBirth(identity.absolutePath);
    // The common case, every look after the first: the record is there and current; a read, no write transaction.
    const known = this.readRecord(key, identity.absolutePath);
    if (known && !known.replaced && !this.otherIdentityUnmarked(key) && (birth === undefined || known.birth === birth)) return known.file;
    return immediateTransaction(this.db, () => {
      const others = this.stmt('SELECT file_id FROM guard_files WHERE path = ? AND NOT (dev = ? AND ino = ?) AND replaced_ms IS NULL')
        .all<{ file_id: number }>(...key)
        .map((r) => Number(r.file_id));
      for (const fileId of others) this.retireFile(fileId, nowMs, false);
      let found = this.readRecord(key, identity.absolutePath);
      // The same device and inode but another birth time: the file was deleted and another created at a reused inode.
      if (found && found.birth !== undefined && birth !== undefined && found.birth !== birth) {
        this.retireFile(found.file.fileId, nowMs, true);
        found = undefined;
      }
      this.stmt('INSERT OR IGNORE INTO guard_files (path, dev, ino, first_seen_ms) VALUES (?, ?, ?, ?)').run(...key, nowMs);
      found = this.readRecord(key, identity.absolutePath);
      if (!found) throw invalid(`The history guard store lost its record of ${sessionPath}.`);
      // The same inode seen again at the path (a file moved away and back) is the same file: not replaced any more.
      // Its list was made layers when it went, so its next look is a first look (retireFile cleared its marks).
      if (found.replaced) this.stmt('UPDATE guard_files SET replaced_ms = NULL WHERE file_id = ?').run(found.file.fileId);
      if (birth !== undefined && found.birth === undefined)
        this.stmt("INSERT OR REPLACE INTO guard_meta (key, value) VALUES ('birth:' || ?, ?)").run(String(found.file.fileId), birth);
      return found.file;
    });
  }

  /**
   * The file of record `fileId` is no longer at its path (another file is there, or the same inode holds another
   * file): its list as last seen becomes layers (every branch of every session, nothing marked removed: what the guard
   * had seen of that file stays readable, under the old identity, marked replaced), the list and marks are cleared,
   * and with `rekey` its inode is renamed in the record (`<ino>~<file id>`) so the file now at that inode gets a record
   * of its own and the old one is never taken for the file there now. Inside a transaction.
   */
  retireFile(fileId: number, nowMs: number, rekey: boolean): void {
    immediateTransaction(this.db, () => {
      const rows = this.stmt(
        'SELECT session_id, branch_id, item_id FROM guard_seen WHERE file_id = ? ORDER BY session_id, branch_id, sequence_number, structure_id',
      ).all<{ session_id: string; branch_id: string; item_id: number }>(fileId);
      let at = 0;
      while (at < rows.length) {
        const first = rows[at]!;
        let end = at;
        while (end < rows.length && rows[end]!.session_id === first.session_id && rows[end]!.branch_id === first.branch_id) end++;
        const items = rows.slice(at, end).map((r) => ({ itemId: Number(r.item_id), removed: false }));
        if (items.length <= GUARD_LIMITS.itemsPerLayer)
          this.addLayer(fileId, first.session_id, first.branch_id, 'another-writer', items, nowMs);
        at = end;
      }
      this.stmt('DELETE FROM guard_seen WHERE file_id = ?').run(fileId);
      this.stmt(
        `UPDATE guard_files SET structure_count = NULL, max_structure_id = NULL, message_count = NULL, max_message_id = NULL,
         replaced_ms = COALESCE(replaced_ms, ?) WHERE file_id = ?`,
      ).run(nowMs, fileId);
      // The birth time stays: a file that comes back at the record's inode is known again only with the same one.
      this.stmt("DELETE FROM guard_meta WHERE key IN ('witness:' || ?, 'pointers:' || ?)").run(String(fileId), String(fileId));
      if (rekey) this.stmt("UPDATE guard_files SET ino = ino || '~' || file_id WHERE file_id = ?").run(fileId);
    });
  }

  private readRecord(
    key: readonly [string, string, string],
    absolutePath: string,
  ): { file: GuardedFile; replaced: boolean; birth: string | undefined } | undefined {
    const r = this.stmt(
      `SELECT file_id, structure_count, max_structure_id, message_count, max_message_id, replaced_ms FROM guard_files
       WHERE path = ? AND dev = ? AND ino = ?`,
    ).get<{
      file_id: number;
      structure_count: number | null;
      max_structure_id: number | null;
      message_count: number | null;
      max_message_id: number | null;
      replaced_ms: number | null;
    }>(...key);
    if (!r) return undefined;
    const meta = (name: string): string | undefined =>
      this.stmt('SELECT value FROM guard_meta WHERE key = ? || ?').get<{ value: string }>(name, String(r.file_id))?.value;
    const observed = meta('observed:');
    const witness = meta('witness:');
    const pointerSum = meta('pointers:');
    return {
      replaced: r.replaced_ms !== null,
      birth: meta('birth:'),
      file: {
        fileId: Number(r.file_id),
        path: absolutePath,
        marks:
          r.structure_count === null
            ? null
            : {
                structureCount: Number(r.structure_count),
                maxStructureId: Number(r.max_structure_id),
                messageCount: Number(r.message_count),
                maxMessageId: Number(r.max_message_id),
              },
        observedMs: observed !== undefined ? Number(observed) : null,
        witness: witness !== undefined ? (JSON.parse(witness) as RowWitness) : null,
        pointerSum: pointerSum ?? null,
      },
    };
  }

  /** Whether a record of the same path with another identity is not yet marked replaced. */
  private otherIdentityUnmarked(key: readonly [string, string, string]): boolean {
    return (
      this.stmt('SELECT 1 AS one FROM guard_files WHERE path = ? AND NOT (dev = ? AND ino = ?) AND replaced_ms IS NULL LIMIT 1').get(
        ...key,
      ) !== undefined
    );
  }

  /**
   * How durable the next commits are. A look that only keeps new rows may commit without waiting for the disk
   * (`relaxed`): lost to a power cut, it is taken again by the next look, since its marks are lost with it and the rows
   * are still in the session file. A layer is what a writer removed from the session file: it waits for the disk.
   */
  durability(mode: 'relaxed' | 'full'): void {
    this.db.exec(`PRAGMA synchronous = ${mode === 'relaxed' ? 'NORMAL' : 'FULL'}`);
  }

  /** Stores each text once (by its hash); the item ids, in the order given. Inside the caller's transaction. */
  putItems(texts: readonly string[]): number[] {
    const insert = this.stmt('INSERT OR IGNORE INTO guard_items (hash, message_data) VALUES (?, ?)');
    const find = this.stmt('SELECT item_id FROM guard_items WHERE hash = ?');
    return immediateTransaction(this.db, () =>
      texts.map((text) => {
        if (typeof text !== 'string') throw invalid('An item the history guard keeps must be its stored text.');
        const hash = itemHash(text);
        const added = insert.run(hash, text);
        if (added.changes === 1) return Number(added.lastInsertRowid);
        return Number(find.get<{ item_id: number }>(hash)?.item_id);
      }),
    );
  }

  /** The rows last seen of a session (every branch), by structure id. */
  seenRows(fileId: number, sessionId: string): Map<number, SeenRow> {
    const rows = this.stmt(
      `SELECT structure_id, branch_id, sequence_number, message_id, item_id FROM guard_seen WHERE file_id = ? AND session_id = ?`,
    ).all<{ structure_id: number; branch_id: string; sequence_number: number; message_id: number; item_id: number }>(fileId, sessionId);
    return new Map(
      rows.map((r) => [
        Number(r.structure_id),
        {
          structureId: Number(r.structure_id),
          branchId: r.branch_id,
          sequenceNumber: Number(r.sequence_number),
          messageId: Number(r.message_id),
          itemId: Number(r.item_id),
        },
      ]),
    );
  }

  /** The sessions the store has rows of for a file. */
  seenSessions(fileId: number): string[] {
    return this.stmt('SELECT DISTINCT session_id FROM guard_seen WHERE file_id = ?')
      .all<{ session_id: string }>(fileId)
      .map((r) => r.session_id);
  }

  /** Adds (or re-points) seen rows. Inside the caller's transaction. */
  putSeen(fileId: number, sessionId: string, rows: readonly SeenRow[]): void {
    const put = this.stmt(
      `INSERT OR REPLACE INTO guard_seen (file_id, session_id, structure_id, branch_id, sequence_number, message_id, item_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const r of rows) put.run(fileId, sessionId, r.structureId, r.branchId, r.sequenceNumber, r.messageId, r.itemId);
  }

  /** Forgets seen rows that are gone from the file. Inside the caller's transaction. */
  dropSeen(fileId: number, sessionId: string, structureIds: Iterable<number>): void {
    const drop = this.stmt('DELETE FROM guard_seen WHERE file_id = ? AND session_id = ? AND structure_id = ?');
    for (const id of structureIds) drop.run(fileId, sessionId, id);
  }

  /** Notes what this look saw of the whole file. Inside the caller's transaction. */
  setMarks(fileId: number, marks: FileMarks, nowMs: number, seen: { witness: RowWitness | null; pointerSum: string | null }): void {
    this.stmt(
      'UPDATE guard_files SET structure_count = ?, max_structure_id = ?, message_count = ?, max_message_id = ? WHERE file_id = ?',
    ).run(marks.structureCount, marks.maxStructureId, marks.messageCount, marks.maxMessageId, fileId);
    this.stmt("INSERT OR REPLACE INTO guard_meta (key, value) VALUES ('observed:' || ?, ?)").run(String(fileId), String(nowMs));
    for (const [name, value] of [
      ['witness:', seen.witness ? JSON.stringify(seen.witness) : null],
      ['pointers:', seen.pointerSum],
    ] as const) {
      if (value !== null) this.stmt('INSERT OR REPLACE INTO guard_meta (key, value) VALUES (? || ?, ?)').run(name, String(fileId), value);
      else this.stmt('DELETE FROM guard_meta WHERE key = ? || ?').run(name, String(fileId));
    }
  }

  /** The marks the store holds for a file now (another window's look may have moved them since this one read them). */
  currentMarks(fileId: number): FileMarks | null {
    const r = this.stmt('SELECT structure_count, max_structure_id, message_count, max_message_id FROM guard_files WHERE file_id = ?').get<{
      structure_count: number | null;
      max_structure_id: number | null;
      message_count: number | null;
      max_message_id: number | null;
    }>(fileId);
    if (!r || r.structure_count === null) return null;
    return {
      structureCount: Number(r.structure_count),
      maxStructureId: Number(r.max_structure_id),
      messageCount: Number(r.message_count),
      maxMessageId: Number(r.max_message_id),
    };
  }

  /**
   * Records a layer: `items` (item ids, in the branch's order before the change) with the positions now removed.
   * Returns its id. Inside the caller's transaction when there is one.
   */
  addLayer(
    fileId: number,
    sessionId: string,
    branchId: string,
    cause: LayerCause,
    items: readonly { itemId: number; removed: boolean }[],
    nowMs: number,
  ): number {
    checkId(sessionId, 'a session id');
    checkId(branchId, 'a branch id');
    if (items.length > GUARD_LIMITS.itemsPerLayer)
      throw invalid(
        `The branch held ${items.length.toLocaleString('en-US')} items; a layer keeps at most ${GUARD_LIMITS.itemsPerLayer.toLocaleString('en-US')}.`,
      );
    return immediateTransaction(this.db, () => {
      const removed = items.filter((i) => i.removed).length;
      const layerId = Number(
        this.stmt(
          `INSERT INTO guard_layers (file_id, session_id, branch_id, noticed_ms, cause, item_count, removed_count)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(fileId, sessionId, branchId, nowMs, cause, items.length, removed).lastInsertRowid,
      );
      const put = this.stmt('INSERT INTO guard_layer_items (layer_id, position, item_id, removed) VALUES (?, ?, ?, ?)');
      items.forEach((item, position) => put.run(layerId, position, item.itemId, item.removed ? 1 : 0));
      return layerId;
    });
  }

  /**
   * Our own compaction (or branch clear) of a guarded or unguarded file: the branch's items before it (their stored
   * texts, in order), all of which it removes. One transaction; the layer's id.
   */
  recordReplaced(sessionPath: string, sessionId: string, branchId: string, texts: readonly string[], nowMs: number = Date.now()): number {
    return immediateTransaction(this.db, () => {
      const file = this.fileRecord(sessionPath, nowMs);
      const ids = this.putItems(texts);
      return this.addLayer(
        file.fileId,
        sessionId,
        branchId,
        'our-compaction',
        ids.map((itemId) => ({ itemId, removed: true })),
        nowMs,
      );
    });
  }

  /**
   * The newest layer of our own compaction on a branch since `sinceMs` whose items include every one of `itemIds`:
   * what a look that finds those items gone should credit instead of recording a second layer.
   */
  ourCompactionCovering(fileId: number, sessionId: string, branchId: string, sinceMs: number, itemIds: readonly number[]): number | null {
    const layers = this.stmt(
      `SELECT layer_id FROM guard_layers WHERE file_id = ? AND session_id = ? AND branch_id = ? AND cause = 'our-compaction'
       AND noticed_ms >= ? ORDER BY noticed_ms DESC, layer_id DESC LIMIT 20`,
    ).all<{ layer_id: number }>(fileId, sessionId, branchId, sinceMs);
    for (const { layer_id } of layers) {
      const held = new Set(
        this.stmt('SELECT item_id FROM guard_layer_items WHERE layer_id = ?')
          .all<{ item_id: number }>(layer_id)
          .map((r) => Number(r.item_id)),
      );
      if (itemIds.every((id) => held.has(id))) return Number(layer_id);
    }
    return null;
  }

  /**
   * The layers of a session file's path (every identity it had: those of a replaced file say so), newest first;
   * `branchId` narrows to one branch. At most `GUARD_LIMITS.layersRead`.
   */
  layersOf(sessionPath: string, sessionId: string, branchId?: string): GuardLayer[] {
    checkId(sessionPath, 'the session file path');
    checkId(sessionId, 'a session id');
    const current = captureFileIdentity(sessionPath);
    const rows = readTransaction(this.db, () =>
      this.stmt(
        `SELECT l.*, f.replaced_ms, f.dev, f.ino FROM guard_layers l JOIN guard_files f ON f.file_id = l.file_id
         WHERE f.path = ? AND l.session_id = ? AND (? IS NULL OR l.branch_id = ?)
         ORDER BY l.noticed_ms DESC, l.layer_id DESC LIMIT ?`,
      ).all<LayerRow & { dev: string; ino: string }>(
        resolve(sessionPath),
        sessionId,
        branchId ?? null,
        branchId ?? null,
        GUARD_LIMITS.layersRead,
      ),
    );
    return rows.map((r) => {
      const sameFile = this.isFileNow(r, current);
      return {
        layerId: Number(r.layer_id),
        sessionId: r.session_id,
        branchId: r.branch_id,
        noticedMs: Number(r.noticed_ms),
        cause: r.cause as LayerCause,
        itemCount: Number(r.item_count),
        removedCount: Number(r.removed_count),
        oldIdentity: !sameFile,
        replacedMs: r.replaced_ms === null ? null : Number(r.replaced_ms),
      };
    });
  }

  /**
   * A layer's items in the branch's order then (its first `limit`, default all); `HistoryGuardError('unknown-layer')`
   * when there is no such layer.
   */
  layerItems(layerId: number, limit: number = GUARD_LIMITS.itemsPerLayer): GuardLayerItem[] {
    if (!Number.isSafeInteger(layerId) || layerId < 1) throw invalid(`${String(layerId)} is not a layer id.`);
    return readTransaction(this.db, () => {
      if (this.stmt('SELECT 1 AS one FROM guard_layers WHERE layer_id = ?').get(layerId) === undefined)
        throw new HistoryGuardError('unknown-layer', `The history guard store ${this.path} has no layer ${layerId}.`);
      return this.stmt(
        `SELECT li.position, li.removed, i.message_data, i.hash FROM guard_layer_items li JOIN guard_items i ON i.item_id = li.item_id
         WHERE li.layer_id = ? ORDER BY li.position LIMIT ?`,
      )
        .all<{ position: number; removed: number; message_data: string; hash: Uint8Array }>(layerId, limit)
        .map((r) => ({
          position: Number(r.position),
          messageData: r.message_data,
          hash: Buffer.from(r.hash).toString('hex'),
          removed: Number(r.removed) === 1,
        }));
    });
  }

  /** A layer's summary, or `HistoryGuardError('unknown-layer')`. */
  layer(layerId: number): GuardLayer & { path: string } {
    const r = readTransaction(this.db, () =>
      this.stmt(
        `SELECT l.*, f.replaced_ms, f.path, f.dev, f.ino FROM guard_layers l JOIN guard_files f ON f.file_id = l.file_id WHERE l.layer_id = ?`,
      ).get<LayerRow & { path: string; dev: string; ino: string }>(layerId),
    );
    if (!r) throw new HistoryGuardError('unknown-layer', `The history guard store ${this.path} has no layer ${layerId}.`);
    const current = captureFileIdentity(r.path);
    return {
      layerId: Number(r.layer_id),
      path: r.path,
      sessionId: r.session_id,
      branchId: r.branch_id,
      noticedMs: Number(r.noticed_ms),
      cause: r.cause as LayerCause,
      itemCount: Number(r.item_count),
      removedCount: Number(r.removed_count),
      oldIdentity: !this.isFileNow(r, current),
      replacedMs: r.replaced_ms === null ? null : Number(r.replaced_ms),
    };
  }

  /**
   * Whether record `r` is the file at its path now: the same device and inode, and the same birth time where both are
   * known (a file recreated at a reused inode, not yet looked at, is not taken for the old one).
   */
  private isFileNow(r: { file_id: number; dev: string; ino: string }, current: ReturnType<typeof captureFileIdentity>): boolean {
    if (!current || r.dev !== current.dev.toString() || r.ino !== current.ino.toString()) return false;
    const stored = this.stmt("SELECT value FROM guard_meta WHERE key = 'birth:' || ?").get<{ value: string }>(String(r.file_id))?.value;
    const now = stored === undefined ? undefined : fileBirth(current.absolutePath);
    return stored === undefined || now === undefined || now === stored;
  }

  /** What the store holds (every file's). */
  diskUse(): GuardDiskUse {
    const counts = readTransaction(this.db, () => ({
      items: this.stmt('SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(message_data)), 0) AS chars FROM guard_items').get<{
        n: number;
        chars: number;
      }>(),
      layers: this.stmt('SELECT COUNT(*) AS n FROM guard_layers').get<{ n: number }>(),
      seen: this.stmt('SELECT COUNT(*) AS n FROM guard_seen').get<{ n: number }>(),
      layerRows: this.stmt('SELECT COUNT(*) AS n FROM guard_layer_items').get<{ n: number }>(),
    }));
    const size = (p: string): number => statSync(p, { throwIfNoEntry: false })?.size ?? 0;
    return {
      fileBytes: existsSync(this.path) ? size(this.path) + size(`${this.path}-wal`) : null,
      items: Number(counts.items?.n ?? 0),
      itemTextChars: Number(counts.items?.chars ?? 0),
      layers: Number(counts.layers?.n ?? 0),
      listRows: Number(counts.seen?.n ?? 0) + Number(counts.layerRows?.n ?? 0),
    };
  }
}
