/**
 * The store worker: every SQLite connection the extension uses lives here, on a `worker_threads` thread, so a slow
 * query, a lock wait or a huge row blocks this thread and never the extension host's (issue: both drivers are
 * synchronous). It holds the handles the host opened (storeWorkerProtocol.ts) and runs their methods one request at a
 * time, in order; between two requests it yields to its event loop, so a `cancel` sent meanwhile drops the requests
 * still queued.
 */
import { parentPort } from 'node:worker_threads';
import { openSessionDatabase, type SessionDatabase } from '../inspector/sessionDatabase';
import { AdvancedSQLiteSession } from '../session/advancedSqliteSession';
import { markStaleWal, staleWalAt } from '../sqlite/fileIdentity';
import { SessionDatabaseError } from '../errors';
import {
  CALLABLE,
  SESSION_WRITE_METHODS,
  type FileFunction,
  type JobName,
  type StoreWorkerRequest,
  type StoreWorkerResponse,
} from './storeWorkerProtocol';
import { serializeError } from './workerErrors';
import { errorMessage } from '../../shared/errorMessage';
import { markWrites, writesSince } from '../inspector/writesSince';
import { exportSessionToFile, type ExportFileOptions } from '../export/sessionExport';
import { importSessionFile, type ImportOptions } from '../export/importSession';
import type { ExportFormat, ExportRequest, ProgressOptions } from '../export/transferTypes';
import { DEFAULT_LOCK_WAIT_MS, WriteCancelledWhileWaiting, waitForWriteLock } from './writeLockWait';
import { TraceStore } from '../traces/traceStore';
import { ReviewStore } from '../reviews/reviewStore';
import { ReplayMarkStore } from '../replay/replayMarkStore';
import { guardDiskUse, guardLayer, guardLayerItems, guardLayers, lookAtGuardedFile, stopLookingAt } from '../guard/guardedFiles';
import { exportDatasetToFile } from '../datasets/datasetExport';
import { copyBranchPrefixToFile, type BranchPrefixRequest } from '../export/branchPrefixCopy';
import { copyBranchPrefixChained, releasePrefixChains, type PrefixChainFiles } from '../export/prefixChain';
import { checkSessionFile } from '../doctor/doctorReport';
import { repairSessionFile } from '../doctor/repairs';

/**
 * `signal`, aborted also once the host sets `flag`: the store's export and import only read `aborted` (between pages,
 * and every few thousand rows inside an import's transaction), which this answers from the shared memory.
 */
