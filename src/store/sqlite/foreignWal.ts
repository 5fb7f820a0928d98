/**
 * Telling, before SQLite opens a path, that the `-wal` beside it cannot belong to the main file there (format spec
 * §11, stale-wal). When another file is renamed over a database that a process still holds open, the old file's
 * `-wal` (and `-shm`) stay at the path, and every fresh connection — ours, Python's, another window's — would apply
 * its frames to the new file: the old content shows, and the first writer merges the old pages into the new file.
 * SQLite records nothing that ties a `-wal` to its main file, so the evidence is the two files' times, read with two
 * `stat` calls (a normal open costs nothing more), and the `-wal`'s frames, read only when the times already point
 * at a replacement:
 *
 * 1. the `-wal`'s last change was a write (mtime = ctime: a write sets both to one instant; `cp -a`, `rsync` and
 *    `mv` of the `-wal` leave its ctime later than its mtime);
 * 2. the main file's last change was to its metadata only (ctime > mtime): a rename sets ctime, while a checkpoint,
 *    VACUUM or any write sets both;
 * 3. that change came after the `-wal` was last written (main ctime > `-wal` ctime): ctimes, not mtimes, because
 *    `cp -a` keeps mtimes;
 * 4. the `-wal` holds frames SQLite would apply: not yet backfilled per the `-shm`'s index (or, without a usable
 *    index, a first frame of the `-wal`'s current generation, which SQLite's recovery would replay).
 *
 * Normal use never meets 2 and 3 together with 4: every write to the main file also sets its mtime, and every write
 * to the `-wal` moves its ctime past the main file's. A metadata-only change of the main file by hand (chmod, chown,
 * a hard link) while committed frames wait behind a reader is the one false positive; the remedy (Move Aside)
 * keeps both files. Coarse timestamps make the strict comparisons equal, and SQLite run as root chowns the `-wal`
 * whenever it opens it (moving its ctime past its mtime): both can only hide a replacement (SQLite's behaviour
 * before this check), never invent one.
 */
import { closeSync, openSync, readSync, statSync, type BigIntStats } from 'node:fs';
import { endianness } from 'node:os';
import { hasConnectionAt } from './pathsInUse';

/** A `-wal` file's device and inode, and the salts of its header when it was found stale. */
export interface WalIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
  /**
   * The header's two salts (hex), which SQLite changes whenever it starts the `-wal` over: a `-wal` emptied by its
   * holder (TRUNCATE keeps the inode) and then written by the new file's connections is the new file's, not stale.
   */
  readonly salts?: string;
}

/** SQLite's WAL file header: magic (two values: checksum byte order), page size, salts (file format §4.1). */
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;
const WAL_MAGIC = [0x377f0682, 0x377f0683];
/** The `-shm` (wal-index) header: two 48-byte copies of WalIndexHdr, then WalCkptInfo (nBackfill first). */
const SHM_HEADER_BYTES = 136;
const SHM_COPY_BYTES = 48;
const SHM_IS_INIT = 12;
const SHM_MX_FRAME = 16;
const SHM_N_BACKFILL = 96;

/**
 * The `-wal` at `absolutePath` when its times say it was last written before the main file now at the path arrived
 * (checks 1 to 3 above), with its stat; otherwise undefined.
 */
function walPredatingMain(absolutePath: string): BigIntStats | undefined {
  const wal = statSync(`${absolutePath}-wal`, { bigint: true, throwIfNoEntry: false });
  if (!wal || wal.size <= BigInt(WAL_HEADER_BYTES)) return undefined;
  if (wal.mtimeNs !== wal.ctimeNs) return undefined;
  const main = statSync(absolutePath, { bigint: true, throwIfNoEntry: false });
  if (!main) return undefined;
  if (main.ctimeNs <= main.mtimeNs || main.ctimeNs <= wal.ctimeNs) return undefined;
  return wal;
}

/**
 * Whether the `-wal` at `absolutePath` was written at or after the main file there last changed: then its frames
 * are (at least partly) the new file's, written by a connection that opened it through this `-wal`, and it must not
 * be recorded as stale or checkpointed into the old file.
 */
export function walWrittenSinceMainChanged(absolutePath: string): boolean {
  const wal = statSync(`${absolutePath}-wal`, { bigint: true, throwIfNoEntry: false });
  const main = statSync(absolutePath, { bigint: true, throwIfNoEntry: false });
  return wal !== undefined && main !== undefined && wal.mtimeNs >= main.ctimeNs;
}

/**
 * What a holder checks before checkpointing once its file was replaced: the path's `-wal` holds frames, the main
 * file there has not been written since it arrived, and nobody has written the `-wal` since then (its mtime; not its
 * ctime, which SQLite run as root changes whenever a connection opens the `-wal`). Frames written after the
 * replacement are the new file's, and must not go into the old one.
 */
