/**
 * Starting a search worker and following it: the host side of `workerProtocol.ts`. Used by the extension (with
 * dist/searchWorker.js next to dist/extension.js) and by the benchmark; tests start the TypeScript entry under tsx.
 */
import { Worker } from 'node:worker_threads';
import type { SearchHit, SearchSummary } from './searchHits';
import type { SearchWorkerCommand, SearchWorkerEvent, SearchWorkerInput, SearchWorkerStart } from './workerProtocol';
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
   * Resolves when the worker is done with this search (it waits for the next one, or its thread ended): after
   * `finished`, it may still bring a search index up to date (`SearchIndexOption.later`), and its notices come until
   * then.
   */
  readonly exited: Promise<void>;
  /** The worker's thread (the same for searches run one after another in a kept worker). */
  readonly threadId: number;
  /** Asks the worker to stop after its current batch; `finished` then resolves with `cancelled: true`. */
  cancel(): void;
}

/** The code cache folder every search worker started from now on uses (`useSearchWorkerCodeCache`). */
let defaultCodeCacheDir: string | undefined;

/**
 * Search workers started from now on load through V8's code cache in `dir` (the extension's global storage, set at
 * activation): every search in VS Code runs in a search worker, from four features, and the folder is the extension's,
 * not theirs. Undefined: no cache (the CLI, tests).
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

/** Whether searches started from now on let the worker keep their files open (`useKeptSearchConnections`). */
let keepConnections = false;
/** Every search worker not ended yet (a release must reach a busy one too: it keeps its files when its search ends). */
const live = new Set<Worker>();
/** The files search workers may hold open: released when the host says they are closed elsewhere. */
const keptPaths = new Set<string>();

/**
 * Search workers keep their connections to the files they searched for the next search (`on`: the extension, at
 * activation, whose every search is of files its store worker holds open), until `releaseSearchFiles` lets them go
 * or the worker ends. A search on a kept connection skips the file's open and its first reads (statements, pages,
 * branch trees): a review filter's search of the bench's file A took 2.7–3.0 ms (medians) on a new connection, 0.9–1.3
 * on a kept one (scripts/bench/reviewSearch.ts). Off (the default: the CLI, tests), a worker waiting for the next
 * search holds no file open.
 */
export function useKeptSearchConnections(on: boolean): void {
  keepConnections = on;
}

/**
 * Closes the search workers' connections to the files `closed` names (a database closed in the extension, or whose
 * connection it dropped): at once in a waiting worker, when its search ends in a busy one.
 */
export function releaseSearchFiles(closed: (path: string) => boolean): void {
  const paths = [...keptPaths].filter(closed);
  if (paths.length === 0) return;
  for (const path of paths) keptPaths.delete(path);
  for (const worker of live) worker.postMessage({ type: 'release', paths } satisfies SearchWorkerCommand);
}

/**
 * How long a search worker is kept after its search, for the next one (ms). Every search in VS Code (the Search view,
 * a conversation's search box, *Review Next*, a check, the coding agents' tool) started a thread of its own: a search
 * of a small file took 56–78 ms in a new worker (Node's worker start, our code's first run), 1 ms in a kept one. A
 * worker waiting holds no file open but those held open elsewhere (`useKeptSearchConnections`), and it does not keep
 * the process alive.
 */
export const SEARCH_WORKER_KEPT_MS = 60_000;

/** The worker waiting for the next search: one at most, for the same bundle, options and code cache. */
let kept: { worker: Worker; key: string; timer: NodeJS.Timeout } | undefined;
let nextSearchId = 1;

/** How long an idle worker asked to end may take before it is stopped (ms). */
const END_GRACE_MS = 2_000;

/**
 * Ends an idle worker as a thread ends by itself (its code cache is written then, if it was not yet), or stops it
 * when it does not end within `END_GRACE_MS`. Resolves when it has ended.
 */
function retire(worker: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    // Ended already (its threadId is -1 from then, even before its exit event): nothing to wait for.
    if (worker.threadId === -1) return resolve();
    // A kept worker does not keep the process alive; one that is ending does, until it has ended (whoever awaits
    // this, the extension's deactivation, must not see the process end first).
    worker.ref();
    const timer = setTimeout(() => void worker.terminate().then(() => resolve()), END_GRACE_MS);
    timer.unref();
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.postMessage({ type: 'end' } satisfies SearchWorkerCommand);
  });
}

/** Ends the kept worker (the extension's deactivation; tests). */
export function endKeptSearchWorker(): Promise<void> {
  const k = kept;
  kept = undefined;
  if (!k) return Promise.resolve();
  clearTimeout(k.timer);
  return retire(k.worker);
}

