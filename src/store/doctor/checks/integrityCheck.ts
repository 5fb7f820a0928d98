/**
 * `PRAGMA integrity_check`: a file that fails it gets no repair (a write could spread the damage), and the other
 * checks are not run on it (their queries could read damaged pages and report nonsense).
 */
import { sqliteCodeOf } from '../../errors';
import type { SqliteDatabase } from '../../sqlite/sqliteDatabase';
import type { FindingSink } from '../checkContext';

/** Lines integrity_check returns at most (its own bound; each names one problem). */
const MAX_LINES = 100;

/** Adds a finding per problem line; returns true when the file passed. */
export function checkIntegrity(db: SqliteDatabase, sink: FindingSink): boolean {
  let lines: string[];
  try {
    lines = db
      .prepare(`PRAGMA integrity_check(${MAX_LINES})`)
      .all<Record<string, unknown>>()
      .map((r) => String(Object.values(r)[0]));
  } catch (err) {
    // A header or root page so damaged that the pragma itself stops: that is the finding.
    if (sqliteCodeOf(err) !== 'SQLITE_CORRUPT') throw err;
    lines = [err instanceof Error ? err.message : String(err)];
  }
  if (lines.length === 1 && lines[0] === 'ok') return true;
  for (const line of lines) sink.add({ kind: 'integrity-check', detail: line });
  return false;
}
