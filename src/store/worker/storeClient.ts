/**
 * The host side of the store worker: `StoreClient` starts the worker (dist/storeWorker.js beside the extension's
 * bundle; tests run the TypeScript entry under tsx), sends requests and matches answers, and gives the host objects
 * that look like the store's own but answer with promises: `WorkerSessionDatabase` (a `SessionReader`) and
 * `WorkerSession` (the writable session of one action). A request can carry an `AbortSignal`: aborted before the
 * worker starts it, it is dropped there; aborted later, its answer is dropped here. Either way the caller's promise
 * rejects with `StoreRequestCancelledError` at once.
 */
import { Worker } from 'node:worker_threads';
import type { AdvancedSQLiteSession } from '../session/advancedSqliteSession';
import { SessionClosedError, SessionError } from '../errors';
import type { SessionReader } from '../inspector/sessionReader';
import type { ItemEntry, OpenSessionDatabaseOptions, SessionTables } from '../inspector/inspectorTypes';
import { markStaleWal, staleWalAt, type FileState } from '../sqlite/fileIdentity';
import type { DriverName } from '../sqlite/sqliteDatabase';
import type { SessionLogger, TurnUsage, TurnUsageRow } from '../types';
import type { markWrites, writesSince } from '../inspector/writesSince';
import type { guardDiskUse, guardLayer, guardLayerItems, guardLayers, lookAtGuardedFile, stopLookingAt } from '../guard/guardedFiles';
import type { ExportFormat, ExportRequest, ExportSummary, ProgressOptions } from '../export/transferTypes';
import type { ImportOptions, ImportResult } from '../export/importSession';
import type { BranchPrefixCopy, BranchPrefixRequest } from '../export/branchPrefixCopy';
import type { PrefixChainFiles } from '../export/prefixChain';
import type {
  TraceMethod,
  ReviewMethod,
  ReplayMethod,
  OwnStoreKind,
  JobName,
  FileFunction,
  DatabaseMethod,
  OpenedDatabase,
  SessionMethod,
  StoreWorkerData,
  StoreWorkerRequest,
  StoreWorkerResponse,
  WorkerSessionOptions,
} from './storeWorkerProtocol';
import { SESSION_METHODS } from './storeWorkerProtocol';
import { workerCodeCache, type WorkerCodeCache } from '../files/workerCodeCache';
import { StoreWorkerStoppedError, deserializeError } from './workerErrors';
import type { SessionDatabase } from '../inspector/sessionDatabase';
import type { TraceStore } from '../traces/traceStore';
import type { ReviewStore } from '../reviews/reviewStore';
import type { ReplayMarkStore } from '../replay/replayMarkStore';
import type { DatasetFileResult, exportDatasetToFile as exportDatasetToFileType } from '../datasets/datasetExport';
import type { OutputOptions } from '../files/outputGuard';
import type { DoctorOptions, DoctorReport } from '../doctor/doctorReport';
import type { RepairOptions, RepairOutcome } from '../doctor/repairs';

/** The signatures of `FILE_FUNCTIONS` (types only: the worker runs them). */
type FileFunctionTypes = {
  markWrites: typeof markWrites;
  writesSince: typeof writesSince;
  lookAtGuardedFile: typeof lookAtGuardedFile;
  stopLookingAt: typeof stopLookingAt;
  guardLayers: typeof guardLayers;
  guardLayerItems: typeof guardLayerItems;
  guardLayer: typeof guardLayer;
  guardDiskUse: typeof guardDiskUse;
};

/** A request whose answer nobody wants any more (the view moved on, the panel closed). */
export class StoreRequestCancelledError extends SessionError {
  constructor() {
    super('The request was cancelled.');
  }
}

type Body<T> = T extends { id: number } ? Omit<T, 'id'> : never;
type RequestBody = Body<Exclude<StoreWorkerRequest, { type: 'cancel' }>>;

interface Pending {
  resolve(r: Extract<StoreWorkerResponse, { type: 'result' }>): void;
  reject(err: Error): void;
  onWaiting?: () => void;
  onProgress?: (done: number, total: number) => void;
}

