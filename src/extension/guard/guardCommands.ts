/**
 * The history guard's commands (docs/history-guard.md): *Guard History of This File*, *Stop Guarding History*, and
 * *Show History Layers…*, which lists a session's layers ("before compaction at …") and restores the chosen one as a
 * new ordinary branch, then compares it with the branch as it is now (the compare view). Arguments let tests skip the
 * dialogs: `{ layerId, branchName, compare }`.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { arg } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import { asNode } from '../core/treeNodes';
import { UserFacingError } from '../core/userError';
import { pickSession } from '../databases/pickers';
import { fileItem } from '../databases/pickItems';
import { plainIconText } from '../core/iconText';
import type { Services } from '../services';
import { branchNameProblem } from '../../shared/branchNames';
import type { GuardLayer } from '../../store/guard/guardStore';
import type { GuardLook } from '../../store/guard/guardObserver';
import { showInformationNotice, showWarningNotice } from '../core/notices';

/** The file a command is for: the database, session or branch node it ran on, else the only or chosen open file. */
async function fileOf(s: Services, node: unknown): Promise<string | undefined> {
  const n = asNode(node, 'database', 'session', 'branch');
  if (n) return n.dbPath;
  const files = s.registry.list().filter((e) => e.db && !e.remote);
  if (files.length === 0) throw new UserFacingError(vscode.l10n.t('No session database is open. Run "Open Session Database…" first.'));
  if (files.length === 1) return files[0]!.path;
  return (
    await vscode.window.showQuickPick(
      files.map((e) => ({ ...fileItem(e.path), path: e.path })),
      { title: vscode.l10n.t('Database') },
    )
  )?.path;
}

