/**
 * A file written under a temporary name beside its target and put in place only when complete, so a failed or
 * cancelled write never leaves half a file under the user's name and never touches the file already there. The
 * temporary name is random (not `<out>.<pid>.partial`, which another user of a shared folder could guess and plant a
 * link at), and it is created with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600: never through a link, never onto a file
 * someone else made, unreadable to others while it is written. Messages name the target, never the temporary file.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  linkSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { OutputFileError } from './outputFileError';
import { SQLITE_COMPANIONS, checkOutputPath, type OutputOptions } from './outputGuard';

/**
 * How much text is gathered before a write (characters): a write per small chunk costs more than the chunk, and a
 * batch held longer outlives the young generation's scavenges. At 1 Mi characters, `agent-sessions export md -o` of
 * file A's b1_late (237 MB) ran 35 full collections on Node 24; at 16 Ki, 3, in 2.1 s of CPU instead of 2.9
 * (docs/benchmarks.md, "The streaming commands' heap"). Also under V8's large-object size (128 KiB) as UTF-16.
 */
const WRITE_BATCH = 1 << 14;

/** The bytes `copyFrom` reads at a time (a buffer reused for the whole copy: nothing for the heap to collect). */
const COPY_CHUNK_BYTES = 1 << 20;

/** O_NOFOLLOW does not exist on Windows (0 there): O_EXCL alone already refuses any existing path, link or not. */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** "EACCES: permission denied" from a Node file-system error, without the path it names (which may be the temp file). */
function reasonOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const head = message.split(',')[0]!.trim();
  return typeof e?.code === 'string' && head.startsWith(`${e.code}:`) ? head : typeof e?.code === 'string' ? e.code : 'failed';
}

/** An `OutputFileError('io')` about `target` for a file-system error met while writing it (or its temporary file). */
export function writeErrorFor(target: string, err: unknown): unknown {
  if (err instanceof OutputFileError) return err;
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return err;
  // A full disk, a quota or a size limit: the folder is fine, the advice is about room.
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG')
    return new OutputFileError('io', `${target} cannot be written (${reasonOf(err)}): there is no room for it. Nothing was put in place.`);
  return new OutputFileError('io', `${target} cannot be written (${reasonOf(err)}). Check that its folder exists and can be written.`);
}

/**
 * Writes every byte of `data` at the file's current end. `writeSync` may write fewer bytes than it was given and say
 * so only in its answer: on a disk that fills up, Linux first writes what fits, and only the next write fails with
 * ENOSPC. Taken as done, the rest was lost and a cut file was put in place as complete (a tester's full tmpfs).
 */
function writeAll(fd: number, data: Buffer): void {
  for (let at = 0; at < data.length;) {
    const n = writeSync(fd, data, at, data.length - at);
    // No progress at all: the same answer as the failing write would give, so it reads as one.
    if (n <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    at += n;
  }
}

/** Creates a new, empty file at `path` without following a link there; false when something is already at `path`. */
export function createFileNoFollow(path: string, mode = 0o666): boolean {
  let fd: number;
  try {
    fd = openSync(path, CREATE_NEW, mode);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'EEXIST' || (err as { code?: unknown }).code === 'ELOOP') return false;
    throw err;
  }
  closeSync(fd);
  return true;
}

/** The mode a new file gets from the user's umask (0666 masked), which `0600` at creation held back while writing. */
function newFileMode(): number {
  return 0o666 & ~process.umask();
}

/**
 * The output's name as its temporary file's name holds it: cut (whole characters) to 200 bytes, since the 30 bytes
 * around it (`.`, `.<24 hex>.tmp`) would take a name near the file system's 255-byte limit past it (ENAMETOOLONG
 * for a name the output itself may have).
 */
function tempBase(target: string): string {
  const chars = Array.from(basename(target));
  while (Buffer.byteLength(chars.join('')) > 200) chars.pop();
  return chars.join('');
}

/** A temporary file beside `target`, written and then put in place by `commit` or removed by `discard`. */
export class TempFile {
  private fd: number | null;
  private buffer: string[] = [];
  private buffered = 0;
  private done = false;

  private constructor(
    /** The file the user asked for: the only name messages use. */
    readonly target: string,
    /** The temporary file's path (for a writer that opens it itself, such as SQLite); never shown to users. */
    readonly path: string,
    fd: number,
    private readonly options: OutputOptions,
  ) {
    this.fd = fd;
  }

