/**
 * "A connection closes once and is unusable afterwards", owned in one place for both session classes and the
 * inspector's database: `close()` is idempotent and forgets prepared statements; any later use throws
 * `SessionClosedError` (spec §10). A connection whose path comes to name another file (replaced: spec §11) steps
 * aside — its own `-wal` checkpointed into its old file, so the path's `-wal` no longer hides the new file — and is
 * closed; every later call then throws that `replaced` error.
 */
import { SessionClosedError, SessionDatabaseError } from '../errors';
import { fileStateOf, releaseReplacedWal, replacedError, type FileIdentity } from './fileIdentity';
import type { SqliteDatabase, SqliteStatement } from './sqliteDatabase';

/**
 * How often a watching holder looks at its path (one `stat`, about a microsecond). A timer rather than `fs.watch`:
 * it needs no watcher per folder (inotify limits, network file systems that never report), and a second's delay is
 * harmless because our own fresh opens refuse the path's `-wal` meanwhile (`foreignWal.ts`).
 */
export const REPLACEMENT_POLL_MS = 1000;

export class ConnectionLifetime {
  private open = true;
  /** Set when the connection stepped aside from a replaced file: what every later call throws. */
  private retiredBy: SessionDatabaseError | undefined;
  private file: FileIdentity | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly statements?: Map<string, SqliteStatement>,
  ) {}

  get isOpen(): boolean {
    return this.open;
  }

  /** Whether the connection stepped aside from a replaced file (and was closed). */
  get retired(): boolean {
    return this.retiredBy !== undefined;
  }

  /**
   * The file this connection holds (undefined for `:memory:`), checked by `assertFile`. With `watch`, also checked
   * every `REPLACEMENT_POLL_MS` on an unref'd timer, so a holder that never calls again still steps aside.
   */
  hold(file: FileIdentity | undefined, watch: boolean): void {
    this.file = file;
    if (!file || !watch || this.timer) return;
    // The timer holds the lifetime weakly: a session its caller dropped without closing is still collected (and its
    // driver closes the connection), as before there was a watch; the timer then stops itself.
    const lifetime = new WeakRef<ConnectionLifetime>(this);
    const timer = setInterval(() => {
      const self = lifetime.deref();
      if (!self) clearInterval(timer);
      else self.lookAtFile();
    }, REPLACEMENT_POLL_MS);
    timer.unref();
    this.timer = timer;
  }

  assertOpen(): void {
    if (this.retiredBy) throw this.retiredBy;
    if (!this.open) throw new SessionClosedError();
  }

  /**
   * `assertOpen`, then: when the path names another file now, step aside and throw `replaced` (spec §11). A deleted
   * path is left to the writes to refuse (a file renamed back is used again).
   */
  assertFile(doing: 'read' | 'write' | 'call'): void {
    this.assertOpen();
    if (this.file && !this.db.inTransaction && fileStateOf(this.file) === 'replaced') throw this.stepAside(doing);
  }

  close(): void {
    this.retiredBy = undefined;
    this.shut();
  }

  /** The watch's look: between calls no statement or transaction of ours runs, so the connection can step aside. */
  private lookAtFile(): void {
    if (this.open && !this.db.inTransaction && fileStateOf(this.file) === 'replaced') this.stepAside('call');
  }

  /** Checkpoints our `-wal` into the old file when it is safe, closes, and remembers the error for later calls. */
  private stepAside(doing: 'read' | 'write' | 'call'): SessionDatabaseError {
    const file = this.file as FileIdentity;
    if (this.open) releaseReplacedWal(this.db, file);
    this.shut();
    this.retiredBy = replacedError(file, doing);
    return this.retiredBy;
  }

  private shut(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (!this.open) return;
    this.open = false;
    this.statements?.clear();
    this.db.close();
  }
}