interface SendOptions {
  signal?: AbortSignal;
  /** Called when the worker says a write is waiting for another connection's lock. */
  onWaiting?: () => void;
  /** A job's progress. */
  onProgress?: (done: number, total: number) => void;
  /**
   * For writes: an abort asks the worker to stop and the promise settles with its verdict — `cancelled` (it stopped
   * before writing) or the result (it had written already) — instead of rejecting at once.
   */
  verdict?: boolean;
}

/** What a writable session's calls share: the user's cancel, and who hears that a write waits for a lock. */
export interface WorkerSessionOptionsOnHost {
  signal?: AbortSignal;
  /** How long a write waits for another connection's write lock before failing with `locked` (default 5,000 ms). */
  lockWaitMs?: number;
  onWaiting?: () => void;
  /** Hears what the session logs instead of throwing (`storeRunUsage`'s failures, say). */
  logger?: SessionLogger;
}

/**
 * How the worker starts. `codeCacheDir` (`WorkerCodeCache`): where the bundled worker (`dist/storeWorker.js`,
 * storeWorkerLoader.ts) keeps V8's code cache of itself, so its start does not compile it; none: no cache.
 */
export interface StoreClientOptions extends WorkerCodeCache {
  /** For a TypeScript entry under tsx (tests): `['--require', 'tsx/cjs']`. */
  execArgv?: string[];
}

/**
 * How many times in a row (with no request answered in between) the worker may stop before the client stops starting
 * it: a worker that dies on every start (a driver that crashes loading, a file that kills it each time it is opened)
 * would otherwise be restarted for as long as requests come. Past it, every request rejects with a final
 * `StoreWorkerStoppedError`; a new client (a reloaded window) starts afresh.
 */
export const MAX_WORKER_RESTARTS_IN_A_ROW = 3;

/** One store worker and the requests in flight to it. */
export class StoreClient {
  private worker: Worker | undefined;
  /** Bumped when the worker is replaced after a crash: handles of an older one are gone with it. */
  private generation = 0;
  /** Times the worker stopped since a request was last answered, and why it last stopped. */
  private stopsInARow = 0;
  private lastStop = '';
  private nextId = 1;
  private nextHandle = 1;
  private readonly pending = new Map<number, Pending>();
  /** The host's loggers of open sessions, by handle (the worker sends what a session logs). */
  private readonly loggers = new Map<number, SessionLogger>();
  private disposed = false;

  constructor(
    private readonly workerFile: string,
    private readonly options: StoreClientOptions = {},
  ) {}

  /** Requests sent so far (a test checks that what should go through the worker did). */
  get requestsSent(): number {
    return this.nextId - 1;
  }

  /** Requests sent and not yet answered or cancelled (a test checks that a closed panel leaves none). */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Opens `path` read-only (by default) in the worker. Errors are the `SessionDatabaseError`s of `openSessionDatabase`. */
  async openDatabase(path: string, options: OpenSessionDatabaseOptions = {}, signal?: AbortSignal): Promise<WorkerSessionDatabase> {
    const handle = this.nextHandle++;
    const generation = this.ensureWorker();
    const staleWal = staleWalAt(path);
    const r = await this.send({ type: 'open-database', handle, path, options, ...(staleWal ? { staleWal } : {}) }, { signal });
    return new WorkerSessionDatabase(this, handle, generation, r.value as OpenedDatabase);
  }

  /** Opens (creating unless `readonly`) a trace store in the worker: decoding, storing and reading spans run there. */
  async openTraceStore(path: string, options: { readonly?: boolean } = {}): Promise<WorkerTraceStore> {
    return new WorkerOwnStore(this, ...(await this.openOwnStore('traces', path, options)), path);
  }

  /** Opens (creating unless `readonly`) a replay marks store in the worker (docs/replay.md). */
  async openReplayStore(path: string, options: { readonly?: boolean } = {}): Promise<WorkerReplayStore> {
    return new WorkerOwnStore(this, ...(await this.openOwnStore('replay', path, options)), path);
  }

  /** Opens (creating unless `readonly`) a review store in the worker. */
  async openReviewStore(path: string, options: { readonly?: boolean } = {}): Promise<WorkerReviewStore> {
    return new WorkerOwnStore(this, ...(await this.openOwnStore('reviews', path, options)), path);
  }

