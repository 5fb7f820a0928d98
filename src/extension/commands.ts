import { turnCountLabel } from '../shared/forkLabel';
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { askBranchName, createBranch, deleteBranch, switchBranch } from './branches/branchActions';
import { CommandId } from './core/contributions';
import type { DatabaseRegistry } from './databases/databaseRegistry';
import { registerCommand } from './core/commandTable';
import type { AgentRunner } from './runs/agentRunner';
import type { ConversationPanels } from './conversation/conversationPanel';
import type { SessionTreeProvider } from './tree/sessionTree';
import type { SessionRef } from './core/sessionRef';
import { asNode, type BranchNodeRef, type SessionNode, type TreeNode } from './tree/treeNodes';
import { UserFacingError } from './core/userError';
import { argOrInput, badArgument } from './core/commandArgs';
import { confirmRemoteWrites, registerRemoteCommands } from './databases/remoteCommands';
import { registerWhatIfCommands } from './runs/whatIfCommands';

export interface CommandDeps {
  registry: DatabaseRegistry;
  tree: SessionTreeProvider;
  treeView: vscode.TreeView<TreeNode>;
  panels: ConversationPanels;
  runner: AgentRunner;
}

/** Picks a database, then a session, with quick picks (for palette invocations without a tree node). */
export async function pickSession(registry: DatabaseRegistry): Promise<SessionRef | undefined> {
  const entries = registry.list().filter((e) => e.db);
  if (entries.length === 0) throw new UserFacingError(vscode.l10n.t('No session database is open. Run "Open Session Database…" first.'));
  const entry =
    entries.length === 1
      ? entries[0]
      : (
          await vscode.window.showQuickPick(
            entries.map((e) => ({ label: basename(e.path), description: e.path, entry: e })),
            { title: vscode.l10n.t('Database') },
          )
        )?.entry;
  if (!entry?.db) return undefined;
  const sessions = await entry.db.listSessions();
  if (sessions.length === 0) throw new UserFacingError(vscode.l10n.t('{0} has no sessions.', basename(entry.path)));
  const pick =
    sessions.length === 1
      ? sessions[0]
      : (
          await vscode.window.showQuickPick(
            sessions.map((s) => ({ label: s.sessionId, description: vscode.l10n.t('{0} items', s.messageCount), s })),
            { title: vscode.l10n.t('Session') },
          )
        )?.s;
  return pick ? { dbPath: entry.path, sessionId: pick.sessionId } : undefined;
}

/**
 * The session a command acts on: the session or branch node it was run on, else one the user picks (undefined when
 * cancelled). `branchId` is the node's branch, else the session's current branch.
 */
