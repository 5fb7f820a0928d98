/**
 * What the compare view compares of a turn, read from its items: the user's message, the assistant's text, the tool
 * calls paired with their outputs by call id, and how many other items there are. Items are untrusted: only read.
 */
import { callArguments, isMessageItem, isRecord, messageText, outputText, toolName } from '../itemText';

export interface ToolCallContent {
  callId: string | null;
  name: string;
  arguments: string;
  output: string | null;
}

export interface TurnContent {
  turn: number;
  createdAt: string | null;
  user: string;
  assistant: string;
  tools: ToolCallContent[];
  otherItems: number;
  /**
   * The other items (system and developer messages, reasoning, anything not a call or an output): not shown, only
   * compared (`sameTurnContent`, as sorted JSON without their `id`), so two sessions' turns that differ only there
   * (another system prompt, other reasoning) are not taken for copies of one another. Kept as they are and written
   * out only when compared: a page of rows never pays for it.
   */
  others: unknown[];
  unreadable: number;
}

/** A turn's item as the reader gives it: decoded, or unreadable. */
export type TurnItem = { corrupt: false; item: unknown; createdAt: string | null } | { corrupt: true; createdAt: string | null };

const CALL_TYPES = new Set([
  'function_call',
  'custom_tool_call',
  'computer_call',
  'file_search_call',
  'web_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'local_shell_call',
  'shell_call',
  'apply_patch_call',
  'mcp_call',
  'hosted_tool_call',
]);

const isOutputType = (type: string): boolean => type.endsWith('_output') || type.endsWith('_result');

function callIdOf(item: Record<string, unknown>): string | null {
  // Python writes `call_id`; items the JS SDK kept in its own shape say `callId`.
  const id = item.call_id ?? item.callId;
  return typeof id === 'string' ? id : null;
}

/** The arguments of a call as text: what the model wrote, else the call's action or the item without its ids. */
function argumentsOf(item: Record<string, unknown>): string {
  const text = callArguments(item);
  if (text !== undefined) return text;
  const { id: _id, call_id: _c, callId: _cc, type: _t, status: _s, ...rest } = item;
  return JSON.stringify(rest.action ?? rest) ?? '';
}

/** Reads a turn's items (the user's message first) into what the compare view compares. */
export function turnContent(turn: number, items: readonly TurnItem[]): TurnContent {
  const user: string[] = [];
  const assistant: string[] = [];
  const tools: ToolCallContent[] = [];
  const byCall = new Map<string, ToolCallContent>();
  const others: unknown[] = [];
  let unreadable = 0;
  for (const entry of items) {
    if (entry.corrupt) {
      unreadable++;
      continue;
    }
    const item = entry.item;
    if (isMessageItem(item)) {
      // The turn starts at its user message; a later user message in the same turn (rare) is still the user's.
      if (item.role === 'user') user.push(messageText(item.content));
      else if (item.role === 'assistant') assistant.push(messageText(item.content));
      else others.push(item);
      continue;
    }
    if (!isRecord(item) || typeof item.type !== 'string') {
      others.push(item);
      continue;
    }
    const callId = callIdOf(item);
    if (CALL_TYPES.has(item.type)) {
      const call: ToolCallContent = { callId, name: toolName(item), arguments: argumentsOf(item), output: null };
      tools.push(call);
      if (callId) byCall.set(callId, call);
    } else if (isOutputType(item.type)) {
      const text = outputText(item.output ?? item.result ?? '');
      const call = callId ? byCall.get(callId) : undefined;
      // An output without its call in this turn (a call of an earlier turn) is shown as a call of its own.
      if (call) call.output = text;
      else tools.push({ callId, name: toolName(item), arguments: '', output: text });
    } else others.push(item);
  }
  return {
    turn,
    createdAt: items[0]?.createdAt ?? null,
    user: user.join('\n'),
    assistant: assistant.join('\n\n'),
    tools,
    otherItems: others.length,
    others,
    unreadable,
  };
}

/** An item as sorted JSON without its top-level id (two runs' items of equal content have other ids). */
function comparable(item: unknown): string {
  const rest = isRecord(item) ? Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'id')) : item;
  return (
    JSON.stringify(rest, (_k, v: unknown) =>
      isRecord(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
    ) ?? 'null'
  );
}

/** True when two turns hold the same conversation (what the content prefix of two sessions compares). */
export function sameTurnContent(a: TurnContent, b: TurnContent): boolean {
  if (a.user !== b.user || a.assistant !== b.assistant || a.tools.length !== b.tools.length) return false;
  // An unreadable item could hold anything: such a turn is never taken for a copy.
  if (a.unreadable > 0 || b.unreadable > 0) return false;
  if (a.others.length !== b.others.length || a.others.some((o, i) => comparable(o) !== comparable(b.others[i]))) return false;
  return a.tools.every((t, i) => {
    const u = b.tools[i];
    return !!u && t.name === u.name && t.arguments === u.arguments && t.output === u.output;
  });
}