  private async openOwnStore(store: OwnStoreKind, path: string, options: { readonly?: boolean }): Promise<[number, number]> {
    const handle = this.nextHandle++;
    const generation = this.ensureWorker();
    await this.send({ type: 'open-own-store', handle, store, path, ...(options.readonly ? { readonly: true } : {}) });
    return [handle, generation];
  }

  /**
   * Opens an `AdvancedSQLiteSession` in the worker for one action; close it when done. Its writes wait for another
   * connection's write lock in the worker (`onWaiting` hears when one starts waiting), up to `lockWaitMs`; when
   * `signal` aborts, a write not yet started (or still waiting) rejects with `StoreRequestCancelledError` and has
   * written nothing, and one already under way completes.
   */
  async openSession(options: WorkerSessionOptions, host: WorkerSessionOptionsOnHost = {}): Promise<WorkerSession> {
    const handle = this.nextHandle++;
    const generation = this.ensureWorker();
    const staleWal = options.dbPath ? staleWalAt(options.dbPath) : undefined;
    if (host.logger) this.loggers.set(handle, host.logger);
    await this.send(
      {
        type: 'open-session',
        handle,
        options,
        ...(host.lockWaitMs !== undefined ? { lockWaitMs: host.lockWaitMs } : {}),
        ...(staleWal ? { staleWal } : {}),
      },
      { signal: host.signal, onWaiting: host.onWaiting, verdict: true },
    );
    return workerSession(this, handle, generation, host);
  }

