/**
 * Import of a JSON export (lossless, see `jsonExport.ts`) or a JSONL file of items (numbered as
 * `AdvancedSQLiteSession.addItems` numbers them) into a NEW session of a writable database. The input is read and
 * checked completely before the database is touched, and everything is written in one transaction, so a malformed
 * file, a taken session id or a cancel leaves the database as it was.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession } from '../session/advancedSqliteSession';
import { InvalidArgumentError, describeDatabaseError } from '../errors';
import { checkOutputPath, refuseSymlinks } from '../files/outputGuard';
import { classifyItem } from '../format/itemClassification';
import { toStoredItem } from '../format/itemShape';
import { pythonJsonDumps } from '../format/pythonJson';
import { BRANCH_RESERVATIONS_DDL } from '../format/schema';
import { CommitTarget, type CommandWords } from '../sqlite/commitTarget';
import { enableWal, openSessionConnection } from '../sqlite/sessionConnection';
import type { DriverName, SqliteDatabase, SqliteStatement } from '../sqlite/sqliteDatabase';
import { discoverSessionTables, quoteIdentifier, type DiscoveredTables } from '../inspector/tableDiscovery';
import { boundedLines } from './boundedLines';
import { TransferError, throwIfCancelled } from './exportErrors';
import { formatCount, MAX_IMPORT_ITEM_CHARS, MAX_IMPORT_JSON_DEPTH, nestsDeeperThan } from './importLimits';
import { parseJsonExport, type SessionExportHeader } from './jsonParse';
import type { ExportedMessage, ExportedSessionRow, ExportedStructureRow, ExportedUsageRow, SessionExport } from './jsonExport';
import { NotLineLayout, readJsonExportLines } from './jsonStream';
import type { ProgressOptions } from './transferTypes';

export interface ImportOptions extends ProgressOptions {
  /** The new session's id. Default: the JSON export's own id; required for JSONL (which names no session). */
  sessionId?: string;
  /** Create the session tables (Python's schema) when the database lacks them; a missing file is created too. */
  createTables?: boolean;
  driver?: DriverName | 'auto';
  busyTimeoutMs?: number;
  /**
   * A branch's JSON export imported with that branch as the new session's `main`: the branch an agent's session starts
   * on, so it continues the conversation. Without it the branch keeps its name and the session has no `main`, which
   * an agent opening the session sees as empty (the doctor's `empty-main`). Refused for a whole session's export,
   * whose branches keep their names; a JSONL import always goes to `main`.
   */
  asMain?: boolean;
}

export interface ImportResult {
  sessionId: string;
  items: number;
  branches: number;
  /** True when the tables (or the file) had to be created. */
  createdTables: boolean;
  /** With `asMain`: the export's branch, now `main`. */
  mainFrom?: string;
  /** A branch's export imported under its own name (not `main`): the new session has no `main`. */
  withoutMain?: string;
}

export type ImportFormat = 'json' | 'jsonl';

/** The format of an import file: by extension (`.json`, `.jsonl`/`.ndjson`), else by its first line. */
export function detectImportFormat(filePath: string): ImportFormat {
  if (/\.(jsonl|ndjson)$/i.test(filePath)) return 'jsonl';
  if (/\.json$/i.test(filePath)) return 'json';
  // A JSON export starts with a line holding only "{"; a JSONL file's first line is a whole item.
  const head = readHead(filePath, 4096);
  return head.split('\n', 1)[0]?.trim() === '{' ? 'json' : 'jsonl';
}

/**
 * Checks, before anything is asked or written, that `filePath` can be imported at all: a JSON export, or a JSONL file
 * whose first item line is an item. Throws a `malformed` TransferError saying what the file is instead (a Markdown
 * export is for reading; it cannot be imported). Only the head of the file is read; the import checks every line.
 */
