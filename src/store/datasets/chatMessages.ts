/**
 * Session items (the Responses API's shapes, as the SDKs store them) → the Chat Completions messages OpenAI's
 * fine-tuning files take (docs/datasets.md): user, system (also for `developer`), assistant text, an assistant's
 * function calls as `tool_calls`, their outputs as `tool` messages. What has no chat form (reasoning, built-in tool
 * calls, images) is left out and counted, so the export can say what it dropped.
 */

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; weight?: 0 | 1 }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface Converted {
  messages: ChatMessage[];
  /** Items with no chat form, by their type ("reasoning", "web_search_call", "an image in a user message", …). */
  leftOut: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text of a message's content (a string, or parts of which the text ones count); null when a part is not text. */
function textOf(content: unknown, leftOut: string[]): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const texts: string[] = [];
  for (const part of content) {
    if (!isObj(part)) continue;
    if (typeof part.text === 'string' && ['input_text', 'output_text', 'text'].includes(String(part.type))) texts.push(part.text);
    else if (part.type === 'refusal' && typeof part.refusal === 'string') texts.push(part.refusal);
    else leftOut.push(`a ${String(part.type ?? 'non-text')} part of a message`);
  }
  return texts.join('');
}

/** A function call's output as text (a string, or content parts of which the text ones count). */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
  return JSON.stringify(output ?? '');
}

/** Converts items in order; consecutive function calls become one assistant message's `tool_calls`. */
export function chatMessages(items: readonly unknown[]): Converted {
  const messages: ChatMessage[] = [];
  const leftOut: string[] = [];
  for (const item of items) {
    if (!isObj(item)) {
      leftOut.push('an item that is not an object');
      continue;
    }
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message') {
      const text = textOf(item.content, leftOut);
      if (text === null) {
        leftOut.push(`a ${String(item.role)} message without text`);
        continue;
      }
      if (item.role === 'user') messages.push({ role: 'user', content: text });
      else if (item.role === 'system' || item.role === 'developer') messages.push({ role: 'system', content: text });
      else if (item.role === 'assistant') messages.push({ role: 'assistant', content: text });
      else leftOut.push(`a message of role ${String(item.role)}`);
    } else if (type === 'function_call') {
      const call: ChatToolCall = {
        id: String(item.call_id ?? item.id ?? ''),
        type: 'function',
        function: {
          name: String(item.name ?? ''),
          arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}),
        },
      };
      const last = messages[messages.length - 1];
      if (last?.role === 'assistant' && (last.tool_calls || last.content !== null)) (last.tool_calls ??= []).push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: String(item.call_id ?? ''), content: outputText(item.output) });
    } else leftOut.push(String(type ?? 'an item without a type'));
  }
  return { messages, leftOut };
}

/**
 * Why the messages cannot stand as a conversation, or null: every tool call answered by a `tool` message (with its
 * id) before the next user or assistant message, and no `tool` message without its call.
 */
export function toolPairingProblem(messages: readonly ChatMessage[]): string | null {
  const open = new Set<string>();
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!open.delete(m.tool_call_id))
        return `a tool message for ${m.tool_call_id || 'a call without id'} that no assistant message called`;
      continue;
    }
    if (open.size > 0) return `the tool call ${[...open][0]} has no output`;
    if (m.role === 'assistant')
      for (const c of m.tool_calls ?? []) {
        if (!c.id) return 'a tool call without an id';
        open.add(c.id);
      }
  }
  return open.size > 0 ? `the tool call ${[...open][0]} has no output` : null;
}
