/**
 * The one check before any file is written (the store package's README, "Files it writes"): the output must not be a
 * file the writer reads or serves, however it is spelled (a relative path, a symbolic link, a hard link, the store's
 * -wal, -shm or -journal file), and a file already at the path is replaced only when the caller says so (the CLI's --force, the
 * save dialog's own confirmation). Also the check our own stores make before SQLite opens a path for writing: SQLite
 * follows symbolic links, so a link planted there would make it create or change a file elsewhere.
 */
import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { OutputFileError } from './outputFileError';

/** The files SQLite keeps beside a database, which are as much the store as the file itself. */
export const SQLITE_COMPANIONS = ['-wal', '-shm', '-journal'] as const;

/** How a writer may treat its output path. */
export interface OutputOptions {
  /** Replace a file already at the path (the CLI's --force; a save dialog the user confirmed). Default: refuse. */
  overwrite?: boolean;
  /** The files the writer reads or serves: the output may be none of them (nor their -wal, -shm, -journal). */
  inputs?: readonly string[];
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** The path with every symbolic link resolved; for a file that does not exist yet, its folder's, plus its name. */
function resolvedPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    try {
      return join(realpathSync.native(dirname(path)), basename(path));
    } catch {
      return resolve(path);
    }
  }
}

/** True when `a` and `b` are one file on disk: same device and inode (a hard link, a symbolic link, another spelling). */
function sameInode(a: Stats | null, b: Stats | null): boolean {
  // Some file systems (FAT, some network mounts) report inode 0 for everything: no answer there, the paths decide.
  return a !== null && b !== null && a.ino !== 0 && a.dev === b.dev && a.ino === b.ino;
}

/** True when writing `output` would write `input` or one of its SQLite companion files. */
export function isSameFileOrCompanion(output: string, input: string): boolean {
  const out = resolvedPath(output);
  const inputReal = resolvedPath(input);
  const outStat = statOrNull(output);
  for (const suffix of ['', ...SQLITE_COMPANIONS]) {
    if (out === inputReal + suffix || out === resolvedPath(input + suffix)) return true;
    if (sameInode(outStat, statOrNull(input + suffix))) return true;
  }
  return false;
}

/**
 * Throws `OutputFileError` unless `output` may be written: `not-a-file` for an empty path, `is-input` when it is one
 * of `options.inputs` (checked first, so --force never lets a writer replace what it reads), `not-a-file` for a folder,
 * a device, a pipe or a socket (whatever `overwrite` says), `exists` when a file or a link is there and `overwrite` is
 * not set. Nothing is created or changed.
 */
export function checkOutputPath(output: string, options: OutputOptions = {}): void {
  // An empty name is no file: SQLite reads '' as a temporary database, and `VACUUM INTO ''` "succeeds" with no copy.
  if (output.trim() === '') throw new OutputFileError('not-a-file', 'The output path is empty: give a file name.');
  for (const input of options.inputs ?? []) {
    if (isSameFileOrCompanion(output, input))
      throw new OutputFileError(
        'is-input',
        `Writing ${output} would destroy ${input}, which this command reads (it is that file, a link to it, or the -wal, -shm or -journal file SQLite keeps beside it). Choose another output file.`,
      );
  }
  const here = lstatOrNull(output);
  if (here === null) return;
  if (here.isDirectory()) throw new OutputFileError('not-a-file', `${output} is a folder: give a file name for the output.`);
  // The finished file is renamed over the path. A link is replaced so (never written through: it could point
  // anywhere); a device, a pipe or a socket would be too (/dev/null made an ordinary file), so they are refused,
  // --force or not, and so is a link to one (/dev/stdout is a link).
  const target = here.isSymbolicLink() ? statOrNull(output) : here;
  if (target !== null && !target.isFile())
    throw new OutputFileError(
      'not-a-file',
      `${output} is not a regular file (a device, a pipe or a socket): give a file name for the output${output.startsWith('/dev/') ? ' (standard output is -o -, where the command takes it)' : ''}.`,
    );
  if (!options.overwrite)
    throw new OutputFileError('exists', `${output} already exists: choose another file, or replace it (--force on the command line).`);
}

/**
 * Refuses (`symlink`) a symbolic link at `path` or at its -wal, -shm or -journal path, dangling or not: SQLite would
 * follow it and create, or switch to WAL, a file outside the place the user chose. For our own stores opened to write.
 */
export function refuseSymlinks(path: string, what: string): void {
  for (const p of [path, ...SQLITE_COMPANIONS.map((s) => path + s)]) {
    if (lstatOrNull(p)?.isSymbolicLink())
      throw new OutputFileError(
        'symlink',
        `${p} is a symbolic link: a ${what} is only written as a regular file, never through a link (it could point anywhere). Remove the link or choose another path.`,
      );
  }
}
