/**
 * The branch actions, written once for both callers: the tree commands (commands.ts) and the conversation view's
 * requests (conversationPanel.ts). Each checks its input, writes through a short-lived session
 * (`registry.withWritableSession`) and moves the extension's current branch; the callers only add their own UI
 * (input boxes and the tree for commands; a panel's view selects the branch itself when the request returns).
 */
import * as vscode from 'vscode';
import { branchNameProblem } from '../../shared/branchNames';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import { UserFacingError } from '../core/userError';
import { plainPromptText } from '../core/iconText';
import { announce } from '../core/outcomes';
import { showWarningNotice } from '../core/notices';

/** Every branch id the session ever used: a new branch may not take any of them (empty when the file is unreadable). */
export async function usedBranchIds(registry: DatabaseRegistry, ref: SessionRef): Promise<Set<string>> {
  const db = registry.require(ref.dbPath).db;
  return new Set(db ? await db.usedBranchIds(ref.sessionId) : []);
}

/** Asks for a new branch name, validated as it is typed against every name the session ever used; undefined when cancelled. */
export async function askBranchName(
  registry: DatabaseRegistry,
  ref: SessionRef,
  suggestion: string,
  fork?: { fromBranchId: string; turn: number },
): Promise<string | undefined> {
  const used = await usedBranchIds(registry, ref);
  return vscode.window.showInputBox({
    title: vscode.l10n.t('New branch name'),
    // Branching "from turn 2" forks *before* it: say what the branch keeps before it is made.
    prompt: plainPromptText(
      fork
        ? `${vscode.l10n.t('Session {0}', ref.sessionId)} · ${sharedTurnsText(fork.fromBranchId, fork.turn - 1)}`
        : vscode.l10n.t('Session {0}', ref.sessionId),
    ),
    value: suggestion,
    validateInput: (value) => branchNameProblem(value, used),
  });
}

/**
 * Creates a branch from `fromBranchId`, either at a branch turn number or at the first user message containing a
 * text, after checking the name; makes it the current branch. Returns its id.
 */
export async function createBranch(
  registry: DatabaseRegistry,
  ref: SessionRef,
  fromBranchId: string,
  at: { turn: number } | { content: string },
  name: string,
): Promise<string> {
  const problem = branchNameProblem(name, await usedBranchIds(registry, ref));
  if (problem) throw new UserFacingError(problem);
  const branchId = await registry.batch(async () => {
    const id = await registry.withWritableSession(ref.dbPath, ref.sessionId, fromBranchId, (s) =>
      'turn' in at ? s.createBranchFromTurn(at.turn, name) : s.createBranchFromContent(at.content, name),
    );
    registry.setCurrentBranch(ref.dbPath, ref.sessionId, id);
    return id;
  });
  // The new branch holds only what it shares (its own turns come with the next run): say which turns those are.
  const created = (await registry.get(ref.dbPath)?.db?.getBranchTree(ref.sessionId))?.find((b) => b.branchId === branchId);
  // "Current" is this extension's pointer (the composer and Send Message continue it), not the file's: an agent's own
  // session keeps the branch it is on. Say both, since the new branch became current without being asked.
  if (created)
    announce(
      [
        vscode.l10n.t("Created branch '{0}'.", branchId),
        sharedTurnsText(fromBranchId, created.userTurns),
        vscode.l10n.t(
          'It is now the current branch here (what the composer and Send Message continue); an agent running on this file stays on its own branch.',
        ),
      ].join(' '),
    );
  return branchId;
}

/** What a branch forked from `fromBranchId` keeps of it: its first `shared` turns, and where its own turns start. */
export function sharedTurnsText(fromBranchId: string, shared: number): string {
  if (shared <= 0) return vscode.l10n.t("It shares no turns with '{0}': the next message is its turn 1.", fromBranchId);
  if (shared === 1) return vscode.l10n.t("It shares turn 1 with '{0}': the next message is its turn 2.", fromBranchId);
  return vscode.l10n.t("It shares turns 1–{0} with '{1}': the next message is its turn {2}.", shared, fromBranchId, shared + 1);
}

/** Makes an existing branch the extension's current branch of the session (nothing is written to the file). */
export async function switchBranch(registry: DatabaseRegistry, ref: SessionRef, branchId: string): Promise<void> {
  const db = registry.require(ref.dbPath).db;
  const branches = db ? await db.getBranchTree(ref.sessionId) : [];
  if (!branches.some((b) => b.branchId === branchId))
    throw new UserFacingError(vscode.l10n.t("Branch '{0}' does not exist in session {1}.", branchId, ref.sessionId));
  registry.setCurrentBranch(ref.dbPath, ref.sessionId, branchId);
}

/**
 * Deletes a branch after the user confirms in a modal dialog (unless `confirmed`); `main` is refused. Returns false
 * when the user declined. The current branch moves to `main` if it was the deleted one.
 */
export async function deleteBranch(
  registry: DatabaseRegistry,
  ref: SessionRef,
  branchId: string,
  options: { confirmed?: boolean } = {},
): Promise<boolean> {
  if (branchId === 'main') throw new UserFacingError(vscode.l10n.t("The 'main' branch cannot be deleted."));
  if (!options.confirmed) {
    const deleteLabel = vscode.l10n.t('Delete');
    const answer = await showWarningNotice(
      vscode.l10n.t("Delete branch '{0}' of session {1}?", branchId, ref.sessionId),
      {
        modal: true,
        detail: vscode.l10n.t(
          'Its items and usage rows are removed (items shared with other branches stay). Its name stays reserved. This cannot be undone.',
        ),
      },
      deleteLabel,
    );
    if (answer !== deleteLabel) return false;
  }
  // A fresh session instance is on 'main', so the branch is never its current one and no pointer move is needed.
  await registry.batch(async () => {
    await registry.withWritableSession(ref.dbPath, ref.sessionId, 'main', (s) => s.deleteBranch(branchId));
    if (registry.currentBranch(ref.dbPath, ref.sessionId) === branchId) registry.setCurrentBranch(ref.dbPath, ref.sessionId, 'main');
  });
  return true;
}
