/**
 * "A connection closes once and is unusable afterwards", owned in one place for both session classes and the
 * inspector's database: `close()` is idempotent and forgets prepared statements; any later use throws
 * `SessionClosedError` (spec §10).
 */
import { SessionClosedError } from '../errors';
import type { SqliteDatabase, SqliteStatement } from './sqliteDatabase';

export class ConnectionLifetime {
  private open = true;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly statements?: Map<string, SqliteStatement>,
  ) {}

  get isOpen(): boolean {
    return this.open;
  }

  assertOpen(): void {
    if (!this.open) throw new SessionClosedError();
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.statements?.clear();
    this.db.close();
  }
}
