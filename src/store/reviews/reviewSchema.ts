/**
 * The review store's file format (docs/reviews.md, "The review store"): a SQLite file of our own — never a session
 * file, whose format is Python's. Verdicts on turns, pairwise verdicts on compared turns and corrections, each tied to
 * its turn by session, branch, turn number and the content key of the turn's user message (contentKey.ts), so they
 * follow the conversation wherever its content goes, and are found orphaned when the content at that place changed.
 */
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';
import { ReviewStoreError } from './reviewErrors';
import { ensureOwnSchema, type OwnStoreFormat } from '../sqlite/ownStoreFile';

export const REVIEW_STORE_FORMAT = 1;
/** Marks the file as ours (`PRAGMA application_id`): "ASIR". */
export const REVIEW_STORE_APPLICATION_ID = 0x41534952;

const DDL = `
CREATE TABLE review_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE turn_reviews (
  session_id TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  turn_number INTEGER NOT NULL,
  turn_key TEXT NOT NULL,
  verdict TEXT CHECK (verdict IN ('good', 'bad')),
  tags TEXT NOT NULL DEFAULT '[]',
  note TEXT NOT NULL DEFAULT '',
  source TEXT,
  reviewer TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY (session_id, branch_id, turn_number, turn_key)
);
CREATE TABLE pairwise_reviews (
  session_id TEXT NOT NULL,
  left_branch TEXT NOT NULL,
  right_branch TEXT NOT NULL,
  turn_number INTEGER NOT NULL,
  left_key TEXT NOT NULL,
  right_key TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('left', 'right', 'tie', 'both-bad')),
  reason TEXT NOT NULL DEFAULT '',
  left_model TEXT,
  right_model TEXT,
  source TEXT,
  reviewer TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY (session_id, left_branch, right_branch, turn_number, left_key, right_key)
);
CREATE TABLE corrections (
  session_id TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  turn_number INTEGER NOT NULL,
  turn_key TEXT NOT NULL,
  item_key TEXT NOT NULL,
  text TEXT NOT NULL,
  source TEXT,
  reviewer TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY (session_id, branch_id, turn_number, turn_key, item_key)
);
`;

/** The review store as one of our own files (src/store/sqlite/ownStoreFile.ts). */
export const REVIEW_STORE_FILE: OwnStoreFormat = {
  what: 'review store',
  kept: 'Reviews',
  metaTable: 'review_meta',
  mainTable: 'turn_reviews',
  format: REVIEW_STORE_FORMAT,
  applicationId: REVIEW_STORE_APPLICATION_ID,
  ddl: DDL,
  error: (problem, message) => new ReviewStoreError(problem === 'not-ours' ? 'not-review-store' : problem, message),
};

/**
 * Checks that the file is an empty database or a review store of a format we know, and creates the tables in an
 * empty one (in one transaction). A session file, or any other database, is refused untouched.
 */
export function ensureReviewSchema(db: SqliteDatabase, path: string): void {
  ensureOwnSchema(db, path, REVIEW_STORE_FILE);
}
