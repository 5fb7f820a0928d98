/**
 * What a copy button, *Open as JSON* or *Copy Turn as Markdown* refers to (`ContentRef`: an item, a turn or a
 * branch of one session), read again from the store: the view's copy of an item may be cut or stale, the file is not.
 */
import type { SessionRef } from '../../shared/protocol/sessionRef';
import type { ItemEntry, ItemPage } from '../../store';
import type { ContentRef, CopyPart } from '../../shared/protocol/conversation';
import { callArguments, isMessageItem, isRecord, messageText, outputText } from '../../shared/itemText';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { UserFacingError } from '../core/userError';
import * as l10n from '@vscode/l10n';

/**
 * The most items a branch's JSON document holds: VS Code keeps a whole document in memory (and tokenizes it), so a
 * million-item branch is cut here and the document says so; *Export Branch…* writes all of it.
 */
export const MAX_DOCUMENT_ITEMS = 20_000;
const BRANCH_PAGE = 1_000;

/** The items `ref` names, in sequence order; `truncated` when a branch had more than `MAX_DOCUMENT_ITEMS`. */
export interface ContentItems {
  entries: ItemEntry[];
  truncated: boolean;
}

export async function readContent(registry: DatabaseRegistry, target: SessionRef, ref: ContentRef): Promise<ContentItems> {
  const entry = registry.require(target.dbPath);
  const db = entry.db ?? fail(entry.problem ?? l10n.t('{0} cannot be read.', target.dbPath));
  if (ref.turn === null) {
    const entries: ItemEntry[] = [];
    let after: number | null = null;
    for (;;) {
      const page: ItemPage = await db.getItemsPage(target.sessionId, ref.branchId, { afterSequence: after, limit: BRANCH_PAGE });
      entries.push(...page.items);
      if (entries.length > MAX_DOCUMENT_ITEMS) return { entries: entries.slice(0, MAX_DOCUMENT_ITEMS), truncated: true };
      if (page.nextAfterSequence === null) return { entries, truncated: false };
      after = page.nextAfterSequence;
    }
  }
  const items = await db.getTurnItems(target.sessionId, ref.branchId, ref.turn);
  if (ref.sequenceNumber === null) {
    if (items.length === 0) fail(l10n.t('Turn {0} is not on branch {1} any more; refresh the view.', ref.turn, ref.branchId));
    return { entries: items, truncated: false };
  }
  const item = items.find((e) => e.sequenceNumber === ref.sequenceNumber);
  if (!item) fail(l10n.t('The item is no longer in the database; refresh the view.'));
  return { entries: [item], truncated: false };
}

function fail(message: string): never {
  throw new UserFacingError(message);
}

/** The stored item as JSON (indented); a row that does not decode as the text it holds. */
export function entryJson(entry: ItemEntry): string {
  return entry.corrupt ? (entry.raw ?? '') : (JSON.stringify(entry.item, null, 2) ?? 'null');
}

/**
 * The text of one part of an item: a message's text, a call's arguments (re-indented when they are JSON), a tool's
 * output, or the item as JSON. Undefined when the item has no such part (a copy button on it is a stale view's).
 */
export function partText(entry: ItemEntry, part: Exclude<CopyPart, 'markdown'>): string | undefined {
  if (part === 'json') return entryJson(entry);
  if (entry.corrupt) return undefined;
  const item = entry.item;
  if (!isRecord(item)) return undefined;
  switch (part) {
    case 'text':
      if (isMessageItem(item)) return messageText(item.content);
      if (item.type === 'reasoning') return messageText(item.summary) || messageText(item.content);
      return undefined;
    case 'arguments': {
      const args = callArguments(item);
      if (args === undefined) return isRecord(item.action) ? JSON.stringify(item.action, null, 2) : undefined;
      try {
        return JSON.stringify(JSON.parse(args), null, 2);
      } catch {
        return args;
      }
    }
    case 'output':
      return 'output' in item ? outputText(item.output, { pretty: true }) : undefined;
  }
}
