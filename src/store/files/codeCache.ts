/**
 * A CommonJS bundle loaded through V8's code cache (issue 43, "a light start"): compiling `dist/extensionMain.js`
 * (0.6 MB) was about half of what activation cost, and every VS Code start paid it again; compiling `dist/cliMain.js`
 * was about a fifth of `agent-sessions run`'s CPU before its agent started. The first start compiles it as `require`
 * would and then keeps V8's compiled code (the functions that start ran included) in a file of ours: the extension a
 * few seconds after activation, in its global storage; the CLI when its process exits, in the tool's cache folder
 * (src/cli/codeCacheDir.ts). Later starts hand that to V8, which skips most of the compiling. The extension and the
 * CLI share this module, so it lives in the store's `files/` (the one folder both may import that may use `node:*`)
 * though it holds nothing of the store. V8 checks the data against its own version, flags and the source's length and refuses what does not
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
import { readFile, stat } from 'node:fs/promises';
import Module from 'node:module';
import { basename, dirname, join } from 'node:path';
import { constants as vmConstants, Script } from 'node:vm';
import type { WorkerCodeCache } from './workerCodeCache';

/** The largest cache file read: V8's data for a 0.6 MB bundle is about 0.5 MB; anything past this is not ours. */
export const MAX_CACHE_BYTES = 16 * 1024 * 1024;
/** How long after loading the cache is written: after activation and the first paint, off their path. */
export const CACHE_WRITE_DELAY_MS = 5000;
/**
 * When a worker's cache is produced again after its load (ms), and written if it grew: V8 keeps only the functions
 * that had run, and a worker's first seconds (when the first cache is written) run little of what a window does
 * later (the conversation view's pages and tables). With those in the cache, a new window's first Tokens page of a
 * 50-turn session took 0.77–0.88 ms instead of 1.24–1.94, its conversation's first page 5.1–9.3 ms instead of 6.0–18.6
 * (docs/benchmarks.md, "The workers' caches grow"). Timers that never keep the worker alive.
 */
export const CACHE_GROW_AFTER_MS: readonly number[] = [30_000, 120_000, 600_000];
/** A cache is written again only when it grew by at least this much (a few functions' code), not for noise. */
export const CACHE_GROW_MIN_BYTES = 8 * 1024;
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

export interface CodeCacheOptions {
  /**
   * When a missing cache is written: this many ms after the load (default `CACHE_WRITE_DELAY_MS`; tests pass 0), or
   * `'exit'` when the process exits (a command line, which may end before any delay; `written` then resolves at once).
   */
  writeAfter?: number | 'exit';
  /**
   * With a delay: also write at exit when the process (a worker thread) ends before it. A search worker ends when its
   * search does, mostly within the delay, so it never wrote its cache (the timer does not keep it alive).
   */
  orAtExit?: boolean;
  /**
   * A cache of its own for each way the bundle is used (the CLI's command, `[a-z]+`): V8 keeps only the functions that
   * ran, so `--version`'s cache would leave `run`'s code to compile. All of one build's are kept; other builds' go.
   */
  variant?: string;
  /**
   * Moments (ms after the load) at which the cache is produced again and written when it grew by
   * `CACHE_GROW_MIN_BYTES` over the one read or last written (and, with `orAtExit`, once more at exit): for a worker,
   * whose later work compiles functions the first cache lacks. Only a cache V8 took or this load wrote grows.
   */
  growAfter?: readonly number[];
}

/** A bundle read and its cache checked, not yet run. */
interface PreparedLoad {
  file: string;
  source: string;
  cacheDir: string;
  cacheFile: string;
  /** `<bundle name>-`: every cache file of this bundle starts with it. */
  prefix: string;
  /** `<prefix><key>`: this build's cache files start with it. */
  build: string;
  cachedData: Buffer | undefined;
  cache: CodeCacheLoad['cache'];
}

