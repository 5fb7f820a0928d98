/**
 * The workers' starts as the extension meets them (issue 43, "a light start"), with V8's code cache of the worker
 * (src/store/files/codeCache.ts, `loadWorkerMain`) and without it, alternately, each start a new worker; the cache is
 * written by one start before the measured ones, in a folder of this run's own:
 * - the store worker, which every window's first request starts: from `new StoreClient(dist/storeWorker.js)` to its
 *   first answer (opening a session file and listing its sessions);
 * - a search worker, which a search starts when no worker was kept from the last one: from
 *   `startWorkerSearch(dist/searchWorker.js, …)` to its end (a search of the file for `weather`), and the same search
 *   in the worker kept from the last (`nextSearchInKeptWorkerMs`).
 *
 *   npx tsx scripts/bench/workerStart.ts [FILE] [--runs N]      (default: a copy of a conformance fixture, 11 runs)
 *
 * Prints JSON: wall ms per start (ranges), and each worker bundle's size.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreClient } from '../../src/store/worker/storeClient';
import { parseSearchQuery, startWorkerSearch } from '../../src/store';
import { endKeptSearchWorker, keptSearchWorker } from '../../src/store/search/searchInWorker';
import { searchWorkerModule, storeWorkerModule } from './benchModules';
import { median, round } from './measure';

const FIXTURE = join(__dirname, '..', '..', 'test', 'fixtures', 'conformance', 'ref-basic.db');

type Start = (file: string, path: string, codeCacheDir: string | undefined) => Promise<number>;

const startStore: Start = async (file, path, codeCacheDir) => {
  const t0 = performance.now();
  const client = new StoreClient(file, codeCacheDir === undefined ? {} : { codeCacheDir, codeCacheWriteAfterMs: 0 });
  try {
    const db = await client.openDatabase(path);
    await db.listSessions();
    return performance.now() - t0;
  } finally {
    await client.dispose();
  }
};

/** A search in a new worker (`keptMs` 0: none is kept, and none is reused), or (`kept`) in the one kept from the last. */
const searchStart =
  (kept: boolean): Start =>
  async (file, path, codeCacheDir) => {
    const t0 = performance.now();
    const cache = codeCacheDir === undefined ? {} : { codeCacheDir, codeCacheWriteAfterMs: 0 };
    const search = startWorkerSearch(
      file,
      { paths: [path], query: parseSearchQuery('weather') },
      { onHits: () => undefined, onError: (_p, message) => console.error(message) },
      kept ? cache : { ...cache, keptMs: 0 },
    );
    const end = await search.finished;
    if (end.error) throw new Error(end.error);
    const ms = performance.now() - t0;
    // Done with the search (the worker idle or ended) before the next one starts.
    await search.exited;
    return ms;
  };
const startSearch = searchStart(false);

const range = (xs: number[]) => ({ min: round(Math.min(...xs)), median: round(median(xs)), max: round(Math.max(...xs)), n: xs.length });

async function measure(file: string, start: Start, path: string, runs: number) {
  const cacheDir = mkdtempSync(join(tmpdir(), 'asi-worker-start-'));
  try {
    // One start writes the cache (after 0 ms: the functions the load ran); later starts read it.
    await start(file, path, cacheDir);
    for (let i = 0; i < 50 && readdirSync(cacheDir).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const cached: number[] = [];
    const uncached: number[] = [];
    for (let i = 0; i < runs; i++) {
      cached.push(await start(file, path, cacheDir));
      uncached.push(await start(file, path, undefined));
    }
    return {
      bundleBytes: statSync(file.replace(/\.js$/, 'Main.js')).size,
      cacheBytes: readdirSync(cacheDir).map((f) => statSync(join(cacheDir, f)).size),
      withCacheMs: range(cached),
      withoutCacheMs: range(uncached),
      ratio: round(median(cached) / median(uncached)),
    };
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

/**
 * The next search in the worker kept from the last one (what a search after another in VS Code meets, within
 * `SEARCH_WORKER_KEPT_MS`), with the cache: one search first starts the worker, then `runs` searches each take it.
 */
async function measureKept(file: string, path: string, runs: number) {
  const cacheDir = mkdtempSync(join(tmpdir(), 'asi-worker-start-'));
  const kept = searchStart(true);
  try {
    await kept(file, path, cacheDir);
    const threadId = keptSearchWorker();
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) ms.push(await kept(file, path, cacheDir));
    if (keptSearchWorker() !== threadId) throw new Error('the searches did not all run in the kept worker');
    return range(ms);
  } finally {
    await endKeptSearchWorker();
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

export async function runWorkerStartBench(path: string, runs: number) {
  const loadStart = loadavg()[0]!;
  const store = await measure((await storeWorkerModule()).file, startStore, path, runs);
  const searchFile = (await searchWorkerModule()).file;
  const search = await measure(searchFile, startSearch, path, runs);
  const nextSearchMs = await measureKept(searchFile, path, runs);
  return {
    file: path,
    node: process.version,
    load: { start: round(loadStart), end: round(loadavg()[0]!) },
    store,
    search: { ...search, nextSearchInKeptWorkerMs: nextSearchMs },
  };
}

if (/workerStart\.ts$/.test(process.argv[1] ?? '')) {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 11;
  const given = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--runs');
  // The fixture is copied: opening a file in WAL mode may write its -shm beside it.
  const copyDir = given === undefined ? mkdtempSync(join(tmpdir(), 'asi-worker-start-file-')) : undefined;
  const path = given ?? join(copyDir!, 'basic.db');
  if (copyDir) copyFileSync(FIXTURE, path);
  void runWorkerStartBench(path, runs)
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`))
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    })
    .finally(() => copyDir && rmSync(copyDir, { recursive: true, force: true }));
}
