// better-sqlite3's install runs `prebuild-install || node-gyp rebuild`: it looks for a prebuilt binary in npm's
// cache (`<npm cache>/_prebuilds/`, keyed by the download URL, which names the version, Node ABI, platform, libc and
// arch), else downloads one from GitHub, else compiles SQLite from source. Here GitHub is unreachable, so every
// `npm install` of a fresh clone compiled for about 90 s of its 155 s. After a build, this puts that build into the
// cache under the key prebuild-install computes itself, so the next install on this machine (a fresh clone, the
// store-package test's consumer) unpacks it instead. It never replaces an entry, and does nothing when the package
// or its build is missing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The cache file prebuild-install would look for, and the package's folder; undefined when not installed. */
export function prebuildCacheEntry(root) {
  const require = createRequire(join(root, 'package.json'));
  let pkgDir;
  try {
    pkgDir = dirname(require.resolve('better-sqlite3/package.json'));
  } catch {
    return undefined;
  }
  const fromPkg = createRequire(join(pkgDir, 'package.json'));
  const pkg = fromPkg('./package.json');
  const rc = fromPkg('prebuild-install/rc')(pkg);
  const util = fromPkg('prebuild-install/util');
  const url = util.getDownloadUrl({ ...rc, pkg });
  return { pkgDir, binary: join(pkgDir, 'build', 'Release', 'better_sqlite3.node'), cached: util.cachedPrebuild(url), url };
}

/** Seeds the cache from this install's build; returns what it did, for a log line. */
export function seedPrebuildCache(root) {
  const entry = prebuildCacheEntry(root);
  if (!entry) return 'better-sqlite3 is not installed';
  if (existsSync(entry.cached)) return `already cached: ${entry.cached}`;
  if (!existsSync(entry.binary)) return `no build to cache at ${entry.binary}`;
  mkdirSync(dirname(entry.cached), { recursive: true });
  // The layout prebuild-install unpacks into the package folder: build/Release/<module>.node. Written aside, then
  // renamed, so a concurrent install never reads half a file.
  const temporary = `${entry.cached}.${process.pid}.tmp`;
  const r = spawnSync('tar', ['-czf', temporary, '-C', entry.pkgDir, 'build/Release/better_sqlite3.node'], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(temporary, { force: true });
    return `not cached (tar: ${r.stderr || r.error?.message})`;
  }
  renameSync(temporary, entry.cached);
  return `cached this machine's build for the next install: ${entry.cached}`;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(seedPrebuildCache(process.argv[2] ?? process.cwd()));
