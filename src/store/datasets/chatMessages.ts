/**
 * Session items (the Responses API's shapes, as the SDKs store them) → the Chat Completions messages OpenAI's
 * fine-tuning files take (docs/datasets.md): user, system (also for `developer`), assistant text, an assistant's
 * function calls as `tool_calls`, their outputs as `tool` messages. What has no chat form (reasoning, built-in tool
 * calls, images) is left out and counted, so the export can say what it dropped. Items in the JS SDK's protocol shape
 * (`callId`, `function_call_result`: what earlier versions of this store wrote) are read as the store reads them.
 */
import type { AgentInputItem } from '@openai/agents';
import { toStoredItem } from '../format/itemShape';

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
  /** What has no chat form, by its type ("reasoning", "web_search_call", "a input_image part of a message", …). */
  leftOut: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);

/**
 * Tool messages whose output held parts but no text: a tool message cannot be left out (it answers its call), and
 * written empty it would say the tool returned nothing. Marked on the message itself, as a converted turn's messages
 * are shared by every record whose context holds it; `emptiedOutputProblem` finds them in a record.
 */
const EMPTIED_OUTPUTS = new WeakSet<ChatMessage>();

/**
 * The text of content parts (those of text; a refusal is the assistant's text too), the others counted in `leftOut`
 * as parts of `of`; null when no text is left. Parts are joined by a line break: they are separate blocks, and joined
 * with nothing "Translate to French:" and "Good morning." would run together.
 */
function partsText(parts: readonly unknown[], leftOut: string[], of: string): string | null {
  const texts: string[] = [];
  for (const part of parts) {
    if (isObj(part) && typeof part.text === 'string' && TEXT_PARTS.has(String(part.type))) texts.push(part.text);
    else if (isObj(part) && part.type === 'refusal' && typeof part.refusal === 'string') texts.push(part.refusal);
    else leftOut.push(`a ${isObj(part) ? String(part.type ?? 'non-text') : 'non-text'} part of ${of}`);
  }
  const text = texts.filter((t) => t !== '').join('\n');
  return text === '' ? null : text;
}

/** The text of a message's content (a string, or parts of which the text ones count); null when it has none. */
function textOf(content: unknown, leftOut: string[]): string | null {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? partsText(content, leftOut, 'a message') : null;
}

/** A function call's output as text (a string, or content parts of which the text ones count); null when parts hold none. */
function outputText(output: unknown, leftOut: string[]): string | null {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return partsText(output, leftOut, 'a tool output');
  return JSON.stringify(output ?? '');
}

/** Converts items in order; consecutive function calls become one assistant message's `tool_calls`. */
export function chatMessages(items: readonly unknown[]): Converted {
  const messages: ChatMessage[] = [];
  const leftOut: string[] = [];
  for (const stored of items) {
    // The JS SDK's shape (`callId`, `function_call_result`, its content parts) as the Responses shape, as the store
    // converts it (items already in that shape come back as they are).
    const item = isObj(stored) ? (toStoredItem(stored as unknown as AgentInputItem) as unknown) : stored;
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
      const before = leftOut.length;
      const text = outputText(item.output, leftOut);
      const message: ChatMessage = { role: 'tool', tool_call_id: String(item.call_id ?? ''), content: text ?? '' };
      // Empty because its parts were left out, not because the tool said nothing.
      if (text === null && leftOut.length > before) EMPTIED_OUTPUTS.add(message);
      messages.push(message);
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

/**
 * Why a record's messages cannot be written because a tool output left no text (its images and other parts have no
 * chat form), or null. Such a record is skipped rather than written with an empty output its answer did not come from.
 */
export function emptiedOutputProblem(messages: readonly ChatMessage[]): string | null {
  const emptied = messages.find((m) => EMPTIED_OUTPUTS.has(m));
  return emptied?.role === 'tool'
    ? `the output of tool call ${emptied.tool_call_id || 'without id'} has no text (images and other parts with no chat form are left out)`
    : null;
}
