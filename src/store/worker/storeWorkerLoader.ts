/**
 * The store worker's entry (`dist/storeWorker.js`): loads the worker itself (`dist/storeWorkerMain.js`,
 * storeWorker.ts) through V8's code cache (src/store/files/codeCache.ts) when the client names a cache folder
 * (`StoreClientOptions.codeCacheDir`; the extension's global storage), else as `require` would. A worker starts with
 * nothing compiled: each answer's code was compiled on its first call, which made the first Tokens page of a 50-turn
 * branch cost 2.4–4 ms against a 1 ms floor (docs/benchmarks.md, "Cold answers"). The cache, written a few seconds
 * after a start, holds the functions that start ran; a cache that cannot be read or is refused only costs the compile.
 */
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import { loadWithCodeCache } from '../files/codeCache';
import type { StoreWorkerData } from './storeWorkerProtocol';

const data = workerData as StoreWorkerData | undefined;
const main = join(__dirname, 'storeWorkerMain.js');
if (typeof data?.codeCacheDir === 'string') {
  loadWithCodeCache(
    main,
    data.codeCacheDir,
    typeof data.codeCacheWriteAfterMs === 'number' ? { writeAfter: data.codeCacheWriteAfterMs } : {},
  );
} else {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file beside this bundle, found at run time
  require(main);
}
