/** Opening, closing and refreshing session databases, and their read-only switch. */
import * as vscode from 'vscode';
import { arg, badArgument } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import type { Services } from '../services';
import { confirmRemoteWrites } from './remoteWrites';

/** Opens a session file (a path, a URI, or one the user picks); resolves with its path, undefined when cancelled. */
export async function openDatabase(s: Services, file: unknown, options?: unknown): Promise<string | undefined> {
  let path: string | undefined;
  if (file instanceof vscode.Uri) path = file.fsPath;
  else if (typeof file === 'string' && file) path = file;
  else if (file !== undefined && file !== null) badArgument(vscode.l10n.t('Open Session Database'), vscode.l10n.t('a file'));
  if (!path) {
    const picked = await vscode.window.showOpenDialog({
      title: vscode.l10n.t('Open Session Database'),
      canSelectMany: false,
      filters: { [vscode.l10n.t('Session databases')]: ['db', 'sqlite', 'sqlite3'], [vscode.l10n.t('All files')]: ['*'] },
    });
    path = picked?.[0]?.fsPath;
    if (!path) return undefined;
  }
  const readonly =
    typeof options === 'object' && options !== null && 'readonly' in options
      ? Boolean((options as { readonly: unknown }).readonly)
      : undefined;
  const entry = await s.registry.open(path, { readonlyChoice: readonly });
  try {
    await s.treeView.reveal({ kind: 'database', dbPath: entry.path }, { select: true, expand: true });
  } catch {
    /* the view is not visible */
  }
  return entry.path;
}

export function databaseCommands(s: Services): CommandsOf<'openDatabase' | 'closeDatabase' | 'refresh' | 'toggleReadOnly'> {
  const aDatabase = () => vscode.l10n.t('a database');
  return {
    openDatabase: command(vscode.l10n.t('Open Session Database'), [arg.any, arg.any], (file, options) => openDatabase(s, file, options)),
    closeDatabase: command(vscode.l10n.t('Close Database'), [arg.node(aDatabase, 'database')], (node) => s.registry.close(node.dbPath)),
    refresh: command(vscode.l10n.t('Refresh'), [], async () => {
      await s.registry.refreshAll();
      s.tree.refresh();
    }),
    toggleReadOnly: command(vscode.l10n.t('Toggle Read-Only'), [arg.node(aDatabase, 'database'), arg.flag], async (node, confirmed) => {
      const current = s.registry.require(node.dbPath);
      // Server stores are shared (often production) data: turning writes on is confirmed every time.
      if (current.remote && current.readonly && !confirmed && !(await confirmRemoteWrites(node.dbPath))) return true;
      const entry = await s.registry.toggleReadOnly(node.dbPath);
      return entry.readonly;
    }),
  };
}
