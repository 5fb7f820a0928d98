/**
 * The trace store's file format (docs/traces.md, "The trace store"): a SQLite file of our own — never a session file,
 * whose format is Python's. `traces` holds one row per trace with what links it to a session (and how strongly),
 * `spans` one row per span, `resources` each distinct OTLP resource once (every span of a process repeats it).
 */
import { immediateTransaction, type SqliteDatabase } from '../sqlite/sqliteDatabase';
import { TraceStoreError } from './traceErrors';
import { ensureOwnSchema, type OwnStoreFormat } from '../sqlite/ownStoreFile';

export const TRACE_STORE_FORMAT = 1;
/** Marks the file as ours (`PRAGMA application_id`), so no other program's database is mistaken for a trace store. */
export const TRACE_STORE_APPLICATION_ID = 0x41534954; // "ASIT"

/**
 * How a trace is linked to a session, weakest first: a later source never overrides a stronger link. `run`: the run
 * that made it said its session, branch and turn; `manual`: a person linked it.
 */
export const LINK_RANKS = { none: 0, attribute: 1, run: 2, manual: 3 } as const;
export type LinkHow = keyof typeof LINK_RANKS;

const DDL = `
CREATE TABLE trace_store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE resources (id INTEGER PRIMARY KEY, json TEXT NOT NULL UNIQUE);
CREATE TABLE traces (
  trace_id TEXT PRIMARY KEY,
  session_id TEXT,
  branch_id TEXT,
  turn_number INTEGER,
  link_rank INTEGER NOT NULL DEFAULT 0,
  start_us INTEGER NOT NULL,
  end_us INTEGER NOT NULL,
  span_count INTEGER NOT NULL DEFAULT 0,
  received_ms INTEGER NOT NULL
);
CREATE INDEX traces_by_turn ON traces (session_id, branch_id, turn_number);
CREATE INDEX traces_by_start ON traces (session_id, start_us);
CREATE INDEX traces_by_received ON traces (received_ms);
CREATE TABLE spans (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  trace_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  parent_span_id TEXT,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  span_kind INTEGER NOT NULL DEFAULT 0,
  start_us INTEGER NOT NULL,
  end_us INTEGER NOT NULL,
  status TEXT NOT NULL,
  error TEXT,
  model TEXT,
  input_tokens INTEGER,
  output_tokens INTEGER,
  cached_tokens INTEGER,
  reasoning_tokens INTEGER,
  tool_name TEXT,
  agent_name TEXT,
  source TEXT NOT NULL,
  service TEXT,
  attributes TEXT NOT NULL,
  resource_id INTEGER NOT NULL REFERENCES resources (id),
  events TEXT NOT NULL,
  truncated INTEGER NOT NULL DEFAULT 0,
  UNIQUE (trace_id, span_id)
);
CREATE INDEX spans_by_trace ON spans (trace_id, start_us);
`;

/** The trace store as one of our own files (src/store/sqlite/ownStoreFile.ts). */
export const TRACE_STORE_FILE: OwnStoreFormat = {
  what: 'trace store',
  kept: 'Traces',
  metaTable: 'trace_store_meta',
  mainTable: 'spans',
  format: TRACE_STORE_FORMAT,
  applicationId: TRACE_STORE_APPLICATION_ID,
  ddl: DDL,
  error: (problem, message) => new TraceStoreError(problem === 'not-ours' ? 'not-trace-store' : problem, message),
};

/**
 * Checks that the file is an empty database or a trace store of a format we know, and creates the tables in an empty
 * one (in one transaction). A session file, or any other database, is refused untouched.
 */
export function ensureTraceSchema(db: SqliteDatabase, path: string): void {
  ensureOwnSchema(db, path, TRACE_STORE_FILE);
}

/**
 * `spans.otlp`: what an OTLP span carried that its row does not otherwise keep (`OtlpDetail`: its scope, its status as
 * sent, the kinds of values JSON cannot tell), added after format 1 was out. Added to a store opened for writing that
 * lacks it, as a column an older version neither reads nor minds (so the format stays 1); not part of `DDL`, whose
 * columns every trace store must have. Returns whether the store has it: one opened read-only may not.
 */
export function ensureOtlpColumn(db: SqliteDatabase): boolean {
  const has = (): boolean => db.prepare("SELECT 1 FROM pragma_table_info('spans') WHERE name = 'otlp'").get() !== undefined;
  if (has()) return true;
  if (db.readonly) return false;
  // Another process may add it between the look above and the lock.
  immediateTransaction(db, () => {
    if (!has()) db.exec('ALTER TABLE spans ADD COLUMN otlp TEXT');
  });
  return true;
}
