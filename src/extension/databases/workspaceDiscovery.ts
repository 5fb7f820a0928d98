import { open } from 'node:fs/promises';
import * as vscode from 'vscode';
import type { StoreClient } from '../../store/worker/storeClient';
import { Setting } from '../core/contributions';
import type { DatabaseRegistry } from './databaseRegistry';
import { affectsSetting, setting } from '../core/settings';

const SQLITE_HEADER = 'SQLite format 3\u0000';
/** At most this many files are checked per pattern, so a huge workspace cannot stall start-up. */
const MAX_FILES = 50;

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
 * registry (marked discovered, not remembered); watches for new matching files.
 */
export class WorkspaceDiscovery implements vscode.Disposable {
  private watchers: vscode.FileSystemWatcher[] = [];
  private readonly config: vscode.Disposable;

  constructor(private readonly registry: DatabaseRegistry) {
    this.config = vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsSetting(e, Setting.discoveryGlobs)) void this.scan();
    });
  }

  async scan(): Promise<string[]> {
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    const globs = setting(Setting.discoveryGlobs);
    const found: string[] = [];
    for (const glob of globs) {
      const files = await vscode.workspace.findFiles(glob, '**/node_modules/**', MAX_FILES);
      for (const uri of files) if (await this.consider(uri)) found.push(uri.fsPath);
      const watcher = vscode.workspace.createFileSystemWatcher(glob, false, true, true);
      watcher.onDidCreate((uri) => void this.consider(uri));
      this.watchers.push(watcher);
    }
    return found;
  }

  private async consider(uri: vscode.Uri): Promise<boolean> {
    if (uri.scheme !== 'file' || this.registry.get(uri.fsPath)) return false;
    if (!(await isSessionDatabase(this.registry.store, uri.fsPath))) return false;
    await this.registry.open(uri.fsPath, { discovered: true, quiet: true });
    return true;
  }

  dispose(): void {
    for (const w of this.watchers) w.dispose();
    this.config.dispose();
  }
}
