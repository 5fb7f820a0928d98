import { constants, existsSync, promises as fsp, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../store';
import { Setting } from './commandIds';
import { sessionKey } from './sessionRef';
import { setting } from './settings';
import type { SqliteDriverCheck } from './sqliteDriver';
import { UserFacingError, describeError } from './userError';
import { errorMessage } from '../shared/errorMessage';

/** Why a database is open read-only. */
export type ReadOnlyReason = 'setting' | 'toggle' | 'file';

/** One database the user opened (or the workspace discovery found). */
export interface DatabaseEntry {
  readonly path: string;
  /** The user's per-database choice (undefined = follow the setting). */
  readonlyChoice: boolean | undefined;
  /** Effective: never written when true. */
  readonly: boolean;
  readonlyReason: ReadOnlyReason | undefined;
  /** The read connection (always read-only: the extension never locks the file for writing between actions). */
  db: SessionDatabase | undefined;
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
}

const STATE_KEY = 'agentSessions.openDatabases';
/** How often the change check runs besides file events (the check is one PRAGMA, microseconds). */
const POLL_MS = 1000;
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
  ) {}

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
    if (!e) throw new UserFacingError(`${path} is not open in Agent Sessions.`);
    return e;
  }

  /** Reopens the databases remembered for this workspace; problems show on their items, nothing throws. */
  async restore(): Promise<void> {
    for (const p of this.state.get<PersistedEntry[]>(STATE_KEY, [])) {
      await this.open(p.path, { readonlyChoice: p.readonly, quiet: true });
    }
  }

  /**
   * Opens (or re-opens) a database. Throws `SessionDatabaseError`/`UserFacingError` with the reason unless `quiet`,
   * in which case the problem is recorded on the entry.
   */
  async open(path: string, options: { readonlyChoice?: boolean; discovered?: boolean; quiet?: boolean } = {}): Promise<DatabaseEntry> {
    let entry = this.entries.get(path);
    if (!entry) {
      entry = {
        path,
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

  private async connect(entry: DatabaseEntry): Promise<void> {
    entry.db?.close();
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
      entry.db = await openSessionDatabase(entry.path, { readonly: true });
      entry.problem = undefined;
    } catch (err) {
      entry.problem = errorMessage(err);
      throw err;
    }
  }

  async close(path: string): Promise<void> {
    const entry = this.entries.get(path);
    if (!entry) return;
    this.stopWatching(path);
    entry.db?.close();
    this.entries.delete(path);
    await this.persist();
    this.fire({ kind: 'list' });
  }

  /** Flips the per-database read-only choice and reconnects. */
  async toggleReadOnly(path: string): Promise<DatabaseEntry> {
    const entry = this.require(path);
    if (entry.readonlyReason === 'file') {
      throw new UserFacingError(`${basename(path)} cannot be written (the file or its folder is read-only), so it stays read-only.`);
    }
    return this.open(path, { readonlyChoice: !entry.readonly });
  }

  /** Records a read failure on the database's item and tells the user once. */
  reportProblem(path: string, err: unknown): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    const message = describeError(err);
    if (entry.problem === message) return;
    entry.problem = message;
    entry.db?.close();
    entry.db = undefined;
    void vscode.window.showErrorMessage(message);
    this.fire({ kind: 'state', path });
  }

  /** Re-reads every database now (the Refresh command). */
  async refreshAll(): Promise<void> {
    for (const e of this.entries.values()) {
      try {
        await this.connect(e);
      } catch {
        /* recorded on the entry */
      }
    }
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
  async withWritableSession<T>(
    path: string,
    sessionId: string,
    branchId: string,
    fn: (s: AdvancedSQLiteSession) => Promise<T>,
  ): Promise<T> {
    const entry = this.require(path);
    if (entry.readonly) {
      throw new UserFacingError(`${basename(path)} is open read-only. Use "Toggle Read-Only" on the database to allow changes.`);
    }
    const tables = entry.db?.tables;
    if (!tables) throw new UserFacingError(entry.problem ?? `${basename(path)} could not be read.`);
    if (!tables.messageStructure || !tables.sessions) {
      throw new UserFacingError(`${basename(path)} holds plain SQLiteSession data without branch tables; it cannot be branched.`);
    }
    const session = new AdvancedSQLiteSession({ sessionId, dbPath: path, sessionsTable: tables.sessions, messagesTable: tables.messages });
    try {
      if (session.getCurrentBranchId() !== branchId) await session.switchToBranch(branchId);
      return await fn(session);
    } finally {
      session.close();
      this.checkNow(path);
    }
  }

  private persisted(): PersistedEntry[] {
    return this.state.get<PersistedEntry[]>(STATE_KEY, []);
  }

  private async persist(): Promise<void> {
    const list: PersistedEntry[] = [...this.entries.values()]
      .filter((e) => !e.discovered)
      .map((e) => (e.readonlyChoice === undefined ? { path: e.path } : { path: e.path, readonly: e.readonlyChoice }));
    await this.state.update(STATE_KEY, list);
  }

  private startWatching(entry: DatabaseEntry): void {
    if (this.watchers.has(entry.path)) return;
    const names = new Set([basename(entry.path), `${basename(entry.path)}-wal`, `${basename(entry.path)}-journal`]);
    const slot: { watcher: FSWatcher | undefined; timer: NodeJS.Timeout | undefined } = { watcher: undefined, timer: undefined };
    try {
      // The folder, not the file: the -wal file comes and goes, and a deleted or replaced file must be noticed.
      slot.watcher = watch(dirname(entry.path), { persistent: false }, (_event, filename) => {
        if (filename && !names.has(filename.toString())) return;
        if (slot.timer) clearTimeout(slot.timer);
        slot.timer = setTimeout(() => this.checkNow(entry.path), DEBOUNCE_MS);
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
    for (const path of this.entries.keys()) this.checkNow(path);
  }

  /** Confirms a file event with the store's change check and fires a change only when the data changed. */
  checkNow(path: string): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    if (!existsSync(entry.path)) {
      if (entry.problem === undefined || entry.db) {
        entry.db?.close();
        entry.db = undefined;
        entry.problem = `${basename(entry.path)} was deleted or moved. Close it, or restore the file and refresh.`;
        this.fire({ kind: 'state', path });
      }
      return;
    }
    if (!entry.db) {
      // It was missing or unreadable; try again now that the file is (back) there.
      void this.connect(entry).then(
        () => this.fire({ kind: 'state', path }),
        () => undefined,
      );
      return;
    }
    try {
      if (entry.db.hasChanged()) this.fire({ kind: 'rows', path });
    } catch (err) {
      entry.problem = errorMessage(err);
      entry.db.close();
      entry.db = undefined;
      this.fire({ kind: 'state', path });
    }
  }

  dispose(): void {
    for (const path of [...this.watchers.keys()]) this.stopWatching(path);
    for (const e of this.entries.values()) e.db?.close();
    this.entries.clear();
    this.changeEmitter.dispose();
  }
}
