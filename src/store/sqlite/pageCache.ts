/**
 * The size of one connection's SQLite page cache, for a reader that passes over the file once (the command line):
 * SQLite fills the cache up to its limit as it reads, and better-sqlite3's build sets that limit to 16 MB per
 * connection (node:sqlite keeps SQLite's 2 MB), which a single pass never reads again. A connection that answers many
 * calls (the extension's, `mcp`) keeps the driver's default.
 */
import { InvalidArgumentError } from '../errors';
import type { SqliteDatabase } from './sqliteDatabase';

/** What the command line asks for: SQLite's own default, which still holds every interior page a seek revisits. */
export const ONE_PASS_PAGE_CACHE_KIB = 2048;

/** The bounds of `pageCacheKiB`: from 64 KiB (a few pages) to 1 GiB. */
export const MIN_PAGE_CACHE_KIB = 64;
export const MAX_PAGE_CACHE_KIB = 1_048_576;

/** Checks `kib` before anything is opened (`InvalidArgumentError` naming the option and its bounds). */
export function checkPageCacheKiB(kib: number | undefined): void {
  if (kib === undefined) return;
  if (!Number.isInteger(kib) || kib < MIN_PAGE_CACHE_KIB || kib > MAX_PAGE_CACHE_KIB) {
    throw new InvalidArgumentError(
      `pageCacheKiB must be a whole number of KiB from ${MIN_PAGE_CACHE_KIB} to ${MAX_PAGE_CACHE_KIB}, got ${String(kib)}`,
    );
  }
}

/** Sets the connection's page cache to `kib` KiB (a negative `cache_size` is in KiB); undefined leaves the default. */
export function applyPageCache(db: SqliteDatabase, kib: number | undefined): void {
  checkPageCacheKiB(kib);
  if (kib !== undefined) db.exec(`PRAGMA cache_size = -${kib}`);
}
