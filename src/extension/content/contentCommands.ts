/**
 * Taking content out of a session without exporting it: *Open as JSON* (item, turn or branch in a read-only tab),
 * *Copy Turn as Markdown* and *Copy Item JSON*, all reading the store.
 */
import type { SessionRef } from '../../shared/protocol/sessionRef';
import * as vscode from 'vscode';
import type { ContentRef } from '../../shared/protocol/conversation';
import { arg, badArgument } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import type { Services } from '../services';
import { UserFacingError } from '../core/userError';
import { asNode } from '../core/treeNodes';
import { copyContent } from './contentCopy';
import type { JsonDocuments } from './jsonDocuments';

/** A tree node or a `{ dbPath, sessionId, branchId, turn?, sequenceNumber? }` (tests, other extensions) as a reference. */
function refOf(arg: unknown): (SessionRef & ContentRef) | undefined {
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

/** Opens an item, a turn or a branch as JSON in a read-only tab; resolves with the document's URI. */
export async function openAsJson(documents: JsonDocuments, ref: SessionRef & ContentRef): Promise<string> {
  const editor = await documents.open(ref);
  return editor.document.uri.toString();
}

export function contentCommands(s: Services): CommandsOf<'openAsJson' | 'copyTurnAsMarkdown' | 'copyItemJson'> {
  return {
    openAsJson: command(vscode.l10n.t('Open as JSON'), [arg.any], (value) =>
      openAsJson(s.jsonDocuments, refOf(value) ?? badArgument(vscode.l10n.t('Open as JSON'), vscode.l10n.t('an item, a turn or a branch'))),
    ),
    copyTurnAsMarkdown: command(vscode.l10n.t('Copy Turn as Markdown'), [arg.node(() => vscode.l10n.t('a turn'), 'turn')], (node) =>
      copyContent(s.registry, node, { branchId: node.branchId, turn: node.turn, sequenceNumber: null }, 'markdown'),
    ),
    copyItemJson: command(vscode.l10n.t('Copy Item JSON'), [arg.node(() => vscode.l10n.t('an item'), 'item')], async (node) => {
      const db = s.registry.require(node.dbPath).db ?? badArgument(vscode.l10n.t('Copy Item JSON'), vscode.l10n.t('an open database'));
      const page = await db.getItemsPage(node.sessionId, node.branchId, { afterSequence: node.sequenceNumber - 1, limit: 1 });
      const entry = page.items[0];
      if (!entry || entry.sequenceNumber !== node.sequenceNumber)
        throw new UserFacingError(vscode.l10n.t('The item is no longer in the database; refresh the view.'));
      const text = entry.corrupt ? (entry.raw ?? '') : JSON.stringify(entry.item, null, 2);
      await vscode.env.clipboard.writeText(text);
      return text;
    }),
  };
}
