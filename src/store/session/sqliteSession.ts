import type { AgentInputItem, Session } from '@openai/agents';
import { checkLimitArgument, checkSessionId } from './argumentChecks';
import { ConnectionLifetime } from '../sqlite/connectionLifetime';
import { fromStoredItems, toStoredItem } from '../format/itemShape';
import { describeDatabaseError } from '../errors';
import { captureFileIdentity, noteWal, type FileIdentity } from '../sqlite/fileIdentity';
import { pythonJsonDumps, pythonJsonLoads, type Decoded } from '../format/pythonJson';
import { DEFAULT_TABLE_NAMES, baseSchemaDdl, type TableNames } from '../format/schema';
import { openSessionConnection, retryWhileBusy, sessionWrite } from '../sqlite/sessionConnection';
import { checkSessionSettings } from './sessionSettings';
import { type SqliteDatabase } from '../sqlite/sqliteDatabase';
import type { SQLiteSessionOptions, SessionSettings } from '../types';

/**
 * The plain SQLite session (Python's `SQLiteSession`): the base tables only, no branches, no usage. Items are
 * stored in Python's JSON encoding, so Python's `SQLiteSession` reads and writes the same rows.
 */
export class SQLiteSession implements Session {
  readonly sessionId: string;
  readonly sessionSettings: SessionSettings;
  protected readonly db: SqliteDatabase;
  protected readonly tables: TableNames;
  private readonly dbPath: string;
  /** The file opened (undefined for `:memory:`), checked before every call (spec §11). */
  private readonly file: FileIdentity | undefined;
  private readonly lifetime: ConnectionLifetime;

