/** *Branch from Turn*, *Branch from Content*, *Switch Branch*, *Delete Branch* (tree menus and the palette). */
import * as vscode from 'vscode';
import { arg, argOrInput } from '../core/commandArgs';
import { plainPromptText } from '../core/iconText';
import { switchBranchItem } from '../databases/pickItems';
import { command, type CommandsOf } from '../core/commandTable';
import { sessionTarget } from '../databases/pickers';
import type { Services } from '../services';
import { UserFacingError } from '../core/userError';
import type { BranchNodeRef } from '../core/treeNodes';
import { askBranchName, createBranch, deleteBranch, switchBranch, usedBranchIds } from './branchActions';
import { suggestedBranchName } from '../../shared/branchNames';

/** Selects a branch in the tree (after it was made), expanding its session; quiet when the view is hidden. */
export async function revealBranch(s: Services, dbPath: string, sessionId: string, branchId: string): Promise<void> {
  const node: BranchNodeRef = { kind: 'branch', dbPath, sessionId, branchId };
  await s.tree.getChildren({ kind: 'session', dbPath, sessionId });
  try {
    await s.treeView.reveal(node, { select: true, focus: false, expand: false });
  } catch {
    /* the view may be hidden; the branch is there all the same */
  }
}

export function branchCommands(s: Services): CommandsOf<'branchFromTurn' | 'branchFromContent' | 'switchBranch' | 'deleteBranch'> {
  const { registry } = s;
  const sessionOrBranch = () => vscode.l10n.t('a session or branch');
  return {
    branchFromTurn: command(
      vscode.l10n.t('Branch from Turn'),
      [arg.node(() => vscode.l10n.t('a turn'), 'turn'), arg.text],
      async (node, nameArg) => {
        if (node.branchTurnNumber === null)
          throw new UserFacingError(vscode.l10n.t('Turn {0} has no branch turn number, so it cannot be branched from.', node.turn));
        const name =
          nameArg ??
          (await askBranchName(
            registry,
            node,
            suggestedBranchName(node.branchId, node.branchTurnNumber, await usedBranchIds(registry, node)),
            {
              fromBranchId: node.branchId,
              turn: node.branchTurnNumber,
            },
          ));
        if (name === undefined) return undefined;
        const id = await createBranch(registry, node, node.branchId, { turn: node.branchTurnNumber }, name);
        await revealBranch(s, node.dbPath, node.sessionId, id);
        return id;
      },
    ),
    branchFromContent: command(
      vscode.l10n.t('Branch from Content'),
      [arg.optionalNode(sessionOrBranch, 'session', 'branch'), arg.text, arg.text],
      async (node, termArg, nameArg) => {
        const picked = await sessionTarget(registry, node);
        if (!picked) return undefined;
        const { target, branchId } = picked;
        const term = await argOrInput(termArg, {
          title: vscode.l10n.t('Branch from Content'),
          prompt: plainPromptText(vscode.l10n.t("Find the first user message on '{0}' containing…", branchId)),
        });
        if (term === undefined) return undefined;
        const name = nameArg ?? (await askBranchName(registry, target, ''));
        if (name === undefined) return undefined;
        const id = await createBranch(registry, target, branchId, { content: term }, name);
        await revealBranch(s, target.dbPath, target.sessionId, id);
        return id;
      },
    ),
    switchBranch: command(
      vscode.l10n.t('Switch Branch'),
      [arg.optionalNode(sessionOrBranch, 'session', 'branch'), arg.text],
      async (nodeArg, branchArg) => {
        const picked = await sessionTarget(registry, nodeArg);
        if (!picked) return undefined;
        const { node, target } = picked;
        let branchId = node?.kind === 'branch' ? node.branchId : branchArg;
        const db = registry.require(target.dbPath).db;
        const branches = db ? await db.getBranchTree(target.sessionId) : [];
        if (branchId === undefined) {
          const current = registry.currentBranch(target.dbPath, target.sessionId);
          const pick = await vscode.window.showQuickPick(
            branches.map((b) => ({ ...switchBranchItem(b, b.branchId === current), branchId: b.branchId })),
            { title: vscode.l10n.t('Switch branch of {0}', target.sessionId) },
          );
          branchId = pick?.branchId;
          if (branchId === undefined) return undefined;
        }
        await switchBranch(registry, target, branchId);
        return branchId;
      },
    ),
    deleteBranch: command(
      vscode.l10n.t('Delete Branch'),
      [arg.node(() => vscode.l10n.t('a branch'), 'branch'), arg.flag],
      async (node, confirmed) => {
        const deleted = await deleteBranch(registry, node, node.branchId, { confirmed });
        // Its replay marks go with it (docs/replay.md): nothing can show them any more.
        if (deleted) await s.replay.forgetBranch(node.dbPath, node.sessionId, node.branchId);
        return deleted;
      },
    ),
  };
}
