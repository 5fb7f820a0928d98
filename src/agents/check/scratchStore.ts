/**
 * Scratch storage for a check's runs (docs/check.md, "Scratch storage"): the user's session file is never written by a
 * check. Each case runs in a session file of its own in a temporary folder, holding only what its run reads — the
 * case's branch up to and including the recorded turn (the history the agent is given, and the turn whose recorded tool
 * calls replay reads when it forks) — written through our `AdvancedSQLiteSession`, so the file is in the format Python
 * writes and an agent command's own SDK session reads it as it would the user's. The run then forks that turn in the
 * scratch file as any what-if does. What a case costs is its branch's prefix, never the file: a case on turn 3 of a
 * 1 GB file copies three turns.
 */
import { mkdtempSync } from 'node:fs';
import { copyFile, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SessionReader } from '../../store/inspector/sessionReader';
import { copyBranchPrefix, PREFIX_PAGE, TurnChangedError } from '../../store/export/branchPrefixCopy';
import { IN_THREAD_STORE, type RunSession, type RunSessionOptions, type RunStore } from '../runSession';
import { openDatabase } from '../../store/drivers/openDatabase';
import { markWritesOn, writesSinceOn } from '../../store/inspector/writesSince';
import type { SqliteDatabase } from '../../store/sqlite/sqliteDatabase';
import type { CheckCase } from './checkTypes';
import { PrefixChain } from '../../store/export/prefixChain';

export { TurnChangedError };
export const SCRATCH_PAGE = PREFIX_PAGE;

/** Where a case runs: a scratch session file whose `main` branch is the case's branch through its turn. */
export interface ScratchCase {
  dbPath: string;
  branchId: string;
  /** The case's turn as the scratch file numbers it (the count of user messages up to it, as the SDKs number turns). */
  turn: number;
  /** Items copied (the prefix and the turn). */
  items: number;
  /**
   * The store the case's run opens its session through: one that hands over the copy's own session, still open, when
   * the copy was made in this thread (see `CaseSession`); else the folder's `runStore`.
   */
  store: RunStore;
}

type Reader = Pick<SessionReader, 'getItemsPage'>;

const chainKey = (c: CheckCase): string => `${c.sessionId}\u0000${c.branchId}`;

/** A file that is not there is removed already. */
function ignoreMissing(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
}

/** The store's logs of a scratch session: what it would log (usage not stored) concerns files nobody keeps. */
const SILENT = { error: () => undefined, warn: () => undefined };

/**
 * A temporary folder for one check's scratch files, removed whole when the check ends. Every SQLite connection it
 * opens goes through `store` (the CLI's thread, or the extension's store worker, so that none of the copying runs on
 * the extension host's thread), and the files are copied and removed with the asynchronous file calls (libuv's
 * threads), so a check's own thread only passes items along.
 */
export class ScratchFolder {
  /** An empty session file (the tables, no rows), made once and copied for each case. */
  private template: Promise<string> | undefined;
  /** `store` opening every session without a sync: see `runStore`. */
  readonly runStore: RunStore;
  /** The copies' sessions held open for their runs, by scratch file; closed by `discard` or `dispose`. */
  private readonly held = new Map<string, CaseSession>();
  /** Each branch's prefix chain (prefixChain.ts), by session and branch, for the copies made in this thread. */
  private readonly chains = new Map<string, PrefixChain>();
  /** Each branch's template number (`chainPath`), whichever thread keeps its chain. */
  private readonly chainNumbers = new Map<string, number>();

  private constructor(
    readonly path: string,
    private readonly store: RunStore,
  ) {
    // A scratch file is thrown away when its case ends, so it need not survive a power cut: without syncs its writes,
    // the fork's commit and the checkpoint when the last connection closes cost no fsync (measured: those syncs were
    // about 30 ms of blocked thread per case, which queue behind each other when 8 cases run at once).
    this.runStore = { ...store, openSession: (options) => store.openSession({ ...options, synchronous: 'OFF' }) };
  }

