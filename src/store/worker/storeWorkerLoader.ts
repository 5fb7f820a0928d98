/**
 * The store worker's entry (`dist/storeWorker.js`): runs the worker itself (`dist/storeWorkerMain.js`,
 * storeWorker.ts) through V8's code cache when the client names a cache folder (`StoreClientOptions.codeCacheDir`;
 * the extension's global storage), else as `require` would (src/store/files/codeCache.ts, `loadWorkerMain`). Every
 * window's first request starts this worker: with the cache, its start to the first answer took 84–90 ms instead of
 * 98–125 (docs/benchmarks.md, "The store worker's start").
 */
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import { loadWorkerMain } from '../files/codeCache';

loadWorkerMain(join(__dirname, 'storeWorkerMain.js'), workerData);