/** The names `file`'s cache goes by: a hash of its text (`#!` line blanked) and of V8's version, and the variant. */
function cacheNames(file: string, cacheDir: string, options: CodeCacheOptions, source: string) {
  const key = createHash('sha256').update(process.versions.v8).update('\0').update(source).digest('hex').slice(0, 32);
  const variant = options.variant !== undefined && /^[a-z]{1,32}$/.test(options.variant) ? `-${options.variant}` : '';
  const prefix = `${basename(file, '.js')}-`;
  return { prefix, build: `${prefix}${key}`, cacheFile: join(cacheDir, `${prefix}${key}${variant}.bin`) };
}

// A bundle with a `#!` line (a program's): V8 takes one only at the very start of a script, not inside the module
// wrapper. Blanked the same way on every load, so the text the cache is named for stays the same.
const blankHashBang = (text: string): string => text.replace(/^#!.*/, '');

/**
 * Loads the CommonJS bundle `file` as `require(file)` would (its own `module`, `require` resolving beside it, in
 * `require.cache`), with V8's code cache from `cacheDir`.
 */
export function loadWithCodeCache(file: string, cacheDir: string, options: CodeCacheOptions = {}): CodeCacheLoad {
  const source = blankHashBang(readFileSync(file, 'utf8'));
  const names = cacheNames(file, cacheDir, options, source);
  let cachedData: Buffer | undefined;
  let cache: CodeCacheLoad['cache'] = 'missing';
  try {
    if (statSync(names.cacheFile).size <= MAX_CACHE_BYTES) [cache, cachedData] = checked(readFileSync(names.cacheFile));
    else cache = 'unavailable';
  } catch {
    // No cache yet (the first start of this build), or a storage we cannot read: compile as usual.
  }
  return run({ file, source, cacheDir, ...names, cachedData, cache }, options);
}

/**
 * `loadWithCodeCache` for the extension host, whose thread every extension and VS Code's own API share: it returns
 * at once, the files are read in libuv's pool, and the rest (the checksums, V8 reading the cache or compiling, the
 * bundle's evaluation) runs on the thread when they are in. The same cache files as the synchronous load.
 */
export async function loadWithCodeCacheAsync(file: string, cacheDir: string, options: CodeCacheOptions = {}): Promise<CodeCacheLoad> {
  const source = blankHashBang(await readFile(file, 'utf8'));
  const names = cacheNames(file, cacheDir, options, source);
  let cachedData: Buffer | undefined;
  let cache: CodeCacheLoad['cache'] = 'missing';
  try {
    if ((await stat(names.cacheFile)).size <= MAX_CACHE_BYTES) [cache, cachedData] = checked(await readFile(names.cacheFile));
    else cache = 'unavailable';
  } catch {
    // No cache yet (the first start of this build), or a storage we cannot read: compile as usual.
  }
  return run({ file, source, cacheDir, ...names, cachedData, cache }, options);
}

/** A cache file's data when its checksum holds ('missing' until V8 has said whether it takes it), else 'refused'. */
function checked(bytes: Buffer): [CodeCacheLoad['cache'], Buffer | undefined] {
  const data = bytes.subarray(SUM_BYTES);
  return bytes.length > SUM_BYTES && createHash('sha256').update(data).digest().equals(bytes.subarray(0, SUM_BYTES))
    ? ['missing', data]
    : ['refused', undefined];
}

/** Compiles (with the cache when there is one) and runs the prepared bundle; schedules the cache's writing. */
function run(p: PreparedLoad, options: CodeCacheOptions): CodeCacheLoad {
  const { file, cacheFile, cachedData } = p;
  let cache = p.cache;
  const script = new Script(Module.wrap(p.source), {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
    // import() in the bundle (a built-in, a user's ES module agent) resolves as in a module Node loaded itself; without
    // this a vm.Script has no loader for it and the call throws "A dynamic import callback was not specified".
    ...(vmConstants?.USE_MAIN_CONTEXT_DEFAULT_LOADER ? { importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER } : {}),
  });
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

  const needed = cache === 'missing';
  const writeAfter = options.writeAfter ?? CACHE_WRITE_DELAY_MS;
  // The size of the cache on disk as far as this load knows (the one V8 took, or the one it wrote), else undefined:
  // a refused or oversized cache is not grown (the next start writes a new one).
  let size = cache === 'used' ? cachedData?.length : undefined;
  let done = false;
  const write = () => {
    if (done) return;
    done = true;
    writeCache(p.cacheDir, cacheFile, p.prefix, p.build, () => {
      const data = script.createCachedData();
      size = data.length;
      return data;
    });
  };
  const grow = () => {
    if (size === undefined) return;
    const data = script.createCachedData();
    // Another window's worker may have written a bigger one since: never replace it with less.
    const onDisk = sizeOf(cacheFile);
    if (onDisk !== undefined && onDisk - SUM_BYTES > size) size = onDisk - SUM_BYTES;
    if (data.length < size + CACHE_GROW_MIN_BYTES) return;
    size = data.length;
    writeCache(p.cacheDir, cacheFile, p.prefix, p.build, () => data);
  };
  for (const ms of options.growAfter ?? []) setTimeout(grow, ms).unref?.();
  // At exit, one serialization: the first write when it is still due, else a last growth check.
  const writeAtExit = needed && (writeAfter === 'exit' || options.orAtExit === true);
  const growAtExit = !!options.growAfter?.length && options.orAtExit === true;
  if (writeAtExit || growAtExit)
    process.once('exit', () => {
      if (writeAtExit && !done) write();
      else if (growAtExit) grow();
    });
  const written =
    !needed || writeAfter === 'exit'
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            write();
            resolve();
          }, writeAfter);
          // The timer never keeps a process alive (the extension host ends when VS Code says so).
          timer.unref?.();
        });
  return { exports: mod.exports, cache, cacheFile, written };
}

