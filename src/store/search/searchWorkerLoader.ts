/**
 * The search worker's entry (`dist/searchWorker.js`): runs the worker itself (`dist/searchWorkerMain.js`,
 * searchWorker.ts) through V8's code cache when the starter names a cache folder in its input (`codeCacheDir`, see
 * `startWorkerSearch`), else as `require` would (src/store/files/codeCache.ts, `loadWorkerMain`). Every search in
 * VS Code (the Search view, a conversation's search box, a check, the coding agents' tool) starts one.
 */
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import { loadWorkerMain } from '../files/codeCache';

loadWorkerMain(join(__dirname, 'searchWorkerMain.js'), workerData);
