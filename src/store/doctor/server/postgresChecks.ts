/**
 * The doctor on a PostgreSQL store written by `SQLAlchemySession` (docs/doctor.md, "Server stores"): one
 * `REPEATABLE READ READ ONLY` transaction, so every check sees one snapshot while writers carry on, on a pool whose
 * sessions are `default_transaction_read_only` as well. The messages are read once, in the order the SDK reads them
 * (`session_id`, then `created_at, id`), through a server-side cursor a page at a time: memory stays bounded by the
 * page whatever the table holds.
 */
import type { PostgresStoreBrowser } from '../../remote/postgresBrowser';
import { withPooledClient } from '../../remote/postgresConnection';
import { quoteIdent } from '../../remote/postgresSchema';
import type { Finding } from '../checkContext';
import { SessionScan, isOutputOf, literalCallId, type TipCall } from './sessionScan';

/** Rows fetched per round trip. */
const PAGE = 500;
/** Row ids listed in a `messages-without-session` finding (the count is exact). */
const MAX_IDS = 50;

/** One statement on the transaction's connection (this folder may not import pg, not even its types). */
type Query = <R>(sql: string, params?: unknown[]) => Promise<{ rows: R[] }>;
interface ReadClient {
  query: Query;
}

/**
 * Checks the store, or one session of it. Returns, for one session, whether the store holds it at all (a row in
 * either table), read in the same snapshot as the checks; `undefined` for the whole store.
 */
export async function checkPostgresStore(
  browser: PostgresStoreBrowser,
  session: string | null,
  add: (f: Finding) => void,
): Promise<boolean | undefined> {
  // withPooledClient: a connection lost mid-check (a server restart) fails the check, not the process.
  return withPooledClient(browser.pool, async (connection) => {
    const client: ReadClient = { query: ((sql, params) => connection.query(sql, params)) as Query };
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const found = session === null ? undefined : await holdsSession(client, browser, session);
      await messagesWithoutSession(client, browser, session, add);
      await scanMessages(client, browser, session, add);
      await client.query('COMMIT');
      return found;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}

/** Whether either table has a row of `session` (messages alone, without their session row, are still something to check). */
async function holdsSession(client: ReadClient, browser: PostgresStoreBrowser, session: string): Promise<boolean> {
  const m = quoteIdent(browser.tables.messages);
  const s = quoteIdent(browser.tables.sessions);
  const { rows } = await client.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ${s} WHERE session_id = $1::text) OR EXISTS (SELECT 1 FROM ${m} WHERE session_id = $1::text) AS found`,
    [session],
  );
  return rows[0]?.found === true;
}

/**
 * Message rows whose session has no row in the sessions table: the foreign key forbids them, so the schema came from
 * migrations without it. One finding per session.
 */
async function messagesWithoutSession(
  client: ReadClient,
  browser: PostgresStoreBrowser,
  session: string | null,
  add: (f: Finding) => void,
) {
  const m = quoteIdent(browser.tables.messages);
  const s = quoteIdent(browser.tables.sessions);
  const rows = pages<{ session_id: string; n: number; ids: number[] }>(
    client,
    'doctor_orphans',
    `SELECT m.session_id, count(*)::int AS n, (array_agg(m.id ORDER BY m.id))[1:${MAX_IDS}] AS ids
       FROM ${m} m
      WHERE ($1::text IS NULL OR m.session_id = $1::text)
        AND NOT EXISTS (SELECT 1 FROM ${s} s WHERE s.session_id = m.session_id)
      GROUP BY m.session_id ORDER BY m.session_id`,
    [session],
  );
  for await (const page of rows) {
    for (const r of page) {
      add({
        kind: 'messages-without-session',
        session: r.session_id,
        rows: { [browser.tables.messages]: r.ids.map(Number) },
        detail: `${r.n} row(s) of ${browser.tables.messages} have session_id ${JSON.stringify(r.session_id)}, which ${browser.tables.sessions} does not hold`,
      });
    }
  }
}

/** Every message row once, session by session: malformed rows as they pass, each session's tip call at its end. */
async function scanMessages(client: ReadClient, browser: PostgresStoreBrowser, session: string | null, add: (f: Finding) => void) {
  const table = browser.tables.messages;
  const m = quoteIdent(table);
  const rows = pages<{ id: number; session_id: string; message_data: string | null }>(
    client,
    'doctor_rows',
    `SELECT id, session_id, message_data FROM ${m}
      WHERE ($1::text IS NULL OR session_id = $1::text)
      ORDER BY session_id, created_at, id`,
    [session],
  );
  // Declared wide: the loop below assigns it, which narrowing from a plain `= null` would not see.
  let scan = null as SessionScan | null;
  const finish = async (done: SessionScan | null) => {
    const call = done?.lastCall();
    if (done && call && !(await hasOutput(client, m, done.session, call))) add(done.danglingFinding(call));
  };
  for await (const page of rows) {
    for (const r of page) {
      if (scan?.session !== r.session_id) {
        await finish(scan);
        scan = new SessionScan(r.session_id, table, (id) => `row ${id}`, add);
      }
      scan.see({ ref: Number(r.id), text: r.message_data, textIsNull: r.message_data === null });
    }
  }
  await finish(scan);
}

/** Whether the session holds the call's output (the rows that can hold it, a page at a time, on a cursor of their own). */
async function hasOutput(client: ReadClient, m: string, session: string, call: TipCall): Promise<boolean> {
  const rows = pages<{ message_data: string | null }>(
    client,
    'doctor_outputs',
    `SELECT message_data FROM ${m} WHERE session_id = $1::text AND ($2::text IS NULL OR strpos(message_data, $2::text) > 0)`,
    [session, literalCallId(call.callId)],
  );
  for await (const page of rows) if (page.some((r) => isOutputOf(r.message_data, call))) return true;
  return false;
}

/**
 * A query's rows through a named cursor of the transaction, a page of `PAGE` at a time (pages, not rows: a step of an
 * async loop costs a promise, which per row was half the check's time). The cursor is closed when the loop ends,
 * early or not, so the same name can be declared again.
 */
async function* pages<R>(client: ReadClient, name: string, sql: string, params: unknown[]): AsyncGenerator<R[]> {
  await client.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, params);
  let failed = false;
  try {
    for (;;) {
      const { rows } = await client.query<R>(`FETCH ${PAGE} FROM ${name}`);
      if (rows.length > 0) yield rows;
      if (rows.length < PAGE) return;
    }
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    // After a failure (a lost connection, a timeout) the CLOSE fails too, and its error would hide the one that says why.
    const close = client.query(`CLOSE ${name}`);
    await (failed ? close.catch(() => undefined) : close);
  }
}
