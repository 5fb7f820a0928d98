/**
 * Where the bench finds the store worker and the store library for the threads and processes it starts: the bundles
 * beside `dist/bench.js` when it runs built (`npm run bench`), the sources through tsx when it runs from source
 * (`npx tsx scripts/bench.ts`), so every section measures the same code either way.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CACHE } from '../host/hostTools.mjs';

/** True when running as the `dist/bench.js` bundle (its siblings are the other bundles). */
const BUNDLED = existsSync(join(__dirname, 'storeWorker.js'));
/** The repository root when running from source (`scripts/bench/` is two levels down). */
const ROOT = join(__dirname, '..', '..');

/** Where a worker is started from, as the extension starts it. */
export interface WorkerModule {
  file: string;
  execArgv: string[] | undefined;
  /** V8's code cache of the worker (src/store/worker/storeWorkerLoader.ts), kept across bench runs as in VS Code. */
  codeCacheDir: string;
}

let built: Promise<string> | undefined;

/**
 * The store worker as the extension runs it: the loader `storeWorker.js` and `storeWorkerMain.js` loaded through V8's
 * code cache. Built: the bundles beside `dist/bench.js`. From source: the same bundles built once per bench process
 * from the sources (scripts/extensionBuild.mjs) into a folder of its own in `node_modules/.cache/`, with the vendor bundles they require
 * (a worker under tsx compiles each source file apart, which is not what a user's worker does). The code cache
 * folder stays across bench invocations, as the extension's global storage does across VS Code starts; its files are
 * named for the bundle's text, so another build never reads them.
 */
export async function storeWorkerModule(): Promise<WorkerModule> {
  return workerModule('storeWorker.js');
}

/** The search worker as the extension runs it, as `storeWorkerModule` (dist/searchWorker.js and searchWorkerMain.js). */
export async function searchWorkerModule(): Promise<WorkerModule> {
  return workerModule('searchWorker.js');
}

async function workerModule(name: string): Promise<WorkerModule> {
  // One folder per V8 version: a cache write removes the caches of other builds, V8's version among what names one,
  // so benches alternating Node 20 and 24 (as the tenth round's did) started each invocation with none, where a
  // user's VS Code has one V8 and only its first window after an update starts without.
  const codeCacheDir = join(CACHE, 'bench', 'code-cache', `v8-${process.versions.v8.replace(/[^0-9a-z.]/gi, '_')}`);
  if (BUNDLED) return { file: join(__dirname, name), execArgv: undefined, codeCacheDir };
  built ??= buildWorkers();
  return { file: join(await built, name), execArgv: undefined, codeCacheDir };
}

async function buildWorkers(): Promise<string> {
  // Inside the clone's node_modules (the bundle requires better-sqlite3, which resolves from there), in a folder of
  // this process's own (two benches or tests may build at once), removed when it exits.
  const base = join(ROOT, 'node_modules', '.cache', 'agent-session-inspector');
  mkdirSync(base, { recursive: true });
  const outdir = mkdtempSync(join(base, 'bench-worker-'));
  process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
  const esbuild = await import('esbuild');
  const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(ROOT, 'scripts', rel)).href)) as T;
  const { storeWorkerBuildOptions, searchWorkerBuildOptions, nodeBundleOptions } = await load<{
    storeWorkerBuildOptions(o: { production: boolean; outdir: string }): import('esbuild').BuildOptions[];
    searchWorkerBuildOptions(o: { production: boolean; outdir: string }): import('esbuild').BuildOptions[];
    nodeBundleOptions(o: { production: boolean }): import('esbuild').BuildOptions;
  }>('extensionBuild.mjs');
  const { vendorBuildOptions } = await load<{
    vendorBuildOptions(outdir: string, common: import('esbuild').BuildOptions): import('esbuild').BuildOptions[];
  }>('vendorBundles.mjs');
  // Production, as the VSIX carries them (minified).
  const options = [
    ...storeWorkerBuildOptions({ production: true, outdir }),
    ...searchWorkerBuildOptions({ production: true, outdir }),
    ...vendorBuildOptions(join(outdir, 'vendor'), nodeBundleOptions({ production: true })),
  ];
  await Promise.all(options.map((o) => esbuild.build({ ...o, logLevel: 'silent' })));
  return outdir;
}

/** The store library's entry for `require` in another process. */
export function storeLibraryModule(): string {
  return BUNDLED ? join(__dirname, 'store.js') : join(ROOT, 'src', 'store', 'index.ts');
}

/**
 * Runs `code` (CommonJS, `STORE` bound to the store library) in another Node process, as another program writing the
 * file would: resolves with its exit once it ends; `onLine` hears each line it prints.
 */
export function runInOtherProcess(
  code: string,
  args: readonly string[],
  onLine?: (line: string) => void,
): Promise<{ code: number | null; stderr: string }> {
  const prelude = `const STORE = require(${JSON.stringify(storeLibraryModule())});\n`;
  const child = spawn(process.execPath, [...(BUNDLED ? [] : ['--require', 'tsx/cjs']), '-e', prelude + code, '--', ...args], {
    cwd: BUNDLED ? __dirname : ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      onLine?.(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}
