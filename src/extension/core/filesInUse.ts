/**
 * The files the extension reads or serves, which no file it writes may land on (issue 38; the store package's README,
 * "Files it writes"): every open session file, the review store each one's reviews are kept in, the extension's own review and trace
 * stores. An export, a dataset or a copy checks its target against them (`checkOutputPath`, which also resolves
 * links and hard links and covers each file's -wal and -shm) even after the save dialog's own overwrite confirmation,
 * which is the user's yes to replacing a file but not to destroying one the extension has open.
 */
import type { OutputOptions } from '../../store/files/outputGuard';

/**
 * What `filesInUse` reads: the registry always; the review and trace services where the caller has them. Written as
 * the shapes it reads rather than the services' classes, since core/ imports no feature folder.
 */
export interface InUseSources {
  readonly registry: { list(): readonly { readonly path: string; readonly remote?: unknown }[] };
  readonly reviews?: { pathFor(dbPath: string, remote: boolean): string };
  readonly traces?: { readonly path: string };
}

/** The local files the extension has open or keeps its data in, plus `more` (the export's own inputs). */
export function filesInUse(s: InUseSources, ...more: string[]): string[] {
  const sessionFiles = s.registry
    .list()
    .filter((e) => e.remote === undefined)
    .map((e) => e.path);
  return [
    ...new Set([
      ...sessionFiles,
      // Where each file's reviews are kept; without the service, the place beside the file (refusing it costs nothing).
      ...sessionFiles.map((p) => s.reviews?.pathFor(p, false) ?? `${p}.reviews.db`),
      // The extension's own stores in its global storage (what a server store's reviews and every trace go into).
      ...(s.reviews ? [s.reviews.pathFor('', true)] : []),
      ...(s.traces ? [s.traces.path] : []),
      ...more,
    ]),
  ];
}

/**
 * How a target the user chose may be written: `fromDialog` (VS Code's save dialog asks before replacing a file, so a
 * file there is the user's choice) or a path passed as a command argument (a test, another extension: nobody
 * confirmed, so an existing file is refused); never onto a file in use.
 */
export function saveTarget(s: InUseSources, fromDialog: boolean, ...inputs: string[]): OutputOptions {
  return { overwrite: fromDialog, inputs: filesInUse(s, ...inputs) };
}
