/**
 * Starting a search worker and following it: the host side of `workerProtocol.ts`. Used by the extension (with
 * dist/searchWorker.js next to dist/extension.js) and by the benchmark; tests start the TypeScript entry under tsx.
 */
import { Worker } from 'node:worker_threads';
import type { SearchHit, SearchSummary } from './searchHits';
import type { SearchWorkerEvent, SearchWorkerInput } from './workerProtocol';
import { workerCodeCache, type WorkerCodeCache } from '../files/workerCodeCache';

export interface WorkerSearchHandlers {
  onHits(path: string, hits: SearchHit[]): void;
  onProgress?(path: string, rowsScanned: number, rowsTotal: number): void;
  onDone?(path: string, summary: SearchSummary): void;
  /** A file that could not be searched (not found, not a session database, damaged…); the others go on. */
  onError?(path: string, message: string): void;
  /** Something that did not stop the search (an index that could not be used); default: `useSearchIndexFolder`'s. */
  onNotice?(path: string, message: string): void;
}

/** How a worker search ended. */
export interface WorkerSearchEnd {
  cancelled: boolean;
  /** The worker died: why. */
  error?: string;
  /** Stopped at `maxHits`: more hits may exist, in the file it stopped in and in `notSearched`. */
  capped: boolean;
  /** Files never opened because the cap was reached before them. */
  notSearched: string[];
}

export interface WorkerSearch {
  /** Resolves when the worker has finished (or was cancelled, or died: then `error` says why). */
  readonly finished: Promise<WorkerSearchEnd>;
  /**
   * Resolves when the worker's thread has ended: after `finished`, it may still bring a search index up to date
   * (`SearchIndexOption.later`), and its notices come until then.
   */
  readonly exited: Promise<void>;
  /** Asks the worker to stop after its current batch; `finished` then resolves with `cancelled: true`. */
  cancel(): void;
}

/** The code cache folder every search worker started from now on uses (`useSearchWorkerCodeCache`). */
let defaultCodeCacheDir: string | undefined;

/**
 * Search workers started from now on load through V8's code cache in `dir` (the extension's global storage, set at
 * activation): every search in VS Code starts a worker, from four features, and the folder is the extension's, not
 * theirs. Undefined: no cache (the CLI, tests).
 */
export function useSearchWorkerCodeCache(dir: string | undefined): void {
  defaultCodeCacheDir = dir;
}

/** The index folder every search worker started from now on uses, and who hears of its problems. */
let defaultIndex: { dir: string; onProblem?: (message: string) => void } | undefined;

/**
 * Search workers started from now on keep their indexes of tool items (toolIndex.ts) in `dir` (the extension's global
 * storage, set at activation, as the code cache is); `onProblem` hears of an index that could not be used. Undefined:
 * no index (the CLI's searches run in its own process, tests).
 */
export function useSearchIndexFolder(dir: string | undefined, onProblem?: (message: string) => void): void {
  defaultIndex = dir === undefined ? undefined : { dir, onProblem };
}

/**
 * Starts a search of `input` in a new worker (`workerFile`: dist/searchWorker.js, or the TypeScript entry under tsx
 * with `execArgv`). `codeCacheDir`: where the bundled worker keeps V8's code cache of itself (default: the folder
 * `useSearchWorkerCodeCache` set).
 */
export function startWorkerSearch(
  workerFile: string,
  input: SearchWorkerInput,
  handlers: WorkerSearchHandlers,
  options: { execArgv?: string[] } & WorkerCodeCache = {},
): WorkerSearch {
  const cache = workerCodeCache({ codeCacheDir: defaultCodeCacheDir, ...workerCodeCache(options) });
  const indexDir = input.indexDir ?? defaultIndex?.dir;
  const workerData: SearchWorkerInput = { ...input, ...cache, ...(indexDir === undefined ? {} : { indexDir }) };
  const onNotice = handlers.onNotice ?? ((_path: string, message: string) => defaultIndex?.onProblem?.(message));
  const worker = new Worker(workerFile, { workerData, execArgv: options.execArgv });
  let cancelled = false;
  const finished = new Promise<WorkerSearchEnd>((resolve) => {
    let settled = false;
    const settle = (r: Partial<WorkerSearchEnd> & { cancelled: boolean }): void => {
      if (settled) return;
      settled = true;
      resolve({ capped: false, notSearched: [], ...r });
    };
    worker.on('message', (e: SearchWorkerEvent) => {
      switch (e.type) {
        case 'hits':
          handlers.onHits(e.path, e.hits);
          break;
        case 'progress':
          handlers.onProgress?.(e.path, e.rowsScanned, e.rowsTotal);
          break;
        case 'done':
          handlers.onDone?.(e.path, e.summary);
          break;
        case 'error':
          handlers.onError?.(e.path, e.message);
          break;
        case 'notice':
          onNotice(e.path, e.message);
          break;
        case 'finished':
          settle({ cancelled: e.cancelled || cancelled, capped: e.capped, notSearched: e.notSearched });
          break;
      }
    });
    worker.on('error', (err) => settle({ cancelled, error: err.message }));
    worker.on('exit', (code) =>
      settle(code === 0 || cancelled ? { cancelled } : { cancelled, error: `The search worker stopped (exit code ${code}).` }),
    );
  });
  return {
    finished,
    exited: new Promise<void>((resolve) => worker.once('exit', () => resolve())),
    cancel: () => {
      cancelled = true;
      worker.postMessage({ type: 'cancel' });
    },
  };
}
