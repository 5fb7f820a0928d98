/**
 * Finds a file's session tables without assuming their names (spec §3.4): the structure tables' foreign keys name
 * the base tables, and a plain `SQLiteSession` file is recognised by its messages table's columns.
 */
import { SessionDatabaseError } from '../errors';
import { foldIdentifier, foreignKeys, tableColumns, unquoteIdentifier } from '../format/schema';
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';
import type { SessionTables } from './inspectorTypes';

/** The default messages table name, preferred when several plain candidates exist. */
const DEFAULT_MESSAGES_TABLE = 'agent_messages';

const STRUCTURE_COLUMNS = [
  'id',
  'session_id',
  'message_id',
  'branch_id',
  'message_type',
  'sequence_number',
  'user_turn_number',
  'branch_turn_number',
  'tool_name',
  'created_at',
];
const USAGE_COLUMNS = ['session_id', 'branch_id', 'user_turn_number', 'requests', 'input_tokens', 'output_tokens', 'total_tokens'];
const MESSAGE_COLUMNS = ['id', 'session_id', 'message_data'];

/** What the queries need beyond `SessionTables`: which optional sessions columns exist. */
export interface DiscoveredTables extends SessionTables {
  sessionsHasCreatedAt: boolean;
  sessionsHasUpdatedAt: boolean;
  messagesHasCreatedAt: boolean;
}

/**
 * Table names come from the file, so they are quoted wherever they go into SQL: a custom name may contain spaces,
 * quotes or keywords, and an unquoted name from a hostile file could inject SQL.
 */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The session tables of `db`. Throws `SessionDatabaseError('not-session-database')` naming what is missing when the
 * file holds no messages table, or several that cannot be told apart.
 */
export function discoverSessionTables(db: SqliteDatabase, path: string): DiscoveredTables {
  // Main schema only: temp tables belong to a connection, not to the file.
  const names = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .all<{ name: string }>()
    .map((r) => r.name);
  // SQLite resolves table names ASCII case-insensitively and allows no two names that fold alike.
  const byFold = new Map(names.map((n) => [foldIdentifier(n), n]));
  const resolve = (identifier: string): string | undefined => byFold.get(foldIdentifier(unquoteIdentifier(identifier)));
  const columnCache = new Map<string, Set<string>>();
  const columns = (table: string): Set<string> => {
    let set = columnCache.get(table);
    if (!set) columnCache.set(table, (set = new Set(tableColumns(db, table).map(foldIdentifier))));
    return set;
  };
  const missingColumns = (table: string, wanted: string[]): string[] => wanted.filter((c) => !columns(table).has(c));
  const warnings: string[] = [];

  let messages: string | undefined;
  let sessions: string | null = null;
  let messageStructure = false;

  const structure = resolve('message_structure');
  if (structure) {
    const owner = structureOwner(db, structure, resolve);
    const missing = missingColumns(structure, STRUCTURE_COLUMNS);
    if (typeof owner === 'string') warnings.push(`${structure} is ignored: ${owner}.`);
    else if (missing.length > 0) warnings.push(`${structure} is ignored: it lacks the column(s) ${missing.join(', ')}.`);
    else if (missingColumns(owner.messages, MESSAGE_COLUMNS).length > 0) {
      warnings.push(
        `${structure} is ignored: its messages table ${owner.messages} lacks ${missingColumns(owner.messages, MESSAGE_COLUMNS).join(', ')}.`,
      );
    } else {
      messages = owner.messages;
      messageStructure = true;
      if (owner.sessions && columns(owner.sessions).has('session_id')) sessions = owner.sessions;
      else warnings.push(`${structure} names no usable sessions table; sessions are listed from their rows, without times.`);
    }
  }

  if (messages === undefined) {
    const excluded = new Set(['message_structure', 'turn_usage'].map(foldIdentifier));
    const candidates = names.filter(
      (n) => !excluded.has(foldIdentifier(n)) && columns(n).has('session_id') && columns(n).has('message_data'),
    );
    if (candidates.length === 0) {
      const found = names.length === 0 ? 'it has no tables' : `its tables: ${names.join(', ')}`;
      throw new SessionDatabaseError(
        'not-session-database',
        `${path} is a SQLite database but not an agent session database: no table with session_id and message_data columns (${found}).`,
      );
    }
    const chosen = candidates.length === 1 ? candidates[0] : candidates.find((n) => foldIdentifier(n) === DEFAULT_MESSAGES_TABLE);
    if (chosen === undefined) {
      throw new SessionDatabaseError(
        'not-session-database',
        `${path} has several tables with session_id and message_data columns (${candidates.join(', ')}) and no message_structure table saying which one holds the sessions.`,
      );
    }
    const missing = missingColumns(chosen, MESSAGE_COLUMNS);
    if (missing.length > 0) {
      throw new SessionDatabaseError(
        'not-session-database',
        `${path} is not an agent session database: table ${chosen} has session_id and message_data but no ${missing.join(', ')} column.`,
      );
    }
    messages = chosen;
    sessions = ownerOfMessages(db, chosen, resolve, columns) ?? null;
  }

  let turnUsage = false;
  const usage = resolve('turn_usage');
  if (usage && messageStructure) {
    const missing = missingColumns(usage, USAGE_COLUMNS);
    if (missing.length === 0) turnUsage = true;
    else warnings.push(`${usage} is ignored: it lacks the column(s) ${missing.join(', ')}.`);
  }

  return {
    sessions,
    messages,
    messageStructure,
    turnUsage,
    branchReservations: resolve('branch_reservations') !== undefined,
    sessionClearGenerations: resolve('session_clear_generations') !== undefined,
    warnings,
    sessionsHasCreatedAt: sessions !== null && columns(sessions).has('created_at'),
    sessionsHasUpdatedAt: sessions !== null && columns(sessions).has('updated_at'),
    messagesHasCreatedAt: columns(messages).has('created_at'),
  };
}

/**
 * The base tables `message_structure` belongs to, from its owner foreign keys (spec §3.3), or why it belongs to none.
 */
function structureOwner(
  db: SqliteDatabase,
  structure: string,
  resolve: (identifier: string) => string | undefined,
): { messages: string; sessions: string | undefined } | string {
  const keys = foreignKeys(db, structure);
  const on = (column: string) => keys.filter((k) => k.from.some((c) => foldIdentifier(c) === column));
  const messageKeys = on('message_id');
  const [messageKey] = messageKeys;
  if (messageKeys.length !== 1 || !messageKey) return 'it has no single foreign key on message_id naming the messages table';
  const messages = resolve(messageKey.table);
  if (messages === undefined) return `the messages table its foreign key names (${messageKey.table}) does not exist`;
  const sessionKeys = on('session_id');
  const [sessionKey] = sessionKeys;
  const sessions = sessionKeys.length === 1 && sessionKey ? resolve(sessionKey.table) : undefined;
  return { messages, sessions };
}

/** The sessions table a messages table's `session_id` foreign key names, if it exists and has `session_id`. */
function ownerOfMessages(
  db: SqliteDatabase,
  messages: string,
  resolve: (identifier: string) => string | undefined,
  columns: (table: string) => Set<string>,
): string | undefined {
  const keys = foreignKeys(db, messages).filter((k) => k.from.some((c) => foldIdentifier(c) === 'session_id'));
  const [key] = keys;
  if (keys.length !== 1 || !key) return undefined;
  const table = resolve(key.table);
  return table !== undefined && columns(table).has('session_id') ? table : undefined;
}
