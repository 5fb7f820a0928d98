/**
 * A `-wal` beside the file holding committed transactions the main file does not hold yet: a writer that stopped
 * (killed, crashed, or a read-only close) before its last checkpoint, or one still writing. Every SQLite reader
 * applies the frames, so nothing is wrong while the two files stay together; a copy, backup or sync of the `.db`
 * alone loses those transactions. Read from the files' headers before SQLite opens the path (as
 * `sqlite/foreignWal.ts` reads them): the `-wal` header, each frame's 24-byte header (never a page), and the `-shm`
 * header for how far a checkpoint got. A `-wal` that belongs to a replaced file is not this kind: opening refuses it
 * first (`SessionDatabaseError` `stale-wal`, exit 4).
 *
 * Bounds: 24 bytes read per frame, up to the `-wal`'s size; the distinct pages are counted in a set of at most one
 * number per frame. Without a usable `-shm` (missing, or one SQLite would rebuild: a writer that died mid-write)
 * every committed frame counts, as SQLite's recovery would read them all: an overcount when a checkpoint had copied
 * them before the writer stopped. Not checked while this process has a connection at the path (`walStateAt`).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { endianness } from 'node:os';
import { resolve } from 'node:path';
import { hasConnectionAt } from '../../sqlite/pathsInUse';
import type { Finding } from '../checkContext';

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const WAL_MAGIC = [0x377f0682, 0x377f0683];
/** The `-shm` header: two 48-byte copies of the index header (mxFrame at 16, isInit at 12), then nBackfill at 96. */
const SHM_HEADER_BYTES = 136;
const SHM_COPY_BYTES = 48;

/** What the `-wal` holds that the main file does not. */
export interface WalState {
  /** Frames not yet copied into the main file. */
  frames: number;
  /** Committed transactions among them. */
  commits: number;
  /** Distinct pages they hold. */
  pages: number;
  pageSize: number;
  /** The `-wal`'s last write (ISO time). */
  lastWrite: string;
  /** False when no usable `-shm` said how far a checkpoint got (every committed frame counted). */
  fromIndex: boolean;
}

function readAt(fd: number, bytes: number, position: number): Buffer {
  const buf = Buffer.alloc(bytes);
  const n = readSync(fd, buf, 0, bytes, position);
  return buf.subarray(0, n);
}

/** The checkpoint's progress from the `-shm`, when SQLite would use its header as it is. */
function indexProgress(absolutePath: string): { mxFrame: number; nBackfill: number } | undefined {
  let fd: number;
  try {
    fd = openSync(`${absolutePath}-shm`, 'r');
  } catch {
    return undefined;
  }
  try {
    const h = readAt(fd, SHM_HEADER_BYTES, 0);
    if (
      h.length < SHM_HEADER_BYTES ||
      !h.subarray(0, SHM_COPY_BYTES).equals(h.subarray(SHM_COPY_BYTES, 2 * SHM_COPY_BYTES)) ||
      h[12] !== 1
    ) {
      return undefined;
    }
    const le = endianness() === 'LE';
    return { mxFrame: le ? h.readUInt32LE(16) : h.readUInt32BE(16), nBackfill: le ? h.readUInt32LE(96) : h.readUInt32BE(96) };
  } finally {
    closeSync(fd);
  }
}

/**
 * What the `-wal` beside `path` holds that the main file does not, or undefined when it holds nothing of that, or
 * when this process has a connection at the path: its `-shm` must then not be read (closing our descriptor would drop
 * the POSIX locks SQLite holds on it for that connection), and without it frames a checkpoint already copied would
 * count as missing. So a process that keeps the file open (the extension's worker) does not report this kind for it.
 */
export function walStateAt(path: string): WalState | undefined {
  const absolutePath = resolve(path);
  if (hasConnectionAt(absolutePath)) return undefined;
  const walPath = `${absolutePath}-wal`;
  const stat = statSync(walPath, { throwIfNoEntry: false });
  if (!stat || stat.size <= WAL_HEADER_BYTES) return undefined;
  let fd: number;
  try {
    fd = openSync(walPath, 'r');
  } catch {
    return undefined;
  }
  try {
    const head = readAt(fd, WAL_HEADER_BYTES, 0);
    if (head.length < WAL_HEADER_BYTES || !WAL_MAGIC.includes(head.readUInt32BE(0))) return undefined;
    const pageSize = head.readUInt32BE(8);
    const salts = head.subarray(16, 24);
    const frameBytes = FRAME_HEADER_BYTES + pageSize;
    // The frames of the header's generation up to the last commit: what a reader applies.
    const pagesOf: number[] = [];
    const commitAfter: boolean[] = [];
    let lastCommit = 0;
    for (let offset = WAL_HEADER_BYTES; offset + frameBytes <= stat.size; offset += frameBytes) {
      const fh = readAt(fd, FRAME_HEADER_BYTES, offset);
      if (fh.length < FRAME_HEADER_BYTES || !fh.subarray(8, 16).equals(salts)) break;
      pagesOf.push(fh.readUInt32BE(0));
      const commit = fh.readUInt32BE(4) !== 0;
      commitAfter.push(commit);
      if (commit) lastCommit = pagesOf.length;
    }
    const index = indexProgress(absolutePath);
    const end = index ? Math.min(index.mxFrame, lastCommit) : lastCommit;
    const start = index ? Math.min(index.nBackfill, end) : 0;
    if (end <= start) return undefined;
    let commits = 0;
    for (let i = start; i < end; i++) if (commitAfter[i]) commits++;
    return {
      frames: end - start,
      commits,
      pages: new Set(pagesOf.slice(start, end)).size,
      pageSize,
      lastWrite: stat.mtime.toISOString(),
      fromIndex: index !== undefined,
    };
  } finally {
    closeSync(fd);
  }
}

/** The finding for a `-wal` state. */
export function staleWalFinding(path: string, wal: WalState): Finding {
  const name = path.split(/[\\/]/).pop() ?? path;
  const counted = wal.fromIndex ? '' : ' (no usable -shm: every committed frame counted)';
  return {
    kind: 'stale-wal',
    detail:
      `${name}-wal holds ${wal.commits} committed transaction(s) in ${wal.frames} frame(s) (${wal.pages} page(s) of ${wal.pageSize} bytes, ` +
      `last written ${wal.lastWrite}) that ${name} does not hold yet${counted}: ${name} without its -wal would miss them. ` +
      'A program writing the file now also leaves frames until its next checkpoint; the checkpoint is safe then too.',
  };
}
