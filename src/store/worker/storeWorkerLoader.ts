/**
 * The store worker's entry (`dist/storeWorker.js`): runs the worker itself (`dist/storeWorkerMain.js`,
 * storeWorker.ts) through V8's code cache when the client names a cache folder (`StoreClientOptions.codeCacheDir`;
 * the extension's global storage), else as `require` would (src/store/files/codeCache.ts, `loadWorkerMain`). Every
 * window's first request starts this worker: with the cache, its start to the first answer took 81–89 ms instead of
 * 92–119 (medians on Node 20, 22 and 24; docs/benchmarks.md, "The workers' starts").
 */
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import { loadWorkerMain } from '../files/codeCache';

loadWorkerMain(join(__dirname, 'storeWorkerMain.js'), workerData);
