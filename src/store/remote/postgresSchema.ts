/**
 * The tables Python's `SQLAlchemySession` (0.22.0) uses on PostgreSQL, as SQLAlchemy's `create_all` emits them,
 * and the check that a database we are pointed at has them (docs/session-format.md §15.1).
 */
import type { Pool, PoolClient } from 'pg';
import { RemoteStoreError } from './remoteErrors';

export interface PostgresTableNames {
  sessions: string;
  messages: string;
}

export const DEFAULT_POSTGRES_TABLES: PostgresTableNames = { sessions: 'agent_sessions', messages: 'agent_messages' };

/** A quoted identifier. SQLAlchemy quotes names that need it; quoting always names the same table. */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** SQLAlchemy's index name: `idx_<messages table>_session_time`. */
export function sessionTimeIndexName(t: PostgresTableNames): string {
  return `idx_${t.messages}_session_time`;
}

/**
 * The DDL, in `create_all`'s order and spelling (`Integer primary_key autoincrement` is `SERIAL` on PostgreSQL;
 * timestamps are without time zone and default to `CURRENT_TIMESTAMP`, the transaction's start time).
 */
export function postgresDdl(t: PostgresTableNames): string[] {
  const s = quoteIdent(t.sessions);
  const m = quoteIdent(t.messages);
  return [
    `CREATE TABLE ${s} (\n\tsession_id VARCHAR NOT NULL, \n\tcreated_at TIMESTAMP WITHOUT TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL, \n\tupdated_at TIMESTAMP WITHOUT TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL, \n\tPRIMARY KEY (session_id)\n)`,
    `CREATE TABLE ${m} (\n\tid SERIAL NOT NULL, \n\tsession_id VARCHAR NOT NULL, \n\tmessage_data TEXT NOT NULL, \n\tcreated_at TIMESTAMP WITHOUT TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL, \n\tPRIMARY KEY (id), \n\tFOREIGN KEY(session_id) REFERENCES ${s} (session_id) ON DELETE CASCADE\n)`,
    `CREATE INDEX ${quoteIdent(sessionTimeIndexName(t))} ON ${m} (session_id, created_at)`,
  ];
}

/** The columns each table must have, with the types `information_schema` reports for SQLAlchemy's DDL. */
const REQUIRED: Record<'sessions' | 'messages', Record<string, readonly string[]>> = {
  sessions: {
    session_id: ['character varying', 'text'],
    created_at: ['timestamp without time zone', 'timestamp with time zone'],
    updated_at: ['timestamp without time zone', 'timestamp with time zone'],
  },
  messages: {
    id: ['integer', 'bigint'],
    session_id: ['character varying', 'text'],
    message_data: ['text', 'character varying'],
    created_at: ['timestamp without time zone', 'timestamp with time zone'],
  },
};

type Queryable = Pool | PoolClient;

/**
 * Throws `RemoteStoreError` `missing-table` or `wrong-schema` unless both tables exist (in the connection's search
 * path) with the columns the Python SDK reads and writes. Extra columns are fine (a migration may add some).
 */
export async function checkPostgresTables(db: Queryable, t: PostgresTableNames, where: string): Promise<void> {
  const { rows } = await db.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT c.table_name, c.column_name, c.data_type
       FROM information_schema.columns c
      WHERE c.table_schema = current_schema() AND c.table_name = ANY($1::text[])`,
    [[t.sessions, t.messages]],
  );
  for (const role of ['sessions', 'messages'] as const) {
    const table = t[role];
    const columns = new Map(rows.filter((r) => r.table_name === table).map((r) => [r.column_name, r.data_type]));
    if (columns.size === 0) {
      throw new RemoteStoreError(
        'missing-table',
        `${where}: table "${table}" does not exist. Create the tables with your migrations, or pass createTables: true (as SQLAlchemySession's create_tables).`,
      );
    }
    for (const [column, types] of Object.entries(REQUIRED[role])) {
      const actual = columns.get(column);
      if (actual === undefined) {
        throw new RemoteStoreError(
          'wrong-schema',
          `${where}: table "${table}" has no column "${column}"; it is not a SQLAlchemySession ${role} table.`,
        );
      }
      if (!types.includes(actual)) {
        throw new RemoteStoreError('wrong-schema', `${where}: column "${table}.${column}" is ${actual}, expected ${types[0]}.`);
      }
    }
  }
}

/**
 * Creates the tables if missing, as `create_all` does (it checks first and creates only what is absent), inside
 * one transaction holding an advisory lock, so concurrent first writers do not race.
 */
export async function createPostgresTables(client: PoolClient, t: PostgresTableNames): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`agent-sessions:${t.sessions}:${t.messages}`]);
    const { rows } = await client.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ANY($1::text[])`,
      [[t.sessions, t.messages]],
    );
    const have = new Set(rows.map((r) => r.name));
    const [sessionsDdl, messagesDdl, indexDdl] = postgresDdl(t) as [string, string, string];
    if (!have.has(t.sessions)) await client.query(sessionsDdl);
    if (!have.has(t.messages)) {
      await client.query(messagesDdl);
      await client.query(indexDdl);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