  /**
   * A new folder under `parent` (default the system's temporary folder), readable by this user only (mkdtemp: 0700);
   * its sessions open through `store` (default: this thread).
   */
  static create(parent = tmpdir(), store: RunStore = IN_THREAD_STORE): ScratchFolder {
    return new ScratchFolder(mkdtempSync(join(parent, 'agent-sessions-check-')), store);
  }

  /**
   * Copies the case's branch from the user's file, up to and including the case's turn, into a new scratch file named
   * by `slot`: in the store's own thread when it can copy (`RunStore.copyBranchPrefix`: the extension's store worker,
   * reading `file` on a connection of its own), else here, reading through `reader` (the user's file, read-only).
   * Throws `TurnChangedError` when the turn is gone or holds another user message than the case was made from.
   */
  async prepare(reader: Reader, c: CheckCase, slot: number, signal?: AbortSignal, file?: string): Promise<ScratchCase> {
    const dbPath = join(this.path, `case-${slot}.db`);
    const request = { sessionId: c.sessionId, branchId: c.branchId, turn: c.turn, contentKey: c.contentKey };
    const store = this.store;
    const inStore = file !== undefined && store.copyBranchPrefix ? { file, copy: store.copyBranchPrefix.bind(store) } : undefined;
    if (inStore) {
      // The store's own thread keeps the branch's chain (it reads the user's file on a connection of its own).
      const chain = { file: this.chainPath(c), emptyFile: await this.emptyFile() };
      const { turn, items } = await inStore.copy(inStore.file, dbPath, request, signal, chain);
      return { dbPath, branchId: 'main', turn, items, store: this.runStore };
    }
    const cloned = await this.chainOf(c).cloneThrough(reader, request, dbPath, signal);
    // Else a copy of the empty template, not a new file: creating the tables costs SQLite's syncs (20-50 ms here), a
    // copy of 80 KB well under 1 ms — the difference is most of a case's own overhead.
    if (cloned === null) await copyFile(await this.emptyFile(), dbPath);
    // The marks on a reader of the case's own only when the sessions live in this thread too: a store elsewhere (a
    // worker) keeps every connection there.
    const held = await CaseSession.open(this.runStore, { sessionId: c.sessionId, dbPath }, this.store === IN_THREAD_STORE);
    try {
      const { turn, items } = cloned ?? (await copyBranchPrefix(reader, held.session, request, signal));
      this.held.set(dbPath, held);
      return { dbPath, branchId: 'main', turn, items, store: held.store };
    } catch (err) {
      await held.close();
      throw err;
    }
  }

  private chainOf(c: CheckCase): PrefixChain {
    const key = chainKey(c);
    let chain = this.chains.get(key);
    if (!chain) {
      chain = new PrefixChain(
        this.chainPath(c),
        () => this.emptyFile(),
        (sessionId, dbPath) => this.runStore.openSession({ sessionId, dbPath, logger: SILENT }),
      );
      this.chains.set(key, chain);
    }
    return chain;
  }

  /** The template file of the case's branch: one per session and branch, numbered as they come. */
  private chainPath(c: CheckCase): string {
    const key = chainKey(c);
    let n = this.chainNumbers.get(key);
    if (n === undefined) this.chainNumbers.set(key, (n = this.chainNumbers.size + 1));
    return join(this.path, `prefix-${n}.db`);
  }

  private emptyFile(): Promise<string> {
    this.template ??= (async () => {
      const path = join(this.path, 'empty.db');
      const session = await this.runStore.openSession({ sessionId: 'template', dbPath: path, createTables: true, logger: SILENT });
      await session.close();
      return path;
    })();
    return this.template;
  }

  /**
   * Closes the case's session, then removes its scratch file and its -wal and -shm once its run is over (a rollback
   * journal, which a WAL file does not have, would be left to `dispose`). `unlink`, not `rm`: `rm` looks before it
   * removes, and each file missing costs an error with its stack, together more than the rest of the removal.
   */
  async discard(scratch: Pick<ScratchCase, 'dbPath'>): Promise<void> {
    const held = this.held.get(scratch.dbPath);
    this.held.delete(scratch.dbPath);
    await held?.close();
    await Promise.all(['', '-wal', '-shm'].map((suffix) => unlink(`${scratch.dbPath}${suffix}`).catch(ignoreMissing)));
  }

