/**
 * What our own stores (the trace store, the review store) share as SQLite files: opened in WAL mode (one writer, any
 * readers), created in one transaction when empty, refused untouched when the file is a session file, another
 * program's database or one of ours in a newer format, never created or written through a symbolic link, and
 * statements prepared once per connection.
 */
import { openDatabase, type OpenOptions } from '../drivers/openDatabase';
import { describeDatabaseError } from '../errors';
import { refuseSymlinks } from '../files/outputGuard';
import { createFileNoFollow } from '../files/tempFile';
import type { SqliteDatabase, SqliteStatement } from './sqliteDatabase';

/** What makes a file one of our stores, and how its errors are made. */
export interface OwnStoreFormat {
  /** For messages: "trace store", "review store". */
  what: string;
  /** For the refusal of a foreign file: "Traces", "Reviews". */
  kept: string;
  metaTable: string;
  /** A table every store of this kind has (with `metaTable`, what tells ours from a stranger). */
  mainTable: string;
  format: number;
  /** `PRAGMA application_id`, so no other program's database is mistaken for ours. */
  applicationId: number;
  ddl: string;
  /** The store's own error class: `not-ours` (a foreign file), `newer-format`, `not-found` (empty and read-only). */
  error(problem: 'not-ours' | 'newer-format' | 'not-found', message: string): Error;
}

/**
 * Our stores by their `PRAGMA application_id` ("ASI" and a letter), to say which of them a wrong path holds. Kept here
 * rather than read from each store's format, whose modules import this one (test/unit/store/sqlite/ownStoreFile.test.ts
 * holds the two together).
 */
const OUR_STORES: Readonly<Record<number, string>> = {
  0x41534945: 'experiment store',
  0x41534947: 'history guard store',
  0x41534950: 'replay marks store',
  0x41534952: 'review store',
  0x41534954: 'trace store',
  0x41534958: 'search index',
};

/** The name of one of our stores with its article: "a review store", "an experiment store". */
function aStore(what: string): string {
  return `${/^[aeiou]/i.test(what) ? 'an' : 'a'} ${what}`;
}

function tableNames(db: SqliteDatabase): string[] {
  return db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all<{ name: string }>()
    .map((r) => r.name);
}

/**
 * The columns of each table `ddl` creates, read from our own DDL (one `CREATE TABLE name (…);` per table, a column a
 * definition; `PRIMARY KEY (…)`, `UNIQUE`, `CHECK` and `FOREIGN KEY` clauses are not columns).
 */
export function ddlColumns(ddl: string): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  // `) WITHOUT ROWID;` ends a table too (the history guard's lists), or the match would run on into the next table.
  for (const m of ddl.matchAll(/CREATE TABLE (\w+) \(([\s\S]*?)\)(?: WITHOUT ROWID)?;/g)) {
    const definitions: string[] = [];
    let depth = 0;
    let current = '';
    // Split at the commas between definitions, not those inside `PRIMARY KEY (a, b)` or `CHECK (x IN ('a', 'b'))`.
    for (const c of m[2]!) {
      if (c === '(') depth++;
      else if (c === ')') depth--;
      if (c === ',' && depth === 0) {
        definitions.push(current);
        current = '';
      } else current += c;
    }
    definitions.push(current);
    const columns = definitions
      .map((d) => d.trim().split(/\s+/, 1)[0] ?? '')
      .filter((name) => name !== '' && !/^(PRIMARY|UNIQUE|CHECK|FOREIGN|CONSTRAINT)$/i.test(name));
    tables.set(m[1]!, columns);
  }
  return tables;
}

/**
 * The first table or column of our DDL the file lacks, as `table` or `table.column`, or null. A file with our
 * header and other tables would otherwise fail at its first query with SQLite's "no such column".
 */
function missingColumn(db: SqliteDatabase, ddl: string): string | null {
  for (const [table, columns] of ddlColumns(ddl)) {
    const present = new Set(
      db
        .prepare('SELECT name FROM pragma_table_info(?)')
        .all<{ name: string }>(table)
        .map((r) => r.name),
    );
    if (present.size === 0) return table;
    const missing = columns.find((c) => !present.has(c));
    if (missing !== undefined) return `${table}.${missing}`;
  }
  return null;
}

