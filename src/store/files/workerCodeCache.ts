/**
 * What a worker's starter hands its loader about V8's code cache (`loadWorkerMain` in codeCache.ts reads it in the
 * worker). Apart from codeCache.ts, which loads Node's crypto, fs and vm: the clients that start workers are on the
 * extension's activation path and need only these fields.
 */

/** What a worker's starter puts in its `workerData` for `loadWorkerMain` (the worker's own input may sit beside it). */
export interface WorkerCodeCache {
  /** The folder of the worker's code cache (the extension's global storage); none: it compiles as `require` would. */
  codeCacheDir?: string;
  /** When a missing cache is written, in ms after the start (tests); default `CACHE_WRITE_DELAY_MS`. */
  codeCacheWriteAfterMs?: number;
  /** When the cache is produced again and written if it grew, in ms after the start (tests); default `CACHE_GROW_AFTER_MS`. */
  codeCacheGrowAfterMs?: number[];
}

/** `cache`'s fields that are set, for a worker's `workerData` (a field left out is the loader's default). */
export function workerCodeCache(cache: WorkerCodeCache): WorkerCodeCache {
  return {
    ...(cache.codeCacheDir === undefined ? {} : { codeCacheDir: cache.codeCacheDir }),
    ...(cache.codeCacheWriteAfterMs === undefined ? {} : { codeCacheWriteAfterMs: cache.codeCacheWriteAfterMs }),
    ...(cache.codeCacheGrowAfterMs === undefined ? {} : { codeCacheGrowAfterMs: cache.codeCacheGrowAfterMs }),
  };
}