/**
 * Writes the cache whole (a temporary file renamed into place), then removes the caches of other builds (named
 * `prefix` but not `build`, this build's name).
 */
function writeCache(cacheDir: string, cacheFile: string, prefix: string, build: string, data: () => Buffer): void {
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
      if (name.startsWith(prefix) && name.endsWith('.bin') && !name.startsWith(build)) removeQuietly(join(cacheDir, name));
  } catch {
    // A storage we cannot write: the next start compiles again, as it would without a cache.
  } finally {
    if (temp) removeQuietly(temp);
  }
}

/** A file's size, or undefined when it cannot be read (gone, or a storage we cannot look into). */
function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already, or not ours to remove: either way it is not read again.
  }
}

/**
 * Runs a worker's bundle from the worker's entry (a loader bundle beside it): through V8's code cache in the folder its
 * starter named in `workerData` (`WorkerCodeCache`), else as `require` would. A worker starts with nothing compiled,
 * and the store worker starts at every window's first request, a search worker at every search.
 */
export function loadWorkerMain(mainFile: string, workerData: unknown): void {
  const data = (typeof workerData === 'object' && workerData !== null ? workerData : {}) as WorkerCodeCache;
  if (typeof data.codeCacheDir === 'string') {
    const writeAfter = data.codeCacheWriteAfterMs;
    const growAfter = Array.isArray(data.codeCacheGrowAfterMs) ? data.codeCacheGrowAfterMs : CACHE_GROW_AFTER_MS;
    // A worker may end before the delay (a search worker ends with its search): then it writes as it ends. A worker
    // that runs on adds what it compiled later (a window's store worker lives as long as the window).
    loadWithCodeCache(mainFile, data.codeCacheDir, {
      orAtExit: true,
      growAfter,
      ...(typeof writeAfter === 'number' ? { writeAfter } : {}),
    });
  } else {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle beside the loader, found at run time
    require(mainFile);
  }
}
