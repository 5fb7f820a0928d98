/**
 * A session schema changed by hand: each session table of the file compared with the same table as the SDKs create
 * it (`format/schema.ts`, Python's DDL verbatim, with the file's own table names), built in an in-memory database on
 * the same driver and read back with the same pragmas, so the comparison is SQLite's view of both and never a parse
 * of DDL text. Compared: columns (type, NOT NULL, default, primary key), the named indexes and the unique constraints
 * the writes rely on; and any trigger on a session table, which the SDKs never create. Only tables the file has are
 * compared (a plain `SQLiteSession` file has no structure tables: that is not an alteration); extra nullable columns
 * and extra indexes change nothing the SDKs do and are not reported.
 *
 * Only a missing named index has a repair (its `CREATE INDEX IF NOT EXISTS`, exactly as the SDKs run it): it touches
 * no row. The rest is reported only (`repairable: false`): undoing it means rebuilding a table or dropping something
 * someone added on purpose.
 */
import { openDatabase } from '../../drivers/openDatabase';
import {
  BRANCH_RESERVATIONS_DDL,
  CLEAR_GENERATIONS_DDL,
  STRUCTURE_INDEX_DDL,
  baseSchemaDdl,
  foldIdentifier,
  messageStructureDdl,
  messagesIndexDdl,
  turnUsageDdl,
  type TableNames,
} from '../../format/schema';
import type { SqliteDatabase } from '../../sqlite/sqliteDatabase';
import type { CheckContext } from '../checkContext';

