/** Quick picks for commands run from the palette, without a tree node to act on. */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { DatabaseRegistry } from './databaseRegistry';
import type { BranchNodeRef, SessionNode } from '../core/treeNodes';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import { UserFacingError } from '../core/userError';
import { fileItem, sessionItem } from './pickItems';

/** Picks a database, then a session, with quick picks (for palette invocations without a tree node). */
export async function pickSession(registry: DatabaseRegistry): Promise<SessionRef | undefined> {
  const entries = registry.list().filter((e) => e.db);
  if (entries.length === 0) throw new UserFacingError(vscode.l10n.t('No session database is open. Run "Open Session Database…" first.'));
  const entry =
    entries.length === 1
      ? entries[0]
      : (
          await vscode.window.showQuickPick(
            entries.map((e) => ({ ...fileItem(e.path), entry: e })),
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
            sessions.map((s) => ({ ...sessionItem(s), s })),
            { title: vscode.l10n.t('Session') },
          )
        )?.s;
  return pick ? { dbPath: entry.path, sessionId: pick.sessionId } : undefined;
}

/**
 * The session a command acts on: the session or branch node it was run on, else one the user picks (undefined when
 * cancelled). `branchId` is the node's branch, else the session's current branch.
 */
export async function sessionTarget(
  registry: DatabaseRegistry,
  node: SessionNode | BranchNodeRef | undefined,
): Promise<{ node: SessionNode | BranchNodeRef | undefined; target: SessionRef; branchId: string } | undefined> {
  const target = node ?? (await pickSession(registry));
  if (!target) return undefined;
  return { node, target, branchId: node?.kind === 'branch' ? node.branchId : registry.currentBranch(target.dbPath, target.sessionId) };
}
