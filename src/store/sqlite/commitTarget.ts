/**
 * The file a command's one write transaction must commit into (`import`, `doctor --fix`): the file at the path when the
 * command began. SQLite writes through the descriptor it opened, so once another file is renamed over the path (or the
 * path is deleted) a COMMIT lands in the old file, which nobody opening the path sees, and the command reports
 * success. The path's device and inode are therefore compared with those taken at the start once the write lock is
 * held (`checkLocked`), and again as the last step before COMMIT (`recheck`): a difference rolls the
 * transaction back and throws `SessionDatabaseError` `replaced` or `deleted`.
 *
 * The `-wal`: SQLite's close checkpoints the `-wal` and deletes it (and the `-shm`) by path only while the database is
 * still at its path (the pager's `databaseIsUnmoved`); after a swap the path's `-wal` may be the new file's, so SQLite
 * leaves it. After a swap during our transaction it is the old file's, and the old file's committed frames in it (an
 * agent's last turns, not yet checkpointed) would be applied by every fresh connection to the new file (spec §11,
 * stale-wal). So the refusal steps aside as our sessions do: it copies them into the old file and empties the `-wal`.
 */
import { statSync, type BigIntStats } from 'node:fs';
import { basename } from 'node:path';
import { SessionDatabaseError } from '../errors';
import { captureFileIdentity, fileStateOf, markStaleWal, staleWalMessage, type FileIdentity, type FileState } from './fileIdentity';
import { walSaltsAt, type WalIdentity } from './foreignWal';
import type { SqliteDatabase } from './sqliteDatabase';

/** How a command's refusal words it. */
export interface CommandWords {
  /** While what the path changed: "the import ran". */
  readonly during: string;
  /** What nothing was: "imported". */
  readonly nothing: string;
  /** What to do when another file is at the path now, and when none is. */
  readonly advice: { readonly replaced: string; readonly deleted: string };
}

export class CommitTarget {
  /** The path's `-wal` when the write lock was taken with the path unchanged: the old file's, if the path changes. */
  private wal: WalIdentity | undefined;
  private lockedUnchanged = false;

  private constructor(
    private readonly file: FileIdentity | undefined,
    private readonly words: CommandWords,
  ) {}

  /** The file at `path` now: taken before the command first opens or checks it. */
  static at(path: string, words: CommandWords): CommitTarget {
    return new CommitTarget(captureFileIdentity(path), words);
  }

  /**
   * Once BEGIN IMMEDIATE holds the write lock, before the first write: throws when the path names another file already
   * (the caller rolls back; nothing was written). From here on no other connection that shares the path's `-wal` can
   * commit into it until we end the transaction.
   */
  checkLocked(): void {
    const state = fileStateOf(this.file);
    if (state !== 'ok') throw this.refusal(state, false, '');
    this.lockedUnchanged = true;
    const st = this.file && walStat(this.file.absolutePath);
    this.wal = st ? { dev: st.dev, ino: st.ino } : undefined;
  }

  /**
   * Under the write lock, as the last step before COMMIT (and wherever else a command wants to look again). When the
   * path no longer names the file, rolls the transaction back itself (the caller's ROLLBACK then finds none), steps
   * aside from the `-wal` and throws. `kept` ends the message (what the command leaves behind, such as a backup).
   */
  recheck(db: SqliteDatabase, kept = ''): void {
    const state = fileStateOf(this.file);
    if (state === 'ok') return;
    db.exec('ROLLBACK');
    throw this.refusal(state, true, kept, this.lockedUnchanged ? this.stepAside(db) : false);
  }

  /**
   * `PRAGMA wal_checkpoint(TRUNCATE)` on our connection: the `-wal`'s committed frames into our file, the old one, and
   * the `-wal` emptied, under SQLite's locks (it waits for readers up to the busy timeout; it deletes nothing). Safe
   * only because the path was unchanged when we took the write lock: every frame committed since the swap would be
   * ours, and ours were rolled back, so what it copies is the old file's. Returns whether the old file's frames stay
   * in the path's `-wal` (a reader kept the checkpoint from finishing); then the `-wal` is recorded as stale.
   */
  private stepAside(db: SqliteDatabase): boolean {
    let left: boolean;
    try {
      const row = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get<{ busy: unknown; log: unknown }>();
      // log: the frames committed in the -wal (-1 for a rollback-journal file, which has none).
      left = row !== undefined && Number(row.busy) !== 0 && Number(row.log) > 0;
    } catch {
      left = true;
    }
    const file = this.file as FileIdentity;
    const now = walStat(file.absolutePath);
    // Another -wal there now (moved in with the new file) is not ours: what stayed in ours is in no one's way.
    if (!left || !this.wal || !now || now.dev !== this.wal.dev || now.ino !== this.wal.ino || now.size <= 32n) return false;
    const salts = walSaltsAt(file.absolutePath);
    markStaleWal(file.absolutePath, { ...this.wal, ...(salts ? { salts } : {}) });
    return true;
  }

  private refusal(state: Exclude<FileState, 'ok'>, rolledBackHere: boolean, kept: string, staleWal = false): SessionDatabaseError {
    const file = this.file as FileIdentity;
    const { during, nothing, advice } = this.words;
    const what = state === 'replaced' ? 'was replaced by another file' : 'was deleted or moved';
    const rolledBack = rolledBackHere ? ': the transaction was rolled back before its COMMIT' : '';
    const wal = !staleWal
      ? ''
      : state === 'replaced'
        ? ` ${staleWalMessage(file.path)}`
        : ` ${basename(file.path)}-wal still holds the old file's last transactions (another connection kept them from being copied into it), which SQLite would apply to a file put at ${file.path}: move ${basename(file.path)}-wal aside first.`;
    return new SessionDatabaseError(
      state,
      `${file.path} ${what} while ${during}, so nothing was ${nothing}${rolledBack}. ${advice[state]}${wal}${kept ? ` ${kept}` : ''}`,
    );
  }
}

/** The `-wal` beside `absolutePath`, or undefined when there is none or it cannot be seen (a folder made unreadable). */
function walStat(absolutePath: string): BigIntStats | undefined {
  try {
    return statSync(`${absolutePath}-wal`, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