function size(bytes: number | null): string {
  if (bytes === null) return '0 B';
  return bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

async function guardHistory(s: Services, node: unknown): Promise<GuardLook | undefined> {
  const path = await fileOf(s, node);
  if (!path) return undefined;
  if (s.registry.get(path)?.remote) throw new UserFacingError(vscode.l10n.t('The history guard follows session files, not server stores.'));
  const look = await s.guard.guard(path);
  if (!look) throw new UserFacingError(vscode.l10n.t('The history guard is off: {0}', s.guard.problem ?? ''));
  const use = await s.guard.diskUse();
  void showInformationNotice(
    vscode.l10n.t(
      'The history guard now keeps every item of {0} it sees ({1} items in {2}, {3}). It cannot see items written and removed while nothing watched the file.',
      basename(path),
      use?.items ?? 0,
      s.guard.path,
      size(use?.fileBytes ?? null),
    ),
  );
  return look;
}

async function stopGuarding(s: Services, node: unknown): Promise<void> {
  const path = await fileOf(s, node);
  if (!path) return;
  await s.guard.stop(path);
  void showInformationNotice(
    vscode.l10n.t('The history guard no longer watches {0}. The layers it recorded stay readable.', basename(path)),
  );
}

function layerLabel(l: GuardLayer): string {
  const at = new Date(l.noticedMs).toLocaleString();
  return plainIconText(
    l.cause === 'our-compaction'
      ? vscode.l10n.t('{0}: before compaction at {1}', l.branchId, at)
      : vscode.l10n.t('{0}: before items were removed at {1}', l.branchId, at),
  );
}

function layerDetail(l: GuardLayer): string {
  const parts = [
    l.cause === 'our-compaction' ? vscode.l10n.t('removed by our compaction') : vscode.l10n.t('removed by another writer'),
    vscode.l10n.t('{0} of {1} items removed', l.removedCount, l.itemCount),
  ];
  if (l.oldIdentity) parts.push(vscode.l10n.t('taken from the file that was at this path before it was replaced'));
  return parts.join(' · ');
}

interface LayerOptions {
  layerId?: unknown;
  branchName?: unknown;
  compare?: unknown;
}

/**
 * *Restore as Branch* of `layer` into `dbPath`'s session: asks the new branch's name (unless `givenName`), restores,
 * says so; the new branch's id, undefined when the user cancelled.
 */
export async function restoreLayer(s: Services, dbPath: string, layer: GuardLayer, givenName?: string): Promise<string | undefined> {
  // A layer of the file that was at this path before it was replaced goes into the file there now only when asked.
  if (layer.oldIdentity) {
    const go = vscode.l10n.t('Restore into This File');
    const answer = await showWarningNotice(
      vscode.l10n.t(
        'This layer was taken from the file that was at {0} before it was replaced. Restore its {1} items into the file there now?',
        basename(dbPath),
        layer.itemCount,
      ),
      { modal: true },
      go,
    );
    if (answer !== go) return undefined;
  }
  const used = new Set((await s.registry.get(dbPath)?.db?.usedBranchIds(layer.sessionId)) ?? []);
  const name =
    givenName !== undefined
      ? givenName
      : await vscode.window.showInputBox({
          title: vscode.l10n.t('Restore as Branch'),
          prompt: vscode.l10n.t('A new branch gets the layer’s {0} items; nothing else in the file changes.', layer.itemCount),
          value: `before-compaction-${layer.layerId}`,
          validateInput: (v) => branchNameProblem(v, used),
        });
  if (name === undefined) return undefined;
  const problem = branchNameProblem(name, used);
  if (problem) throw new UserFacingError(problem);
  const branchId = await s.guard.restore(dbPath, layer, name);
  void showInformationNotice(vscode.l10n.t('Restored {0} items of the layer as branch {1}.', layer.itemCount, branchId));
  return branchId;
}

/** *Show History Layers…*: a layer, then *Restore as Branch* and the comparison; the restored branch's id. */
async function showLayers(s: Services, node: unknown, options: unknown): Promise<string | undefined> {
  const given = (options ?? {}) as LayerOptions;
  const n = asNode(node, 'session', 'branch');
  const target = n ?? (await pickSession(s.registry));
  if (!target) return undefined;
  const layers = await s.guard.layers(target.dbPath, target.sessionId, n?.kind === 'branch' ? n.branchId : undefined);
  if (layers.length === 0) {
    const why = s.guard.problem
      ? vscode.l10n.t('The history guard is off: {0}', s.guard.problem)
      : s.guard.isGuarded(target.dbPath)
        ? vscode.l10n.t('Nothing was removed from session {0} while the guard watched it.', target.sessionId)
        : vscode.l10n.t(
            'Session {0} has no history layers: its file is not guarded, and our compaction did not run on it.',
            target.sessionId,
          );
    void showInformationNotice(why);
    return undefined;
  }
  const layer =
    typeof given.layerId === 'number'
      ? layers.find((l) => l.layerId === given.layerId)
      : (
          await vscode.window.showQuickPick(
            layers.map((l) => ({ label: layerLabel(l), detail: layerDetail(l), layer: l })),
            { title: vscode.l10n.t('History layers of session {0}', target.sessionId), matchOnDetail: true },
          )
        )?.layer;
  if (!layer) {
    if (given.layerId !== undefined)
      throw new UserFacingError(vscode.l10n.t('Session {0} has no layer {1}.', target.sessionId, String(given.layerId)));
    return undefined;
  }
  const branchId = await restoreLayer(s, target.dbPath, layer, typeof given.branchName === 'string' ? given.branchName : undefined);
  if (branchId === undefined) return undefined;
  if (given.compare !== false) {
    s.compare.open([
      { dbPath: target.dbPath, sessionId: target.sessionId, branchId },
      { dbPath: target.dbPath, sessionId: target.sessionId, branchId: layer.branchId },
    ]);
  }
  return branchId;
}

export function guardCommands(s: Services): CommandsOf<'guardHistory' | 'stopGuardingHistory' | 'showHistoryLayers'> {
  return {
    guardHistory: command(vscode.l10n.t('Guard History of This File'), [arg.any], (node) => guardHistory(s, node)),
    stopGuardingHistory: command(vscode.l10n.t('Stop Guarding History'), [arg.any], (node) => stopGuarding(s, node)),
    showHistoryLayers: command(vscode.l10n.t('Show History Layers'), [arg.any, arg.any], (node, options) => showLayers(s, node, options)),
  };
}
