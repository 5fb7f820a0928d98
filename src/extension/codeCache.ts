/**
 * A CommonJS bundle loaded through V8's code cache (issue 43, "a light start"): compiling `dist/extensionMain.js`
 * (0.6 MB) was about half of what activation cost, and every VS Code start paid it again. The first start compiles it
 * as `require` would and, a few seconds after activation, keeps V8's compiled code (the functions activation ran
 * included) in a file of ours in the extension's global storage; later starts hand that to V8, which skips most of
 * the compiling. V8 checks the data against its own version, flags and the source's length and refuses what does not
 * fit (then the bundle compiles as usual); the file's name carries a hash of the bundle's text and of V8's version, so
 * a new build or a new VS Code never reads another's cache.
 *
 * Nothing here may stop the extension from starting: a cache that cannot be read, written or is refused only costs
 * the compile. A cache file is never rewritten in place (a refused one is deleted; the next start writes a new one),
 * is written whole or not at all (a temporary file renamed into place), and is read only up to `MAX_CACHE_BYTES`. It
 * starts with the SHA-256 of the data after it, checked before V8 sees the data: V8 itself checks only the data's
 * header, and deserializing damaged code would crash the extension host.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** The largest cache file read: V8's data for a 0.6 MB bundle is about 0.5 MB; anything past this is not ours. */
export const MAX_CACHE_BYTES = 16 * 1024 * 1024;
/** How long after loading the cache is written: after activation and the first paint, off their path. */
export const CACHE_WRITE_DELAY_MS = 5000;
/** The checksum before the data. */
const SUM_BYTES = 32;

export interface CodeCacheLoad {
  /** The bundle's `module.exports`. */
  exports: unknown;
  /** What happened to the cache: used, missing (written later), refused by its checksum or V8 (deleted), or too big. */
  cache: 'used' | 'missing' | 'refused' | 'unavailable';
  /** The cache file this load reads or writes. */
  cacheFile: string;
  /** Resolves once the cache is written (or it needs none, or writing failed). */
  written: Promise<void>;
}

interface NodeModuleInternals {
  _nodeModulePaths(from: string): string[];
  _cache: Record<string, unknown>;
}

/**
 * Loads the CommonJS bundle `file` as `require(file)` would (its own `module`, `require` resolving beside it, in
 * `require.cache`), with V8's code cache from `cacheDir`. `writeDelayMs` is for tests.
 */
export function loadWithCodeCache(file: string, cacheDir: string, writeDelayMs = CACHE_WRITE_DELAY_MS): CodeCacheLoad {
  const source = readFileSync(file, 'utf8');
  const key = createHash('sha256').update(process.versions.v8).update('\0').update(source).digest('hex').slice(0, 32);
  const prefix = `${basename(file, '.js')}-`;
  const cacheFile = join(cacheDir, `${prefix}${key}.bin`);
  let cachedData: Buffer | undefined;
  let cache: CodeCacheLoad['cache'] = 'missing';
  try {
    if (statSync(cacheFile).size <= MAX_CACHE_BYTES) {
      const bytes = readFileSync(cacheFile);
      const data = bytes.subarray(SUM_BYTES);
      if (bytes.length > SUM_BYTES && createHash('sha256').update(data).digest().equals(bytes.subarray(0, SUM_BYTES))) cachedData = data;
      else cache = 'refused';
    } else cache = 'unavailable';
  } catch {
    // No cache yet (the first start of this build), or a storage we cannot read: compile as usual.
  }
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  if (cachedData) cache = script.cachedDataRejected ? 'refused' : 'used';
  if (cache === 'refused') removeQuietly(cacheFile);

  const internals = Module as unknown as NodeModuleInternals;
  const mod = new Module(file);
  mod.filename = file;
  mod.paths = internals._nodeModulePaths(dirname(file));
  internals._cache[file] = mod;
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: Module,
    filename: string,
    dirname: string,
  ) => void;
  // `require` as Node makes it for a module: requests resolve from the bundle's folder, with it as the parent (VS Code
  // finds which extension asks for `vscode` by the parent's path).
  const require = Object.assign((id: string) => mod.require(id), {
    resolve: (id: string) => (Module as unknown as { _resolveFilename(r: string, p: Module): string })._resolveFilename(id, mod),
    cache: internals._cache,
    main: undefined,
  }) as unknown as NodeJS.Require;
  try {
    wrapper.call(mod.exports, mod.exports, require, mod, file, dirname(file));
  } catch (err) {
    delete internals._cache[file];
    throw err;
  }
  mod.loaded = true;

  const written =
    cache === 'used' || cache === 'unavailable' || cache === 'refused'
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            writeCache(cacheDir, cacheFile, prefix, () => script.createCachedData());
            resolve();
          }, writeDelayMs);
          // The timer never keeps a process alive (the extension host ends when VS Code says so).
          timer.unref?.();
        });
  return { exports: mod.exports, cache, cacheFile, written };
}

/** Writes the cache whole (a temporary file renamed into place), then removes the caches of other builds. */
function writeCache(cacheDir: string, cacheFile: string, prefix: string, data: () => Buffer): void {
  let temp: string | undefined;
  try {
    mkdirSync(cacheDir, { recursive: true });
    const bytes = data();
    if (bytes.length > MAX_CACHE_BYTES) return;
    temp = join(cacheDir, `.${prefix}${randomBytes(8).toString('hex')}.tmp`);
    writeFileSync(temp, Buffer.concat([createHash('sha256').update(bytes).digest(), bytes]), { flag: 'wx', mode: 0o600 });
    renameSync(temp, cacheFile);
    temp = undefined;
    for (const name of readdirSync(cacheDir))
      if (name.startsWith(prefix) && name.endsWith('.bin') && join(cacheDir, name) !== cacheFile) removeQuietly(join(cacheDir, name));
  } catch {
    // A storage we cannot write: the next start compiles again, as it would without a cache.
  } finally {
    if (temp) removeQuietly(temp);
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already, or not ours to remove: either way it is not read again.
  }
}