export function checkImportFile(filePath: string): ImportFormat {
  const format = detectImportFormat(filePath);
  if (format === 'json') return format;
  const name = basename(filePath);
  const head = readHead(filePath, 64 * 1024);
  if (/\.(md|markdown)$/i.test(filePath) || /^(#|---\s*$)/.test(head.trimStart()))
    throw new TransferError(
      'malformed',
      `${name} is Markdown, which is for reading: import takes a JSON export (.json) or a JSONL file with one item per line (.jsonl).`,
    );
  const lines = head.split('\n');
  // The last line of the head may be cut; a file that short is read whole, so its last line is whole.
  const whole = head.length < 64 * 1024 ? lines : lines.slice(0, -1);
  const index = whole.findIndex((l) => l.trim() !== '');
  if (index >= 0) encodeLine(whole[index] as string, index + 1);
  return format;
}

function readHead(filePath: string, bytes: number): string {
  const fd = openSync(filePath, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const n = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Imports `filePath` (JSON export or JSONL, see `detectImportFormat`) into `dbPath`. */
export async function importSessionFile(dbPath: string, filePath: string, options: ImportOptions = {}): Promise<ImportResult> {
  // The database is what import writes: never the export it reads (by any path or link), which SQLite would wreck; and a
  // new database is never created through a link planted at its path (OutputFileError).
  checkOutputPath(dbPath, { overwrite: true, inputs: [filePath] });
  if (!existsSync(dbPath)) refuseSymlinks(dbPath, 'session database');
  return detectImportFormat(filePath) === 'json' ? importJsonFile(dbPath, filePath, options) : importJsonlFile(dbPath, filePath, options);
}

/** Inserts a JSON export's rows into a new session, inside the caller's transaction. */
class JsonRowWriter {
  private readonly ids: (number | bigint)[] = [];
  private insertMessage: SqliteStatement | undefined;
  private insertStructure: SqliteStatement | undefined;
  private insertUsage: SqliteStatement | undefined;
  readonly branches = new Set<string>();
  constructor(
    private readonly db: SqliteDatabase,
    private readonly tables: DiscoveredTables,
    private readonly sessionId: string,
    private readonly dbPath: string,
    /** The branch written as `main` (`ImportOptions.asMain`), or null. */
    private readonly asMain: string | null = null,
  ) {}

  private branchOf(branchId: string): string {
    return branchId === this.asMain ? 'main' : branchId;
  }

  get messageCount(): number {
    return this.ids.length;
  }

  session(row: ExportedSessionRow | null): void {
    const { db, tables } = this;
    if (!row || tables.sessions === null) return;
    const cols = ['session_id'];
    const values: (string | null)[] = [this.sessionId];
    if (tables.sessionsHasCreatedAt) {
      cols.push('created_at');
      values.push(row.created_at);
    }
    if (tables.sessionsHasUpdatedAt) {
      cols.push('updated_at');
      values.push(row.updated_at);
    }
    db.prepare(`INSERT INTO ${quoteIdentifier(tables.sessions)} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(
      ...values,
    );
  }

  /**
   * The export's reserved branch ids (spec §8.1), so the copy refuses a deleted branch's name as the original does;
   * the table is made first where the file predates it, as the session class makes it before its first reservation.
   */
  reservations(ids: readonly string[] | undefined): void {
    if (!ids || ids.length === 0) return;
    if (!this.tables.branchReservations) this.db.exec(BRANCH_RESERVATIONS_DDL);
    const reserve = this.db.prepare('INSERT OR IGNORE INTO branch_reservations (session_id, branch_id) VALUES (?, ?)');
    for (const id of ids) reserve.run(this.sessionId, id);
  }

  message(m: ExportedMessage): void {
    const t = quoteIdentifier(this.tables.messages);
    const withTime = this.tables.messagesHasCreatedAt;
    this.insertMessage ??= this.db.prepare(
      withTime
        ? `INSERT INTO ${t} (session_id, message_data, created_at) VALUES (?, ?, ?)`
        : `INSERT INTO ${t} (session_id, message_data) VALUES (?, ?)`,
    );
    const args = withTime ? [this.sessionId, storedData(m), m.created_at] : [this.sessionId, storedData(m)];
    this.ids.push(this.insertMessage.run(...args).lastInsertRowid);
  }

  structure(s: ExportedStructureRow): void {
    this.insertStructure ??= this.db.prepare(
      `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
         branch_turn_number, tool_name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const branchId = this.branchOf(s.branch_id);
    this.branches.add(branchId);
    this.insertStructure.run(
      this.sessionId,
      this.ids[s.message_ref]!,
      branchId,
      s.message_type,
      s.sequence_number,
      s.user_turn_number,
      s.branch_turn_number,
      s.tool_name,
      s.created_at,
    );
  }

  usage(u: ExportedUsageRow): void {
    if (!this.tables.turnUsage)
      throw new TransferError('missing-tables', `${this.dbPath} has no turn_usage table for the export's usage rows.`);
    this.insertUsage ??= this.db.prepare(
      `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens,
         input_tokens_details, output_tokens_details, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertUsage.run(
      this.sessionId,
      this.branchOf(u.branch_id),
      u.user_turn_number,
      u.requests,
      u.input_tokens,
      u.output_tokens,
      u.total_tokens,
      u.input_tokens_details,
      u.output_tokens_details,
      u.created_at,
    );
  }
}

/** What a message row's `message_data` was: its text, or for a BLOB (`message_data_type`) its bytes. */
function storedData(m: ExportedMessage): string | Uint8Array {
  if (m.message_data_type !== 'blob') return m.message_data;
  return m.message_data_base64 !== undefined ? Buffer.from(m.message_data_base64, 'base64') : Buffer.from(m.message_data, 'utf8');
}

/**
 * A session id given for the import, refused when blank: an id of only spaces is a slip (an empty variable, a stray
 * quote), and its session would show in every list as nothing at all.
 */
function givenSessionId(sessionId: string): string {
  if (sessionId.trim() === '') throw new InvalidArgumentError(`The new session's id must not be blank (got ${JSON.stringify(sessionId)}).`);
  return sessionId;
}

/** The branch `asMain` renames: the export's one branch; none for a plain session or a branch that is `main`. */
function asMainBranch(header: SessionExportHeader, options: ImportOptions): string | null {
  if (!options.asMain) return null;
  if (header.scope !== 'branch')
    throw new InvalidArgumentError(
      "asMain imports a branch's export as the session's main; this file holds a whole session, whose branches keep their names.",
    );
  return header.structured && header.branch !== null && header.branch !== 'main' ? header.branch : null;
}

/** What the result says of `main`: the branch renamed to it, or the branch a session without it was given. */
function mainOf(header: SessionExportHeader, rename: string | null, branches: ReadonlySet<string>): Partial<ImportResult> {
  if (rename !== null) return { mainFrom: rename };
  if (header.scope === 'branch' && header.structured && header.branch !== null && !branches.has('main'))
    return { withoutMain: header.branch };
  return {};
}

function sessionIdFor(header: SessionExportHeader, options: ImportOptions): string {
  if (options.sessionId !== undefined) return givenSessionId(options.sessionId);
  const sessionId = header.session?.session_id;
  if (!sessionId)
    throw new TransferError('malformed', 'The export names no session (its "session" is null): give a session id.', undefined, '$.session');
  if (sessionId.trim() === '')
    throw new TransferError('malformed', "The export's session id is blank: give a session id.", undefined, '$.session.session_id');
  return sessionId;
}

/** Imports a parsed JSON export (`parseJsonExport`) as a new session. */
export async function importJsonExport(dbPath: string, doc: SessionExport, options: ImportOptions = {}): Promise<ImportResult> {
  const sessionId = sessionIdFor(doc, options);
  const rename = asMainBranch(doc, options);
  const target = await openTarget(dbPath, sessionId, doc.structured, options);
  const { db, tables } = target;
  try {
    const total = doc.messages.length;
    const writer = new JsonRowWriter(db, tables, sessionId, dbPath, rename);
    await writeTransaction(target, sessionId, async () => {
      writer.session(doc.session);
      writer.reservations(doc.reserved_branches);
      for (const m of doc.messages) {
        writer.message(m);
        if (writer.messageCount % 1000 === 0) {
          throwIfCancelled(options.signal);
          options.onProgress?.(writer.messageCount, total);
        }
      }
      for (const s of doc.structure) writer.structure(s);
      for (const u of doc.usage) writer.usage(u);
      throwIfCancelled(options.signal);
    });
    options.onProgress?.(total, total);
    return {
      sessionId,
      items: total,
      branches: doc.structured ? writer.branches.size : 1,
      createdTables: target.created,
      ...mainOf(doc, rename, writer.branches),
    };
  } finally {
    db.close();
  }
}

/**
 * `filePath` is a regular file to read: `not-found` when nothing is there, `malformed` for a folder (read, it failed as
 * EISDIR) or a pipe, a device or a socket (read, a pipe waited forever for a writer).
 */
function requireImportFile(filePath: string): void {
  const here = statSync(filePath, { throwIfNoEntry: false });
  if (!here) throw new TransferError('not-found', `${filePath} does not exist.`);
  if (here.isDirectory()) throw new TransferError('malformed', `${filePath} is a folder, not an export file.`);
  if (!here.isFile())
    throw new TransferError('malformed', `${filePath} is not a regular file (a pipe, a device or a socket), so not an export file.`);
}

/** Above this size a JSON export not in the line layout is refused rather than parsed whole (V8's string limit is ~1 GiB). */
const WHOLE_PARSE_LIMIT = 256 * 1024 * 1024;

/**
 * Imports a JSON export file. The layout the export writes is read a line at a time, twice (checked, then written),
 * so the file's size does not matter; any other layout of valid JSON is parsed whole (up to 256 MiB).
 */
export async function importJsonFile(dbPath: string, filePath: string, options: ImportOptions = {}): Promise<ImportResult> {
  requireImportFile(filePath);
  let header: SessionExportHeader | undefined;
  let total = 0;
  try {
    for await (const event of readJsonExportLines(filePath)) {
      if (event.kind === 'header') header = event.header;
      else if (event.kind === 'message' && ++total % 5000 === 0) throwIfCancelled(options.signal);
    }
  } catch (err) {
    if (!(err instanceof NotLineLayout)) throw err;
    if (statSync(filePath).size > WHOLE_PARSE_LIMIT) {
      throw new TransferError(
        'malformed',
        `${filePath} is not laid out as the JSON export writes it (${err.message}), and is too large to read whole.`,
      );
    }
    return importJsonExport(dbPath, parseJsonExport(readFileSync(filePath, 'utf8')), options);
  }
  const sessionId = sessionIdFor(header!, options);
  const rename = asMainBranch(header!, options);
  const target = await openTarget(dbPath, sessionId, header!.structured, options);
  const { db, tables } = target;
  try {
    const writer = new JsonRowWriter(db, tables, sessionId, dbPath, rename);
    await writeTransaction(target, sessionId, async () => {
      for await (const event of readJsonExportLines(filePath)) {
        if (event.kind === 'header') {
          writer.session(event.header.session);
          writer.reservations(event.header.reserved_branches);
        } else if (event.kind === 'message') {
          writer.message(event.row);
          if (writer.messageCount % 1000 === 0) {
            throwIfCancelled(options.signal);
            options.onProgress?.(writer.messageCount, total);
          }
        } else if (event.kind === 'structure') writer.structure(event.row);
        else writer.usage(event.row);
      }
      throwIfCancelled(options.signal);
    });
    options.onProgress?.(total, total);
    return {
      sessionId,
      items: total,
      branches: header!.structured ? writer.branches.size : 1,
      createdTables: target.created,
      ...mainOf(header!, rename, writer.branches),
    };
  } finally {
    db.close();
  }
}

/** One checked JSONL line: the item in the stored (Responses) shape, encoded as `addItems` encodes it. */
interface EncodedLine {
  text: string;
  messageType: string;
  toolName: string | null;
}

function encodeLine(line: string, lineNumber: number): EncodedLine | null {
  if (line.trim() === '') return null;
  // Measured before parsing: making the stored item and its JSON recurses, and would overflow the stack.
  if (nestsDeeperThan(line, MAX_IMPORT_JSON_DEPTH)) {
    throw new TransferError(
      'malformed',
      `Line ${lineNumber}: the item nests arrays and objects more than ${MAX_IMPORT_JSON_DEPTH} levels deep, the bound of an imported item.`,
      lineNumber,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new TransferError(
      'malformed',
      `Line ${lineNumber}: not valid JSON (${err instanceof Error ? err.message : String(err)}).`,
      lineNumber,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TransferError('malformed', `Line ${lineNumber}: an item must be a JSON object.`, lineNumber);
  }
  const r = value as Record<string, unknown>;
  if (typeof r.type !== 'string' && typeof r.role !== 'string') {
    throw new TransferError('malformed', `Line ${lineNumber}: an item needs a "type" or a "role".`, lineNumber);
  }
  try {
    const stored = toStoredItem(value as AgentInputItem);
    return { text: pythonJsonDumps(stored), ...classifyItem(stored) };
  } catch (err) {
    throw new TransferError('malformed', `Line ${lineNumber}: ${err instanceof Error ? err.message : String(err)}`, lineNumber);
  }
}

/** A JSONL file's lines, each one item: a line longer than an item may be is refused before it is read whole. */
async function* jsonlLines(filePath: string): AsyncGenerator<{ line: string; n: number }> {
  const tooLong = (n: number) =>
    new TransferError(
      'malformed',
      `Line ${n}: longer than ${formatCount(MAX_IMPORT_ITEM_CHARS)} characters (32 MiB), the bound of an imported item.`,
      n,
    );
  let n = 0;
  for await (const line of boundedLines(filePath, MAX_IMPORT_ITEM_CHARS, tooLong)) {
    yield { line: n === 0 ? line.replace(/^\uFEFF/, '') : line, n: ++n };
  }
}

/**
 * Imports a JSONL file of items (JS-shaped `@openai/agents` items or stored Responses items) as a new session on
 * branch `main`: the same message and structure rows `addItems` would write for them in one call. The file is read
 * twice (checked, then written), so it is never held in memory.
 */
export async function importJsonlFile(dbPath: string, filePath: string, options: ImportOptions = {}): Promise<ImportResult> {
  if (options.sessionId === undefined) throw new TransferError('malformed', 'A JSONL file names no session: give the new session id.');
  const sessionId = givenSessionId(options.sessionId);
  requireImportFile(filePath);
  let total = 0;
  for await (const { line, n } of jsonlLines(filePath)) {
    if (encodeLine(line, n)) total++;
    if (n % 5000 === 0) throwIfCancelled(options.signal);
  }
  if (total === 0) throw new TransferError('malformed', `${filePath} holds no items.`, 1);
  const target = await openTarget(dbPath, sessionId, true, options);
  const { db, tables } = target;
  try {
    await writeTransaction(target, sessionId, async () => {
      // A plain INSERT: the session was found free under the write lock, so a row there now is a bug, not a merge.
      if (tables.sessions !== null) db.prepare(`INSERT INTO ${quoteIdentifier(tables.sessions)} (session_id) VALUES (?)`).run(sessionId);
      const insertMessage = db.prepare(`INSERT INTO ${quoteIdentifier(tables.messages)} (session_id, message_data) VALUES (?, ?)`);
      const insertStructure = db.prepare(
        `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number,
           branch_turn_number, tool_name) VALUES (?, ?, 'main', ?, ?, ?, ?, ?)`,
      );
      // spec §7: items before the first user message are turn 0; each user message opens the next turn.
      let sequence = 0;
      let turn = 0;
      for await (const { line, n } of jsonlLines(filePath)) {
        const row = encodeLine(line, n);
        if (!row) continue;
        if (row.messageType === 'user') turn++;
        const id = insertMessage.run(sessionId, row.text).lastInsertRowid;
        insertStructure.run(sessionId, id, row.messageType, ++sequence, turn, turn, row.toolName);
        if (sequence % 1000 === 0) {
          throwIfCancelled(options.signal);
          options.onProgress?.(sequence, total);
        }
      }
      throwIfCancelled(options.signal);
    });
    options.onProgress?.(total, total);
    return { sessionId, items: total, branches: 1, createdTables: target.created };
  } finally {
    db.close();
  }
}

/**
 * BEGIN IMMEDIATE … COMMIT around an async body (the connection is ours alone, so awaiting inside is safe). SQLite's
 * errors (a lock held past the busy timeout, a full disk) become `SessionDatabaseError`s that say what to do.
 *
 * The session id is checked free again once the lock is held: `openTarget`'s look came before it, and another writer
 * (an agent between its BEGIN IMMEDIATE and COMMIT) may have created the session since. Without this look the import
 * would merge into that session (JSONL) or fail on SQLite's UNIQUE constraint (JSON).
 *
 * The path must still name the file `openTarget` opened, under the lock and last of all before COMMIT: another file
 * renamed over it meanwhile (or the path deleted) would take the import into the old file, out of everyone's sight.
 */
async function writeTransaction(target: ImportTarget, sessionId: string, fn: () => Promise<void>): Promise<void> {
  const { db, tables, file } = target;
  try {
    db.exec('BEGIN IMMEDIATE');
    file.checkLocked();
    refuseTakenSession(db, tables, sessionId);
    await fn();
    file.recheck(db);
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err instanceof TransferError ? err : describeDatabaseError(err, db.path);
  }
}

/** How a refused import words it (`CommitTarget`). */
function importWords(dbPath: string): CommandWords {
  return {
    during: 'the import ran',
    nothing: 'imported',
    advice: {
      replaced: `Run the import again if the file now at ${dbPath} is the one to import into.`,
      deleted: `Put the file back, or import into it where it is now.`,
    },
  };
}

interface ImportTarget {
  db: SqliteDatabase;
  tables: DiscoveredTables;
  /** The file opened, which the import must commit into. */
  file: CommitTarget;
  created: boolean;
}

/**
 * Opens `dbPath` for the import: checks the session id is free and the tables are there, creating them (through
 * `AdvancedSQLiteSession`, so they are exactly Python's) when allowed.
 */
async function openTarget(dbPath: string, sessionId: string, needStructure: boolean, options: ImportOptions): Promise<ImportTarget> {
  throwIfCancelled(options.signal);
  const connect = () =>
    openSessionConnection(dbPath, { deferWal: true, fileMustExist: true, driver: options.driver, busyTimeoutMs: options.busyTimeoutMs });
  let created = false;
  if (!existsSync(dbPath)) {
    if (!options.createTables)
      throw new TransferError('missing-tables', `${dbPath} does not exist: allow creating it with the session tables.`);
    new AdvancedSQLiteSession({ dbPath, sessionId, createTables: true, driver: options.driver }).close();
    created = true;
  }
  // Taken before SQLite opens the path: a file renamed over it in between is then refused, never taken for the target.
  const file = CommitTarget.at(dbPath, importWords(dbPath));
  let db = connect();
  try {
    let tables = findTables(db, dbPath);
    // Looked at before anything is created, and again under the write lock (`writeTransaction`).
    if (tables) refuseTakenSession(db, tables, sessionId);
    if (!tables || (needStructure && (!tables.messageStructure || !tables.turnUsage))) {
      if (!options.createTables) {
        throw new TransferError(
          'missing-tables',
          tables
            ? `${dbPath} has no branch tables (message_structure, turn_usage) for this session; allow creating them.`
            : `${dbPath} has no session tables; allow creating them.`,
        );
      }
      db.close();
      new AdvancedSQLiteSession({ dbPath, sessionId, createTables: true, driver: options.driver }).close();
      created = true;
      db = connect();
      tables = findTables(db, dbPath);
      if (!tables) throw new TransferError('missing-tables', `${dbPath}: the session tables could not be created.`);
    }
    enableWal(db, options.busyTimeoutMs);
    return { db, tables, file, created };
  } catch (err) {
    db.close();
    throw err instanceof TransferError ? err : describeDatabaseError(err, dbPath);
  }
}

function findTables(db: SqliteDatabase, dbPath: string): DiscoveredTables | null {
  try {
    return discoverSessionTables(db, dbPath);
  } catch (err) {
    if ((err as { problem?: string }).problem === 'not-session-database') return null;
    throw err;
  }
}

/** Throws `session-exists` when any session table has a row of `sessionId`. */
function refuseTakenSession(db: SqliteDatabase, tables: DiscoveredTables, sessionId: string): void {
  const q = (table: string) =>
    db.prepare(`SELECT 1 FROM ${quoteIdentifier(table)} WHERE session_id = ? LIMIT 1`).get(sessionId) !== undefined;
  const taken =
    q(tables.messages) ||
    (tables.sessions !== null && q(tables.sessions)) ||
    (tables.messageStructure && q('message_structure')) ||
    (tables.turnUsage && q('turn_usage'));
  if (taken) throw new TransferError('session-exists', `${db.path} already has a session '${sessionId}'; import it under another id.`);
}
