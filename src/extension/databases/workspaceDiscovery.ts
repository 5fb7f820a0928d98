import { open, stat } from 'node:fs/promises';
import * as vscode from 'vscode';
import type { StoreClient } from '../../store/worker/storeClient';
import { isDefaultBackupPath } from '../../store/doctor/backupName';
import { Setting } from '../core/contributions';
import type { DatabaseRegistry } from './databaseRegistry';
import { affectsSetting, setting } from '../core/settings';
import { foldersToSearch, globInsideFolder, worthSearching } from './discoveryScope';

const SQLITE_HEADER = 'SQLite format 3\u0000';
/** At most this many files are checked per pattern, so a huge workspace cannot stall start-up. */
const MAX_FILES = 50;
/** Folder creations are gathered this long, so a burst (an unpacked archive) costs one search, not one per folder. */
const FOLDER_BURST_MS = 300;
/** What discovery never searches (installs create many folders there and hold no sessions of the user). */
const EXCLUDE = '**/node_modules/**';

async function looksLikeSqlite(path: string): Promise<boolean> {
  try {
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(16);
      await fh.read(buf, 0, 16, 0);
      return buf.toString('latin1') === SQLITE_HEADER;
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}

/** Whether a file holds session tables (default or custom names), checked read-only in the store worker. */
export async function isSessionDatabase(store: StoreClient, path: string): Promise<boolean> {
  if (!(await looksLikeSqlite(path))) return false;
  try {
    const db = await store.openDatabase(path, { readonly: true, busyTimeoutMs: 200 });
    await db.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds session databases in the workspace by the `agentSessions.discoveryGlobs` setting and adds them to the
 * registry (marked discovered, not remembered); watches for new matching files and for new folders (whose files
 * the watcher does not report: see `discoveryScope.ts`); *Refresh* searches again (`registry.refreshAll`).
 */
export class WorkspaceDiscovery implements vscode.Disposable {
  private watchers: vscode.FileSystemWatcher[] = [];
  private readonly config: vscode.Disposable;
  private readonly refreshStep: vscode.Disposable;
  private readonly folderWatcher: vscode.FileSystemWatcher;
  private newFolders: vscode.Uri[] = [];
  private folderTimer: NodeJS.Timeout | undefined;

  constructor(private readonly registry: DatabaseRegistry) {
    this.config = vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsSetting(e, Setting.discoveryGlobs)) void this.scan();
    });
    // Refresh is where a user goes when a file did not appear: it must look again, not only re-read what is open.
    this.refreshStep = registry.addRefreshStep(() => this.scan());
    // Every creation, files too: the event does not say which it was, so the handler asks the file system.
    this.folderWatcher = vscode.workspace.createFileSystemWatcher('**/*', false, true, true);
    this.folderWatcher.onDidCreate((uri) => void this.folderCreated(uri));
  }

  async scan(): Promise<string[]> {
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    const globs = setting(Setting.discoveryGlobs);
    const found: string[] = [];
    for (const glob of globs) {
      const files = await vscode.workspace.findFiles(glob, EXCLUDE, MAX_FILES);
      for (const uri of files) if (await this.consider(uri)) found.push(uri.fsPath);
      const watcher = vscode.workspace.createFileSystemWatcher(glob, false, true, true);
      watcher.onDidCreate((uri) => void this.consider(uri));
      this.watchers.push(watcher);
    }
    return found;
  }

  private async folderCreated(uri: vscode.Uri): Promise<void> {
    if (uri.scheme !== 'file' || !worthSearching(vscode.workspace.asRelativePath(uri, false))) return;
    try {
      if (!(await stat(uri.fsPath)).isDirectory()) return;
    } catch {
      return; // gone already
    }
    this.newFolders.push(uri);
    this.folderTimer ??= setTimeout(() => {
      this.folderTimer = undefined;
      const folders = this.newFolders;
      this.newFolders = [];
      void this.searchFolders(folders);
    }, FOLDER_BURST_MS);
  }

  /** Searches new folders for the discovery globs (the whole workspace when a glob or the burst calls for it). */
  private async searchFolders(folders: vscode.Uri[]): Promise<void> {
    const kept = foldersToSearch(folders, (f) => vscode.workspace.asRelativePath(f, true));
    for (const glob of setting(Setting.discoveryGlobs)) {
      const inside = globInsideFolder(glob);
      const patterns: vscode.GlobPattern[] = kept && inside !== undefined ? kept.map((f) => new vscode.RelativePattern(f, inside)) : [glob];
      for (const pattern of patterns) {
        try {
          for (const uri of await vscode.workspace.findFiles(pattern, EXCLUDE, MAX_FILES)) await this.consider(uri);
        } catch {
          /* the folder went away while searched: nothing to add */
        }
      }
    }
  }

  private async consider(uri: vscode.Uri): Promise<boolean> {
    if (uri.scheme !== 'file' || this.registry.get(uri.fsPath) || this.registry.isDismissed(uri.fsPath)) return false;
    // The doctor's backups are whole session files beside the one repaired: listing each would crowd the view with
    // copies of it (the user opens one on purpose, with Open Session Database).
    if (isDefaultBackupPath(uri.fsPath)) return false;
    if (!(await isSessionDatabase(this.registry.store, uri.fsPath))) return false;
    await this.registry.open(uri.fsPath, { discovered: true, quiet: true });
    return true;
  }

  dispose(): void {
    for (const w of this.watchers) w.dispose();
    this.folderWatcher.dispose();
    if (this.folderTimer) clearTimeout(this.folderTimer);
    this.refreshStep.dispose();
    this.config.dispose();
  }
}
