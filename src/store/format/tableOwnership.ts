/**
 * The ownership claim (spec §3.3): the structure tables have fixed names but their foreign keys name the base
 * tables, so one file belongs to one (sessions, messages) pair. Opening with another pair must fail before anything
 * is written, or two pairs would share the structure rows.
 */
import { TableOwnershipError } from '../errors';
import { foldIdentifier, foreignKeys, listTables, unquoteIdentifier, type ForeignKey, type TableNames } from './schema';
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';

const STRUCTURE_OWNERS: ReadonlyArray<{ table: string; columns: string[] }> = [
  { table: 'message_structure', columns: ['session_id', 'message_id'] },
  { table: 'turn_usage', columns: ['session_id'] },
];

const eq = (a: string | null | undefined, b: string): boolean => a != null && foldIdentifier(a) === foldIdentifier(b);

function keysOn(keys: ForeignKey[], column: string): ForeignKey[] {
  return keys.filter((k) => k.from.some((c) => eq(c, column)));
}

/** How the claim is made: a read-only session cannot follow advice to create tables, so it gets other messages. */
export interface ClaimOptions {
  readonly?: boolean;
}

/** The table an identifier resolves to, as SQLite would resolve it. */
function resolve(tables: string[], identifier: string, dbPath: string, options: ClaimOptions): string {
  const wanted = foldIdentifier(unquoteIdentifier(identifier));
  const matches = tables.filter((t) => foldIdentifier(t) === wanted);
  if (matches.length === 0) {
    throw new TableOwnershipError(
      options.readonly
        ? `The configured base tables in ${dbPath} are missing. A read-only session never creates tables; check that the path and the sessionsTable/messagesTable names are those of a session database.`
        : `The configured base tables in ${dbPath} are missing. Construct an AdvancedSQLiteSession with create_tables=True to initialize and claim the database before opening it without table creation.`,
    );
  }
  if (matches.length > 1) throw new TableOwnershipError(`The configured table identifier '${identifier}' is ambiguous.`);
  return matches[0] as string;
}

function describeKey(k: ForeignKey, column: string): string {
  const i = k.from.findIndex((c) => eq(c, column));
  return `${k.table}(${k.to[i] ?? 'None'})`;
}

/**
 * Checks that the structure tables in `db` belong to `names`; throws `TableOwnershipError` otherwise. Reads only, so
 * it can run before anything is written (spec §12 h).
 */
export function claimTableOwnership(db: SqliteDatabase, dbPath: string, names: TableNames, options: ClaimOptions = {}): void {
  // 1. Each owner column of each structure table is covered by exactly one foreign key.
  const keysByTable = new Map<string, ForeignKey[]>();
  for (const { table, columns } of STRUCTURE_OWNERS) {
    const keys = foreignKeys(db, table);
    keysByTable.set(table, keys);
    if (!columns.every((c) => keysOn(keys, c).length === 1)) {
      throw new TableOwnershipError(
        options.readonly
          ? `${dbPath} holds no session tables a read-only AdvancedSQLiteSession can open: the \`${table}\` table is missing or does not record exactly one owner foreign key for each required base-table column. A read-only session never creates tables; check that the path names a session database.`
          : `The \`${table}\` table in ${dbPath} does not record exactly one owner foreign key for each required base-table column. Construct an AdvancedSQLiteSession with create_tables=True to create and claim the structure tables before opening the database without them.`,
      );
    }
  }

  // 2. The configured names resolve to existing tables.
  const tables = listTables(db);
  const sessions = resolve(tables, names.sessions, dbPath, options);
  const messages = resolve(tables, names.messages, dbPath, options);

  // 3. The messages table belongs to the configured sessions table.
  const messageKeys = keysOn(foreignKeys(db, messages), 'session_id');
  const owner = messageKeys.length === 1 ? messageKeys[0] : undefined;
  const ownerOk =
    owner !== undefined && eq(owner.table, sessions) && eq(owner.to[owner.from.findIndex((c) => eq(c, 'session_id'))], 'session_id');
  if (!ownerOk) {
    const found = owner ? owner.table : 'ambiguous ownership';
    throw new TableOwnershipError(
      `The configured messages table '${messages}' in ${dbPath} belongs to sessions table '${found}', not to the configured '${sessions}'. Give each sessions_table/messages_table pair its own db_path.`,
    );
  }

  // 4. The structure tables' owner keys point at the configured tables.
  for (const { table, columns } of STRUCTURE_OWNERS) {
    const keys = keysByTable.get(table) ?? [];
    const targets: Record<string, [string, string]> = { session_id: [sessions, 'session_id'], message_id: [messages, 'id'] };
    const found: string[] = [];
    let ok = true;
    for (const column of columns) {
      const key = keysOn(keys, column)[0] as ForeignKey;
      const [wantTable, wantColumn] = targets[column] as [string, string];
      const i = key.from.findIndex((c) => eq(c, column));
      if (!eq(unquoteIdentifier(key.table), wantTable) || !eq(key.to[i], wantColumn)) ok = false;
      found.push(describeKey(key, column));
    }
    if (!ok) {
      const configured = columns.map((c) => (c === 'session_id' ? sessions : messages)).join('/');
      throw new TableOwnershipError(
        `The \`${table}\` table in ${dbPath} already belongs to '${found.join('/')}', not to the configured '${configured}'. Structure tables are shared per database file, so give each sessions_table/messages_table pair its own db_path.`,
      );
    }
  }
}
