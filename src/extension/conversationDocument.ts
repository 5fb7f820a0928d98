import * as vscode from 'vscode';
import { displayType, itemPreview, messageText } from '../shared/itemText';
import type { DatabaseRegistry } from './databaseRegistry';
import { UserFacingError } from './userError';

const PAGE = 500;

/**
 * A read-only Markdown rendering of one branch, opened beside the tree: the conversation view's stand-in until the
 * webview panel lands. Database text goes into fenced blocks, never into Markdown syntax, so it cannot inject
 * links or HTML.
 */
export async function openConversationDocument(registry: DatabaseRegistry, dbPath: string, sessionId: string, branchId: string, turn?: number): Promise<vscode.TextDocument> {
  const db = registry.require(dbPath).db;
  if (!db) throw new UserFacingError(registry.get(dbPath)?.problem ?? 'The database could not be read.');
  const lines: string[] = [`# ${sessionId} · ${branchId}`, ''];
  let after: number | null = null;
  let lastTurn: number | null = null;
  let focusLine = 0;
  for (;;) {
    const page = await db.getItemsPage(sessionId, branchId, { afterSequence: after, limit: PAGE });
    for (const e of page.items) {
      if (e.userTurnNumber !== lastTurn) {
        lastTurn = e.userTurnNumber;
        if (turn !== undefined && lastTurn === turn) focusLine = lines.length;
        lines.push(`## Turn ${lastTurn ?? '?'}`, '');
      }
      const label = e.corrupt ? 'unreadable' : `${displayType(e.type)}${e.toolName ? ` · ${e.toolName}` : ''}`;
      const body = e.corrupt
        ? (e.raw ?? e.error)
        : typeof e.item === 'object' && e.item !== null && 'content' in e.item
          ? messageText((e.item as { content: unknown }).content)
          : itemPreview(e.item);
      const fence = '`'.repeat(Math.max(3, ...Array.from(body.matchAll(/`+/g), (m) => m[0].length + 1)));
      lines.push(`**${label}** (#${e.sequenceNumber})`, '', fence + 'text', body, fence, '');
    }
    if (page.nextAfterSequence === null) break;
    after = page.nextAfterSequence;
  }
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: lines.join('\n') });
  const editor = await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  const pos = new vscode.Position(focusLine, 0);
  editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.AtTop);
  return doc;
}