/** The thread id of the worker kept for the next search, if any (tests, the benchmark). */
export function keptSearchWorker(): number | undefined {
  return kept?.worker.threadId;
}

function keep(worker: Worker, key: string, keptMs: number): void {
  const older = kept;
  // The newest one is kept: an older one is the less likely to be warm for what comes next.
  if (older && older.worker !== worker) {
    clearTimeout(older.timer);
    void retire(older.worker);
  }
  const timer = setTimeout(() => {
    if (kept?.worker === worker) kept = undefined;
    void retire(worker);
  }, keptMs);
  timer.unref();
  worker.unref();
  kept = { worker, key, timer };
}

/**
 * Starts a search of `input` in the worker kept from the last search when there is one for the same bundle and
 * options, else in a new worker (`workerFile`: dist/searchWorker.js, or the TypeScript entry under tsx with
 * `execArgv`). `codeCacheDir`: where the bundled worker keeps V8's code cache of itself (default: the folder
 * `useSearchWorkerCodeCache` set). When the search is over the worker waits `keptMs` (default `SEARCH_WORKER_KEPT_MS`;
 * 0: it ends) for the next one.
 */
export function startWorkerSearch(
  workerFile: string,
  input: SearchWorkerInput,
  handlers: WorkerSearchHandlers,
  options: { execArgv?: string[]; keptMs?: number } & WorkerCodeCache = {},
): WorkerSearch {
  const cache = workerCodeCache({ codeCacheDir: defaultCodeCacheDir, ...workerCodeCache(options) });
  const indexDir = input.indexDir ?? defaultIndex?.dir;
  const keepOpen = input.keepOpen ?? keepConnections;
  const searchInput: SearchWorkerInput = { ...input, ...cache, ...(indexDir === undefined ? {} : { indexDir }), keepOpen };
  if (keepOpen) for (const path of input.paths) keptPaths.add(path);
  const onNotice = handlers.onNotice ?? ((_path: string, message: string) => defaultIndex?.onProblem?.(message));
  const key = JSON.stringify([workerFile, options.execArgv ?? [], cache]);
  const keptMs = options.keptMs ?? SEARCH_WORKER_KEPT_MS;
  const searchId = nextSearchId++;
  let worker: Worker;
  // A kept worker that ended meanwhile (its exit event not in yet) is not taken: its threadId is -1 from its end.
  if (kept?.key === key && kept.worker.threadId !== -1) {
    worker = kept.worker;
    clearTimeout(kept.timer);
    kept = undefined;
    worker.ref();
    worker.postMessage({ type: 'search', searchId, input: searchInput } satisfies SearchWorkerCommand);
  } else {
    const start: SearchWorkerStart = { ...searchInput, searchId };
    const created = new Worker(workerFile, { workerData: start, execArgv: options.execArgv });
    // While it waits for a search no search listens: its end (or an error, which unheard would be thrown in the host)
    // only takes it out of `kept`.
    const forget = (): void => {
      if (kept?.worker !== created) return;
      clearTimeout(kept.timer);
      kept = undefined;
    };
    created.on('error', forget);
    created.on('exit', forget);
    live.add(created);
    created.once('exit', () => live.delete(created));
    worker = created;
  }
  let cancelled = false;
  let endSearch!: () => void;
  const searchOver = new Promise<void>((resolve) => (endSearch = resolve));
  const finished = new Promise<WorkerSearchEnd>((resolve) => {
    let settled = false;
    const settle = (r: Partial<WorkerSearchEnd> & { cancelled: boolean }): void => {
      if (settled) return;
      settled = true;
      resolve({ capped: false, notSearched: [], ...r });
    };
    const onMessage = (e: SearchWorkerEvent): void => {
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
        case 'idle':
          // This search is over, what it did after `finished` included: the worker is the next search's.
          detach();
          settle({ cancelled });
          endSearch();
          if (keptMs > 0) keep(worker, key, keptMs);
          else void retire(worker);
          break;
      }
    };
    const onError = (err: Error): void => settle({ cancelled, error: err.message });
    const onExit = (code: number): void => {
      detach();
      settle(code === 0 || cancelled ? { cancelled } : { cancelled, error: `The search worker stopped (exit code ${code}).` });
      endSearch();
    };
    const detach = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
  return {
    finished,
    exited: searchOver,
    threadId: worker.threadId,
    cancel: () => {
      cancelled = true;
      worker.postMessage({ type: 'cancel', searchId } satisfies SearchWorkerCommand);
    },
  };
}
