import { SessionDatabaseError } from '../errors';
import { countConnection } from '../sqlite/pathsInUse';
import type { DriverName, SqliteDatabase } from '../sqlite/sqliteDatabase';
import { loadBetterSqlite3, openWithBetterSqlite3 } from './betterSqlite3Driver';
import { loadNodeSqlite, openWithNodeSqlite } from './nodeSqliteDriver';
import type { OpenOptions } from './openOptions';

export type { OpenOptions } from './openOptions';

/** The environment variable that forces a driver when no option does (`better-sqlite3` or `node:sqlite`). */
export const DRIVER_ENV_VAR = 'AGENT_SESSION_SQLITE_DRIVER';

/** Python's and better-sqlite3's default busy timeout (spec §3.1). */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

type Loaded =
  { name: 'better-sqlite3'; mod: ReturnType<typeof loadBetterSqlite3> } | { name: 'node:sqlite'; mod: ReturnType<typeof loadNodeSqlite> };

const cache = new Map<DriverName, Loaded | Error>();

function load(name: DriverName): Loaded | Error {
  let entry = cache.get(name);
  if (!entry) {
    try {
      entry = name === 'better-sqlite3' ? { name, mod: loadBetterSqlite3() } : { name, mod: loadNodeSqlite() };
    } catch (err) {
      entry = err instanceof Error ? err : new Error(String(err));
    }
    cache.set(name, entry);
  }
  return entry;
}

/** Forgets which drivers loaded, so the next open tries again (for tests that simulate a missing addon). */
export function forgetLoadedDrivers(): void {
  cache.clear();
}

function requestedDriver(option: DriverName | 'auto' | undefined): DriverName | 'auto' {
  const value = option && option !== 'auto' ? option : (process.env[DRIVER_ENV_VAR] ?? 'auto');
  if (value === 'auto' || value === 'better-sqlite3' || value === 'node:sqlite') return value;
  throw new SessionDatabaseError(
    'driver-unavailable',
    `Unknown SQLite driver '${value}' (from ${DRIVER_ENV_VAR}); use 'better-sqlite3', 'node:sqlite' or 'auto'.`,
  );
}

/**
 * The driver a new connection would use, after the automatic choice: better-sqlite3 when its addon loads,
 * otherwise node:sqlite. Throws `SessionDatabaseError('driver-unavailable')` with the reasons when neither works.
 */
export function resolveDriver(option?: DriverName | 'auto'): DriverName {
  return pick(requestedDriver(option)).name;
}

/** Node's error text on one line: an ABI mismatch spreads the reason (`NODE_MODULE_VERSION 115` vs `137`) over lines. */
function reasonOf(err: Error): string {
  return err.message.replace(/\s*\n\s*/g, ' ').trim();
}

/** The first Node.js release whose built-in node:sqlite loads without a flag. */
export const NODE_SQLITE_MIN_NODE = '22.13.0';

/** True when this Node's version is at least `min` (`major.minor.patch`). */
export function nodeAtLeast(min: string, version = process.versions.node): boolean {
  const a = version.split('.').map(Number);
  const b = min.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** Which driver the automatic choice takes, and why each one before it was skipped. */
export interface DriverChoice {
  driver: DriverName;
  skipped: { driver: DriverName; reason: string }[];
}

function pick(wanted: DriverName | 'auto'): Loaded & { skipped: DriverChoice['skipped'] } {
  const order: DriverName[] = wanted === 'auto' ? ['better-sqlite3', 'node:sqlite'] : [wanted];
  const skipped: DriverChoice['skipped'] = [];
  for (const name of order) {
    const loaded = load(name);
    if (!(loaded instanceof Error)) return { ...loaded, skipped };
    skipped.push({ driver: name, reason: reasonOf(loaded) });
  }
  // Advise only what can help on this runtime: a newer Node cannot help when this one already has node:sqlite.
  const remedies = ['rebuild better-sqlite3 for this runtime (npm rebuild better-sqlite3)'];
  if (!nodeAtLeast(NODE_SQLITE_MIN_NODE)) {
    remedies.push(
      `run on Node.js ${NODE_SQLITE_MIN_NODE.replace(/\.0$/, '')} or later (this is ${process.versions.node}), whose built-in node:sqlite needs no build`,
    );
  }
  throw new SessionDatabaseError(
    'driver-unavailable',
    `No SQLite driver could be loaded (${skipped.map((s) => `${s.driver}: ${s.reason}`).join('; ')}). To fix it, ${remedies.join(', or ')}.`,
  );
}

/**
 * What `openDatabase` would use now, with the reasons the drivers before it were skipped (for a log line: an editor
 * host whose Node ABI differs from the one better-sqlite3 was built for skips it, and that is worth saying once).
 * Throws `SessionDatabaseError('driver-unavailable')` like `openDatabase` when no driver loads.
 */
export function describeDriverChoice(option?: DriverName | 'auto'): DriverChoice {
  const { name, skipped } = pick(requestedDriver(option));
  return { driver: name, skipped };
}

/** Opens a SQLite connection with the chosen (or automatically picked) driver. */
export function openDatabase(path: string, options: Partial<OpenOptions> = {}): SqliteDatabase {
  const full: OpenOptions = {
    readonly: options.readonly ?? false,
    fileMustExist: options.fileMustExist ?? false,
    busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    driver: options.driver ?? 'auto',
  };
  const loaded = pick(requestedDriver(full.driver));
  const db = loaded.name === 'better-sqlite3' ? openWithBetterSqlite3(loaded.mod, path, full) : openWithNodeSqlite(loaded.mod, path, full);
  // Counted while open, so a check of the path's -shm never closes a descriptor under this process's locks.
  const uncount = countConnection(path);
  const close = db.close.bind(db);
  db.close = () => {
    try {
      close();
    } finally {
      uncount();
    }
  };
  return db;
}