interface Column {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

/** An index the SDKs create, by name, with the statement that creates it. */
export interface ExpectedIndex {
  name: string;
  table: string;
  ddl: string;
}

/** A schema difference, with whether recreating an index repairs it. */
export interface SchemaDifference {
  table: string;
  detail: string;
  /** The statement that repairs it (a missing index), or null. */
  repair: string | null;
}

/** The file's base-table names (the structure tables' are fixed); the sessions name falls back to the default's. */
function namesOf(ctx: Pick<CheckContext, 'tables'>): TableNames {
  const sessions = ctx.tables.sessions === null ? 'agent_sessions' : unquote(ctx.tables.sessions);
  return { sessions, messages: ctx.tables.messagesName };
}

function unquote(quoted: string): string {
  return quoted.slice(1, -1).replace(/""/g, '"');
}

/** Every DDL statement the SDKs run for these names, in their order. */
function expectedDdl(names: TableNames): string[] {
  return [
    ...baseSchemaDdl(names),
    messageStructureDdl(names),
    turnUsageDdl(names),
    BRANCH_RESERVATIONS_DDL,
    CLEAR_GENERATIONS_DDL,
    ...STRUCTURE_INDEX_DDL,
  ];
}

/** The named indexes the SDKs create, with their statements. */
export function expectedIndexes(names: TableNames): ExpectedIndex[] {
  const indexes = [messagesIndexDdl(names), ...STRUCTURE_INDEX_DDL];
  // A table name with spaces gives a statement the SDKs could not run either: that index is not expected then.
  return indexes.flatMap((ddl) => {
    const m = /CREATE INDEX IF NOT EXISTS (\S+)\s+ON (\S+?)\s*\(/.exec(ddl);
    return m ? [{ name: m[1]!, table: m[2]!, ddl }] : [];
  });
}

const columnsOf = (db: SqliteDatabase, table: string): Column[] =>
  db.prepare('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid').all<Column>(table);

/** Unique constraints (and the primary key's index) as column lists, e.g. `session_id,branch_id,user_turn_number`. */
function uniqueSets(db: SqliteDatabase, table: string): Set<string> {
  const sets = new Set<string>();
  const list = db
    .prepare(`SELECT name, "unique" AS u, origin FROM pragma_index_list(?) WHERE "unique" = 1 AND origin IN ('u', 'pk')`)
    .all<{ name: string }>(table);
  for (const { name } of list) {
    const cols = db
      .prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno')
      .all<{ name: string }>(name)
      .map((r) => foldIdentifier(r.name));
    sets.add(cols.join(','));
  }
  return sets;
}

const indexColumns = (db: SqliteDatabase, index: string): string =>
  db
    .prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno')
    .all<{ name: string }>(index)
    .map((r) => foldIdentifier(r.name ?? '<expression>'))
    .join(', ');

const tableNamesOf = (db: SqliteDatabase): Map<string, string> =>
  new Map(
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all<{ name: string }>()
      .map((r) => [foldIdentifier(r.name), r.name]),
  );

/**
 * The messages index as Python wrote it before 0.6.6 (on `created_at`; `CREATE INDEX IF NOT EXISTS` never replaces
 * it): an SDK's own schema, not an alteration.
 */
const OLDER_MESSAGES_INDEX = 'session_id, created_at';

const norm = (v: string | null): string => (v === null ? 'no default' : `default ${v}`);

/** What each kind of column change breaks, for the finding's detail. */
function columnDifferences(table: string, want: Column[], have: Column[], pkByIndex: boolean): string[] {
  const out: string[] = [];
  const byName = new Map(have.map((c) => [foldIdentifier(c.name), c]));
  for (const w of want) {
    const h = byName.get(foldIdentifier(w.name));
    if (!h) {
      out.push(`column ${table}.${w.name} is missing: every SDK query that names it fails`);
      continue;
    }
    if (foldIdentifier(h.type) !== foldIdentifier(w.type)) {
      out.push(
        `column ${table}.${w.name} is declared ${h.type || '(no type)'}, not ${w.type}: values are stored with another ` +
          'affinity, so numbers and text compare, sort and read back differently from what the SDKs wrote',
      );
    }
    if (Number(h.notnull) !== Number(w.notnull)) {
      out.push(
        Number(w.notnull)
          ? `column ${table}.${w.name} lost its NOT NULL: rows without it can be stored, and the SDKs' reads assume it is set`
          : `column ${table}.${w.name} gained NOT NULL: the SDKs' writes that leave it empty fail`,
      );
    }
    if (norm(h.dflt_value) !== norm(w.dflt_value)) {
      out.push(
        `column ${table}.${w.name} has ${norm(h.dflt_value)}, not ${norm(w.dflt_value)}: ` +
          `the SDKs' inserts leave it out and get ${h.dflt_value === null ? 'NULL' : h.dflt_value} instead`,
      );
    }
    // A key kept by an index is compared as a unique set (one finding for the key, not one per column).
    if (!pkByIndex && Number(h.pk) !== Number(w.pk)) {
      out.push(`column ${table}.${w.name} is ${Number(h.pk) ? '' : 'not '}part of the primary key, unlike the SDKs' table`);
    }
  }
  const wanted = new Set(want.map((c) => foldIdentifier(c.name)));
  for (const h of have) {
    if (wanted.has(foldIdentifier(h.name))) continue;
    // An extra column only matters when the SDKs' inserts, which do not name it, cannot leave it out.
    if (Number(h.notnull) && h.dflt_value === null && !Number(h.pk)) {
      out.push(`column ${table}.${h.name} was added NOT NULL without a default: every insert by the SDKs fails`);
    }
  }
  return out;
}

/** The differences between the file's session tables and the SDKs' (reads the file's schema only). */
export function schemaDifferences(ctx: Pick<CheckContext, 'db' | 'tables'>): SchemaDifference[] {
  const names = namesOf(ctx);
  const expected = openDatabase(':memory:', { driver: ctx.db.driver });
  const out: SchemaDifference[] = [];
  try {
    for (const ddl of expectedDdl(names)) {
      try {
        expected.exec(ddl);
      } catch {
        // A name the SDKs' unquoted DDL cannot spell (spaces, dashes): no SDK created that table, so none is expected.
      }
    }
    const have = tableNamesOf(ctx.db);
    const ours = [...tableNamesOf(expected).values()].filter((t) => !t.startsWith('sqlite_'));
    for (const table of ours) {
      const actual = have.get(foldIdentifier(table));
      if (actual === undefined) continue;
      const want = columnsOf(expected, table);
      const wantUnique = uniqueSets(expected, table);
      const pk = want
        .filter((c) => Number(c.pk) > 0)
        .sort((a, b) => Number(a.pk) - Number(b.pk))
        .map((c) => foldIdentifier(c.name))
        .join(',');
      for (const detail of columnDifferences(actual, want, columnsOf(ctx.db, actual), wantUnique.has(pk))) {
        out.push({ table: actual, detail, repair: null });
      }
      const haveUnique = uniqueSets(ctx.db, actual);
      for (const set of wantUnique) {
        if (haveUnique.has(set)) continue;
        out.push({
          table: actual,
          detail:
            `${actual} has no UNIQUE (${set.replace(/,/g, ', ')}): the SDKs' INSERT OR REPLACE / OR IGNORE on it adds ` +
            'rows instead of replacing them, so duplicates are stored (totals counted twice, sessions listed twice)',
          repair: null,
        });
      }
    }
    const fileIndexes = new Map(
      ctx.db
        .prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'")
        .all<{ name: string; tbl_name: string }>()
        .map((r) => [foldIdentifier(r.name), r]),
    );
    for (const index of expectedIndexes(names)) {
      if (!have.has(foldIdentifier(index.table))) continue;
      const found = fileIndexes.get(foldIdentifier(index.name));
      if (!found) {
        out.push({
          table: index.table,
          detail: `index ${index.name} on ${index.table} is missing: reads that use it scan the whole table instead (the same answers, slower on a big file)`,
          repair: index.ddl,
        });
        continue;
      }
      const want = indexColumns(expected, index.name);
      const got = indexColumns(ctx.db, found.name);
      const older = index.table === names.messages && got === OLDER_MESSAGES_INDEX;
      if (foldIdentifier(found.tbl_name) !== foldIdentifier(index.table) || (want !== got && !older)) {
        out.push({
          table: index.table,
          detail: `index ${index.name} is on ${found.tbl_name} (${got}), not on ${index.table} (${want}): the SDKs' reads cannot use it as planned`,
          repair: null,
        });
      }
    }
    const sessionTables = new Set(ours.map(foldIdentifier));
    const triggers = ctx.db
      .prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
      .all<{ name: string; tbl_name: string; sql: string | null }>();
    for (const t of triggers) {
      if (!sessionTables.has(foldIdentifier(t.tbl_name))) continue;
      const sql = (t.sql ?? '').replace(/\s+/g, ' ');
      out.push({
        table: t.tbl_name,
        detail:
          `trigger ${t.name} on ${t.tbl_name} (the SDKs create none) runs on every write: the rows stored are not what the ` +
          `SDKs wrote, or their writes fail: ${sql.length > 200 ? `${sql.slice(0, 200)}…` : sql}`,
        repair: null,
      });
    }
  } finally {
    expected.close();
  }
  return out;
}

export function checkAlteredSchema(ctx: CheckContext): void {
  for (const d of schemaDifferences(ctx)) {
    ctx.add({
      kind: 'altered-schema',
      detail: d.repair ? d.detail : `${d.detail} (reported only)`,
      ...(d.repair ? {} : { repairable: false }),
    });
  }
}