async function sessionTarget(
  registry: DatabaseRegistry,
  arg: unknown,
  command: string,
): Promise<{ node: SessionNode | BranchNodeRef | undefined; target: SessionRef; branchId: string } | undefined> {
  const node =
    asNode(arg, 'session', 'branch') ?? (arg === undefined ? undefined : badArgument(command, vscode.l10n.t('a session or branch')));
  const target = node ?? (await pickSession(registry));
  if (!target) return undefined;
  return { node, target, branchId: node?.kind === 'branch' ? node.branchId : registry.currentBranch(target.dbPath, target.sessionId) };
}

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const { registry, tree, treeView, panels, runner } = deps;
  registerRemoteCommands(context, registry, treeView);
  registerWhatIfCommands(context, deps, () => pickSession(registry));

  const revealBranch = async (dbPath: string, sessionId: string, branchId: string): Promise<void> => {
    const node: BranchNodeRef = { kind: 'branch', dbPath, sessionId, branchId };
    await tree.getChildren({ kind: 'session', dbPath, sessionId });
    try {
      await treeView.reveal(node, { select: true, focus: false, expand: false });
    } catch {
      /* the view may be hidden; the branch is there all the same */
    }
  };

  registerCommand(context, CommandId.openDatabase, async (arg?: unknown, options?: unknown) => {
    let path: string | undefined;
    if (arg instanceof vscode.Uri) path = arg.fsPath;
    else if (typeof arg === 'string' && arg) path = arg;
    else if (arg !== undefined && arg !== null) badArgument(vscode.l10n.t('Open Session Database'), vscode.l10n.t('a file'));
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
    const entry = await registry.open(path, { readonlyChoice: readonly });
    try {
      await treeView.reveal({ kind: 'database', dbPath: entry.path }, { select: true, expand: true });
    } catch {
      /* the view is not visible */
    }
    return entry.path;
  });

  registerCommand(context, CommandId.closeDatabase, async (arg?: unknown) => {
    const node = asNode(arg, 'database') ?? badArgument(vscode.l10n.t('Close Database'), vscode.l10n.t('a database'));
    await registry.close(node.dbPath);
  });

  registerCommand(context, CommandId.refresh, async () => {
    await registry.refreshAll();
    tree.refresh();
  });

  registerCommand(context, CommandId.toggleReadOnly, async (arg?: unknown, confirmArg?: unknown) => {
    const node = asNode(arg, 'database') ?? badArgument(vscode.l10n.t('Toggle Read-Only'), vscode.l10n.t('a database'));
    const current = registry.require(node.dbPath);
    // Server stores are shared (often production) data: turning writes on is confirmed every time.
    if (current.remote && current.readonly && confirmArg !== true && !(await confirmRemoteWrites(node.dbPath))) return true;
    const entry = await registry.toggleReadOnly(node.dbPath);
    return entry.readonly;
  });

  registerCommand(context, CommandId.branchFromTurn, async (arg?: unknown, nameArg?: unknown) => {
    const node = asNode(arg, 'turn') ?? badArgument(vscode.l10n.t('Branch from Turn'), vscode.l10n.t('a turn'));
    if (node.branchTurnNumber === null)
      throw new UserFacingError(vscode.l10n.t('Turn {0} has no branch turn number, so it cannot be branched from.', node.turn));
    const name =
      typeof nameArg === 'string'
        ? nameArg
        : await askBranchName(registry, node, `${node.branchId}-turn-${node.branchTurnNumber}`, {
            fromBranchId: node.branchId,
            turn: node.branchTurnNumber,
          });
    if (name === undefined) return undefined;
    const id = await createBranch(registry, node, node.branchId, { turn: node.branchTurnNumber }, name);
    await revealBranch(node.dbPath, node.sessionId, id);
    return id;
  });

  registerCommand(context, CommandId.branchFromContent, async (arg?: unknown, termArg?: unknown, nameArg?: unknown) => {
    const picked = await sessionTarget(registry, arg, vscode.l10n.t('Branch from Content'));
    if (!picked) return undefined;
    const { target, branchId } = picked;
    const term = await argOrInput(termArg, {
      title: vscode.l10n.t('Branch from Content'),
      prompt: vscode.l10n.t("Find the first user message on '{0}' containing…", branchId),
    });
    if (term === undefined) return undefined;
    const name = typeof nameArg === 'string' ? nameArg : await askBranchName(registry, target, '');
    if (name === undefined) return undefined;
    const id = await createBranch(registry, target, branchId, { content: term }, name);
    await revealBranch(target.dbPath, target.sessionId, id);
    return id;
  });

  registerCommand(context, CommandId.switchBranch, async (arg?: unknown, branchArg?: unknown) => {
    const picked = await sessionTarget(registry, arg, vscode.l10n.t('Switch Branch'));
    if (!picked) return undefined;
    const { node, target } = picked;
    let branchId = node?.kind === 'branch' ? node.branchId : typeof branchArg === 'string' ? branchArg : undefined;
    const db = registry.require(target.dbPath).db;
    const branches = db ? await db.getBranchTree(target.sessionId) : [];
    if (branchId === undefined) {
      const current = registry.currentBranch(target.dbPath, target.sessionId);
      const pick = await vscode.window.showQuickPick(
        branches.map((b) => ({
          label: b.branchId,
          description: [
            b.branchId === current ? vscode.l10n.t('current') : '',
            turnCountLabel(b),
            b.parentBranchId ? vscode.l10n.t('from {0} @ turn {1}', b.parentBranchId, b.forkTurn ?? '') : '',
          ]
            .filter(Boolean)
            .join(' · '),
        })),
        { title: vscode.l10n.t('Switch branch of {0}', target.sessionId) },
      );
      branchId = pick?.label;
      if (branchId === undefined) return undefined;
    }
    await switchBranch(registry, target, branchId);
    return branchId;
  });

  registerCommand(context, CommandId.deleteBranch, async (arg?: unknown, confirmArg?: unknown) => {
    const node = asNode(arg, 'branch') ?? badArgument(vscode.l10n.t('Delete Branch'), vscode.l10n.t('a branch'));
    return deleteBranch(registry, node, node.branchId, { confirmed: confirmArg === true });
  });

  registerCommand(context, CommandId.copyItemJson, async (arg?: unknown) => {
    const node = asNode(arg, 'item') ?? badArgument(vscode.l10n.t('Copy Item JSON'), vscode.l10n.t('an item'));
    const db = registry.require(node.dbPath).db ?? badArgument(vscode.l10n.t('Copy Item JSON'), vscode.l10n.t('an open database'));
    const page = await db.getItemsPage(node.sessionId, node.branchId, { afterSequence: node.sequenceNumber - 1, limit: 1 });
    const entry = page.items[0];
    if (!entry || entry.sequenceNumber !== node.sequenceNumber)
      throw new UserFacingError(vscode.l10n.t('The item is no longer in the database; refresh the view.'));
    const text = entry.corrupt ? (entry.raw ?? '') : JSON.stringify(entry.item, null, 2);
    await vscode.env.clipboard.writeText(text);
    return text;
  });

  const openView = async (arg?: unknown): Promise<unknown> => {
    const node =
      asNode(arg, 'session', 'branch', 'turn', 'item') ??
      (arg === undefined
        ? undefined
        : badArgument(vscode.l10n.t('Open Conversation View'), vscode.l10n.t('a session, branch, turn or item')));
    const target = node ?? (await pickSession(registry));
    if (!target) return undefined;
    const branchId = node && 'branchId' in node ? node.branchId : registry.currentBranch(target.dbPath, target.sessionId);
    const turn = node && 'turn' in node ? node.turn : undefined;
    const db = registry.require(target.dbPath);
    if (!db.db) throw new UserFacingError(db.problem ?? vscode.l10n.t('{0} cannot be read.', basename(target.dbPath)));
    panels.open({ dbPath: target.dbPath, sessionId: target.sessionId, branchId, turn });
    return true;
  };
  registerCommand(context, CommandId.openConversationView, openView);
  registerCommand(context, CommandId.setApiKey, async (arg?: unknown) => {
    const key = await argOrInput(arg, {
      title: vscode.l10n.t('Agent Sessions: API key'),
      prompt: vscode.l10n.t('Stored in VS Code secret storage, never in settings. Leave empty to remove the stored key.'),
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return false;
    await runner.setApiKey(key);
    void vscode.window.showInformationMessage(
      key.trim() ? vscode.l10n.t('API key stored in secret storage.') : vscode.l10n.t('Stored API key removed.'),
    );
    return true;
  });

  registerCommand(context, CommandId.sendMessage, async (arg?: unknown, inputArg?: unknown) => {
    const picked = await sessionTarget(registry, arg, vscode.l10n.t('Send Message to Branch'));
    if (!picked) return undefined;
    const { target, branchId } = picked;
    const input = await argOrInput(inputArg, {
      title: vscode.l10n.t('Message to {0} · {1}', target.sessionId, branchId),
      prompt: vscode.l10n.t('The agent continues this branch.'),
      ignoreFocusOut: true,
    });
    if (input === undefined) return undefined;
    // The run streams into the conversation view of the session.
    const panel = panels.open({ dbPath: target.dbPath, sessionId: target.sessionId, branchId });
    await panels.whenReady(panel);
    const outcome = await panel.startRun(branchId, input).outcome;
    if (outcome.kind === 'run/failed') void vscode.window.showErrorMessage(`${outcome.message} ${outcome.written.summary}`);
    return outcome;
  });

  registerCommand(context, CommandId.revealInConversationView, (arg?: unknown) => {
    if (!asNode(arg, 'turn', 'item')) badArgument(vscode.l10n.t('Reveal in Conversation View'), vscode.l10n.t('a turn or item'));
    return openView(arg);
  });
}
