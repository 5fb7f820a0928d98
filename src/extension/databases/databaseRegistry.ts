import { constants, existsSync, promises as fsp, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { SessionDatabaseError, markStaleWal, moveStaleWalAside, staleWalAt, staleWalMessage } from '../../store';
import { StoreRequestCancelledError, WorkerSessionDatabase, type StoreClient, type WorkerSession } from '../../store/worker/storeClient';
import { LockWaitNotice, VISIBLE_LOCK_WAIT_MS } from './lockWaitNotice';
import {
  RemoteSessionSource,
  openRemoteStore,
  redactUrl,
  remoteKindOf,
  type PostgresSession,
  type RedisSession,
  type RemoteStoreKind,
} from '../../store';
import { passwordKey, splitPassword } from './remoteAddress';
import { Setting } from '../core/contributions';
import { sessionKey } from '../../shared/protocol/sessionRef';
import { setting } from '../core/settings';
import type { SqliteDriverCheck } from './sqliteDriverCheck';
import { UserFacingError, describeError } from '../core/userError';
import { errorMessage } from '../../shared/errorMessage';
import { showErrorNotice, showInformationNotice, showWarningNotice } from '../core/notices';

/** The workspace-state key of the replaced files' -wal files still at their paths (format spec §11, stale-wal). */
const STALE_WALS_KEY = 'agentSessions.staleWals';
interface PersistedWal {
  path: string;
  dev: string;
  ino: string;
  /** The header's salts when found stale (absent in state written by older versions). */
  salts?: string;
}

/** Why a database is open read-only. */
export type ReadOnlyReason = 'setting' | 'toggle' | 'file' | 'server';

/** A PostgreSQL or Redis store: its address without the password (which lives in secret storage). */
export interface RemoteLocation {
  kind: RemoteStoreKind;
  url: string;
}

/** One database the user opened (or the workspace discovery found). */
export interface DatabaseEntry {
  /** The file path, or for a server-backed store its address without the password (the entry's key either way). */
  readonly path: string;
  /** Set for PostgreSQL and Redis stores. */
  readonly remote: RemoteLocation | undefined;
  /** The user's per-database choice (undefined = follow the setting). */
  readonlyChoice: boolean | undefined;
  /** Effective: never written when true. */
  readonly: boolean;
  readonlyReason: ReadOnlyReason | undefined;
  /**
   * The read connection (always read-only: the extension never locks the file for writing between actions). A file's
   * lives in the store worker, so no read runs on the extension host's thread.
   */
  db: WorkerSessionDatabase | RemoteSessionSource | undefined;
  /** What is wrong with the file, shown on its tree item; undefined when it is fine. */
  problem: string | undefined;
  discovered: boolean;
}

/**
 * What a change event reports, so a listener can tell a write from a state change: `list` (databases opened,
 * closed or reconnected), `rows` (the file's data changed), `state` (one database's problem or connection
 * changed) and `current-branch` (the extension's current branch of one session moved; nothing was written).
 */
export type DatabaseChange =
  { kind: 'list' } | { kind: 'rows' | 'state'; path: string } | { kind: 'current-branch'; path: string; sessionId: string };

interface PersistedEntry {
  path: string;
  readonly?: boolean;
  remote?: RemoteLocation;
}

const STATE_KEY = 'agentSessions.openDatabases';
/** How often the change check runs besides file events (the check is one PRAGMA, microseconds). */
const POLL_MS = 1000;
/** Server-backed stores are polled less often: each poll is a query per watched session. */
const REMOTE_POLL_MS = 2000;
/** Coalesces the burst of events one commit causes (main file, -wal, -shm). */
const DEBOUNCE_MS = 40;

async function writable(path: string): Promise<boolean> {
  try {
    // The folder must take the -wal/-shm files too.
    await fsp.access(path, constants.W_OK);
    await fsp.access(dirname(path), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The open session databases: opens and closes them, remembers them per workspace, watches them for writes by
 * other processes, and runs write actions through short-lived `AdvancedSQLiteSession` instances. It owns the
 * change event the tree view and the status bar follow.
 */
export class DatabaseRegistry implements vscode.Disposable {
  private readonly entries = new Map<string, DatabaseEntry>();
  private readonly watchers = new Map<string, { watcher: FSWatcher | undefined; timer: NodeJS.Timeout | undefined }>();
  private readonly changeEmitter = new vscode.EventEmitter<DatabaseChange>();
  private readonly currentBranches = new Map<string, string>();
  private poll: NodeJS.Timeout | undefined;
  /** Fires with what changed; see `DatabaseChange`. */
  readonly onDidChange = this.changeEmitter.event;

  constructor(
    private readonly state: vscode.Memento,
    private readonly driver: SqliteDriverCheck,
    /** The store worker every file's connections live in. */
    readonly store: StoreClient,
    private readonly secrets?: vscode.SecretStorage,
  ) {
    // A replaced file's -wal found in an earlier window is still refused after a restart (format spec §11, stale-wal).
    for (const w of state.get<PersistedWal[]>(STALE_WALS_KEY, [])) {
      markStaleWal(w.path, { dev: BigInt(w.dev), ino: BigInt(w.ino), ...(w.salts ? { salts: w.salts } : {}) });
    }
  }

  /** Paths whose stale -wal the user is being asked about now (one question at a time per file). */
  private readonly staleAsked = new Set<string>();

  /**
   * A replaced file's -wal is at `entry`'s path (format spec §11, stale-wal): remember it across restarts, say what it is, and
   * offer to move it aside. Nothing is moved unless the user says so, and nothing is ever deleted.
   */
  private async offerStaleWal(entry: DatabaseEntry): Promise<void> {
    const wal = staleWalAt(entry.path);
    if (!wal || this.staleAsked.has(entry.path)) return;
    this.staleAsked.add(entry.path);
    try {
      const kept = this.state.get<PersistedWal[]>(STALE_WALS_KEY, []).filter((w) => w.path !== entry.path);
      const persisted: PersistedWal = {
        path: entry.path,
        dev: String(wal.dev),
        ino: String(wal.ino),
        ...(wal.salts ? { salts: wal.salts } : {}),
      };
      await this.state.update(STALE_WALS_KEY, [...kept, persisted]);
      const move = vscode.l10n.t('Move Aside');
      const choice = await showWarningNotice(staleWalMessage(entry.path), move);
      if (choice === move) await this.moveStaleWalAside(entry.path);
    } finally {
      this.staleAsked.delete(entry.path);
    }
  }

  /** Renames the replaced file's -wal (and -shm) beside the database, then opens the file that is there now. */
  async moveStaleWalAside(path: string): Promise<string[]> {
    const moved = moveStaleWalAside(path);
    await this.state.update(
      STALE_WALS_KEY,
      this.state.get<PersistedWal[]>(STALE_WALS_KEY, []).filter((w) => w.path !== path),
    );
    void showInformationNotice(
      vscode.l10n.t('Moved aside (kept): {0}. {1} now opens as it is.', moved.map((p) => basename(p)).join(', '), basename(path)),
    );
    const entry = this.entries.get(path);
    if (entry) {
      await this.connect(entry).catch(() => undefined);
      this.fire({ kind: 'state', path });
    }
    return moved;
  }

  /** Session-id prefix filters of server stores (the tree lists only matching sessions). */
  private readonly filters = new Map<string, string>();

  sessionFilter(path: string): string | undefined {
    return this.filters.get(path) || undefined;
  }

  setSessionFilter(path: string, prefix: string | undefined): void {
    if (prefix) this.filters.set(path, prefix);
    else this.filters.delete(path);
    this.fire({ kind: 'list' });
  }

  /** Remote entries whose poll is still running (a slow server must not pile polls up). */
  private readonly polling = new Set<string>();
  private lastRemotePoll = 0;

  /** Change events held back by `batch()`, or undefined outside one. */
  private held: DatabaseChange[] | undefined;

  private fire(change: DatabaseChange): void {
    if (this.held) this.held.push(change);
    else this.changeEmitter.fire(change);
  }

  /**
   * Runs `fn` with change events held back, then fires them together, so that one action (a write and the
   * current-branch move after it) reaches listeners as one burst, and a conversation view gets one notice, even when
   * the file watcher notices the write while the action is still running. Keep user prompts out of `fn`.
   */
  async batch<T>(fn: () => Promise<T>): Promise<T> {
    if (this.held) return fn();
    this.held = [];
    try {
      return await fn();
    } finally {
      const held = this.held;
      this.held = undefined;
      for (const change of held) this.changeEmitter.fire(change);
    }
  }

  list(): DatabaseEntry[] {
    return [...this.entries.values()];
  }

  get(path: string): DatabaseEntry | undefined {
    return this.entries.get(path);
  }

  /** The entry for a path, or a user-facing error when it is not open (a stale menu argument). */
  require(path: string): DatabaseEntry {
    const e = this.entries.get(path);
    if (!e) throw new UserFacingError(vscode.l10n.t('{0} is not open in Agent Sessions.', path));
    return e;
  }

  /** Reopens the databases remembered for this workspace; problems show on their items, nothing throws. */
  async restore(): Promise<void> {
    for (const p of this.state.get<PersistedEntry[]>(STATE_KEY, [])) {
      if (p.remote) await this.openRemote(p.remote.url, { readonlyChoice: p.readonly, quiet: true });
      else await this.open(p.path, { readonlyChoice: p.readonly, quiet: true });
    }
  }

  /**
   * Opens (or re-opens) a database. Throws `SessionDatabaseError`/`UserFacingError` with the reason unless `quiet`,
   * in which case the problem is recorded on the entry.
   */
  async open(
    path: string,
    options: { readonlyChoice?: boolean; discovered?: boolean; quiet?: boolean; remote?: RemoteLocation } = {},
  ): Promise<DatabaseEntry> {
    if (!options.discovered) this.dismissed.delete(path);
    let entry = this.entries.get(path);
    if (!entry) {
      entry = {
        path,
        remote: options.remote,
        readonlyChoice: options.readonlyChoice,
        readonly: true,
        readonlyReason: undefined,
        db: undefined,
        problem: undefined,
        discovered: !!options.discovered,
      };
      this.entries.set(path, entry);
    } else if (options.readonlyChoice !== undefined) entry.readonlyChoice = options.readonlyChoice;
    if (!options.discovered) entry.discovered = false;
    try {
      await this.connect(entry);
    } catch (err) {
      if (!options.quiet) {
        if (!entry.discovered && entry.db === undefined && !this.persisted().some((p) => p.path === path)) this.entries.delete(path);
        this.fire({ kind: 'list' });
        throw err;
      }
    }
    this.startWatching(entry);
    await this.persist();
    this.fire({ kind: 'list' });
    return entry;
  }

  /**
   * Opens a PostgreSQL or Redis store. A password in `url` is moved to secret storage (or `password` is stored
   * there); the entry, the settings and the workspace state only ever hold the address without it. Server stores
   * open read-only unless the user turned writing on for this store.
   */
  async openRemote(url: string, options: { password?: string; readonlyChoice?: boolean; quiet?: boolean } = {}): Promise<DatabaseEntry> {
    const kind = remoteKindOf(url);
    if (!kind) throw new UserFacingError(vscode.l10n.t('Not a PostgreSQL or Redis address: {0}', redactUrl(url)));
    const { address, password } = splitPassword(url);
    const secret = options.password ?? password;
    if (secret !== undefined && this.secrets) await this.secrets.store(passwordKey(address), secret);
    return this.open(address, { readonlyChoice: options.readonlyChoice, quiet: options.quiet, remote: { kind, url: address } });
  }

  private async connect(entry: DatabaseEntry): Promise<void> {
    if (entry.remote) return this.connectRemote(entry, entry.remote);
    void entry.db?.close();
    entry.db = undefined;
    const readonlySetting = setting(Setting.openReadOnly);
    try {
      const fileWritable = existsSync(entry.path) && (await writable(entry.path));
      if (!fileWritable && existsSync(entry.path)) {
        entry.readonly = true;
        entry.readonlyReason = 'file';
      } else if (entry.readonlyChoice !== undefined) {
        entry.readonly = entry.readonlyChoice;
        entry.readonlyReason = entry.readonlyChoice ? 'toggle' : undefined;
      } else {
        entry.readonly = readonlySetting;
        entry.readonlyReason = readonlySetting ? 'setting' : undefined;
      }
      this.driver.ensure();
      const db = await this.store.openDatabase(entry.path, { readonly: true, keepTotals: true });
      // Another connect of the same entry (a refresh while a file event reconnects) may have finished first.
      void (entry.db as DatabaseEntry['db'])?.close();
      entry.db = db;
      entry.problem = undefined;
    } catch (err) {
      entry.problem = errorMessage(err);
      if (err instanceof SessionDatabaseError && err.problem === 'stale-wal') void this.offerStaleWal(entry);
      throw err;
    }
  }

  private async connectRemote(entry: DatabaseEntry, remote: RemoteLocation): Promise<void> {
    const old = entry.db;
    entry.db = undefined;
    if (old) await old.close();
    // Production data: read-only unless the user turned writing on for this store (with a confirmation).
    entry.readonly = entry.readonlyChoice ?? true;
    entry.readonlyReason = entry.readonly ? (entry.readonlyChoice === undefined ? 'server' : 'toggle') : undefined;
    try {
      const password = this.secrets ? await this.secrets.get(passwordKey(remote.url)) : undefined;
      const browser = await openRemoteStore({ url: remote.url, password, readOnly: entry.readonly });
      entry.db = new RemoteSessionSource(browser);
      entry.problem = undefined;
    } catch (err) {
      entry.problem = errorMessage(err);
      throw err;
    }
  }

  /** A server store's password from secret storage (the doctor opens a connection of its own with it). */
  async passwordOf(path: string): Promise<string | undefined> {
    return this.secrets ? await this.secrets.get(passwordKey(path)) : undefined;
  }

  /** Forgets a server store's password (secret storage) together with the store. */
  async forgetPassword(path: string): Promise<void> {
    await this.secrets?.delete(passwordKey(path));
  }

  async close(path: string): Promise<void> {
    const entry = this.entries.get(path);
    if (!entry) return;
    if (entry.discovered) this.dismissed.add(path);
    this.stopWatching(path);
    void entry.db?.close();
    this.entries.delete(path);
    if (entry.remote) await this.forgetPassword(path);
    await this.persist();
    this.fire({ kind: 'list' });
  }

  /** Flips the per-database read-only choice and reconnects. */
  async toggleReadOnly(path: string): Promise<DatabaseEntry> {
    const entry = this.require(path);
    if (entry.readonlyReason === 'file') {
      throw new UserFacingError(
        vscode.l10n.t('{0} cannot be written (the file or its folder is read-only), so it stays read-only.', basename(path)),
      );
    }
    return this.open(path, { readonlyChoice: !entry.readonly, remote: entry.remote });
  }

  /** Records a read failure on the database's item and tells the user once. */
  reportProblem(path: string, err: unknown): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    const message = describeError(err);
    if (entry.problem === message) return;
    entry.problem = message;
    void entry.db?.close();
    entry.db = undefined;
    void showErrorNotice(message);
    this.fire({ kind: 'state', path });
  }

  /**
   * Discovered files the user closed: discovery leaves them closed in this window (*Refresh* too, which searches
   * again) until the user opens one by hand. Grows only by the user's own closes.
   */
  private readonly dismissed = new Set<string>();

  /** Whether the user closed this discovered file in this window (see `dismissed`). */
  isDismissed(path: string): boolean {
    return this.dismissed.has(path);
  }

  /** What else *Refresh* does after re-reading the open databases (workspace discovery searches again). */
  private readonly refreshSteps = new Set<() => Promise<unknown>>();

  /** Adds a step to *Refresh*; it runs after the open databases were re-read and before `refreshAll` resolves. */
  addRefreshStep(step: () => Promise<unknown>): vscode.Disposable {
    this.refreshSteps.add(step);
    return { dispose: () => this.refreshSteps.delete(step) };
  }

  /** Re-reads every database now and runs the refresh steps (the Refresh command). */
  async refreshAll(): Promise<void> {
    for (const e of this.entries.values()) {
      try {
        await this.connect(e);
      } catch {
        /* recorded on the entry */
      }
    }
    for (const step of [...this.refreshSteps]) await step();
    this.fire({ kind: 'list' });
  }

  /**
   * The extension's current branch of a session (the file does not record one; `main` until switched). The registry
   * is its only owner: the tree, the status bar, commands and conversation views all read it here.
   */
  currentBranch(path: string, sessionId: string): string {
    return this.currentBranches.get(sessionKey(path, sessionId)) ?? 'main';
  }

  setCurrentBranch(path: string, sessionId: string, branchId: string): void {
    this.currentBranches.set(sessionKey(path, sessionId), branchId);
    if (this.entries.has(path)) this.fire({ kind: 'current-branch', path, sessionId });
  }

  /**
   * Runs a write through a short-lived session on `branchId` (the file is locked only inside the store's own
   * transactions), then refreshes. Refused for read-only databases and for files without branch tables.
   */
  async withWritableSession<T>(path: string, sessionId: string, branchId: string, fn: (s: WorkerSession) => Promise<T>): Promise<T> {
    const entry = this.require(path);
    if (entry.remote) {
      throw new UserFacingError(
        vscode.l10n.t(
          'Sessions in {0} have no branches. Use "Copy Session to Local File…" to branch, re-run and compare without touching the server.',
          entry.remote.kind === 'postgres' ? 'PostgreSQL' : 'Redis',
        ),
      );
    }
    if (entry.readonly) {
      throw new UserFacingError(
        vscode.l10n.t('{0} is open read-only. Use "Toggle Read-Only" on the database to allow changes.', basename(path)),
      );
    }
    const tables = entry.db?.tables;
    if (!tables) throw new UserFacingError(entry.problem ?? vscode.l10n.t('{0} could not be read.', basename(path)));
    if (!tables.messageStructure || !tables.sessions) {
      throw new UserFacingError(
        vscode.l10n.t('{0} holds plain SQLiteSession data without branch tables; it cannot be branched.', basename(path)),
      );
    }
    // In the store worker, like every connection: a write waiting on another process's lock waits there, and after a
    // moment the user sees why, with Cancel.
    const notice = new LockWaitNotice(basename(path));
    let session: WorkerSession | undefined;
    try {
      session = await this.store.openSession(
        { sessionId, dbPath: path, sessionsTable: tables.sessions, messagesTable: tables.messages },
        { signal: notice.signal, onWaiting: notice.onWaiting, lockWaitMs: VISIBLE_LOCK_WAIT_MS },
      );
      if ((await session.getCurrentBranchId()) !== branchId) await session.switchToBranch(branchId);
      return await fn(session);
    } catch (err) {
      if (err instanceof StoreRequestCancelledError && notice.cancelled) {
        throw new UserFacingError(vscode.l10n.t('Cancelled while {0} was locked by another process: nothing was written.', basename(path)));
      }
      throw err;
    } finally {
      notice.dispose();
      await session?.close();
      await this.checkNow(path);
    }
  }

  /**
   * Runs one write on a server store's session (refused while the store is read-only), then forgets what was
   * cached of the session and polls, so the tree and views show the change at once.
   */
  async withRemoteSession<T>(path: string, sessionId: string, fn: (s: PostgresSession | RedisSession) => Promise<T>): Promise<T> {
    const entry = this.require(path);
    if (!entry.remote || !(entry.db instanceof RemoteSessionSource))
      throw new UserFacingError(entry.problem ?? vscode.l10n.t('{0} is not a server store that can be reached.', path));
    if (entry.readonly)
      throw new UserFacingError(vscode.l10n.t('{0} is open read-only. Use "Toggle Read-Only" on the store to allow changes.', path));
    const source = entry.db;
    try {
      return await fn(source.openSession(sessionId));
    } finally {
      source.forget(sessionId);
      this.fire({ kind: 'rows', path });
    }
  }

  private persisted(): PersistedEntry[] {
    return this.state.get<PersistedEntry[]>(STATE_KEY, []);
  }

  /** What the workspace remembers (paths, addresses without passwords, read-only choices), as stored. */
  remembered(): unknown {
    return this.state.get(STATE_KEY);
  }

  private async persist(): Promise<void> {
    const list: PersistedEntry[] = [...this.entries.values()]
      .filter((e) => !e.discovered)
      .map((e) => ({
        path: e.path,
        ...(e.readonlyChoice === undefined ? {} : { readonly: e.readonlyChoice }),
        ...(e.remote ? { remote: e.remote } : {}),
      }));
    await this.state.update(STATE_KEY, list);
  }

  private startWatching(entry: DatabaseEntry): void {
    if (this.watchers.has(entry.path)) return;
    if (entry.remote) {
      // No file to watch: the poll asks the server for its change tokens.
      this.watchers.set(entry.path, { watcher: undefined, timer: undefined });
      if (!this.poll) this.poll = setInterval(() => this.pollAll(), POLL_MS);
      return;
    }
    const names = new Set([basename(entry.path), `${basename(entry.path)}-wal`, `${basename(entry.path)}-journal`]);
    const slot: { watcher: FSWatcher | undefined; timer: NodeJS.Timeout | undefined } = { watcher: undefined, timer: undefined };
    try {
      // The folder, not the file: the -wal file comes and goes, and a deleted or replaced file must be noticed.
      slot.watcher = watch(dirname(entry.path), { persistent: false }, (_event, filename) => {
        if (filename && !names.has(filename.toString())) return;
        if (slot.timer) clearTimeout(slot.timer);
        slot.timer = setTimeout(() => void this.checkNow(entry.path), DEBOUNCE_MS);
      });
      slot.watcher.on('error', () => undefined);
    } catch {
      /* the poll below still notices changes */
    }
    this.watchers.set(entry.path, slot);
    if (!this.poll) this.poll = setInterval(() => this.pollAll(), POLL_MS);
  }

  private stopWatching(path: string): void {
    const slot = this.watchers.get(path);
    if (slot) {
      slot.watcher?.close();
      if (slot.timer) clearTimeout(slot.timer);
      this.watchers.delete(path);
    }
    if (this.watchers.size === 0 && this.poll) {
      clearInterval(this.poll);
      this.poll = undefined;
    }
  }

  private pollAll(): void {
    const remoteDue = Date.now() - this.lastRemotePoll >= REMOTE_POLL_MS - 50;
    if (remoteDue) this.lastRemotePoll = Date.now();
    for (const [path, entry] of this.entries) {
      if (!entry.remote) void this.checkNow(path);
      else if (remoteDue) void this.checkRemote(path);
    }
  }

  /**
   * Asks a server store whether what the user is looking at changed: the store token (new or removed sessions) and
   * one token per watched session (newest id and count, or list length and last-entry digest), never a scan.
   */
  async checkRemote(path: string): Promise<void> {
    const entry = this.entries.get(path);
    if (!entry?.remote || this.polling.has(path)) return;
    this.polling.add(path);
    try {
      if (!(entry.db instanceof RemoteSessionSource)) {
        // Unreachable before: try again (the server may be back).
        try {
          await this.connect(entry);
          this.fire({ kind: 'state', path });
        } catch {
          /* still failing: recorded on the entry */
        }
        return;
      }
      const changes = await entry.db.pollChanges();
      if (changes.list) this.fire({ kind: 'rows', path });
    } catch (err) {
      if (this.entries.get(path) !== entry) return;
      entry.problem = errorMessage(err);
      const db = entry.db;
      entry.db = undefined;
      void db?.close();
      this.fire({ kind: 'state', path });
    } finally {
      this.polling.delete(path);
    }
  }

  /**
   * Confirms a file event with the store's change check and fires a change only when the data changed. One check per
   * file at a time (behind a long read in the worker, polls would otherwise pile up); a call during one makes it look
   * again when it ends, and resolves after that look, so a write action that awaits it fires its change in its batch.
   */
  checkNow(path: string): Promise<void> {
    const running = this.checks.get(path);
    if (running) {
      running.again = true;
      return running.done;
    }
    const check = { again: false, done: Promise.resolve() };
    check.done = (async () => {
      try {
        do {
          check.again = false;
          await this.checkOnce(path);
        } while (check.again);
      } finally {
        this.checks.delete(path);
      }
    })();
    this.checks.set(path, check);
    return check.done;
  }

  /** The change checks in flight, by path; see `checkNow`. */
  private readonly checks = new Map<string, { again: boolean; done: Promise<void> }>();

  private async checkOnce(path: string): Promise<void> {
    const entry = this.entries.get(path);
    if (!entry) return;
    if (entry.remote) return this.checkRemote(path);
    if (!existsSync(entry.path)) {
      if (entry.problem === undefined || entry.db) {
        void entry.db?.close();
        entry.db = undefined;
        entry.problem = vscode.l10n.t('{0} was deleted or moved. Close it, or restore the file and refresh.', basename(entry.path));
        this.fire({ kind: 'state', path });
      }
      return;
    }
    if (!entry.db || entry.db instanceof RemoteSessionSource) {
      // It was missing or unreadable; try again now that the file is (back) there.
      try {
        await this.connect(entry);
        this.fire({ kind: 'state', path });
      } catch {
        /* recorded on the entry */
      }
      return;
    }
    const db = entry.db;
    try {
      if ((await db.hasChanged()) && entry.db === db) this.fire({ kind: 'rows', path });
    } catch (err) {
      if (entry.db !== db) return;
      // Deleted or replaced: the connection to the old file is closed at once (it would go on reading it).
      entry.problem = errorMessage(err);
      void db.close();
      entry.db = undefined;
      this.fire({ kind: 'state', path });
      if (err instanceof SessionDatabaseError && err.problem === 'replaced') void this.offerStaleWal(entry);
    }
  }

  dispose(): void {
    for (const path of [...this.watchers.keys()]) this.stopWatching(path);
    for (const e of this.entries.values()) void e.db?.close();
    this.entries.clear();
    this.changeEmitter.dispose();
  }
}
