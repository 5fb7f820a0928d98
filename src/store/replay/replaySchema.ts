/**
 * The replay marks store's file format (docs/replay.md, "Where the marks live"): a SQLite file of our own — never a
 * session file, whose format is Python's. One row per run of ours that re-ran or ran tools (its mode, the recorded
 * turn it re-ran, its summary) and one row per tool call of such a run (replayed, live or unmatched, with the recorded
 * call it got its output from), keyed by the session store, session, branch and the call's id.
 */
import { ReplayStoreError } from './replayErrors';
import type { OwnStoreFormat } from '../sqlite/ownStoreFile';

export const REPLAY_STORE_FORMAT = 1;
/** Marks the file as ours (`PRAGMA application_id`): "ASIP" ("ASIR" is the review store's, "ASIT" the trace store's). */
export const REPLAY_STORE_APPLICATION_ID = 0x41534950;

// `store_key` is the session file's absolute path: one store in the extension's storage holds the marks of every file.
const DDL = `
CREATE TABLE replay_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE replay_runs (
  run_id TEXT PRIMARY KEY,
  store_key TEXT NOT NULL,
  session_id TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  turn INTEGER,
  mode TEXT NOT NULL CHECK (mode IN ('replay', 'strict', 'live')),
  source_branch_id TEXT,
  source_turn INTEGER,
  summary_json TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE INDEX replay_runs_by_branch ON replay_runs (store_key, session_id, branch_id, created_ms);
CREATE TABLE replay_marks (
  store_key TEXT NOT NULL,
  session_id TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  arguments TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('replayed', 'live', 'unmatched')),
  recorded_call_id TEXT,
  recorded_branch_id TEXT,
  recorded_turn INTEGER,
  reported TEXT,
  PRIMARY KEY (store_key, session_id, branch_id, call_id)
);
`;

/** The replay marks store as one of our own files (src/store/sqlite/ownStoreFile.ts). */
export const REPLAY_STORE_FILE: OwnStoreFormat = {
  what: 'replay marks store',
  kept: 'Replay marks',
  metaTable: 'replay_meta',
  mainTable: 'replay_runs',
  format: REPLAY_STORE_FORMAT,
  applicationId: REPLAY_STORE_APPLICATION_ID,
  ddl: DDL,
  error: (problem, message) => new ReplayStoreError(problem === 'not-ours' ? 'not-replay-store' : problem, message),
};
