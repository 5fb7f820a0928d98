/**
 * The store worker's start as the extension's first request meets it (issue 43, "a light start"): from
 * `new StoreClient(dist/storeWorker.js)` to its first answer (opening a session file and listing its sessions), with
 * V8's code cache of the worker (src/store/worker/storeWorkerLoader.ts) and without it, alternately, each start a new
 * worker. The cache is written by one start before the measured ones, in a folder of this run's own.
 *
 *   npx tsx scripts/bench/workerStart.ts [FILE] [--runs N]      (default: a copy of a conformance fixture, 11 runs)
 *
 * Prints JSON: wall ms per start (ranges), and the worker bundle's size.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreClient } from '../../src/store/worker/storeClient';
import { storeWorkerModule } from './benchModules';
import { median, round } from './measure';

const FIXTURE = join(__dirname, '..', '..', 'test', 'fixtures', 'conformance', 'ref-basic.db');

async function start(file: string, path: string, codeCacheDir: string | undefined): Promise<number> {
  const t0 = performance.now();
  const client = new StoreClient(file, codeCacheDir === undefined ? {} : { codeCacheDir, codeCacheWriteAfterMs: 0 });
  try {
    const db = await client.openDatabase(path);
    await db.listSessions();
    return performance.now() - t0;
  } finally {
    await client.dispose();
  }
}

const range = (xs: number[]) => ({ min: round(Math.min(...xs)), median: round(median(xs)), max: round(Math.max(...xs)), n: xs.length });

export async function runWorkerStartBench(path: string, runs: number) {
  const worker = await storeWorkerModule();
  const cacheDir = mkdtempSync(join(tmpdir(), 'asi-worker-start-'));
  try {
    // One start writes the cache (after 0 ms: the functions the load ran); later starts read it.
    await start(worker.file, path, cacheDir);
    for (let i = 0; i < 50 && readdirSync(cacheDir).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const cached: number[] = [];
    const uncached: number[] = [];
    const loadStart = loadavg()[0]!;
    for (let i = 0; i < runs; i++) {
      cached.push(await start(worker.file, path, cacheDir));
      uncached.push(await start(worker.file, path, undefined));
    }
    const main = join(worker.file, '..', 'storeWorkerMain.js');
    return {
      file: path,
      node: process.version,
      bundleBytes: statSync(main).size,
      cacheBytes: readdirSync(cacheDir).map((f) => statSync(join(cacheDir, f)).size),
      load: { start: round(loadStart), end: round(loadavg()[0]!) },
      withCacheMs: range(cached),
      withoutCacheMs: range(uncached),
      ratio: round(median(cached) / median(uncached)),
    };
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
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
