import type { Pool } from 'pg';
import { createPostgresPool, describePostgresUrl } from './postgresConnection';
import { DEFAULT_POSTGRES_TABLES, checkPostgresTables, quoteIdent, type PostgresTableNames } from './postgresSchema';
import { secretOf, translatePostgresError } from './remoteErrors';
import type {
  OpenRemoteStoreOptions,
  RemoteRow,
  RemoteSessionListRequest,
  RemoteSessionPage,
  RemoteSessionSummary,
  RemoteStoreBrowser,
} from './remoteStore';

const TEXT_TIME = `'YYYY-MM-DD HH24:MI:SS'`;
/** A session's place in the list's order: `updated_at`, a NULL (no NOT NULL in the schema) as `infinity`. */
const SESSION_KEY = `COALESCE(updated_at, 'infinity'::timestamp)`;
/** From this offset on, a page may be read backwards from the session's end instead (one index count first). */
const DEEP_OFFSET = 5_000;

interface SessionRow {
  session_id: string;
  created_at: string | null;
  updated_at: string | null;
  k: string;
}

/**
 * Browsing a PostgreSQL store written by `SQLAlchemySession`. Sessions come most recently updated first with a
 * keyset cursor (`updated_at`, `session_id`); counts are read for the page's sessions only, through the
 * `(session_id, created_at)` index; a session's rows come by position in `created_at, id` order.
 */
export class PostgresStoreBrowser implements RemoteStoreBrowser {
  readonly kind = 'postgres' as const;
  readonly label: string;
  readonly tables: PostgresTableNames;
  private readonly where: string;

  private constructor(
    readonly pool: Pool,
    url: string,
    tables: PostgresTableNames,
    private readonly secret: string | undefined,
  ) {
    this.label = describePostgresUrl(url);
    this.where = `PostgreSQL ${this.label}`;
    this.tables = tables;
  }

  /** Connects, checks the tables, and returns the browser; `RemoteStoreError` says what is wrong otherwise. */
  static async open(options: OpenRemoteStoreOptions): Promise<PostgresStoreBrowser> {
    const tables = { ...DEFAULT_POSTGRES_TABLES, ...options.tables };
    const pool = createPostgresPool({
      ...options.postgres,
      url: options.url,
      password: options.password,
      connectTimeoutMs: options.connectTimeoutMs,
      queryTimeoutMs: options.queryTimeoutMs,
      readOnly: options.readOnly ?? true,
    });
    const secret = secretOf(options.url, options.password);
    const browser = new PostgresStoreBrowser(pool, options.url, tables, secret);
    try {
      await checkPostgresTables(pool, tables, browser.where);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw translatePostgresError(err, browser.where, secret);
    }
    return browser;
  }

  async listSessions(request: RemoteSessionListRequest): Promise<RemoteSessionPage> {
    const s = quoteIdent(this.tables.sessions);
    const after = request.cursor ? (JSON.parse(request.cursor) as [string, string]) : null;
    const prefix = request.prefix ? request.prefix : null;
    return this.run(async () => {
      // ORDER BY names the table's columns: a bare `updated_at` would be the to_char text (whole seconds), out of step
      // with the cursor's comparison of the real timestamps, so pages would skip or repeat sessions.
      // The page is picked on the bare columns and formatted afterwards: formatting in the sorting query would format
      // every session of the table, not the page (3x the cost at 100,000 sessions).
      // A NULL updated_at (a schema without NOT NULL) sorts as `infinity`, first, where DESC puts NULLs anyway, in the
      // order and in the cursor alike: a NULL in the row comparison would end the listing at that session, and a NULL
      // cursor would start it over. (No index serves this order: the whole table is sorted either way.)
      const { rows } = await this.pool.query<SessionRow>(
        `SELECT session_id, to_char(created_at, ${TEXT_TIME}) AS created_at, to_char(updated_at, ${TEXT_TIME}) AS updated_at,
                key::text AS k
           FROM (SELECT session_id, created_at, updated_at, ${SESSION_KEY} AS key FROM ${s}
                  WHERE ($1::text IS NULL OR left(session_id, length($1::text)) = $1::text)
                    AND ($2::timestamp IS NULL OR (${SESSION_KEY}, session_id) < ($2::timestamp, $3::text))
                  ORDER BY key DESC, session_id DESC
                  LIMIT $4) AS page
          ORDER BY page.key DESC, page.session_id DESC`,
        [prefix, after?.[0] ?? null, after?.[1] ?? null, request.limit + 1],
      );
      const more = rows.length > request.limit;
      const page = more ? rows.slice(0, request.limit) : rows;
      const counts = await this.counts(page.map((r) => r.session_id));
      const last = page[page.length - 1];
      return {
        sessions: page.map((r) => summary(r, counts.get(r.session_id) ?? 0)),
        nextCursor: more && last ? JSON.stringify([last.k, last.session_id]) : null,
      };
    });
  }