  /**
   * Checks `target` (`checkOutputPath`: not an input, not an existing file unless `overwrite`) and creates the
   * temporary file beside it. Throws `OutputFileError`; nothing is created then.
   */
  static create(target: string, options: OutputOptions = {}): TempFile {
    checkOutputPath(target, options);
    const path = join(dirname(target), `.${tempBase(target)}.${randomBytes(12).toString('hex')}.tmp`);
    try {
      return new TempFile(target, path, openSync(path, CREATE_NEW, 0o600), options);
    } catch (err) {
      throw writeErrorFor(target, err);
    }
  }

  /** Appends `text` (gathered into batches of about 1 MiB). */
  write(text: string): void {
    this.buffer.push(text);
    this.buffered += text.length;
    if (this.buffered >= WRITE_BATCH) this.flush();
  }

  /** Writes what is gathered. */
  flush(): void {
    if (this.buffer.length === 0 || this.fd === null) return;
    const text = this.buffer.join('');
    this.buffer = [];
    this.buffered = 0;
    try {
      writeAll(this.fd, Buffer.from(text, 'utf8'));
    } catch (err) {
      throw writeErrorFor(this.target, err);
    }
  }

  /** Appends the bytes of the file at `source`, a chunk at a time (a dataset built elsewhere, copied to where the user chose). */
  copyFrom(source: string): void {
    this.flush();
    const input = openSync(source, 'r');
    try {
      const chunk = Buffer.alloc(COPY_CHUNK_BYTES);
      for (let n = readSync(input, chunk); n > 0; n = readSync(input, chunk)) {
        try {
          writeAll(this.fd!, chunk.subarray(0, n));
        } catch (err) {
          throw writeErrorFor(this.target, err);
        }
      }
    } finally {
      closeSync(input);
    }
  }

  /** Closes the file without putting it in place: for a writer that reopens it by `path` (SQLite). */
  close(): void {
    this.flush();
    if (this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      try {
        closeSync(fd);
      } catch (err) {
        throw writeErrorFor(this.target, err);
      }
    }
  }

  /**
   * Puts the complete file at `target`. Without `overwrite`, a hard link makes the name appear only if nothing took it
   * since the check (EEXIST otherwise: `exists`); with it, a rename replaces what is there, a link included (not the
   * file it points to). The file gets the mode a new file would (or the replaced file's).
   */
  commit(): void {
    try {
      this.close();
      // The inputs are checked again: one may have appeared at the target (or moved there) while this was written.
      checkOutputPath(this.target, { ...this.options, overwrite: true });
      const replaced = lstatOrNull(this.target);
      chmodSync(this.path, replaced?.isFile() ? replaced.mode & 0o777 : newFileMode());
      if (this.options.overwrite) renameSync(this.path, this.target);
      else this.linkIntoPlace();
      this.done = true;
    } catch (err) {
      this.discard();
      throw writeErrorFor(this.target, err);
    }
  }

  private linkIntoPlace(): void {
    try {
      linkSync(this.path, this.target);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 'EEXIST')
        throw new OutputFileError('exists', `${this.target} appeared while it was being written: nothing was replaced.`);
      // A file system without hard links (FAT, some network shares): the check again, then a rename.
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS' && code !== 'EMLINK') throw err;
      checkOutputPath(this.target, this.options);
      renameSync(this.path, this.target);
      return;
    }
    unlinkSync(this.path);
  }

  /**
   * `err` with the temporary file's path in its message replaced by the target's: for errors of a writer that opened
   * the file by `path` (SQLite's, described with the path it was given), so no message shows the temporary name.
   */
  nameTarget(err: unknown): unknown {
    if (err instanceof Error && err.message.includes(this.path)) err.message = err.message.split(this.path).join(this.target);
    return err;
  }

  /** Removes the temporary file (and anything SQLite kept beside it); the target is untouched. Safe to call twice. */
  discard(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // Already closed: the descriptor is gone either way.
      }
      this.fd = null;
    }
    // Once in place the file is the target's; what SQLite may have left beside the temporary name goes either way.
    for (const suffix of this.done ? SQLITE_COMPANIONS : ['', ...SQLITE_COMPANIONS]) rmSync(this.path + suffix, { force: true });
    this.done = true;
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Writes `text` to `target` through a `TempFile`: complete or not at all, never onto an input, never through a link. */
export function writeOutputFile(target: string, text: string, options: OutputOptions = {}): void {
  const temp = TempFile.create(target, options);
  try {
    temp.write(text);
    temp.commit();
  } catch (err) {
    temp.discard();
    throw err;
  }
}

/** Copies the file at `source` to `target` through a `TempFile`, by the same rules as `writeOutputFile`. */
export function copyToOutputFile(source: string, target: string, options: OutputOptions = {}): void {
  const temp = TempFile.create(target, options);
  try {
    temp.copyFrom(source);
    temp.commit();
  } catch (err) {
    temp.discard();
    throw err;
  }
}
