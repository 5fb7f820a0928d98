/**
 * The experiment store's file format (docs/check.md, "Experiments"): a SQLite file of our own — never a session file,
 * nor the review store — holding the results of saved checks (`agent-sessions check --save NAME`): per experiment
 * what was checked and by which graders, per case its verdict, status, the new run's answer and calls, tokens, cost,
 * latency and replay marks, and each grader's score and reason.
 */
import type { OwnStoreFormat } from '../sqlite/ownStoreFile';
import { ExperimentStoreError } from './experimentErrors';

export const EXPERIMENT_STORE_FORMAT = 1;
/** Marks the file as ours (`PRAGMA application_id`): "ASIE". */
export const EXPERIMENT_STORE_APPLICATION_ID = 0x41534945;

const DDL = `
CREATE TABLE experiment_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE experiments (
  experiment_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  session_file TEXT NOT NULL,
  graders TEXT NOT NULL,
  model TEXT,
  started_at TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  saved_ms INTEGER NOT NULL
);
CREATE TABLE experiment_cases (
  experiment_id INTEGER NOT NULL,
  case_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  turn_number INTEGER NOT NULL,
  content_key TEXT NOT NULL,
  verdict TEXT NOT NULL CHECK (verdict IN ('good', 'bad')),
  status TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'error', 'orphaned')),
  answer TEXT,
  calls TEXT,
  requests INTEGER,
  input_tokens INTEGER,
  output_tokens INTEGER,
  total_tokens INTEGER,
  cached_tokens INTEGER,
  reasoning_tokens INTEGER,
  cost_usd REAL,
  latency_ms INTEGER,
  case_ms INTEGER NOT NULL,
  replay TEXT,
  error TEXT,
  kept_branch TEXT,
  PRIMARY KEY (experiment_id, case_id)
);
CREATE TABLE experiment_grades (
  experiment_id INTEGER NOT NULL,
  case_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  grader TEXT NOT NULL,
  pass INTEGER NOT NULL,
  score REAL NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY (experiment_id, case_id, position)
);
`;

/** The experiment store as one of our own files (src/store/sqlite/ownStoreFile.ts). */
export const EXPERIMENT_STORE_FILE: OwnStoreFormat = {
  what: 'experiment store',
  kept: 'Experiments',
  metaTable: 'experiment_meta',
  mainTable: 'experiments',
  format: EXPERIMENT_STORE_FORMAT,
  applicationId: EXPERIMENT_STORE_APPLICATION_ID,
  ddl: DDL,
  error: (problem, message) => new ExperimentStoreError(problem === 'not-ours' ? 'not-experiment-store' : problem, message),
};