  /** Calls `method` on an open handle; for the handle classes below. */
  async call<T>(
    handle: number,
    generation: number,
    method: string,
    args: unknown[],
    options: SendOptions = {},
  ): Promise<{ value: T; tables?: SessionTables }> {
    if (generation !== this.generation || !this.worker) {
      throw new StoreWorkerStoppedError('The store worker restarted since this was opened; refresh to open it again.');
    }
    // A read that runs long (a first computation of kept totals) stops when this is set; see the protocol.
    const cancelFlag = options.signal ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
    const onAbort = (): void => void (cancelFlag && Atomics.store(cancelFlag, 0, 1));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const r = await this.send({ type: 'call', handle, method, args, ...(cancelFlag ? { cancelFlag } : {}) }, options);
      return { value: r.value as T, tables: r.tables };
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Runs one of the store's whole-file functions (`FILE_FUNCTIONS`) in the worker. */
  async fileCall<F extends FileFunction>(fn: F, ...args: Parameters<FileFunctionTypes[F]>): Promise<ReturnType<FileFunctionTypes[F]>> {
    this.ensureWorker();
    const r = await this.send({ type: 'file-call', fn, args });
    return r.value as ReturnType<FileFunctionTypes[F]>;
  }

  /**
   * Exports a session or branch of `dbPath` to `outPath` in the worker (`exportSessionToFile`): progress as it goes;
   * the signal cancels between pages (`TransferError('cancelled')`, no file left behind).
   */
  async exportSessionToFile(
    dbPath: string,
    outPath: string,
    format: ExportFormat,
    request: Omit<ExportRequest, keyof ProgressOptions>,
    progress: ProgressOptions = {},
    /** Whether an existing `outPath` may be replaced, and the other files it may not be (the session file never is). */
    output: OutputOptions = {},
  ): Promise<ExportSummary> {
    return (await this.job('exportSessionToFile', [dbPath, outPath, format, request, output], progress)) as ExportSummary;
  }

  /**
   * Writes a dataset from the reviews at `reviewsPath` over the session file `dbPath` to `outPath` in the worker
   * (`exportDatasetToFile`); the signal stops it, leaving no file.
   */
  async exportDatasetToFile(
    dbPath: string,
    reviewsPath: string,
    outPath: string,
    options: Parameters<typeof exportDatasetToFileType>[3],
    signal?: AbortSignal,
  ): Promise<DatasetFileResult> {
    return (await this.job('exportDatasetToFile', [dbPath, reviewsPath, outPath, options], { signal })) as DatasetFileResult;
  }

  /**
   * Copies a branch through a turn from the session file `sourcePath` into the session file `targetPath` (a check's
   * scratch file) in the worker, on connections of its own (`copyBranchPrefixToFile`), or, given `chain`, makes
   * `targetPath` a file copy of the branch's prefix chain kept in the worker (`copyBranchPrefixChained`: the target is
   * not there yet); the signal stops it between pages.
   */
  async copyBranchPrefix(
    sourcePath: string,
    targetPath: string,
    request: BranchPrefixRequest,
    signal?: AbortSignal,
    chain?: PrefixChainFiles,
  ): Promise<BranchPrefixCopy & { copied?: number }> {
    return (await this.job('copyBranchPrefixToFile', [sourcePath, targetPath, request, ...(chain ? [chain] : [])], {
      signal,
    })) as BranchPrefixCopy;
  }

  /** Closes the prefix chains the worker keeps for the scratch folder `folder` (`releasePrefixChains`). */
  async releasePrefixChains(folder: string): Promise<void> {
    await this.job('releasePrefixChains', [folder], {});
  }

  /** Imports a JSON or JSONL export into `dbPath` in the worker (`importSessionFile`); one transaction, as there. */
  async importSessionFile(
    dbPath: string,
    filePath: string,
    options: Omit<ImportOptions, keyof ProgressOptions>,
    progress: ProgressOptions = {},
  ): Promise<ImportResult> {
    return (await this.job('importSessionFile', [dbPath, filePath, options], progress)) as ImportResult;
  }

  /** Runs the doctor's checks on the session file `path` in the worker (`checkSessionFile`). */
  async checkSessionFile(path: string, options: DoctorOptions = {}, signal?: AbortSignal): Promise<DoctorReport> {
    this.ensureWorker();
    return (await this.send({ type: 'doctor', op: 'check', path, options }, { signal })).value as DoctorReport;
  }

  /**
   * Repairs the session file `path` in the worker (`repairSessionFile`), after waiting for another connection's write
   * lock there up to `lockWaitMs` (`onWaiting` hears when it starts waiting; `signal` stops the wait, and then nothing
   * was written).
   */
  async repairSessionFile(
    path: string,
    options: RepairOptions,
    host: { signal?: AbortSignal; onWaiting?: () => void; lockWaitMs?: number } = {},
  ): Promise<RepairOutcome> {
    this.ensureWorker();
    const r = await this.send(
      { type: 'doctor', op: 'repair', path, options, ...(host.lockWaitMs === undefined ? {} : { lockWaitMs: host.lockWaitMs }) },
      { signal: host.signal, onWaiting: host.onWaiting, verdict: true },
    );
    return r.value as RepairOutcome;
  }

  private async job(job: JobName, args: unknown[], progress: ProgressOptions): Promise<unknown> {
    this.ensureWorker();
    // Cancel is the job's own (TransferError 'cancelled'), so the promise waits for the worker's verdict; the shared
    // flag reaches the job inside a synchronous loop, where the cancel message would not.
    const cancelFlag = new Int32Array(new SharedArrayBuffer(4));
    const onAbort = (): void => void Atomics.store(cancelFlag, 0, 1);
    progress.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const r = await this.send(
        { type: 'job', job, args, cancelFlag },
        { signal: progress.signal, onProgress: progress.onProgress, verdict: true },
      );
      return r.value;
    } finally {
      progress.signal?.removeEventListener('abort', onAbort);
    }
  }

  async closeHandle(handle: number, generation: number): Promise<void> {
    this.loggers.delete(handle);
    if (generation !== this.generation || !this.worker) return;
    await this.send({ type: 'close', handle });
  }

