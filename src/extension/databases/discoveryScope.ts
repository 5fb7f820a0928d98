/**
 * Where workspace discovery looks again when folders appear (docs in README, "Open Session Database"). Pure: no
 * `vscode`, so it is unit-tested without a host.
 *
 * A file moved into a folder that was just created (or a folder moved in whole, files and all) reaches VS Code's
 * watcher as one "folder created" event at most: the watch on the new folder is installed after its files arrived.
 * So discovery watches folder creations and searches each new folder for the discovery globs.
 */

/** Folders gathered for one search; more than this and the whole workspace is searched once instead. */
export const MAX_NEW_FOLDERS = 20;

/** The workspace-relative path segments of a folder (`/`-separated, no empty segments). */
function segments(path: string): string[] {
  return path.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
}

/**
 * The glob to search inside a new folder (relative to it) that finds exactly the files under it that `glob`
 * (relative to the workspace folder) matches, or undefined when no such glob is known and the workspace must be
 * searched with `glob` as it is. Known: a glob that starts with `**` matches at any depth, so the same glob
 * relative to the folder finds the same files.
 */
export function globInsideFolder(glob: string): string | undefined {
  const g = glob.replace(/^\.\//, '');
  return g === '**' || g.startsWith('**/') ? g : undefined;
}

/**
 * Whether a created path can hold session files worth a search: not inside `node_modules` (the folder discovery's
 * search already leaves out, and where installs create thousands of folders) nor a dot-folder such as `.git`.
 */
export function worthSearching(relativePath: string): boolean {
  return !segments(relativePath).some((s) => s === 'node_modules' || s === '.git');
}

/**
 * The folders created in one burst, reduced to the ones to search: a folder inside another one of the burst is
 * found by that one's search. `undefined` when there are more than `MAX_NEW_FOLDERS` (an unpacked archive, a
 * checkout): one search of the whole workspace costs less than that many.
 */
export function foldersToSearch<T>(created: readonly T[], pathOf: (folder: T) => string): T[] | undefined {
  const byPath = new Map<string, T>();
  for (const f of created) {
    const key = segments(pathOf(f)).join('/');
    if (!byPath.has(key)) byPath.set(key, f);
  }
  const kept: string[] = [];
  // Sorted, so a parent comes before its children ("a" < "a/b"); "ab" is not inside "a".
  for (const p of [...byPath.keys()].sort()) {
    if (kept.some((k) => k === '' || p.startsWith(`${k}/`))) continue;
    kept.push(p);
  }
  return kept.length > MAX_NEW_FOLDERS ? undefined : kept.map((p) => byPath.get(p) as T);
}