export function walUnwrittenSinceReplaced(absolutePath: string): boolean {
  const wal = statSync(`${absolutePath}-wal`, { bigint: true, throwIfNoEntry: false });
  if (!wal || wal.size <= BigInt(WAL_HEADER_BYTES)) return false;
  const main = statSync(absolutePath, { bigint: true, throwIfNoEntry: false });
  return main !== undefined && main.ctimeNs > main.mtimeNs && main.ctimeNs > wal.mtimeNs;
}

/**
 * The `-wal` at `absolutePath`, when it cannot belong to the main file there and holds frames SQLite would apply to
 * it (all four checks above). Reads at most 32 + 24 bytes of the `-wal` and 136 of the `-shm`; writes nothing and
 * takes no lock, so it works beside a holder that never calls again.
 */
export function foreignWalAt(absolutePath: string): WalIdentity | undefined {
  const wal = walPredatingMain(absolutePath);
  if (!wal) return undefined;
  if (!hasFramesToApply(absolutePath, wal.size)) return undefined;
  const salts = walSaltsAt(absolutePath);
  return { dev: wal.dev, ino: wal.ino, ...(salts ? { salts } : {}) };
}

/** The salts of the `-wal`'s header at `absolutePath` (hex), or undefined without a valid header. */
export function walSaltsAt(absolutePath: string): string | undefined {
  const head = readHead(`${absolutePath}-wal`, WAL_HEADER_BYTES);
  if (!head || head.length < WAL_HEADER_BYTES || !WAL_MAGIC.includes(head.readUInt32BE(0))) return undefined;
  return head.subarray(16, 24).toString('hex');
}

/** Check 4: whether a connection opening the path now would read pages from the `-wal`. */
function hasFramesToApply(absolutePath: string, walSize: bigint): boolean {
  const head = readHead(`${absolutePath}-wal`, WAL_HEADER_BYTES + WAL_FRAME_HEADER_BYTES);
  if (!head || head.length < WAL_HEADER_BYTES) return false;
  // A -wal without SQLite's magic is ignored by SQLite (and reset by the next writer): nothing would be applied.
  if (!WAL_MAGIC.includes(head.readUInt32BE(0))) return false;
  const salts = head.subarray(16, 24);
  // Never while this process has a connection at the path: closing our descriptor of the -shm would drop the locks
  // SQLite holds on it for that connection (`pathsInUse.ts`). Without the index, all frames count, as in recovery.
  const index = hasConnectionAt(absolutePath) ? undefined : readHead(`${absolutePath}-shm`, SHM_HEADER_BYTES);
  if (index && usableIndex(index)) {
    const native = endianness() === 'LE';
    const mxFrame = native ? index.readUInt32LE(SHM_MX_FRAME) : index.readUInt32BE(SHM_MX_FRAME);
    const nBackfill = native ? index.readUInt32LE(SHM_N_BACKFILL) : index.readUInt32BE(SHM_N_BACKFILL);
    // All frames copied into the main file: a reader ignores the -wal and reads the main file alone.
    return mxFrame > nBackfill;
  }
  // No index, or one SQLite would rebuild: recovery replays the frames of the header's generation from the start.
  const pageSize = head.readUInt32BE(8);
  if (head.length < WAL_HEADER_BYTES + WAL_FRAME_HEADER_BYTES) return false;
  if (walSize < BigInt(WAL_HEADER_BYTES + WAL_FRAME_HEADER_BYTES + pageSize)) return false;
  return head.subarray(WAL_HEADER_BYTES + 8, WAL_HEADER_BYTES + 16).equals(salts);
}

/**
 * Whether the `-shm` header is one SQLite would use as it is: both copies equal (a writer was not half-way) and
 * marked initialised; anything else makes SQLite rebuild the index from the `-wal` (recovery). Its salts are not
 * compared with the `-wal`'s: after a RESTART checkpoint the index holds the next generation's salts before any
 * frame of it is written, and SQLite reads nothing from the `-wal` then.
 */
function usableIndex(index: Buffer): boolean {
  if (index.length < SHM_HEADER_BYTES) return false;
  if (!index.subarray(0, SHM_COPY_BYTES).equals(index.subarray(SHM_COPY_BYTES, 2 * SHM_COPY_BYTES))) return false;
  return index[SHM_IS_INIT] === 1;
}

/** The first `bytes` bytes of `path` (fewer if it is shorter), or undefined when it cannot be read. */
function readHead(path: string, bytes: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, 0);
    return buf.subarray(0, n);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
