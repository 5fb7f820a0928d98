/**
 * The review store's file format (docs/reviews.md, "The review store"): a SQLite file of our own — never a session
 * file, whose format is Python's. Verdicts on turns, pairwise verdicts on compared turns and corrections, each tied to
 * its turn by session, branch, turn number and the content key of the turn's user message (contentKey.ts), so they
 * follow the conversation wherever its content goes, and are found orphaned when the content at that place changed.
 */
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';
import { ReviewStoreError } from './reviewErrors';

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

function tableNames(db: SqliteDatabase): string[] {
  return db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all<{ name: string }>()
    .map((r) => r.name);
}

/**
 * Checks that the file is an empty database or a review store of a format we know, and creates the tables in an
 * empty one (in one transaction). A session file, or any other database, is refused untouched.
 */
export function ensureReviewSchema(db: SqliteDatabase, path: string): void {
  if (tableNames(db).length === 0) {
    if (db.readonly) throw new ReviewStoreError('not-found', `${path} has no review store yet (it is empty and opened read-only).`);
    db.exec('BEGIN IMMEDIATE');
    try {
      // Another process may have created it between the look above and the lock.
      if (tableNames(db).length === 0) {
        db.exec(DDL);
        db.prepare('INSERT INTO review_meta (key, value) VALUES (?, ?)').run('format', String(REVIEW_STORE_FORMAT));
        db.exec(`PRAGMA application_id = ${REVIEW_STORE_APPLICATION_ID}`);
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
  }
  const now = tableNames(db);
  if (!now.includes('review_meta') || !now.includes('turn_reviews')) {
    throw new ReviewStoreError(
      'not-review-store',
      `${path} is not a review store (it has the tables ${now.slice(0, 6).join(', ')}). Reviews are kept in a file of their own, never in a session file: choose another path.`,
    );
  }
  const format = Number(db.prepare("SELECT value FROM review_meta WHERE key = 'format'").get<{ value: string }>()?.value);
  if (!(format >= 1))
    throw new ReviewStoreError('not-review-store', `${path} has a review_meta table without a format: it is not one of our review stores.`);
  if (format > REVIEW_STORE_FORMAT)
    throw new ReviewStoreError(
      'newer-format',
      `${path} is a review store of format ${format}, written by a newer version of Agent Session Inspector (this one reads format ${REVIEW_STORE_FORMAT}). Update it, or choose another file.`,
    );
}
