/**
 * Taking content out of a session without exporting it: *Open as JSON* (item, turn or branch in a read-only tab),
 * *Copy Turn as Markdown*, and the copy buttons of the conversation view (`content/copy`), all reading the store.
 */
import * as vscode from 'vscode';
import type { ContentRef, CopyPart } from '../../shared/protocol/conversation';
import { itemToMarkdown, turnToMarkdown } from '../../store/export/markdown';
import { badArgument } from '../core/commandArgs';
import { CommandId } from '../core/contributions';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import type { JsonDocuments } from './jsonDocuments';
import { registerCommand } from '../core/commandTable';
import { partText, readContent, type ContentTarget } from './sessionContent';
import { asNode } from '../tree/treeNodes';
import { UserFacingError } from '../core/userError';

/** The text a copy takes, read from the store; Markdown for a turn, or for one item as it appears in a turn. */
export async function contentText(registry: DatabaseRegistry, target: ContentTarget, ref: ContentRef, part: CopyPart): Promise<string> {
  if (ref.turn === null && part !== 'json') throw new UserFacingError(vscode.l10n.t('Only a turn or an item can be copied this way.'));
  const { entries } = await readContent(registry, target, ref);
  if (part === 'markdown') return ref.sequenceNumber === null ? turnToMarkdown(ref.turn!, entries) : entries.map(itemToMarkdown).join('\n');
  const texts = entries.map((e) => partText(e, part));
  if (texts.some((t) => t === undefined))
    throw new UserFacingError(
      part === 'arguments'
        ? vscode.l10n.t('This item has no arguments to copy; refresh the view.')
        : part === 'output'
          ? vscode.l10n.t('This item has no output to copy; refresh the view.')
          : vscode.l10n.t('This item has no text to copy; refresh the view.'),
    );
  return texts.join('\n\n');
}

/** Copies and says so in the status bar (a notification for every copy would be noise). */
export async function copyContent(registry: DatabaseRegistry, target: ContentTarget, ref: ContentRef, part: CopyPart): Promise<string> {
  const text = await contentText(registry, target, ref, part);
  await vscode.env.clipboard.writeText(text);
  vscode.window.setStatusBarMessage(
    `$(copy) ${part === 'markdown' ? vscode.l10n.t('Turn copied as Markdown') : vscode.l10n.t('Copied')}`,
    2500,
  );
  return text;
}

/** A tree node or a `{ dbPath, sessionId, branchId, turn?, sequenceNumber? }` (tests, other extensions) as a reference. */
function refOf(arg: unknown): (ContentTarget & ContentRef) | undefined {
  const node = asNode(arg, 'branch', 'turn', 'item');
  if (!node) return undefined;
  return {
    dbPath: node.dbPath,
    sessionId: node.sessionId,
    branchId: node.branchId,
    turn: node.kind === 'branch' ? null : node.turn,
    sequenceNumber: node.kind === 'item' ? node.sequenceNumber : null,
  };
}

export function registerContentCommands(context: vscode.ExtensionContext, registry: DatabaseRegistry, documents: JsonDocuments): void {
  registerCommand(context, CommandId.openAsJson, async (arg?: unknown) => {
    const ref = refOf(arg) ?? badArgument(vscode.l10n.t('Open as JSON'), vscode.l10n.t('an item, a turn or a branch'));
    const editor = await documents.open(ref);
    return editor.document.uri.toString();
  });
  registerCommand(context, CommandId.copyTurnAsMarkdown, async (arg?: unknown) => {
    const node = asNode(arg, 'turn') ?? badArgument(vscode.l10n.t('Copy Turn as Markdown'), vscode.l10n.t('a turn'));
    const ref = { branchId: node.branchId, turn: node.turn, sequenceNumber: null };
    return copyContent(registry, node, ref, 'markdown');
  });
}