function flaggedSignal(signal: AbortSignal, flag: Int32Array): AbortSignal {
  return new Proxy(signal, {
    get(target, prop) {
      if (prop === 'aborted') return target.aborted || Atomics.load(flag, 0) === 1;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The jobs, each given its arguments and the progress options the worker makes. */
const JOB_IMPLS: Record<JobName, (args: unknown[], progress: ProgressOptions) => Promise<unknown>> = {
  copyBranchPrefixToFile: (args, progress) => {
    const [sourcePath, targetPath, request, chain] = args as [string, string, BranchPrefixRequest, PrefixChainFiles | undefined];
    return chain
      ? copyBranchPrefixChained(sourcePath, targetPath, request, chain, progress.signal)
      : copyBranchPrefixToFile(sourcePath, targetPath, request, progress.signal);
  },
  releasePrefixChains: (args) => releasePrefixChains(args[0] as string),
  exportSessionToFile: (args, progress) => {
    const [dbPath, outPath, format, request, options] = args as [string, string, ExportFormat, ExportRequest, ExportFileOptions];
    return exportSessionToFile(dbPath, outPath, format, { ...request, ...progress }, options);
  },
  importSessionFile: (args, progress) => {
    const [dbPath, filePath, options] = args as [string, string, ImportOptions];
    return importSessionFile(dbPath, filePath, { ...options, ...progress });
  },
  exportDatasetToFile: (args, progress) => {
    const [dbPath, reviewsPath, outPath, options] = args as Parameters<typeof exportDatasetToFile>;
    return exportDatasetToFile(dbPath, reviewsPath, outPath, { ...options, signal: progress.signal });
  },
};

/** Thrown inside a read when the host set its cancel flag: the read stops and is answered `cancelled`. */
class ReadCancelled extends Error {}

/** Session methods that wait for the write lock in the worker first (writeLockWait.ts). */
const WRITES: ReadonlySet<string> = new Set(SESSION_WRITE_METHODS);

const FILE_FUNCTION_IMPLS: Record<FileFunction, (...args: never[]) => unknown> = {
  markWrites,
  writesSince,
  lookAtGuardedFile,
  stopLookingAt,
  guardLayers,
  guardLayerItems,
  guardLayer,
  guardDiskUse,
};

type Handle =
  | { kind: 'database'; target: SessionDatabase }
  | { kind: 'session'; target: AdvancedSQLiteSession; path: string | undefined; lockWaitMs: number }
  | { kind: 'traces'; target: TraceStore }
  | { kind: 'reviews'; target: ReviewStore }
  | { kind: 'replay'; target: ReplayMarkStore };

/** Runs the requests of the host that started this worker. */
class StoreWorkerState {
  private readonly handles = new Map<number, Handle>();
  private readonly queue: Exclude<StoreWorkerRequest, { type: 'cancel' | 'job' }>[] = [];
  /** Jobs running beside the queue, by request id. */
  private readonly jobs = new Map<number, AbortController>();
  private running = false;
  /** The request being run, and whether the host has cancelled it since (a write waiting for a lock stops). */
  private current: { id: number; cancelled: boolean } | undefined;

  constructor(private readonly post: (r: StoreWorkerResponse) => void) {}

  receive(request: StoreWorkerRequest): void {
    if (request.type === 'cancel') {
      const i = this.queue.findIndex((q) => q.id === request.id);
      if (i >= 0) {
        this.queue.splice(i, 1);
        this.post({ type: 'cancelled', id: request.id });
      } else if (this.current?.id === request.id) this.current.cancelled = true;
      else this.jobs.get(request.id)?.abort();
      return;
    }
    if (request.type === 'job') {
      void this.runJob(request);
      return;
    }
    this.queue.push(request);
    if (!this.running) this.schedule();
  }

  private schedule(): void {
    this.running = true;
    // setImmediate, not a loop: the port's messages (cancels above all) are read between two requests.
    setImmediate(() => void this.next());
  }

  private async next(): Promise<void> {
    const request = this.queue.shift();
    if (!request) {
      this.running = false;
      return;
    }
    this.current = { id: request.id, cancelled: false };
    await this.run(request);
    this.current = undefined;
    this.schedule();
  }

  /** A long job (`JOBS`): beside the queue, with progress messages, until done, failed or cancelled. */
  private async runJob(request: Extract<StoreWorkerRequest, { type: 'job' }>): Promise<void> {
    const controller = new AbortController();
    this.jobs.set(request.id, controller);
    const progress = {
      signal: request.cancelFlag ? flaggedSignal(controller.signal, request.cancelFlag) : controller.signal,
      onProgress: (done: number, total: number) => this.post({ type: 'progress', id: request.id, done, total }),
    };
    try {
      const job = JOB_IMPLS[request.job];
      if (!job) throw new TypeError(`${String(request.job)} is not a job of the store worker.`);
      this.post({ type: 'result', id: request.id, value: await job(request.args, progress) });
    } catch (err) {
      this.post({ type: 'error', id: request.id, error: serializeError(err) });
    } finally {
      this.jobs.delete(request.id);
    }
  }

  private async run(request: Exclude<StoreWorkerRequest, { type: 'cancel' | 'job' }>): Promise<void> {
    let path: string | undefined;
    try {
      switch (request.type) {
        case 'open-database': {
          path = request.path;
          if (request.staleWal) markStaleWal(request.path, request.staleWal);
          const db = openSessionDatabase(request.path, request.options);
          this.handles.set(request.handle, { kind: 'database', target: db });
          this.post({
            type: 'result',
            id: request.id,
            value: { path: db.path, readonly: db.readonly, driver: db.driver, tables: db.tables },
          });
          return;
        }
        case 'open-session': {
          path = request.options.dbPath;
          if (request.staleWal && path) markStaleWal(path, request.staleWal);
          const lockWaitMs = request.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
          // Opening may write (WAL mode, a missing table): it waits for the lock like a write.
          if (path) await this.waitForLock(request.id, path, lockWaitMs);
          const handleId = request.handle;
          const session = new AdvancedSQLiteSession({
            ...request.options,
            // The host's logger, by message: a function cannot cross threads.
            logger: {
              error: (message, err) => this.post({ type: 'log', handle: handleId, level: 'error', message, detail: errorMessage(err) }),
              warn: (message) => this.post({ type: 'log', handle: handleId, level: 'warn', message }),
            },
          });
          this.handles.set(request.handle, { kind: 'session', target: session, path, lockWaitMs });
          this.post({ type: 'result', id: request.id, value: session.getCurrentBranchId() });
          return;
        }
        case 'open-own-store': {
          path = request.path;
          const options = { readonly: request.readonly ?? false };
          const handle: Handle =
            request.store === 'traces'
              ? { kind: 'traces', target: TraceStore.open(request.path, options) }
              : request.store === 'reviews'
                ? { kind: 'reviews', target: ReviewStore.open(request.path, options) }
                : { kind: 'replay', target: ReplayMarkStore.open(request.path, options) };
          this.handles.set(request.handle, handle);
          this.post({ type: 'result', id: request.id, value: { path: handle.target.path } });
          return;
        }
        case 'close': {
          const handle = this.handles.get(request.handle);
          this.handles.delete(request.handle);
          handle?.target.close();
          this.post({ type: 'result', id: request.id, value: undefined });
          return;
        }
        case 'file-call': {
          path = typeof request.args[0] === 'string' ? request.args[0] : undefined;
          const fn = FILE_FUNCTION_IMPLS[request.fn] as ((...args: unknown[]) => unknown) | undefined;
          if (!fn) throw new TypeError(`${String(request.fn)} cannot be called in the store worker.`);
          this.post({ type: 'result', id: request.id, value: fn(...request.args) });
          return;
        }
        case 'doctor': {
          path = request.path;
          if (request.op === 'check') {
            this.post({ type: 'result', id: request.id, value: checkSessionFile(request.path, request.options) });
            return;
          }
          await this.waitForLock(request.id, request.path, request.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS);
          this.post({ type: 'result', id: request.id, value: repairSessionFile(request.path, request.options) });
          return;
        }
        case 'call': {
          const handle = this.handles.get(request.handle);
          if (!handle) throw new SessionDatabaseError('io', `The store worker has no open handle ${request.handle} (it was closed).`);
          path = handle.kind === 'database' ? handle.target.path : undefined;
          if (!CALLABLE[handle.kind].has(request.method)) {
            throw new TypeError(`${request.method} cannot be called on a ${handle.kind} in the store worker.`);
          }
          if (handle.kind === 'session' && handle.path && WRITES.has(request.method)) {
            await this.waitForLock(request.id, handle.path, handle.lockWaitMs);
          }
          const target = handle.target as unknown as Record<string, (...args: unknown[]) => unknown>;
          const invoke = (): unknown => target[request.method]!(...request.args);
          const flag = request.cancelFlag;
          const value =
            handle.kind === 'database'
              ? handle.target.withProgress(
                  {
                    onProgress: (done, total) => this.post({ type: 'progress', id: request.id, done, total }),
                    checkCancelled: () => {
                      if ((flag && Atomics.load(flag, 0) === 1) || (this.current?.id === request.id && this.current.cancelled)) {
                        throw new ReadCancelled();
                      }
                    },
                  },
                  invoke,
                )
              : await invoke();
          this.post({
            type: 'result',
            id: request.id,
            value,
            ...(handle.kind === 'database' ? { tables: handle.target.tables } : {}),
          });
          return;
        }
      }
    } catch (err) {
      if (err instanceof WriteCancelledWhileWaiting || err instanceof ReadCancelled) {
        this.post({ type: 'cancelled', id: request.id });
        return;
      }
      const problem = err instanceof SessionDatabaseError ? err.problem : undefined;
      const wal = path && (problem === 'replaced' || problem === 'stale-wal') ? staleWalAt(path) : undefined;
      this.post({ type: 'error', id: request.id, error: serializeError(err), ...(wal && path ? { staleWal: { path, wal } } : {}) });
    }
  }

  private waitForLock(id: number, path: string, budgetMs: number): Promise<void> {
    return waitForWriteLock(path, {
      budgetMs,
      cancelled: () => this.current?.id === id && this.current.cancelled,
      onWaiting: () => this.post({ type: 'waiting', id }),
    });
  }

  /** Closes every handle (the host is going away). */
  closeAll(): void {
    for (const h of this.handles.values()) h.target.close();
    this.handles.clear();
  }
}

if (parentPort) {
  const port = parentPort;
  const state = new StoreWorkerState((r) => port.postMessage(r));
  port.on('message', (m: StoreWorkerRequest) => state.receive(m));
  port.on('close', () => state.closeAll());
}
