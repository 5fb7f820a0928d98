/**
 * What `agent-sessions run` checks of its session file before its agent starts, on a read-only connection of its own:
 * whether the session exists (a run never starts a session the user did not name right: a typo would make one) and
 * which branch ids are used (a fork's `--name` the store would refuse is refused before anything runs). Light on
 * purpose: `run` loads it before its agent's start, which must not wait for the inspector (issue 43).
 */
import { describeDatabaseError } from '../errors';
import { openSessionConnection } from '../sqlite/sessionConnection';
import { discoverSessionTables, quoteIdentifier } from './tableDiscovery';
import type { QueryContext } from './queryContext';
import { readUsedBranchIds } from './usedBranchIds';

export interface RunTarget {
  /** Some row of the session's is in the file: its sessions-table row, a message, a structure or a usage row. */
  sessionExists: boolean;
  /** Every id a new branch of the session cannot take (`main` included): see `readUsedBranchIds`. */
  usedBranchIds: ReadonlySet<string>;
}

/**
 * The session's facts in the file at `dbPath`. Throws a `SessionDatabaseError` for a file that is missing (`not-found`)
 * or no session store (a folder, not SQLite, no session tables, damaged, locked), as every command that reads one does.
 */
export function readRunTarget(dbPath: string, sessionId: string): RunTarget {
  // Opened as the session class opens it (a folder, a missing file, a stale -wal refused with their own messages).
  const reader = openSessionConnection(dbPath, { readonly: true });
  try {
    const tables = discoverSessionTables(reader, dbPath);
    const ctx: QueryContext = { db: reader, tables, stmt: (sql) => reader.prepare(sql) };
    const has = (table: string) =>
      reader.prepare(`SELECT 1 AS one FROM ${quoteIdentifier(table)} WHERE session_id = ? LIMIT 1`).get(sessionId) !== undefined;
    const sessionExists =
      has(tables.messages) ||
      (tables.sessions !== null && has(tables.sessions)) ||
      (tables.messageStructure && has('message_structure')) ||
      (tables.turnUsage && has('turn_usage'));
    return { sessionExists, usedBranchIds: new Set(readUsedBranchIds(ctx, sessionId)) };
  } catch (err) {
    throw describeDatabaseError(err, dbPath, { readonly: true });
  } finally {
    reader.close();
  }
}