  /** Removes the folder and whatever is left in it, once the chains kept for it (here or in the store's thread) closed. */
  async dispose(): Promise<void> {
    const held = [...this.held.values()];
    this.held.clear();
    await Promise.all([
      ...held.map((h) => h.close()),
      ...[...this.chains.values()].map((c) => c.close()),
      this.store.releasePrefixChains?.(this.path),
    ]);
    await rm(this.path, { recursive: true, force: true });
  }
}

/**
 * The session a case's prefix was copied through, held open for the case's run: the run's `openSession` on the same
 * scratch file gets it back instead of a connection of its own, and its `close` leaves it open (the folder closes it
 * when the case is discarded); the run's write marks (`markWrites`, `writesSince`) read on one read-only connection
 * of the case, opened with the mark. A scratch file is ours alone for its case, so these two serve the copy, the fork,
 * the marks, settling and reading back; each connection more costs its open (the schema read) and, when it closes
 * last, a checkpoint: several milliseconds of the check's one thread per case, which at `--concurrency 8` queue
 * behind the other cases' work. The reader is closed after the session, so the session's close is not the last and
 * skips the checkpoint (a read-only connection makes none): the file is removed next. The store's logs go to whoever
 * opened the session last.
 */
class CaseSession {
  private closed = false;
  private reader: SqliteDatabase | undefined;
  readonly store: RunStore;

  private constructor(
    readonly session: RunSession,
    private readonly base: RunStore,
    private readonly where: { sessionId: string; dbPath: string },
    /** Where the session's logs go: whoever opened it last. */
    private readonly logs: { to: RunSessionOptions['logger'] },
    ownReader: boolean,
  ) {
    const marks: Partial<RunStore> = ownReader
      ? {
          markWrites: async (dbPath, tables) =>
            this.isOurs(dbPath) ? markWritesOn(this.readerOf(), tables) : base.markWrites(dbPath, tables),
          writesSince: async (dbPath, tables, mark) =>
            this.isOurs(dbPath) ? writesSinceOn(this.readerOf(), tables, mark) : base.writesSince(dbPath, tables, mark),
        }
      : {};
    this.store = { ...base, openSession: (options) => this.handOver(options), ...marks };
  }

  static async open(base: RunStore, where: { sessionId: string; dbPath: string }, ownReader: boolean): Promise<CaseSession> {
    const logs: { to: RunSessionOptions['logger'] } = { to: SILENT };
    const logger = { error: (m: string, e: unknown) => logs.to.error(m, e), warn: (m: string) => logs.to.warn?.(m) };
    return new CaseSession(await base.openSession({ ...where, logger }), base, where, logs, ownReader);
  }

  private isOurs(dbPath: string): boolean {
    return !this.closed && resolve(dbPath) === resolve(this.where.dbPath);
  }

  private readerOf(): SqliteDatabase {
    this.reader ??= openDatabase(this.where.dbPath, { readonly: true, fileMustExist: true });
    return this.reader;
  }

  /** The held session when `options` ask for it as it was opened (its file, session and tables); else a new one. */
  private async handOver(options: RunSessionOptions): Promise<RunSession> {
    const same =
      options.dbPath !== undefined &&
      this.isOurs(options.dbPath) &&
      options.sessionId === this.where.sessionId &&
      options.sessionsTable === undefined &&
      options.messagesTable === undefined &&
      options.busyTimeoutMs === undefined &&
      !options.createTables;
    if (!same) return this.base.openSession(options);
    this.logs.to = options.logger;
    // Everything but `close` is the held session's own (bound, so its private state stays its own).
    return new Proxy(this.session, {
      get: (target, key) => {
        if (key === 'close') return () => undefined;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.session.close();
    } finally {
      this.reader?.close();
    }
  }
}
