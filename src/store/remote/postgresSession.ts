import type { AgentInputItem, Session } from '@openai/agents';
import type { Pool, PoolClient } from 'pg';
import { hasLoneSurrogate } from '../../shared/unicodeText';
import { checkLimitArgument, checkSessionId } from '../session/argumentChecks';
import { InvalidArgumentError, SessionClosedError } from '../errors';
import { fromStoredItems, toStoredItem } from '../format/itemShape';
import { pythonJsonDumpsCompact, pythonJsonLoads } from '../format/pythonJson';
import { checkSessionSettings } from '../session/sessionSettings';
import type { SessionSettings } from '../types';
import { createPostgresPool, describePostgresUrl, withPooledClient, type PostgresConnectionOptions } from './postgresConnection';
import { DEFAULT_POSTGRES_TABLES, checkPostgresTables, createPostgresTables, quoteIdent, type PostgresTableNames } from './postgresSchema';
import { RemoteStoreError, secretOf, translatePostgresError } from './remoteErrors';

export interface PostgresSessionOptions {
  sessionId: string;
  /** A pool the application manages (not closed by `close()`). Give this or `connection`. */
  pool?: Pool;
  /** Address and connection settings for a pool the session owns (closed by `close()`). */
  connection?: PostgresConnectionOptions;
  sessionsTable?: string;
  messagesTable?: string;
  /** Create the tables when missing (default false, as SQLAlchemySession's `create_tables`). */
  createTables?: boolean;
  sessionSettings?: SessionSettings | null;
  /** Escape non-ASCII text in stored JSON (default true, as SQLAlchemySession's `ensure_ascii`). */
  ensureAscii?: boolean;
  /** Never write: write methods throw `RemoteStoreError` `read-only` before sending anything. */
  readOnly?: boolean;
}

/**
 * The `@openai/agents` `Session` on PostgreSQL, writing exactly what Python's `SQLAlchemySession` writes (same
 * tables, compact `json.dumps` text, server-side `CURRENT_TIMESTAMP` times, order by `created_at` then `id`), so a
 * Python agent and a TypeScript agent can share a session (docs/session-format.md §15.1).
 */
