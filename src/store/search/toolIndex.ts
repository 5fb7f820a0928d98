/**
 * The search's index of tool items (issue 43): for each message of a session file that is a tool item (an item with
 * no role) or names a call (`call_id`), its own tool name folded as the search folds it, its call id, and whether it
 * is an output and whether it failed. That is all `tool:` and `is:failed` decide on besides the text, so with it a
 * scan reads only the messages that can match, where it read every tool item's text to learn names and call ids.
 *
 * A store of our own (src/store/sqlite/ownStoreFile.ts), one file per session file, in a folder the caller names (the
 * extension's global storage, the CLI's cache folder): never in or beside the session file, whose format is
 * Python's. It is kept current as the file grows: each search that uses it first indexes the messages written since
 * (message ids are AUTOINCREMENT, so every new message comes after the last one indexed; far behind, after the
 * search, `SearchIndexOption.later`), and it starts again from
 * nothing when the session file was replaced or rewritten (another file at the path, its id sequence gone back, or the
 * text of a message it kept a hash of changed).
 *
 * It only ever rules messages out (`ruledOut`): a message it keeps is judged and tested as before, so the scan's hits
 * are exactly those without it (test/unit/store/differential/searchScan.test.ts runs every query with it too;
 * test/unit/store/search/toolIndex.test.ts follows it through a file's life). docs/search.md says all of it.
 *
 * It is a cache: an index file that cannot be used as one (not SQLite, corrupt or cut short, of another format or
 * layout) is removed and made again (`useIndex`), where a lock held by another search only passes it over.
 */
