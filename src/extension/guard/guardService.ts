/**
 * The history guard in the extension (docs/history-guard.md): the guard store in the global storage, the files the
 * user guards (`agentSessions.historyGuard.files`), a look at a guarded file in the store worker after every change
 * the registry confirms (the live refresh's own event: a look costs what an append added, docs/history-guard.md
 * "Performance"), the layers, and *Restore as Branch* through a worker session.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { Setting } from '../core/contributions';
import { affectsSetting, setting, updateUserSetting } from '../core/settings';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { GUARD_LIMITS, type GuardDiskUse, type GuardLayer } from '../../store/guard/guardStore';
import { layerEntries, type LayerEntry } from '../../store/guard/layerEntries';
import { GUARD_LOOK_DELAY_MS } from '../../store/guard/guardedFiles';
import type { GuardLook } from '../../store/guard/guardObserver';
import { HistoryGuardError } from '../../store/guard/guardErrors';
import { errorMessage } from '../../shared/errorMessage';
import { guardStoreForRunsIs, setGuardStoreForRuns } from './runGuardStore';
import { showWarningNotice } from '../core/notices';

export class GuardService implements vscode.Disposable {
  readonly path: string;
  private readonly subscriptions: vscode.Disposable[] = [];
  /** The look under way per file, and whether another change came while it ran (one more look follows). */
  private readonly running = new Map<string, Promise<GuardLook | undefined>>();
  private readonly again = new Set<string>();
  /** The looks waiting for `GUARD_LOOK_DELAY_MS`, per file. */
  private readonly waiting = new Map<string, ReturnType<typeof setTimeout>>();
  /** Why the guard is off (a read-only place, a foreign file at the store's path), or undefined. */
  problem: string | undefined;
  private warned = false;
  private readonly layersChanged = new vscode.EventEmitter<{ dbPath: string; sessionId: string }>();
  /** A look recorded layers of a session: its conversation views read its layers again. */
  readonly onDidChangeLayers = this.layersChanged.event;

  constructor(
    private readonly registry: DatabaseRegistry,
    /** The extension's global storage folder. */
    private readonly folder: string,
    private readonly log: (line: string) => void,
  ) {
    this.path = join(folder, 'history-guard.db');
    setGuardStoreForRuns({ folder, path: this.path });
    this.subscriptions.push(
      registry.onDidChange((change) => {
        if ((change.kind === 'rows' || change.kind === 'state') && this.isGuarded(change.path)) this.lookSoon(change.path);
        if (change.kind === 'list') for (const p of this.guardedFiles()) if (this.registry.get(p)?.db) void this.look(p);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsSetting(e, Setting.historyGuardFiles))
          for (const p of this.guardedFiles()) if (this.registry.get(p)?.db) void this.look(p);
      }),
    );
    for (const p of this.guardedFiles()) if (this.registry.get(p)?.db) void this.look(p);
  }

  /** The guarded files' absolute paths, from the setting (entries that are not text are ignored). */
  guardedFiles(): string[] {
    const value = setting(Setting.historyGuardFiles);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v !== '').map((v) => resolve(v)) : [];
  }

  isGuarded(path: string): boolean {
    return this.guardedFiles().includes(resolve(path));
  }

  /** Turns the guard on for `path` (the user's settings) and takes its first look; what that look did. */
  async guard(path: string): Promise<GuardLook | undefined> {
    if (!this.isGuarded(path)) await this.updateFiles([...this.guardedFiles(), resolve(path)]);
    return this.look(path);
  }

  /** Turns the guard off for `path`; its layers stay readable. */
  async stop(path: string): Promise<void> {
    await this.updateFiles(this.guardedFiles().filter((p) => p !== resolve(path)));
    await this.registry.store.fileCall('stopLookingAt', path);
  }

  private async updateFiles(files: string[]): Promise<void> {
    await updateUserSetting(Setting.historyGuardFiles, files.length > 0 ? files : undefined);
  }

  /**
   * A look at a guarded file in the store worker, one at a time per file: a change that comes while one runs makes one
   * more look after it. A failure turns the guard off for the window and says why once (a read-only place).
   */
  look(path: string): Promise<GuardLook | undefined> {
    const under = this.running.get(path);
    if (under) {
      this.again.add(path);
      return under;
    }
    const run = (async (): Promise<GuardLook | undefined> => {
      try {
        mkdirSync(this.folder, { recursive: true });
        const look = await this.registry.store.fileCall('lookAtGuardedFile', path, this.path);
        this.problem = undefined;
        for (const sessionId of new Set(look.layers.map((l) => l.sessionId))) this.layersChanged.fire({ dbPath: path, sessionId });
        if (look.layers.length > 0)
          this.log(
            `History guard: ${look.layers.length} layer(s) recorded for ${path} (${look.layers.map((l) => `${l.sessionId}/${l.branchId}: ${l.removedCount} removed`).join(', ')}).`,
          );
        // A branch past the layer bound is not a layer: said here, as the look goes on guarding the rest of the file.
        for (const k of look.skipped ?? [])
          this.log(
            `History guard: ${k.sessionId}/${k.branchId} in ${path} lost ${k.removedCount} of ${k.itemCount} items; a layer keeps at most ${GUARD_LIMITS.itemsPerLayer}, so none was recorded (the items stay in the guard store).`,
          );
        if (look.anotherFile)
          this.log(
            `History guard: ${path} is another file than the one last seen there; the old file's list was kept as layers, marked replaced.`,
          );
        return look;
      } catch (err) {
        this.problem = errorMessage(err);
        this.log(`History guard: ${this.problem}`);
        if (!this.warned && err instanceof HistoryGuardError) {
          this.warned = true;
          void showWarningNotice(vscode.l10n.t('The history guard is off: {0}', this.problem));
        }
        return undefined;
      } finally {
        this.running.delete(path);
        if (this.again.delete(path)) void this.look(path);
      }
    })();
    this.running.set(path, run);
    return run;
  }

  /** A look at `path` once `GUARD_LOOK_DELAY_MS` passed (the live refresh's reads go first); one per file while it waits. */
  private lookSoon(path: string): void {
    if (this.waiting.has(path)) return;
    this.waiting.set(
      path,
      setTimeout(() => {
        this.waiting.delete(path);
        void this.look(path);
      }, GUARD_LOOK_DELAY_MS),
    );
  }

  /** The layers of a session (one branch with `branchId`), newest first. */
  layers(path: string, sessionId: string, branchId?: string): Promise<GuardLayer[]> {
    return this.registry.store.fileCall('guardLayers', this.path, path, sessionId, branchId);
  }

  /** Layer `layerId` (`HistoryGuardError('unknown-layer')` when there is none). */
  layer(layerId: number): Promise<GuardLayer> {
    return this.registry.store.fileCall('guardLayer', this.path, layerId);
  }

  /**
   * A layer's first `GUARD_LIMITS.layerItemsShown` items as entries (turns counted in the layer), and whether it holds
   * more: what the conversation view and the compare view read (a restore reads all).
   */
  async layerEntries(layer: GuardLayer): Promise<{ entries: LayerEntry[]; truncated: boolean }> {
    const items = await this.registry.store.fileCall('guardLayerItems', this.path, layer.layerId, GUARD_LIMITS.layerItemsShown);
    return { entries: layerEntries(items), truncated: layer.itemCount > items.length };
  }

  /** What the guard store holds (null while none exists). */
  diskUse(): Promise<GuardDiskUse | null> {
    return this.registry.store.fileCall('guardDiskUse', this.path);
  }

  /**
   * Writes layer `layerId`'s items as the new branch `branchName` of `path`'s session, through a session in the store
   * worker (its write waits for another writer's lock there); the new branch's id.
   */
  async restore(path: string, layer: GuardLayer, branchName: string): Promise<string> {
    const items = await this.registry.store.fileCall('guardLayerItems', this.path, layer.layerId);
    const tables = this.registry.get(path)?.db?.tables;
    const session = await this.registry.store.openSession({
      sessionId: layer.sessionId,
      dbPath: path,
      ...(tables ? { sessionsTable: tables.sessions ?? undefined, messagesTable: tables.messages } : {}),
    });
    try {
      return await session.restoreBranch(
        items.map((i) => i.messageData),
        branchName,
      );
    } finally {
      await session.close();
      await this.registry.checkNow(path);
    }
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    this.layersChanged.dispose();
    if (guardStoreForRunsIs(this.path)) setGuardStoreForRuns(undefined);
  }
}