export class PostgresSession implements Session {
  readonly sessionId: string;
  readonly sessionSettings: SessionSettings;
  readonly tables: PostgresTableNames;
  readonly readOnly: boolean;
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly ensureAscii: boolean;
  private readonly createTables: boolean;
  private readonly where: string;
  private readonly secret: string | undefined;
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresSessionOptions) {
    if (typeof options.sessionId !== 'string') throw new InvalidArgumentError('sessionId must be a string');
    // pg sends text as UTF-8, which turns half of a character into U+FFFD: `a\uD800` and `a\uDBFF` would be one session.
    checkSessionId(options.sessionId);
    this.sessionId = options.sessionId;
    this.sessionSettings = checkSessionSettings(options.sessionSettings);
    this.tables = {
      sessions: options.sessionsTable ?? DEFAULT_POSTGRES_TABLES.sessions,
      messages: options.messagesTable ?? DEFAULT_POSTGRES_TABLES.messages,
    };
    this.readOnly = !!options.readOnly;
    this.ensureAscii = options.ensureAscii ?? true;
    this.createTables = !!options.createTables;
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
      this.where = 'PostgreSQL';
    } else if (options.connection) {
      this.pool = createPostgresPool({ ...options.connection, readOnly: options.connection.readOnly ?? this.readOnly });
      this.ownsPool = true;
      this.where = `PostgreSQL ${describePostgresUrl(options.connection.url)}`;
      this.secret = secretOf(options.connection.url, options.connection.password);
    } else {
      throw new InvalidArgumentError('PostgresSession needs a pool or a connection');
    }
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /** The session's items as the JS runner takes them (stored Responses items converted). */
  async getItems(limit?: number | null): Promise<AgentInputItem[]> {
    return fromStoredItems(await this.getStoredItems(limit));
  }

  /**
   * The decoded items exactly as stored, oldest first; rows whose JSON does not decode are skipped, and with a
   * limit the window grows until it holds `limit` valid items, as Python does.
   */
  async getStoredItems(limit?: number | null): Promise<unknown[]> {
    await this.prepare();
    const effective = checkLimitArgument('limit', limit) ?? this.sessionSettings.limit ?? null;
    const m = quoteIdent(this.tables.messages);
    return this.run(async () => {
      if (effective === null) {
        const { rows } = await this.pool.query<{ message_data: string | null }>(
          `SELECT message_data FROM ${m} WHERE session_id = $1 ORDER BY created_at ASC, id ASC`,
          [this.sessionId],
        );
        return decodeRows(rows);
      }
      // PostgreSQL refuses a negative LIMIT, and so does Python's SQLAlchemySession there.
      if (effective < 0) throw new InvalidArgumentError(`limit must not be negative on PostgreSQL, got ${effective}`);
      if (effective === 0) return [];
      for (let window = effective; ; window *= 2) {
        const { rows } = await this.pool.query<{ message_data: string | null }>(
          `SELECT message_data FROM ${m} WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
          [this.sessionId, window],
        );
        const items = decodeRows(rows.reverse());
        if (items.length >= effective) return items.slice(items.length - effective);
        if (rows.length < window) return items;
      }
    });
  }

  /** Appends items in one transaction: the session row (created if missing), the messages, `updated_at`. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    this.assertOpen();
    if (items.length === 0) return;
    this.assertWritable('addItems');
    const texts = items.map((item) => pythonJsonDumpsCompact(toStoredItem(item), { ensureAscii: this.ensureAscii }));
    await this.addStoredTexts(texts);
  }

  /** Appends already-encoded rows (used to copy a session byte for byte). */
  async addStoredTexts(texts: readonly string[]): Promise<void> {
    this.assertOpen();
    if (texts.length === 0) return;
    this.assertWritable('addItems');
    // pg sends text as UTF-8, which would store half of a character as U+FFFD: another text than the item's. Python's
    // driver refuses such a string (UnicodeEncodeError); so do we, before anything is sent. Only raw text can hold
    // one: with ensureAscii (the default) it is written as a `\udXXX` escape.
    const broken = texts.findIndex((text) => hasLoneSurrogate(text));
    if (broken >= 0) {
      throw new InvalidArgumentError(
        `item ${broken} holds half of a character (a lone UTF-16 surrogate), which cannot be stored as UTF-8 text; with ensureAscii: true (the default) it is stored escaped`,
      );
    }
    await this.prepare();
    const s = quoteIdent(this.tables.sessions);
    const m = quoteIdent(this.tables.messages);
    await this.transaction(async (client) => {
      // Racing first writers: the primary key decides, the loser carries on (Python tolerates the same race).
      await client.query(`INSERT INTO ${s} (session_id) VALUES ($1) ON CONFLICT (session_id) DO NOTHING`, [this.sessionId]);
      // One statement, ids in the items' order (WITH ORDINALITY fixes the order of the SERIAL values).
      await client.query(
        `INSERT INTO ${m} (session_id, message_data)
         SELECT $1, t.data FROM unnest($2::text[]) WITH ORDINALITY AS t(data, n) ORDER BY t.n`,
        [this.sessionId, texts],
      );
      await client.query(`UPDATE ${s} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = $1`, [this.sessionId]);
    });
  }

  /**
   * Removes and returns the newest item (by `created_at`, then `id`). The `DELETE … RETURNING` is the claim, so two
   * concurrent pops never return the same item; rows that do not decode are deleted on the way, as in Python.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    this.assertOpen();
    this.assertWritable('popItem');
    await this.prepare();
    const m = quoteIdent(this.tables.messages);
    return this.run(async () => {
      for (;;) {
        const { rows } = await this.pool.query<{ message_data: string | null }>(
          `DELETE FROM ${m} WHERE id = (SELECT id FROM ${m} WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1)
           RETURNING message_data`,
          [this.sessionId],
        );
        const row = rows[0];
        if (!row) {
          const left = await this.pool.query(`SELECT 1 FROM ${m} WHERE session_id = $1 LIMIT 1`, [this.sessionId]);
          if (left.rowCount === 0) return undefined;
          continue; // another writer claimed that row first
        }
        // A NULL (a schema without NOT NULL) is no item either: deleted on the way, as a row that does not decode.
        const decoded = row.message_data === null ? null : pythonJsonLoads(row.message_data);
        if (decoded?.ok) return fromStoredItems([decoded.value])[0];
      }
    });
  }

  /** Deletes the session's messages and its session row in one transaction. */
  async clearSession(): Promise<void> {
    this.assertOpen();
    this.assertWritable('clearSession');
    await this.prepare();
    const s = quoteIdent(this.tables.sessions);
    const m = quoteIdent(this.tables.messages);
    await this.transaction(async (client) => {
      await client.query(`DELETE FROM ${m} WHERE session_id = $1`, [this.sessionId]);
      await client.query(`DELETE FROM ${s} WHERE session_id = $1`, [this.sessionId]);
    });
  }

  /** Ends the pool if the session created it; idempotent. Later calls throw `SessionClosedError`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end().catch(() => undefined);
  }

  private assertOpen(): void {
    if (this.closed) throw new SessionClosedError();
  }

  private assertWritable(what: string): void {
    if (this.readOnly) throw new RemoteStoreError('read-only', `${this.where}: ${what} refused: the session was opened read-only.`);
  }

  /** Creates the tables (when asked) and checks their shape, once per instance, before the first statement. */
  private prepare(): Promise<void> {
    this.assertOpen();
    this.ready ??= this.run(async () => {
      if (this.createTables && !this.readOnly) await withPooledClient(this.pool, (client) => createPostgresTables(client, this.tables));
      await checkPostgresTables(this.pool, this.tables, this.where);
    }).catch((err: unknown) => {
      // A failed check is tried again next call (the tables may have been created meanwhile).
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof InvalidArgumentError || err instanceof SessionClosedError) throw err;
      throw translatePostgresError(err, this.where, this.secret);
    }
  }

  /**
   * One transaction on one pooled connection; rolled back (and the error translated) when anything fails. A connection
   * lost meanwhile fails the call (`connection-lost`); the server rolls back what it had.
   */
  private async transaction(fn: (client: PoolClient) => Promise<void>): Promise<void> {
    await this.run(() =>
      withPooledClient(this.pool, async (client) => {
        await client.query('BEGIN');
        try {
          await fn(client);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),
    );
  }
}

/** The rows' items; rows that do not decode are skipped, and so is a NULL (JSON.parse would make it a `null` item). */
function decodeRows(rows: readonly { message_data: string | null }[]): unknown[] {
  const out: unknown[] = [];
  for (const r of rows) {
    if (r.message_data === null) continue;
    const d = pythonJsonLoads(r.message_data);
    if (d.ok) out.push(d.value);
  }
  return out;
}