/** Creates the tables in an empty file (in one transaction) and checks that the file is a store of ours we can read. */
export function ensureOwnSchema(db: SqliteDatabase, path: string, f: OwnStoreFormat): void {
  if (tableNames(db).length === 0) {
    if (db.readonly) throw f.error('not-found', `${path} has no ${f.what} yet (it is empty and opened read-only).`);
    db.exec('BEGIN IMMEDIATE');
    try {
      // Another process may have created it between the look above and the lock.
      if (tableNames(db).length === 0) {
        db.exec(f.ddl);
        db.prepare(`INSERT INTO ${f.metaTable} (key, value) VALUES (?, ?)`).run('format', String(f.format));
        db.exec(`PRAGMA application_id = ${f.applicationId}`);
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
  }
  const now = tableNames(db);
  if (!now.includes(f.metaTable) || !now.includes(f.mainTable)) {
    const other = OUR_STORES[Number(db.prepare('PRAGMA application_id').get<{ application_id: number }>()?.application_id)];
    // Another of our stores (the review store given where the experiment store goes, say) is named as what it is: "never
    // in a session file" would send the reader looking for a session file that is not there.
    if (other !== undefined && other !== f.what)
      throw f.error(
        'not-ours',
        `${path} is ${aStore(other)}, not ${aStore(f.what)}. ${f.kept} are kept in a file of their own, apart from the ${other}: choose another path.`,
      );
    throw f.error(
      'not-ours',
      `${path} is not ${aStore(f.what)} (it has the tables ${now.slice(0, 6).join(', ')}). ${f.kept} are kept in a file of their own, never in a session file: choose another path.`,
    );
  }
  const format = Number(db.prepare(`SELECT value FROM ${f.metaTable} WHERE key = 'format'`).get<{ value: string }>()?.value);
  if (!(format >= 1)) throw f.error('not-ours', `${path} has a ${f.metaTable} table without a format: it is not one of our ${f.what}s.`);
  if (format > f.format)
    throw f.error(
      'newer-format',
      `${path} is ${aStore(f.what)} of format ${format}, written by a newer version of Agent Session Inspector (this one reads format ${f.format}). Update it, or choose another file.`,
    );
  const missing = missingColumn(db, f.ddl);
  if (missing !== null)
    throw f.error(
      'not-ours',
      `${path} has the header of ${aStore(f.what)} but lacks ${missing.includes('.') ? `the column ${missing}` : `the table ${missing}`}: it is not one of our ${f.what}s, or it is damaged. Choose another file.`,
    );
}

/**
 * Opens (creating when missing and writable) a store of ours at `path`; errors described as the session files' are.
 * To write, a symbolic link at the path or its -wal/-shm/-journal is refused (`OutputFileError('symlink')`) before
 * SQLite, which follows links, sees it; a missing file is created here without following one; and WAL mode, the one
 * pragma that changes a file for good, is set only once the file is known to be ours (or was empty).
 */
export function openOwnStore(path: string, options: Partial<OpenOptions>, f: OwnStoreFormat): SqliteDatabase {
  if (!options.readonly) {
    refuseSymlinks(path, f.what);
    // A link planted between this and SQLite's open would be followed; creating the file first, exclusively and
    // without following, leaves SQLite a regular file to open (EEXIST: someone made it first, which the checks see).
    if (!options.fileMustExist) {
      try {
        createFileNoFollow(path);
      } catch {
        // A missing folder or no permission: SQLite's open below fails on it too, and says so in the store's words.
      }
    }
  }
  let db: SqliteDatabase;
  try {
    db = openDatabase(path, options);
  } catch (err) {
    throw describeDatabaseError(err, path, { readonly: options.readonly });
  }
  try {
    ensureOwnSchema(db, path, f);
    if (!db.readonly) db.exec('PRAGMA journal_mode = WAL');
  } catch (err) {
    db.close();
    throw describeDatabaseError(err, path, { readonly: options.readonly });
  }
  return db;
}

/** Statements prepared once per connection, by their SQL. */
export class StatementCache {
  private readonly statements = new Map<string, SqliteStatement>();
  constructor(private readonly db: SqliteDatabase) {}

  get(sql: string): SqliteStatement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }
}
