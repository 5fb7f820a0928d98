/** *Open Conversation View* and *Reveal in Conversation View* (tree, palette, search hits). */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { arg } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import { pickSession } from '../databases/pickers';
import type { Services } from '../services';
import { UserFacingError } from '../core/userError';
import type { TreeNode } from '../core/treeNodes';

type ViewNode = Extract<TreeNode, { kind: 'session' | 'branch' | 'turn' | 'item' }>;

/** Opens the view of a node's session at its branch and turn, or of a session the user picks. */
async function openView(s: Services, node: ViewNode | undefined): Promise<boolean | undefined> {
  const target = node ?? (await pickSession(s.registry));
  if (!target) return undefined;
  const branchId = node && 'branchId' in node ? node.branchId : s.registry.currentBranch(target.dbPath, target.sessionId);
  const turn = node && 'turn' in node ? node.turn : undefined;
  const db = s.registry.require(target.dbPath);
  if (!db.db) throw new UserFacingError(db.problem ?? vscode.l10n.t('{0} cannot be read.', basename(target.dbPath)));
  s.panels.open({ dbPath: target.dbPath, sessionId: target.sessionId, branchId, turn });
  return true;
}

export function conversationCommands(s: Services): CommandsOf<'openConversationView' | 'revealInConversationView'> {
  return {
    openConversationView: command(
      vscode.l10n.t('Open Conversation View'),
      [arg.optionalNode(() => vscode.l10n.t('a session, branch, turn or item'), 'session', 'branch', 'turn', 'item')],
      (node) => openView(s, node),
    ),
    revealInConversationView: command(
      vscode.l10n.t('Reveal in Conversation View'),
      [arg.node(() => vscode.l10n.t('a turn or item'), 'turn', 'item')],
      (node) => openView(s, node),
    ),
  };
}
