import * as vscode from 'vscode';
import { CommandId } from '../core/contributions';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { TreeNode } from '../core/treeNodes';
import { sessionStatusText } from './statusBarText';

/** Shows the active database, session and branch (from the tree selection); clicking switches the branch. */
export class SessionStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentSessions.active', vscode.StatusBarAlignment.Left, 50);
  private active: { dbPath: string; sessionId?: string } | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly registry: DatabaseRegistry,
    treeView: vscode.TreeView<TreeNode>,
  ) {
    this.item.name = vscode.l10n.t('Agent Sessions');
    this.subscriptions.push(
      treeView.onDidChangeSelection((e) => {
        const node = e.selection[0];
        if (node)
          this.active = {
            dbPath: node.dbPath,
            sessionId: node.kind === 'database' || node.kind === 'moreSessions' ? undefined : node.sessionId,
          };
        this.update();
      }),
      registry.onDidChange(() => this.update()),
    );
    this.update();
  }

  /** The text shown (for tests). */
  get text(): string {
    return this.item.text;
  }

  private update(): void {
    if (this.active && !this.registry.get(this.active.dbPath)) this.active = undefined;
    const first = this.registry.list()[0];
    const active = this.active ?? (first ? { dbPath: first.path } : undefined);
    if (!active) {
      this.item.hide();
      return;
    }
    const entry = this.registry.get(active.dbPath);
    const session = active.sessionId
      ? { sessionId: active.sessionId, branchId: this.registry.currentBranch(active.dbPath, active.sessionId) }
      : undefined;
    this.item.text = sessionStatusText({
      dbPath: active.dbPath,
      problem: !!entry?.problem,
      readonly: !!entry?.readonly,
      ...(session ? { session } : {}),
    });
    this.item.tooltip = [
      entry?.readonly ? vscode.l10n.t('{0} (read-only)', active.dbPath) : active.dbPath,
      ...(active.sessionId
        ? [vscode.l10n.t('Session {0}, branch {1}', active.sessionId, session?.branchId ?? ''), vscode.l10n.t('Click to switch branch')]
        : []),
    ].join('\n');
    this.item.command = active.sessionId
      ? {
          title: vscode.l10n.t('Switch Branch'),
          command: CommandId.switchBranch,
          arguments: [{ kind: 'session', dbPath: active.dbPath, sessionId: active.sessionId }],
        }
      : undefined;
    this.item.show();
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
    this.item.dispose();
  }
}
