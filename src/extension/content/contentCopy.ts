/** The copy buttons of the conversation view (`content/copy`) and *Copy Turn as Markdown*: text read from the store. */
import type { SessionRef } from '../../shared/protocol/sessionRef';
import * as vscode from 'vscode';
import type { ContentRef, CopyPart } from '../../shared/protocol/conversation';
import { itemToMarkdown, turnToMarkdown } from '../../store/export/markdown';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { UserFacingError } from '../core/userError';
import { partText, readContent } from './sessionContent';

/** The text a copy takes, read from the store; Markdown for a turn, or for one item as it appears in a turn. */
export async function contentText(registry: DatabaseRegistry, target: SessionRef, ref: ContentRef, part: CopyPart): Promise<string> {
  if (ref.turn === null && part !== 'json') throw new UserFacingError(vscode.l10n.t('Only a turn or an item can be copied this way.'));
  const { entries } = await readContent(registry, target, ref);
  if (part === 'markdown')
    return ref.sequenceNumber === null ? turnToMarkdown(ref.turn!, entries) : entries.map(itemToMarkdown).join('\n\n');
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
export async function copyContent(registry: DatabaseRegistry, target: SessionRef, ref: ContentRef, part: CopyPart): Promise<string> {
  const text = await contentText(registry, target, ref, part);
  await vscode.env.clipboard.writeText(text);
  vscode.window.setStatusBarMessage(
    `$(copy) ${part === 'markdown' ? vscode.l10n.t('Turn copied as Markdown') : vscode.l10n.t('Copied')}`,
    2500,
  );
  return text;
}