import { closeSync, constants, mkdirSync, openSync, readSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import type { QueryContext } from '../inspector/queryContext';
import type { SessionDatabase } from '../inspector/sessionDatabase';
import { decodeMessageData } from '../inspector/rowDecoding';
import { quoteIdentifier } from '../inspector/tableDiscovery';
import { foldForSearch } from '../format/conversationText';
import { SessionDatabaseError, sqliteCodeOf } from '../errors';
import { captureFileIdentity } from '../sqlite/fileIdentity';
import { openOwnStore, StatementCache } from '../sqlite/ownStoreFile';
import { applyPageCache, ONE_PASS_PAGE_CACHE_KIB } from '../sqlite/pageCache';
import { immediateTransaction, type SqliteDatabase } from '../sqlite/sqliteDatabase';
import { errorMessage } from '../../shared/errorMessage';
import { isOutputItem, itemFacts } from './itemMatch';
import type { SearchQuery } from './searchQuery';
import {
  anchorsOf,
  FAILED,
  FAILED_ROWS,
  indexName,
  NAMELESS_CALLS,
  NAMELESS_TOOL_ITEMS,
  OUTPUT,
  pruneIndexes,
  realPathOf,
  RESOLVED,
  rowHash,
  SEARCH_INDEX_APPLICATION_ID,
  SEARCH_INDEX_FILE,
  SearchIndexError,
  TOOL_ITEM,
  UNRESOLVED_ROWS,
  withAnchor,
} from './toolIndexFile';

/**
 * Messages read per transaction of the index while it catches up: each commit keeps what was indexed so far. A chunk's
 * text and decoded items are garbage after it; at 5,000 (about 9 MB of text on the bench's file A) they outlived V8's
 * young generation, which the CLI holds small, and a first build's CLI search peaked at 101–108 MB against 96–98 at
 * 1,000, with the same build time (1.6–1.8 s).
 */
const CHUNK_MESSAGES = 1_000;
/** Call ids held while catching up, to resolve the answers that follow their calls without a lookup each. */
const MAX_TEACHERS_HELD = 100_000;

/** Where a caller keeps indexes, and who hears of an index that could not be used (the search goes on without it). */
export interface SearchIndexOption {
  dir: string;
  onProblem?(message: string): void;
  /**
   * Takes the catching up of an index further behind its file than `catchUpFirst` messages (a file's first such
   * search, or a file that grew a lot), to run once the search's hits are out: the worker after its last message, the
   * CLI after its summary. That search reads everything as without an index, so its first hits do not wait for the
   * index (1.4–1.6 s for the 404,000 messages of the bench's file A). Without `later`, the index catches up first.
   */
  later?(catchUp: () => void): void;
  /** The most messages an index catches up by before the scan when `later` is given (default `CATCH_UP_FIRST`). */
  catchUpFirst?: number;
  /**
   * Called after each chunk the index catches up by (`CHUNK_MESSAGES`): the CLI looks at its heap there, as it does
   * for each batch of hits (src/cli/heapSizing.ts). A first build decodes every message of the file: with full
   * collections marked in one pause and nothing to start them, V8 let it grow the heap to 150 MB on Node 22 and 24.
   */
  onChunk?(): void;
}

/** Messages an index catches up by before a scan (about 70 ms on the bench's file A); more go to `later`. */
export const CATCH_UP_FIRST = 20_000;

/** What the index rules out for a query: every message up to `through` but those kept or left to their row's name. */
export interface RuledOut {
  through: number;
  /** Messages the filters may match: judged and tested as without the index. */
  keep: number[];
  /**
   * Nameless tool items, which a tool name stored on one of their structure rows (spec §6) can make match; a message
   * also in `keep` is kept.
   */
  namedOnly: number[];
}

/** Whether the index can narrow `query`: it holds what `tool:` and `is:failed` decide on. */
export function indexServes(query: SearchQuery): boolean {
  return query.tools.length > 0 || query.failed;
}

/**
 * What the index of `db`'s file in `option.dir` rules out for `query`, after bringing the index up to the file's
 * messages now (`messageMax`, the largest message id the scan saw), or null when there is no index to use: the problem
 * goes to `option.onProblem`, or the catching up to `option.later`, and the search reads everything as it would
 * without one.
 */
export function ruledOutByIndex(
  option: SearchIndexOption,
  db: SessionDatabase,
  query: SearchQuery,
  messageMax: number,
  signal?: AbortSignal,
): RuledOut | null {
  return useIndex(option, db, 'was not used', (index) => {
    const indexed = index.indexedThrough(db);
    if (option.later && messageMax - indexed > (option.catchUpFirst ?? CATCH_UP_FIRST)) {
      // The search's signal stops it too (Ctrl+C after the CLI's summary, a cancel that comes late): between chunks.
      option.later(() => catchUpIndex(option, db, signal));
      return null;
    }
    const through = index.catchUp(db, signal, indexed, option.onChunk);
    return index.ruledOut(query, through);
  });
}

/** Brings the index of `db`'s file up to its messages now (what `later` is handed); problems go to `onProblem`. */
export function catchUpIndex(option: SearchIndexOption, db: SessionDatabase, signal?: AbortSignal): void {
  useIndex(option, db, 'was not brought up to date', (index) => index.catchUp(db, signal, undefined, option.onChunk));
}

/**
 * `use` of the index of `db`'s file, or null when it cannot be used (the problem, `failed`, goes to `onProblem`). An
 * index file that is not a usable index (`damageOf`) is removed with its -wal and -shm and made again, once, with a
 * note: a cache, nothing in it but what the session file holds. Only when the file is ours (`disposable`): a session
 * file or another program's database at its name is left as it is, and passed over. Anything else (a lock held by
 * another search, which never waits; a folder that cannot be made; a session file that cannot be read) passes the
 * index over, the file untouched.
 */
function useIndex<T>(option: SearchIndexOption, db: SessionDatabase, failed: string, use: (index: ToolIndex) => T): T | null {
  const path = indexPathOf(option.dir, db);
  for (let removed = false; ; removed = true) {
    let index: ToolIndex | undefined;
    let problem: unknown;
    try {
      index = ToolIndex.open(option.dir, db);
      return use(index);
    } catch (err) {
      problem = err;
    } finally {
      // Closed before the file is removed: Windows removes no open file.
      index?.close();
    }
    const damage = damageOf(problem);
    if (damage === null) {
      option.onProblem?.(`The search index in ${option.dir} ${failed}: ${errorMessage(problem)}`);
      return null;
    }
    if (!disposable(path)) {
      // SQLite's or our store's advice (restore it from a backup; choose another path) does not fit a file at a name
      // of ours in our cache folder.
      option.onProblem?.(
        `The search index in ${option.dir} ${failed}: ${path} is not a search index (another program's database, or a session file) and was left as it is. Move it out of the folder, and the next search makes the index again.`,
      );
      return null;
    }
    if (removed) {
      // Damaged again as it was made: the folder's disk, not the file; no second removal.
      option.onProblem?.(`The search index in ${option.dir} ${failed}: ${path} is ${damage}, though it was just made again.`);
      return null;
    }
    try {
      removeIndexFile(path);
    } catch (err) {
      option.onProblem?.(
        `The search index in ${option.dir} ${failed}: ${path} is ${damage} and could not be removed (${errorMessage(err)}).`,
      );
      return null;
    }
    option.onProblem?.(`The search index ${path} was ${damage}: it was removed, and is made again.`);
  }
}

/** Errors of the session file met by the index's reads of it: never a sign that the index is damaged. */
const sessionErrors = new WeakSet<object>();

/** `session.readWith(fn)`, its errors marked as the session file's (`sessionErrors`). */
function readSession<T>(session: SessionDatabase, fn: (ctx: QueryContext) => T): T {
  try {
    return session.readWith(fn);
  } catch (err) {
    if (typeof err === 'object' && err !== null) sessionErrors.add(err);
    throw err;
  }
}

/**
 * What makes the index file unusable as an index, as "was …" says it, when `err` says so; null for any other problem.
 * SQLite's "not a database" and "corrupt" (met at open, as `SessionDatabaseError`s, or by a later statement, as the
 * driver's errors) and our store's refusals of the file's format or layout. A lock (`SQLITE_BUSY`), a read-only
 * folder, a full disk or a symbolic link at the name are no damage of the file: removing it would not help.
 */
function damageOf(err: unknown): string | null {
  if (typeof err === 'object' && err !== null && sessionErrors.has(err)) return null;
  if (err instanceof SearchIndexError) {
    // A newer version's format too: the file is a cache, and this version would otherwise never have an index.
    if (err.problem === 'newer-format') return 'in the format of a newer version of Agent Session Inspector';
    return err.problem === 'not-ours' ? 'not laid out as a search index (tables, columns or indexes missing)' : null;
  }
  const problem = err instanceof SessionDatabaseError ? err.problem : sqliteCodeOf(err);
  if (problem === 'not-sqlite' || problem === 'SQLITE_NOTADB') return 'not a SQLite database';
  if (problem === 'corrupt' || problem === 'SQLITE_CORRUPT') return 'corrupt or cut short';
  return null;
}

/** The 16 bytes every SQLite database file begins with. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** Where a SQLite file's header keeps `PRAGMA application_id` (big-endian), and the header's length. */
const APPLICATION_ID_OFFSET = 68;
const HEADER_BYTES = 100;

/**
 * Whether the file at `path` is ours to remove: no SQLite database at all (garbage, or cut short within its header),
 * or one marked with the index's application id (set in the transaction that creates an index, so every index has
 * it). A SQLite database marked otherwise or not at all (a session file copied there, another program's) is not
 * removed, damaged or not: a search without the index is slower, a file lost is lost. The header is read without
 * following a symbolic link (which is no damage, and never reaches here: `openOwnStore` refuses it).
 */
function disposable(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return false;
  }
  try {
    const header = Buffer.alloc(HEADER_BYTES);
    const read = readSync(fd, header, 0, HEADER_BYTES, 0);
    if (read < HEADER_BYTES || !header.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) return true;
    return header.readUInt32BE(APPLICATION_ID_OFFSET) === SEARCH_INDEX_APPLICATION_ID;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes the index file at `path` and the files SQLite keeps beside it, those first: a search opening the index in
 * between then finds the damaged file (and removes it too) rather than a new file beside the old file's -wal, which
 * SQLite would apply to it. -journal: a rollback journal, left only by a search killed while it made the file.
 */
function removeIndexFile(path: string): void {
  for (const suffix of ['-wal', '-shm', '-journal', '']) rmSync(`${path}${suffix}`, { force: true });
}

/** Where the index of `session`'s file is in `dir`. */
function indexPathOf(dir: string, session: SessionDatabase): string {
  return join(dir, `${indexName(session.path)}.db`);
}

/** The partial indexes of the index's tables (its DDL's `CREATE INDEX`), which its queries name or rely on. */
const INDEX_NAMES = [...SEARCH_INDEX_FILE.ddl.matchAll(/CREATE INDEX (\w+)/g)].map((m) => m[1]!);

interface IndexMeta {
  file?: string;
  dev?: string;
  ino?: string;
  table?: string;
  through?: string;
  anchors?: string;
}

/** One session file's index; see the module comment. */
export class ToolIndex {
  private readonly statements: StatementCache;

  private constructor(
    private readonly db: SqliteDatabase,
    readonly path: string,
  ) {
    this.statements = new StatementCache(db);
  }

  /** The index of `session`'s file in `dir` (made when missing), the folder's oldest indexes past the bound removed. */
  static open(dir: string, session: SessionDatabase): ToolIndex {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = indexPathOf(dir, session);
    // Never wait on another search's catching up: a search that finds the index busy goes on without it.
    const db = openOwnStore(path, { readonly: false, fileMustExist: false, busyTimeoutMs: 0, driver: session.driver }, SEARCH_INDEX_FILE);
    try {
      // `openOwnStore` checks the tables and columns; a partial index missing would fail `ruledOut` at each search.
      const present = new Set(
        db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'index'")
          .all<{ name: string }>()
          .map((r) => r.name),
      );
      const missing = INDEX_NAMES.find((name) => !present.has(name));
      if (missing !== undefined) throw new SearchIndexError('not-ours', `${path} lacks the index ${missing} of a search index.`);
      // SQLite's default page cache, not better-sqlite3's 16 MB: a search reads each page of the index once, and a
      // first build wrote the whole index (16 MB on the bench's file A) through the cache, 10 MB of a CLI search's peak.
      applyPageCache(db, ONE_PASS_PAGE_CACHE_KIB);
    } catch (err) {
      db.close();
      throw err;
    }
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // Only the order in which indexes are removed depends on it.
    }
    pruneIndexes(dir, path);
    return new ToolIndex(db, path);
  }

  close(): void {
    this.db.close();
  }

  /**
   * The largest message id the index covers for `session`'s file, after starting it again from nothing (0) if the
   * file is not the one indexed (see `stillHolds`).
   */
  indexedThrough(session: SessionDatabase): number {
    const messages = session.tables.messages;
    const identity = captureFileIdentity(session.path);
    if (!identity) throw new Error(`${session.path} is not a file on disk.`);
    // Which file by device and inode (`file`, its real path, is for people reading the index): one file reached by
    // two paths has one index, named by that real path.
    const file = realPathOf(session.path);
    const meta = this.meta();
    const kept = anchorsOf(meta.anchors);
    const current =
      kept !== null &&
      meta.dev === String(identity.dev) &&
      meta.ino === String(identity.ino) &&
      meta.table === messages &&
      this.stillHolds(session, meta, kept);
    if (!current) {
      immediateTransaction(this.db, () => {
        this.db.exec('DELETE FROM tool_items');
        this.setMeta({ file, dev: String(identity.dev), ino: String(identity.ino), table: messages, through: '0', anchors: '[]' });
      });
    }
    return current ? Number(meta.through ?? 0) : 0;
  }

  /**
   * Indexes `session`'s messages past the last one indexed, a chunk per transaction, after starting again from nothing
   * if the file is not the one indexed (unless `indexed` says it checked that); returns the largest message id the
   * index covers (every message up to it). `signal` stops it between chunks: what was indexed stays. `onChunk` is
   * called after each chunk (`SearchIndexOption.onChunk`).
   */
  catchUp(session: SessionDatabase, signal?: AbortSignal, indexed?: number, onChunk?: () => void): number {
    // `indexed`: what `indexedThrough` just said (a search asks it first, to know how far behind the index is).
    let through = indexed ?? this.indexedThrough(session);
    let anchors = anchorsOf(this.meta().anchors) ?? [];
    const messages = session.tables.messages;
    const read = `SELECT id, message_data, session_id FROM ${quoteIdentifier(messages)} WHERE id > ? ORDER BY id LIMIT ?`;
    const insert = 'INSERT OR REPLACE INTO tool_items (message_id, name, call_id, flags) VALUES (?, ?, ?, ?)';
    const teacherOf = 'SELECT 1 AS found FROM tool_items WHERE call_id = ? AND flags & 3 = 1 LIMIT 1';
    // The call ids of the calls indexed by this catch-up (a whole file's, at its first): their answers come after them.
    const teachers = new Set<string>();
    while (!signal?.aborted) {
      // One snapshot per chunk: a writer commits its rows with ids above every id a snapshot shows (AUTOINCREMENT, one
      // writer at a time), so no message at or below the last id read can appear later.
      const rows = readSession(session, (ctx) => ctx.stmt(read).arrays<[number, unknown, unknown]>(through, CHUNK_MESSAGES));
      if (rows.length === 0) break;
      const first = rows[0]!;
      const last = rows[rows.length - 1]!;
      const chunkEnd = Number(last[0]);
      const done = immediateTransaction(this.db, () => {
        // Another search catching up the same index may have written this chunk already (between two of ours): take
        // its progress rather than set the index back to ours.
        const stored = this.meta();
        if (Number(stored.through ?? 0) >= chunkEnd) {
          through = Number(stored.through);
          anchors = anchorsOf(stored.anchors) ?? anchors;
          return false;
        }
        through = chunkEnd;
        anchors = withAnchor(withAnchor(anchors, Number(first[0]), rowHash(first[2], first[1])), through, rowHash(last[2], last[1]));
        const stmt = this.statements.get(insert);
        for (const [id, data] of rows) {
          const decoded = decodeMessageData(data);
          // A row that is not JSON is never a hit: the scan judges it so without the index too.
          if (!decoded.ok) continue;
          const facts = itemFacts(decoded.value);
          if (facts.role !== null && facts.callId === null) continue;
          let flags =
            (facts.role === null ? TOOL_ITEM : 0) | (isOutputItem(decoded.value) ? OUTPUT : 0) | (facts.failed !== null ? FAILED : 0);
          const callId = facts.callId;
          if (callId !== null && (flags & (TOOL_ITEM | OUTPUT)) === TOOL_ITEM) {
            // Bounded (a few MB of ids): past it, answers are resolved by a lookup in the index instead.
            if (teachers.size >= MAX_TEACHERS_HELD) teachers.clear();
            teachers.add(callId);
          }
          // Resolved as it is written when its call came first (in this catch-up, or indexed before), as calls do.
          else if (callId !== null && facts.toolName === null && (teachers.has(callId) || this.statements.get(teacherOf).get(callId)))
            flags |= RESOLVED;
          stmt.run(Number(id), facts.toolName === null ? null : foldForSearch(facts.toolName), callId, flags);
        }
        // An item written before its call is resolved once the call is indexed: the unresolved are few (such items, and
        // orphans), and read by their own index (the planner took the call ids' index, every item with a call id, for
        // every chunk: 0.9 s of a 2.2 s build on file A).
        this.statements
          .get(
            `UPDATE tool_items INDEXED BY tool_items_unresolved SET flags = flags | ${RESOLVED} WHERE ${UNRESOLVED_ROWS}
               AND EXISTS (SELECT 1 FROM tool_items c WHERE c.call_id = tool_items.call_id AND c.flags & 3 = 1)`,
          )
          .run();
        this.setMeta({ through: String(through), anchors: JSON.stringify(anchors) });
        return true;
      });
      onChunk?.();
      if (done && rows.length < CHUNK_MESSAGES) break;
    }
    return through;
  }

  /**
   * For `query`'s `tool:` and `is:failed` filters, the messages up to `through` that can still match: a message the
   * index does not hold (a message with a role and no call id, a row that is not JSON) can match neither. Tool names
   * are compared folded, as the exact test compares them. Kept:
   * - a call that may teach the scan a queried tool's call id (no role; named as queried, or with no name of its own,
   *   which a structure row may give it), whatever else the query asks (`tool:x is:failed`: the call did not fail,
   *   its output did, and is named by it);
   * - an item with a call id and no name of its own (an output) whose call id such a call carries, or whose call no
   *   indexed item carries (it may come later in the scan);
   * - for `is:failed`, only what failed, besides those calls.
   * A nameless tool item can still take a queried name from a structure row (spec §6 `tool_name`): every one is listed
   * in `namedOnly`, read only on such rows (the scan's own verdict of that name) unless it is kept.
   */
  ruledOut(query: SearchQuery, through: number): RuledOut {
    // Each set by one of the partial indexes (a few ms each on file A, where one pass deciding every row took 250 ms).
    const ids = (sql: string, ...params: (string | number)[]): number[] =>
      this.statements
        .get(sql)
        .column<number>(...params)
        .map((id) => Number(id));
    const failed = query.failed
      ? new Set(ids(`SELECT message_id FROM tool_items WHERE ${FAILED_ROWS} AND message_id <= ?`, through))
      : null;
    if (query.tools.length === 0) return { through, keep: [...(failed ?? [])], namedOnly: [] };
    const wanted = JSON.stringify(query.tools);
    // The calls that may teach the scan a queried tool's call id: named as queried, or with no name of their own.
    const teachers = [
      ...this.statements
        .get(`SELECT message_id, flags, call_id FROM tool_items WHERE name IN (SELECT value FROM json_each(?)) AND message_id <= ?`)
        .arrays<[number, number, string | null]>(wanted, through),
      ...this.statements
        .get(`SELECT message_id, flags, call_id FROM tool_items WHERE ${NAMELESS_CALLS} AND message_id <= ?`)
        .arrays<[number, number, string | null]>(through),
    ];
    const taught = teachers.filter(([, flags, callId]) => (flags & (TOOL_ITEM | OUTPUT)) === TOOL_ITEM && callId !== null);
    const byTool = new Set(teachers.map(([id]) => Number(id)));
    // The items that answer those calls, and those whose call the index does not hold.
    for (const id of ids(
      `SELECT o.message_id FROM tool_items o WHERE o.call_id IN (SELECT value FROM json_each(?)) AND o.name IS NULL AND o.message_id <= ?`,
      JSON.stringify(taught.map(([, , callId]) => callId)),
      through,
    ))
      byTool.add(id);
    for (const id of ids(`SELECT message_id FROM tool_items WHERE ${UNRESOLVED_ROWS} AND message_id <= ?`, through)) byTool.add(id);
    const nameless = ids(`SELECT message_id FROM tool_items WHERE ${NAMELESS_TOOL_ITEMS} AND message_id <= ?`, through);
    if (failed === null) return { through, keep: [...byTool], namedOnly: nameless };
    // With is:failed too: the teaching calls whatever they are, the rest only if they failed.
    const keep = new Set(taught.map(([id]) => Number(id)));
    for (const id of byTool) if (failed.has(id)) keep.add(id);
    return { through, keep: [...keep], namedOnly: nameless.filter((id) => failed.has(id)) };
  }

  private meta(): IndexMeta {
    const out: Record<string, string> = {};
    for (const r of this.statements.get('SELECT key, value FROM index_meta').all<{ key: string; value: string }>()) out[r.key] = r.value;
    return out as IndexMeta;
  }

  private setMeta(values: IndexMeta): void {
    const stmt = this.statements.get('INSERT OR REPLACE INTO index_meta (key, value) VALUES (?, ?)');
    for (const [key, value] of Object.entries(values)) if (value !== undefined) stmt.run(key, value);
  }

  /**
   * Whether the file still holds what was indexed: its id sequence has not gone back below the last id indexed (a
   * table dropped and made again starts it over, and its ids would name other messages), and every message whose
   * hash was kept (the first and last of each chunk indexed, thinned to `MAX_ANCHORS`) and is still there has the
   * same session and text. A file rewritten to hold the same message at each of those ids is taken for the same
   * file. A message deleted since (a history rewrite, a branch deleted) only leaves an entry that rules nothing in
   * wrongly: the scan never meets it.
   */
  private stillHolds(session: SessionDatabase, meta: IndexMeta, anchors: [number, string][]): boolean {
    const through = Number(meta.through ?? 0);
    if (!Number.isSafeInteger(through) || through < 0) return false;
    const messages = quoteIdentifier(session.tables.messages);
    return readSession(session, (ctx) => {
      const hasSequence = ctx.stmt("SELECT 1 AS ok FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'").get();
      // Without AUTOINCREMENT's sequence, a deleted message's id could come back with other text: no index.
      if (!hasSequence) throw new Error('the messages table keeps no id sequence (AUTOINCREMENT), so new messages could reuse ids');
      const seq = Number(
        ctx.stmt('SELECT seq FROM sqlite_sequence WHERE name = ?').get<{ seq: number }>(session.tables.messages)?.seq ?? 0,
      );
      if (seq < through) return false;
      const byId = ctx.stmt(`SELECT message_data, session_id FROM ${messages} WHERE id = ?`);
      for (const [id, hash] of anchors) {
        const row = byId.get<{ message_data: unknown; session_id: unknown }>(id);
        if (row && rowHash(row.session_id, row.message_data) !== hash) return false;
      }
      return true;
    });
  }
}