  constructor(options: SQLiteSessionOptions) {
    checkSessionId(options.sessionId);
    this.sessionId = options.sessionId;
    this.sessionSettings = checkSessionSettings(options.sessionSettings);
    this.tables = {
      sessions: options.sessionsTable ?? DEFAULT_TABLE_NAMES.sessions,
      messages: options.messagesTable ?? DEFAULT_TABLE_NAMES.messages,
    };
    this.dbPath = options.dbPath ?? ':memory:';
    this.db = openSessionConnection(this.dbPath, options);
    this.lifetime = new ConnectionLifetime(this.db);
    this.file = captureFileIdentity(this.dbPath);
    if (!this.db.readonly) {
      try {
        retryWhileBusy(options.busyTimeoutMs, () =>
          this.write(() => {
            for (const ddl of baseSchemaDdl(this.tables)) this.db.exec(ddl);
          }),
        );
      } catch (err) {
        this.db.close();
        throw describeDatabaseError(err, this.dbPath);
      }
    }
    noteWal(this.file);
    // Watched only when writable: a read-only connection cannot checkpoint its -wal into the old file (spec §11).
    this.lifetime.hold(this.file, !this.db.readonly);
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /** The session's items as the JS runner takes them (stored Responses items converted, see `itemShape.ts`). */
  async getItems(limit?: number | null): Promise<AgentInputItem[]> {
    return fromStoredItems(await this.getStoredItems(limit));
  }

  /** The decoded items exactly as stored. */
  async getStoredItems(limit?: number | null): Promise<unknown[]> {
    this.assertOpen();
    const effective = checkLimitArgument('limit', limit) ?? this.sessionSettings.limit ?? null;
    const m = this.tables.messages;
    if (effective === null || effective < 0) {
      const rows = this.db
        .prepare(`SELECT message_data FROM ${m} WHERE session_id = ? ORDER BY id ASC`)
        .all<{ message_data: unknown }>(this.sessionId);
      return decodeAll(rows);
    }
    if (effective === 0) return [];
    const newestFirst = this.db
      .prepare(`SELECT message_data FROM ${m} WHERE session_id = ? ORDER BY id DESC`)
      .iterate<{ message_data: unknown }>(this.sessionId);
    return takeNewestValid(newestFirst, effective);
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    this.assertOpen();
    if (items.length === 0) return;
    const encoded = items.map((item) => pythonJsonDumps(toStoredItem(item)));
    const { sessions, messages } = this.tables;
    this.write(() => {
      this.db.prepare(`INSERT OR IGNORE INTO ${sessions} (session_id) VALUES (?)`).run(this.sessionId);
      const insert = this.db.prepare(`INSERT INTO ${messages} (session_id, message_data) VALUES (?, ?)`);
      for (const text of encoded) insert.run(this.sessionId, text);
      this.db.prepare(`UPDATE ${sessions} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?`).run(this.sessionId);
    });
  }

  /**
   * Removes and returns the newest item. As in Python 0.22.0, rows whose JSON does not decode are deleted on the way
   * and the newest valid item below them is popped (undefined when none is left).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    this.assertOpen();
    const m = this.tables.messages;
    return this.write(() => {
      const newest = this.db.prepare(`SELECT id, message_data FROM ${m} WHERE session_id = ? ORDER BY id DESC LIMIT 1`);
      const remove = this.db.prepare(`DELETE FROM ${m} WHERE id = ?`);
      for (;;) {
        const last = newest.get<{ id: number; message_data: unknown }>(this.sessionId);
        if (!last) return undefined;
        remove.run(last.id);
        const decoded = decodeStored(last.message_data);
        if (decoded.ok) return fromStoredItems([decoded.value])[0];
      }
    });
  }

  async clearSession(): Promise<void> {
    this.assertOpen();
    this.write(() => {
      this.db.prepare(`DELETE FROM ${this.tables.messages} WHERE session_id = ?`).run(this.sessionId);
      this.db.prepare(`DELETE FROM ${this.tables.sessions} WHERE session_id = ?`).run(this.sessionId);
    });
  }

  /** Closes the connection; idempotent. */
  close(): void {
    this.lifetime.close();
  }

  protected get isClosed(): boolean {
    return !this.lifetime.isOpen;
  }

  /** Open, and the path still names our file: reads of a replaced file would show the old one (spec §11). */
  protected assertOpen(): void {
    this.lifetime.assertFile('call');
  }

  /** One immediate transaction (`sessionWrite`: refused on a read-only session or a file that was replaced). */
  private write<T>(fn: () => T): T {
    return sessionWrite(this.db, this.dbPath, this.file, fn);
  }
}

/**
 * A BLOB's bytes as the UTF-8 text they hold, invalid sequences replaced (U+FFFD): what better-sqlite3's Buffer gives
 * `JSON.parse`, which stringifies it. node:sqlite hands a BLOB over as a Uint8Array, which `JSON.parse` stringified as
 * a list of numbers ("123,34,…"), so every BLOB row was corrupt there. (Python's `json.loads` also takes UTF-16 and
 * UTF-32 bytes and skips a UTF-8 BOM, and refuses invalid UTF-8: such a row decodes differently here; §5.2.)
 */
function bytesAsText(value: Uint8Array): string {
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
}

/** Python's `json.loads` on a stored value: text, or UTF-8 bytes (a BLOB another writer stored). */
function decodeStored(value: unknown): Decoded {
  if (typeof value === 'string') return pythonJsonLoads(value);
  if (value instanceof Uint8Array) return pythonJsonLoads(bytesAsText(value));
  // Python: json.loads(None or a number) raises TypeError, which it treats as corrupt.
  return { ok: false, error: `not JSON text: ${typeof value}` };
}

/**
 * A `message_data` as every read of items decodes it: text, or a BLOB's bytes as their UTF-8 text, so both drivers
 * read the same items. Anything else (NULL, a number) goes to `pythonJsonLoads` as it always did. One `typeof` per
 * row on the fast path: getItems reads a whole history before every turn.
 */
export function decodeMessageValue(value: unknown): Decoded {
  if (typeof value === 'string') return pythonJsonLoads(value);
  return pythonJsonLoads(value instanceof Uint8Array ? bytesAsText(value) : (value as string));
}

/** The decodable items of stored values (`message_data`), in order, skipping corrupt ones as Python does. */
export function decodeTexts(texts: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < texts.length; i++) {
    const d = decodeMessageValue(texts[i]);
    if (d.ok) out.push(d.value);
  }
  return out;
}

/** `decodeTexts` of rows' `message_data`. */
export function decodeAll(rows: Iterable<{ message_data: unknown }>): unknown[] {
  const out: unknown[] = [];
  for (const r of rows) {
    const d = decodeMessageValue(r.message_data);
    if (d.ok) out.push(d.value);
  }
  return out;
}

/**
 * The newest `limit` decodable items, oldest first, reading newest-first rows only as far as needed, so memory
 * follows the page size, not the session size.
 */
export function takeNewestValid(newestFirst: IterableIterator<{ message_data: unknown }>, limit: number): unknown[] {
  const out: unknown[] = [];
  for (const r of newestFirst) {
    const d = decodeMessageValue(r.message_data);
    if (d.ok) {
      out.push(d.value);
      if (out.length === limit) {
        newestFirst.return?.();
        break;
      }
    }
  }
  return out.reverse();
}
