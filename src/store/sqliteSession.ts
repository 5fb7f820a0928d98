import type { AgentInputItem, Session } from '@openai/agents';
import { SessionClosedError, describeDatabaseError } from './errors';
import { pythonJsonDumps, pythonJsonLoads } from './pythonJson';
import { DEFAULT_TABLE_NAMES, baseSchemaDdl, type TableNames } from './schema';
import { openSessionConnection } from './sessionConnection';
import { checkSessionSettings } from './sessionSettings';
import { immediateTransaction, type SqliteDatabase } from './sqliteDatabase';
import type { SQLiteSessionOptions, SessionSettings } from './types';

/**
 * The plain SQLite session (Python's `SQLiteSession`): the base tables only, no branches, no usage. Items are
 * stored in Python's JSON encoding, so Python's `SQLiteSession` reads and writes the same rows.
 */
export class SQLiteSession implements Session {
  readonly sessionId: string;
  readonly sessionSettings: SessionSettings;
  protected readonly db: SqliteDatabase;
  protected readonly tables: TableNames;
  private closed = false;

  constructor(options: SQLiteSessionOptions) {
    this.sessionId = options.sessionId;
    this.sessionSettings = checkSessionSettings(options.sessionSettings);
    this.tables = {
      sessions: options.sessionsTable ?? DEFAULT_TABLE_NAMES.sessions,
      messages: options.messagesTable ?? DEFAULT_TABLE_NAMES.messages,
    };
    this.db = openSessionConnection(options.dbPath ?? ':memory:', options);
    if (!this.db.readonly) {
      try {
        immediateTransaction(this.db, () => {
          for (const ddl of baseSchemaDdl(this.tables)) this.db.exec(ddl);
        });
      } catch (err) {
        this.db.close();
        throw describeDatabaseError(err, options.dbPath ?? ':memory:');
      }
    }
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  async getItems(limit?: number | null): Promise<AgentInputItem[]> {
    this.assertOpen();
    const effective = limit ?? this.sessionSettings.limit ?? null;
    const m = this.tables.messages;
    if (effective === null || effective < 0) {
      const rows = this.db.prepare(`SELECT message_data FROM ${m} WHERE session_id = ? ORDER BY id ASC`).all<{ message_data: string }>(this.sessionId);
      return decodeAll(rows);
    }
    if (effective === 0) return [];
    const newestFirst = this.db
      .prepare(`SELECT message_data FROM ${m} WHERE session_id = ? ORDER BY id DESC`)
      .iterate<{ message_data: string }>(this.sessionId);
    return takeNewestValid(newestFirst, effective);
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    this.assertOpen();
    if (items.length === 0) return;
    const encoded = items.map((item) => pythonJsonDumps(item));
    const { sessions, messages } = this.tables;
    immediateTransaction(this.db, () => {
      this.db.prepare(`INSERT OR IGNORE INTO ${sessions} (session_id) VALUES (?)`).run(this.sessionId);
      const insert = this.db.prepare(`INSERT INTO ${messages} (session_id, message_data) VALUES (?, ?)`);
      for (const text of encoded) insert.run(this.sessionId, text);
      this.db.prepare(`UPDATE ${sessions} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?`).run(this.sessionId);
    });
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    this.assertOpen();
    const m = this.tables.messages;
    const row = immediateTransaction(this.db, () => {
      const last = this.db.prepare(`SELECT id, message_data FROM ${m} WHERE session_id = ? ORDER BY id DESC LIMIT 1`).get<{ id: number; message_data: string }>(this.sessionId);
      if (last) this.db.prepare(`DELETE FROM ${m} WHERE id = ?`).run(last.id);
      return last;
    });
    if (!row) return undefined;
    // As in Python, a corrupt row is deleted and reported as nothing to pop.
    const decoded = pythonJsonLoads(row.message_data);
    return decoded.ok ? (decoded.value as AgentInputItem) : undefined;
  }

  async clearSession(): Promise<void> {
    this.assertOpen();
    immediateTransaction(this.db, () => {
      this.db.prepare(`DELETE FROM ${this.tables.messages} WHERE session_id = ?`).run(this.sessionId);
      this.db.prepare(`DELETE FROM ${this.tables.sessions} WHERE session_id = ?`).run(this.sessionId);
    });
  }

  /** Closes the connection; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  protected get isClosed(): boolean {
    return this.closed;
  }

  protected assertOpen(): void {
    if (this.closed) throw new SessionClosedError();
  }
}

/** Decodes rows in order, skipping corrupt ones as Python does. */
export function decodeAll(rows: Iterable<{ message_data: string }>): AgentInputItem[] {
  const out: AgentInputItem[] = [];
  for (const r of rows) {
    const d = pythonJsonLoads(r.message_data);
    if (d.ok) out.push(d.value as AgentInputItem);
  }
  return out;
}

/**
 * The newest `limit` decodable items, oldest first, reading newest-first rows only as far as needed, so memory
 * follows the page size, not the session size.
 */
export function takeNewestValid(newestFirst: IterableIterator<{ message_data: string }>, limit: number): AgentInputItem[] {
  const out: AgentInputItem[] = [];
  for (const r of newestFirst) {
    const d = pythonJsonLoads(r.message_data);
    if (d.ok) {
      out.push(d.value as AgentInputItem);
      if (out.length === limit) {
        newestFirst.return?.();
        break;
      }
    }
  }
  return out.reverse();
}
