/**
 * The user turn a what-if run sends again: the stored user message of the turn it retries, as the runner takes it,
 * optionally with its text edited. A message with content parts (images, files) is re-sent with the same parts, not
 * flattened to its text, so the retry asks the model the same question.
 */
import type { AgentInputItem } from '@openai/agents';
import { fromStoredItems } from '../store';
import { isMessageItem, isRecord, messageText } from '../shared/itemText';
import type { RunInput } from './runOptions';

/** The first user message among a turn's stored items, or undefined (turn 0, or an unreadable row). */
export function userMessageOf(items: readonly unknown[]): (Record<string, unknown> & { role: string }) | undefined {
  return items.find((i): i is Record<string, unknown> & { role: string } => isMessageItem(i) && i.role === 'user');
}

/** The text of a stored user message, as an editor shows it. */
export function userMessageText(item: Record<string, unknown>): string {
  return messageText(item.content);
}

const TEXT_PARTS = new Set(['input_text', 'text', 'output_text']);

/**
 * The run input that sends `stored` (a user message as the file holds it) again; with `editedText`, its text parts
 * replaced by that text (one part where the first text part was; other parts, such as images, kept in order).
 * A message whose content is a string goes as plain text, exactly as the composer sends it; one with content parts
 * as one item in the SDK's shape, parts as they were.
 * The stored item's `id` is not sent: it names the original message, and the retry is a new one.
 */
export function whatIfInput(stored: Record<string, unknown>, editedText?: string): RunInput {
  const content = stored.content;
  if (typeof content === 'string' || !Array.isArray(content)) return editedText ?? messageText(content);
  let parts: unknown[] = content;
  if (editedText !== undefined) {
    parts = [];
    let placed = false;
    for (const part of content) {
      if (isRecord(part) && TEXT_PARTS.has(String(part.type))) {
        if (!placed) parts.push({ type: 'input_text', text: editedText });
        placed = true;
      } else parts.push(part);
    }
    if (!placed) parts.unshift({ type: 'input_text', text: editedText });
  }
  const { id: _id, ...rest } = stored;
  return fromStoredItems([{ ...rest, content: parts }]) as AgentInputItem[];
}
