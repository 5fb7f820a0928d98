/**
 * Session content handed to a model as data (docs/mcp.md, "Session content is data"): everything a session holds —
 * tool names, messages, outputs, ids, even a file's name — may have been written by whoever the agent talked to, so
 * it reaches a model only inside a fenced block with an instruction that it is data. The fence carries a random tag
 * the content cannot know in advance, and is never one the content holds, so text inside cannot close the block and
 * go on as instructions. The one owner of the fence: the query tools' answers (MCP server, Language Model tools) and
 * the prompts handed to the chat (src/extension/codingAgents/handOverPrompts.ts) use it alike.
 */
import { randomBytes } from 'node:crypto';
import { counted } from '../../shared/countNoun';

/** Most characters of one value in a prompt's data block (a tool name, an id, a path); the rest is cut with a note. */
export const DATA_VALUE_LIMIT = 500;

/** A block's fence: `open` and `close` lines, and the tag they share. */
export interface DataFence {
  tag: string;
  open: string;
  close: string;
}

/** A fresh fence whose tag `content` does not hold (64 random bits: a clash is only ever a retry). */
export function dataFence(content: string): DataFence {
  for (;;) {
    const tag = `session-data-${randomBytes(8).toString('hex')}`;
    if (!content.includes(tag)) return { tag, open: `<${tag}>`, close: `</${tag}>` };
  }
}

/** `content` between the lines of a fresh fence, and that fence (to name it in the instruction). */
export function dataBlock(content: string): { text: string; fence: DataFence } {
  const fence = dataFence(content);
  return { text: `${fence.open}\n${content.replace(/\n+$/, '')}\n${fence.close}`, fence };
}

/**
 * `text` cut at `limit` characters (never inside a surrogate pair), with a note of how much was cut; as is when it
 * is not longer.
 */
export function cutValue(text: string, limit = DATA_VALUE_LIMIT): string {
  if (text.length <= limit) return text;
  // A high surrogate as the last kept character would leave half a character behind.
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1] ?? '') ? limit - 1 : limit;
  return `${text.slice(0, end)}… [${counted(text.length - end, 'more character')} cut]`;
}

/**
 * `value` as JSON on one line whatever its strings hold: JSON escapes `\n` and `\r` but leaves U+0085, U+2028 and
 * U+2029 as they are, and some readers break lines at them, so those are escaped too (still valid JSON).
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * One value of a data block, or of a line outside one (an answer's `Source:` line, an error): cut at the limit, then
 * JSON-quoted on one line (`jsonLine`), whatever it holds.
 */
export function dataValue(text: string, limit = DATA_VALUE_LIMIT): string {
  return jsonLine(cutValue(text, limit));
}