  /** Stops the worker; its connections close with it, and what was in flight rejects. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new SessionClosedError());
    await worker?.terminate();
  }

  /**
   * The running worker's generation, starting a worker when none runs (the first request, or the next one after a
   * crash), unless it stopped `MAX_WORKER_RESTARTS_IN_A_ROW` times in a row.
   */
  private ensureWorker(): number {
    if (this.disposed) throw new SessionClosedError();
    if (this.worker) return this.generation;
    if (this.stopsInARow >= MAX_WORKER_RESTARTS_IN_A_ROW) {
      throw new StoreWorkerStoppedError(
        `The store worker stopped ${this.stopsInARow} times in a row (last: ${this.lastStop}) and is not started again; reload the window to try again.`,
        true,
      );
    }
    const workerData: StoreWorkerData = workerCodeCache(this.options);
    const worker = new Worker(this.workerFile, { execArgv: this.options.execArgv, workerData });
    const generation = ++this.generation;
    worker.unref();
    worker.on('message', (r: StoreWorkerResponse) => this.answer(r));
    const lost = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.stopsInARow++;
      this.lastStop = why;
      // The worker's connections died with it: a transaction under way was never committed, so SQLite drops it whole,
      // and what was answered before had been committed. Whether a request in flight had committed is unknown.
      this.failAll(
        new StoreWorkerStoppedError(
          `The store worker stopped (${why}) during this request: a write it was making is kept whole or not at all, and the writes answered before are kept. Refresh to open the database again.`,
        ),
      );
    };
    worker.on('error', (err) => lost(err.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    this.worker = worker;
    return generation;
  }

  private send(body: RequestBody, options: SendOptions = {}): Promise<Extract<StoreWorkerResponse, { type: 'result' }>> {
    const { signal } = options;
    const worker = this.worker;
    if (!worker) return Promise.reject(new StoreWorkerStoppedError('The store worker is not running.'));
    if (signal?.aborted) return Promise.reject(new StoreRequestCancelledError());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.pending.has(id)) return;
        worker.postMessage({ type: 'cancel', id } satisfies StoreWorkerRequest);
        // A write's promise waits for the worker's verdict; anything else ends now and its answer is dropped.
        if (options.verdict) return;
        this.pending.delete(id);
        this.settled();
        reject(new StoreRequestCancelledError());
      };
      this.pending.set(id, {
        onWaiting: options.onWaiting,
        onProgress: options.onProgress,
        resolve: (r) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      // Keeps the process alive while an answer is due (an idle worker does not).
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ ...body, id } as StoreWorkerRequest);
    });
  }

  private answer(r: StoreWorkerResponse): void {
    if (r.type === 'log') {
      const logger = this.loggers.get(r.handle);
      if (r.level === 'warn') logger?.warn?.(r.message);
      else logger?.error(r.message, new Error(r.detail ?? r.message));
      return;
    }
    const p = this.pending.get(r.id);
    // Cancelled here already: the worker's late answer (or its `cancelled`) is dropped.
    if (!p) return;
    if (r.type === 'waiting') {
      p.onWaiting?.();
      return;
    }
    if (r.type === 'progress') {
      p.onProgress?.(r.done, r.total);
      return;
    }
    this.pending.delete(r.id);
    this.settled();
    // The worker answered, so it works: its next stop starts the count again.
    this.stopsInARow = 0;
    if (r.type === 'result') p.resolve(r);
    else if (r.type === 'cancelled') p.reject(new StoreRequestCancelledError());
    else {
      // The worker found the file replaced and its -wal stale: the host's own opens (agent runs) must refuse too.
      if (r.staleWal) markStaleWal(r.staleWal.path, r.staleWal.wal);
      p.reject(deserializeError(r.error));
    }
  }

  private settled(): void {
    if (this.pending.size === 0) this.worker?.unref();
  }

  private failAll(err: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err);
  }
}

