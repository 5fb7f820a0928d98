/**
 * Saying how a command ended where the user will see it. A notification alone can go unseen: VS Code sends it
 * straight to the notification centre while Do Not Disturb is on, and a toast raised as a dialog or quick input closes
 * can be hidden behind the next one. So every outcome is also in the status bar for a while, and an action that made a
 * file offers to open or reveal it.
 */
import * as vscode from 'vscode';
import { outcomeStatus } from './statusLine';
import { showInformationNotice } from './notices';

/** How long an outcome stays in the status bar. */
const STATUS_MS = 15_000;

export interface OutcomeAction {
  title: string;
  run(): unknown;
}

/** A finished action: a notification with `actions`, and the same words in the status bar. */
export function announce(message: string, actions: readonly OutcomeAction[] = []): void {
  vscode.window.setStatusBarMessage(outcomeStatus('check', message), STATUS_MS);
  void showInformationNotice(message, ...actions.map((a) => a.title)).then((chosen) => {
    void actions.find((a) => a.title === chosen)?.run();
  });
}

/** A failure's words in the status bar (its notification is `reportFailure`'s). */
export function announceFailure(message: string): void {
  vscode.window.setStatusBarMessage(outcomeStatus('error', message), STATUS_MS);
}

/** Actions for a file an action wrote: open it, and show it in the Explorer (in the workspace) or the system's. */
export function fileActions(path: string): OutcomeAction[] {
  const uri = vscode.Uri.file(path);
  const inWorkspace = vscode.workspace.getWorkspaceFolder(uri) !== undefined;
  return [
    { title: vscode.l10n.t('Open'), run: () => vscode.window.showTextDocument(uri, { preview: true }) },
    {
      title: inWorkspace ? vscode.l10n.t('Reveal in Explorer View') : vscode.l10n.t('Reveal in File Manager'),
      run: () => vscode.commands.executeCommand(inWorkspace ? 'revealInExplorer' : 'revealFileInOS', uri),
    },
  ];
}
