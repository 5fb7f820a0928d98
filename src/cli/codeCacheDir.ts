/**
 * Where `agent-sessions` keeps what it caches for itself: V8's code cache of its bundle, and the search's indexes.
 *
 * The code cache (issue 43, the CLI's own start; the cache itself:
 * src/store/files/codeCache.ts): `$XDG_CACHE_HOME/agent-session-inspector/code-cache/` (default `~/.cache`), or, when
 * that cannot be made or written, `agent-session-inspector-<uid>/code-cache/` in the system's temporary folder. One
 * file per build and V8 version (about 0.4 MB), the older builds' removed when a new one is written.
 *
 * V8 runs whatever code a cache file holds (its checksum tells damage apart, not a forgery), so a folder another user
 * could write to is never used: the folder must be ours, a real folder (not a link) and closed to group and others.
 * The temporary folder is shared by every user of the machine, which is why its folder carries our uid and is made
 * with mode 0700: a folder someone else made there first fails the check and the command just compiles.
 */
import { accessSync, constants, lstatSync, mkdirSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/** The tool's folder name under a cache root, as the test tooling's (`scripts/host/hostTools.mjs`). */
const TOOL_DIR = 'agent-session-inspector';

/**
 * The first of the candidate folders that is ours and writable (made if missing), or undefined: then no cache. `env`
 * and `tmp` (the system's temporary folder) are for tests.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env, tmp: string = tmpdir()): string | undefined {
  return userCacheDir('code-cache', env, tmp);
}

/**
 * Where `agent-sessions search` keeps its indexes of tool items (src/store/search/toolIndex.ts): `search-index/`
 * beside the code cache, chosen the same way (an index planted by someone else could hide hits, as a planted code
 * cache could run code); undefined when `AGENT_SESSIONS_SEARCH_INDEX=off` or no such folder can be had.
 */
export function searchIndexDir(env: NodeJS.ProcessEnv = process.env, tmp: string = tmpdir()): string | undefined {
  return env.AGENT_SESSIONS_SEARCH_INDEX === 'off' ? undefined : userCacheDir('search-index', env, tmp);
}

/** The folder `name` of the first cache root that is ours and writable (made if missing), or undefined. */
function userCacheDir(name: string, env: NodeJS.ProcessEnv, tmp: string): string | undefined {
  const uid = process.getuid?.();
  const xdg = env.XDG_CACHE_HOME?.trim();
  const candidates: (() => string)[] = [
    // XDG says a relative value is to be ignored.
    () => join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.cache'), TOOL_DIR, name),
    () => join(tmp, `${TOOL_DIR}-${uid ?? 'user'}`, name),
  ];
  for (const candidate of candidates) {
    try {
      const dir = candidate();
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (isOurs(join(dir, '..'), uid) && isOurs(dir, uid)) {
        accessSync(dir, constants.W_OK);
        return dir;
      }
    } catch {
      // Not makeable or not writable (a read-only home, a file in the way): the next candidate, or no cache.
    }
  }
  return undefined;
}

/** A real folder of this user's that no one else may write to. Without uids (Windows), only that it is a folder. */
function isOurs(dir: string, uid: number | undefined): boolean {
  const st = lstatSync(dir);
  if (!st.isDirectory()) return false;
  return uid === undefined || (st.uid === uid && (st.mode & 0o022) === 0);
}