/** The reads of `SessionReader` that take an `AbortSignal` as their last argument here. */
type Reads = {
  [K in keyof SessionReader as SessionReader[K] extends (...args: never[]) => unknown ? K : never]: SessionReader[K] extends (
    ...args: infer A
  ) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/**
 * A session file open in the store worker: the inspector's `SessionDatabase`, with every read a promise. `tables`,
 * `path`, `readonly` and `driver` answer at once (the worker sends the tables with every answer).
 */
export class WorkerSessionDatabase implements Reads {
  readonly path: string;
  readonly readonly: boolean;
  readonly driver: DriverName;
  private currentTables: SessionTables;
  private closed = false;

  constructor(
    private readonly client: StoreClient,
    private readonly handle: number,
    private readonly generation: number,
    opened: OpenedDatabase,
    /** Requests made through this object carry it; see `withSignal`. */
    private readonly signal?: AbortSignal,
    private readonly shared?: WorkerSessionDatabase,
    /** Told how a long first computation of kept totals advances; see `withSignal`. */
    private readonly onProgress?: (done: number, total: number) => void,
  ) {
    this.path = opened.path;
    this.readonly = opened.readonly;
    this.driver = opened.driver;
    this.currentTables = opened.tables;
  }

  get tables(): SessionTables {
    return (this.shared ?? this).currentTables;
  }

  get isOpen(): boolean {
    return !(this.shared ?? this).closed;
  }

  /**
   * The same database, with every request made through the result cancelled when `signal` aborts (a panel passes its
   * lifetime's signal: a closed panel's queued reads are dropped, a read under way that computes kept totals stops,
   * and late answers never reach it), and `onProgress` told how such a computation advances (rows done, total).
   */
  withSignal(signal: AbortSignal, onProgress?: (done: number, total: number) => void): WorkerSessionDatabase {
    const root = this.shared ?? this;
    return new WorkerSessionDatabase(
      this.client,
      this.handle,
      this.generation,
      { path: this.path, readonly: this.readonly, driver: this.driver, tables: this.tables },
      signal,
      root,
      onProgress,
    );
  }

  private async call<T>(method: DatabaseMethod, ...args: unknown[]): Promise<T> {
    if (!this.isOpen) throw new SessionClosedError();
    const r = await this.client.call<T>(this.handle, this.generation, method, args, { signal: this.signal, onProgress: this.onProgress });
    if (r.tables) (this.shared ?? this).currentTables = r.tables;
    return r.value;
  }

  listSessions: Reads['listSessions'] = () => this.call('listSessions');
  getBranchTree: Reads['getBranchTree'] = (sessionId) => this.call('getBranchTree', sessionId);
  getItemsPage: Reads['getItemsPage'] = (sessionId, branchId, request) => this.call('getItemsPage', sessionId, branchId, request);
  getTurnItems: Reads['getTurnItems'] = (sessionId, branchId, turn) => this.call('getTurnItems', sessionId, branchId, turn);
  getTurnItemsMany = (sessionId: string, branchId: string, turns: readonly number[]): Promise<ItemEntry[][]> =>
    this.call('getTurnItemsMany', sessionId, branchId, turns);
  getTurnsPage: Reads['getTurnsPage'] = (sessionId, branchId, request) => this.call('getTurnsPage', sessionId, branchId, request);
  getTurnsPageBefore: Reads['getTurnsPageBefore'] = (sessionId, branchId, request) =>
    this.call('getTurnsPageBefore', sessionId, branchId, request);
  getTurnSummaries: Reads['getTurnSummaries'] = (sessionId, branchId, fromTurn, toTurn) =>
    this.call('getTurnSummaries', sessionId, branchId, fromTurn, toTurn);
  usedBranchIds: Reads['usedBranchIds'] = (sessionId) => this.call('usedBranchIds', sessionId);
  getUsagePage: Reads['getUsagePage'] = (sessionId, branchId, request) => this.call('getUsagePage', sessionId, branchId, request);
  getToolTotals: Reads['getToolTotals'] = (sessionId, branchId) => this.call('getToolTotals', sessionId, branchId);
  getTurnUsage: Reads['getTurnUsage'] = (sessionId, branchId, fromTurn, toTurn) =>
    this.call('getTurnUsage', sessionId, branchId, fromTurn, toTurn);
  getTurnsWithoutUsage: Reads['getTurnsWithoutUsage'] = (sessionId, branchId, options) =>
    this.call('getTurnsWithoutUsage', sessionId, branchId, options);
  getUsageTab: Reads['getUsageTab'] = (sessionId, branchId, request, missing) =>
    this.call('getUsageTab', sessionId, branchId, request, missing);

  /** See `SessionDatabase.olderCompaction`: the context builder asks it when a turn's history reaches past its read. */
  olderCompaction(
    sessionId: string,
    branchId: string,
    beforeSequence: number,
    listed: number,
  ): Promise<ReturnType<SessionDatabase['olderCompaction']>> {
    return this.call('olderCompaction', sessionId, branchId, beforeSequence, listed);
  }

  getUsageRows(sessionId: string, branchId: string | null): Promise<ReturnType<SessionDatabase['getUsageRows']>> {
    return this.call('getUsageRows', sessionId, branchId);
  }

  /** See `SessionDatabase.countSessionRows`. */
  countSessionRows(): Promise<number | null> {
    return this.call('countSessionRows');
  }

  /** See `SessionDatabase.hasChanged`: rejects with `deleted` or `replaced` as that throws. */
  hasChanged(): Promise<boolean> {
    return this.call('hasChanged');
  }

  fileState(): Promise<FileState> {
    return this.call('fileState');
  }

  /** Closes the connection in the worker; idempotent. Later calls reject with `SessionClosedError`. */
  async close(): Promise<void> {
    const root = this.shared ?? this;
    if (root.closed) return;
    root.closed = true;
    await this.client.closeHandle(this.handle, this.generation).catch(() => undefined);
  }
}

/** An `AdvancedSQLiteSession` open in the store worker: its methods, each a promise. */
export type WorkerSession = {
  [K in Exclude<SessionMethod, 'getTurnUsage'>]: AdvancedSQLiteSession[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
} & {
  // Both overloads (a mapped type would keep only the last).
  getTurnUsage(userTurnNumber: number, branchId?: string | null): Promise<TurnUsage | Record<string, never>>;
  getTurnUsage(userTurnNumber?: null, branchId?: string | null): Promise<TurnUsageRow[]>;
  /** Closes the session in the worker (idempotent). */
  close(): Promise<void>;
};

function workerSession(client: StoreClient, handle: number, generation: number, host: WorkerSessionOptionsOnHost): WorkerSession {
  let closed = false;
  const session: Record<string, unknown> = {
    close: async () => {
      if (closed) return;
      closed = true;
      await client.closeHandle(handle, generation).catch(() => undefined);
    },
  };
  for (const method of SESSION_METHODS) {
    session[method] = async (...args: unknown[]) => {
      if (closed) throw new SessionClosedError();
      return (await client.call(handle, generation, method, args, { signal: host.signal, onWaiting: host.onWaiting, verdict: true })).value;
    };
  }
  return session as WorkerSession;
}

/** A method of a store class, as a function type (for `Parameters` and `ReturnType`). */
export type MethodOf<S, M extends keyof S> = Extract<S[M], (...args: never[]) => unknown>;

/**
 * A store of ours in the worker (the trace store, the review store): its class's methods named in the protocol
 * (`TRACE_METHODS`, `REVIEW_METHODS`), each answered asynchronously, errors rebuilt as their classes.
 */
export class WorkerOwnStore<S, M extends keyof S & string> {
  private closed = false;
  constructor(
    private readonly client: StoreClient,
    private readonly handle: number,
    private readonly generation: number,
    readonly path: string,
  ) {}

  /** Calls `method` of the worker's store with `args`. */
  async call<K extends M>(method: K, ...args: Parameters<MethodOf<S, K>>): Promise<ReturnType<MethodOf<S, K>>> {
    if (this.closed) throw new SessionClosedError();
    return (await this.client.call<ReturnType<MethodOf<S, K>>>(this.handle, this.generation, method, args)).value;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.closeHandle(this.handle, this.generation);
  }
}

/**
 * The trace store in the worker (docs/traces.md), as its users call it: the handle itself, or a stand-in that opens
 * it on the first write (storeOnDemand.ts).
 */
export type WorkerTraceStore = Pick<WorkerOwnStore<TraceStore, TraceMethod>, 'call' | 'close' | 'path'>;
/** The review store in the worker (docs/reviews.md), as its users call it (the handle, or a `StoreOnDemand`). */
export type WorkerReviewStore = Pick<WorkerOwnStore<ReviewStore, ReviewMethod>, 'call' | 'close' | 'path'>;
/** The replay marks store in the worker (docs/replay.md), as its users call it (the handle, or a `StoreOnDemand`). */
export type WorkerReplayStore = Pick<WorkerOwnStore<ReplayMarkStore, ReplayMethod>, 'call' | 'close' | 'path'>;