  async countSessions(prefix?: string): Promise<number> {
    const s = quoteIdent(this.tables.sessions);
    return this.run(async () => {
      const { rows } = await this.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${s} WHERE ($1::text IS NULL OR left(session_id, length($1::text)) = $1::text)`,
        [prefix || null],
      );
      return rows[0]?.n ?? 0;
    });
  }

  async getSession(sessionId: string): Promise<RemoteSessionSummary | null> {
    const s = quoteIdent(this.tables.sessions);
    return this.run(async () => {
      const { rows } = await this.pool.query<SessionRow>(
        `SELECT session_id, to_char(created_at, ${TEXT_TIME}) AS created_at, to_char(updated_at, ${TEXT_TIME}) AS updated_at, '' AS k
           FROM ${s} WHERE session_id = $1`,
        [sessionId],
      );
      const row = rows[0];
      const counts = await this.counts([sessionId]);
      if (!row) {
        // Rows without a session row (written around the foreign key): still a session to show.
        const n = counts.get(sessionId) ?? 0;
        return n > 0 ? { sessionId, createdAt: null, updatedAt: null, itemCount: n } : null;
      }
      return summary(row, counts.get(sessionId) ?? 0);
    });
  }

  async readRows(sessionId: string, offset: number, limit: number): Promise<RemoteRow[]> {
    const m = quoteIdent(this.tables.messages);
    return this.run(async () => {
      if (offset >= DEEP_OFFSET) {
        // Far into a long session, count (index-only) and read the index backwards from the end when that is shorter.
        const { rows: counted } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${m} WHERE session_id = $1`, [
          sessionId,
        ]);
        const total = counted[0]?.n ?? 0;
        if (offset >= total) return [];
        const fromEnd = total - offset - limit;
        if (fromEnd < offset) {
          const take = Math.min(limit, total - offset);
          const { rows } = await this.pool.query<MessageRow>(
            `SELECT id, message_data, to_char(created_at, ${TEXT_TIME}) AS created_at, created_at::text AS k
               FROM ${m} WHERE session_id = $1 ORDER BY ${m}.created_at DESC, ${m}.id DESC OFFSET $2 LIMIT $3`,
            [sessionId, Math.max(0, fromEnd), take],
          );
          return rows.reverse().map((r, i) => messageRow(r, offset + i + 1));
        }
      }
      // ORDER BY the table's columns (qualified): the select list's `created_at` is the display text, whole seconds.
      const { rows } = await this.pool.query<MessageRow>(
        `SELECT id, message_data, to_char(created_at, ${TEXT_TIME}) AS created_at, created_at::text AS k
           FROM ${m} WHERE session_id = $1 ORDER BY ${m}.created_at, ${m}.id OFFSET $2 LIMIT $3`,
        [sessionId, offset, limit],
      );
      return rows.map((r, i) => messageRow(r, offset + i + 1));
    });
  }

  /**
   * The rows after `after` (a row's `cursor`) in session order: one seek of the `(session_id, created_at)` index
   * wherever the row is, so reading a session from start to end costs its size, not its size squared.
   */
  async readRowsAfter(sessionId: string, after: { cursor: string; position: number } | null, limit: number): Promise<RemoteRow[]> {
    if (after === null) return this.readRows(sessionId, 0, limit);
    // The id as text: `id` may be BIGSERIAL, whose values JavaScript numbers cannot all hold.
    const [k, id] = JSON.parse(after.cursor) as [string | null, string | number];
    const m = quoteIdent(this.tables.messages);
    return this.run(async () => {
      // Session order is `created_at, id` with NULL times last (PostgreSQL's ASC, as the SDK reads). A row comparison
      // with a NULL is NULL, so the rows with a time and those without are two seeks of the (session_id, created_at)
      // index: the timed rows after the cursor (none when the cursor's row has no time), then the untimed ones by id
      // (those after the cursor's id when its row has none). Each is cut at the limit before the two are ordered.
      const { rows } = await this.pool.query<MessageRow>(
        `SELECT id, message_data, to_char(created_at, ${TEXT_TIME}) AS created_at, created_at::text AS k
           FROM ((SELECT id, message_data, created_at FROM ${m}
                   WHERE session_id = $1 AND (${m}.created_at, ${m}.id) > ($2::timestamp, $3::bigint)
                   ORDER BY ${m}.created_at, ${m}.id LIMIT $4)
                 UNION ALL
                 (SELECT id, message_data, created_at FROM ${m}
                   WHERE session_id = $1 AND ${m}.created_at IS NULL AND ($2::timestamp IS NOT NULL OR ${m}.id > $3::bigint)
                   ORDER BY ${m}.id LIMIT $4)) AS r
          ORDER BY r.created_at, r.id LIMIT $4`,
        [sessionId, k, id, limit],
      );
      return rows.map((r, i) => messageRow(r, after.position + i + 1));
    });
  }

  async sessionToken(sessionId: string): Promise<string> {
    const m = quoteIdent(this.tables.messages);
    return this.run(async () => {
      // The count is an index-only scan of (session_id, created_at); the newest row is one backward index seek. A bare
      // max(id) would read every row of the session (id is not in that index).
      const { rows } = await this.pool.query<{ n: number; top: number | null }>(
        `SELECT (SELECT count(*)::int FROM ${m} WHERE session_id = $1) AS n,
                (SELECT id FROM ${m} WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1) AS top`,
        [sessionId],
      );
      return `${rows[0]?.n ?? 0}:${rows[0]?.top ?? ''}`;
    });
  }

  async storeToken(): Promise<string> {
    const s = quoteIdent(this.tables.sessions);
    const m = quoteIdent(this.tables.messages);
    return this.run(async () => {
      const { rows } = await this.pool.query<{ top: number | null; n: number }>(
        `SELECT (SELECT max(id) FROM ${m}) AS top, (SELECT count(*)::int FROM ${s}) AS n`,
      );
      return `${rows[0]?.n ?? 0}:${rows[0]?.top ?? ''}`;
    });
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  private async counts(ids: string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const m = quoteIdent(this.tables.messages);
    const { rows } = await this.pool.query<{ session_id: string; n: number }>(
      `SELECT session_id, count(*)::int AS n FROM ${m} WHERE session_id = ANY($1::text[]) GROUP BY session_id`,
      [ids],
    );
    return new Map(rows.map((r) => [r.session_id, r.n]));
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translatePostgresError(err, this.where, this.secret);
    }
  }
}

interface MessageRow {
  /** A number for SERIAL, text for BIGSERIAL (pg returns int8 as text). */
  id: number | string;
  /** NULL only where the schema lacks SQLAlchemy's NOT NULL. */
  message_data: string | null;
  created_at: string | null;
  /** The full-precision timestamp, for the keyset cursor (null where created_at is NULL). */
  k: string | null;
}

function messageRow(r: MessageRow, position: number): RemoteRow {
  const row: RemoteRow = {
    position,
    id: Number(r.id),
    text: r.message_data,
    createdAt: r.created_at,
    cursor: JSON.stringify([r.k, String(r.id)]),
  };
  if (r.message_data === null) row.textIsNull = true;
  return row;
}

function summary(r: SessionRow, itemCount: number): RemoteSessionSummary {
  return { sessionId: r.session_id, createdAt: r.created_at, updatedAt: r.updated_at, itemCount };
}
