/**
 * A model request's input as a span recorded it (docs/context.md, "Recorded input"), in the conventions tracers
 * write: ours and OpenTelemetry's GenAI names (`gen_ai.input.messages` as a JSON array, `gen_ai.system_instructions`,
 * `gen_ai.tool.definitions`), OpenInference's (`input.value`, `llm.input_messages.N.message.*`). The array of
 * `gen_ai.input.messages` may hold the agents SDKs' input items (what our runs and the agent-command examples write:
 * exactly what the Responses API received) or GenAI's `{role, parts}` messages; both read back as SDK items.
 */
import type { AgentInputItem } from '@openai/agents';
import { isJsShapedItem, toStoredItem } from '../format/itemShape';
import type { AttrValue, Attributes } from './otlpSpans';

/** The attributes our runs write (src/agents/runTracing.ts). */
export const INPUT_ATTRIBUTES = {
  messages: 'gen_ai.input.messages',
  instructions: 'gen_ai.system_instructions',
  tools: 'gen_ai.tool.definitions',
  /** Items left out of a recorded input bigger than `MAX_RECORDED_INPUT_CHARS` (the newest are kept). */
  cutItems: 'agent_sessions.input.cut_items',
} as const;

/**
 * The most characters of one request's recorded input (its items' JSON, instructions and tool definitions): 1 MB.
 * Bigger inputs keep their newest items and say how many older ones were cut; a context window of a million tokens is
 * about 4 MB of text, so the bound cuts only the longest contexts.
 */
export const MAX_RECORDED_INPUT_CHARS = 1_000_000;

/** The attributes that carry a recorded input: OTLP decoding lets each hold up to `MAX_RECORDED_INPUT_CHARS`. */
export const INPUT_VALUE_KEYS: ReadonlySet<string> = new Set([
  INPUT_ATTRIBUTES.messages,
  INPUT_ATTRIBUTES.instructions,
  INPUT_ATTRIBUTES.tools,
  'input.value',
]);

export interface RecordedInput {
  /** The items, as the agents SDKs shape them. */
  items: unknown[];
  instructions: string | null;
  /** Tool definitions as sent (null: not recorded). */
  tools: unknown[] | null;
  /** Items (or text) cut when it was recorded or stored. */
  cut: boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseJson(v: AttrValue | undefined): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

const asText = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/** GenAI's `{role, parts}` message → SDK items (text parts as one message; tool calls and responses as their items). */
function genAiMessageItems(m: Record<string, unknown>): unknown[] {
  const role = typeof m.role === 'string' ? m.role : 'user';
  const parts = Array.isArray(m.parts) ? m.parts : [];
  const out: unknown[] = [];
  const texts: string[] = [];
  const flush = (): void => {
    if (texts.length > 0) out.push({ role, content: texts.join('\n') });
    texts.length = 0;
  };
  for (const p of parts) {
    if (!isRecord(p)) continue;
    if (p.type === 'text') texts.push(asText(p.content));
    else if (p.type === 'tool_call') {
      flush();
      out.push({ type: 'function_call', call_id: asText(p.id), name: asText(p.name), arguments: asText(p.arguments) });
    } else if (p.type === 'tool_call_response') {
      flush();
      out.push({ type: 'function_call_output', call_id: asText(p.id), output: asText(p.response) });
    } else if (p.type === 'reasoning') {
      flush();
      out.push({ type: 'reasoning', summary: [{ type: 'summary_text', text: asText(p.content) }] });
    } else texts.push(asText(p.content ?? p));
  }
  flush();
  return out;
}

/** A Chat Completions message → SDK items (an assistant's tool calls as function calls, a tool message as output). */
function chatMessageItems(m: Record<string, unknown>): unknown[] {
  if (m.role === 'tool') return [{ type: 'function_call_output', call_id: asText(m.tool_call_id), output: asText(m.content) }];
  const out: unknown[] = [];
  if (m.content !== undefined && m.content !== null && m.content !== '') out.push({ role: m.role, content: m.content });
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    if (!isRecord(c)) continue;
    const fn = isRecord(c.function) ? c.function : {};
    out.push({ type: 'function_call', call_id: asText(c.id), name: asText(fn.name), arguments: asText(fn.arguments) });
  }
  return out;
}

/** An array of recorded messages or items, whatever convention wrote it, as SDK items. */
function itemsOf(list: unknown[]): unknown[] {
  return list.flatMap((m) => {
    if (!isRecord(m)) return typeof m === 'string' ? [{ role: 'user', content: m }] : [];
    if (Array.isArray(m.parts)) return genAiMessageItems(m);
    if (m.role === 'tool' || Array.isArray(m.tool_calls)) return chatMessageItems(m);
    return [asWireItem(m)];
  });
}

/**
 * The JS SDK keeps its own protocol items on a model span (`_input`: `function_call_result`, `callId`, parts without
 * `annotations`), not what the API received: such an item reads back as the API's (and Python's) shape, the one the
 * stored items and every other recorded input have, so the Context section compares and counts like with like.
 */
function asWireItem(m: Record<string, unknown>): unknown {
  if (!isJsShapedItem(m)) return m;
  try {
    return toStoredItem(m as unknown as AgentInputItem);
  } catch {
    return m; // an item the converter does not know is shown as it came
  }
}

/** OpenInference's flattened `llm.input_messages.N.message.{role,content,tool_calls.M.tool_call.function.*}`. */
function openInferenceMessages(a: Attributes): unknown[] | null {
  const byIndex = new Map<number, Record<string, unknown>>();
  const re = /^llm\.input_messages\.(\d+)\.message\.(.+)$/;
  for (const [key, value] of Object.entries(a)) {
    const m = re.exec(key);
    if (!m) continue;
    const i = Number(m[1]);
    const msg = byIndex.get(i) ?? {};
    byIndex.set(i, msg);
    const field = m[2]!;
    const call = /^tool_calls\.(\d+)\.tool_call\.(?:function\.)?(name|arguments|id)$/.exec(field);
    if (field === 'role' || field === 'content' || field === 'tool_call_id') msg[field] = value;
    else if (/^contents\.\d+\.message_content\.text$/.test(field)) msg.content = `${asText(msg.content)}${asText(value)}`;
    else if (call) {
      const calls = (msg.tool_calls ??= []) as Record<string, unknown>[];
      const j = Number(call[1]);
      const c = (calls[j] ??= { function: {} });
      if (call[2] === 'id') c.id = value;
      else (c.function as Record<string, unknown>)[call[2]!] = value;
    }
  }
  if (byIndex.size === 0) return null;
  return [...byIndex.entries()].sort((x, y) => x[0] - y[0]).flatMap(([, m]) => itemsOf([m]));
}

/**
 * The recorded input of a span, or null when it recorded none; `unreadable` when it holds one that does not parse
 * (a value the trace store cut to its limits, say).
 */
export function recordedInputOf(attributes: Attributes, truncated = false): RecordedInput | 'unreadable' | null {
  const cutItems = typeof attributes[INPUT_ATTRIBUTES.cutItems] === 'number' && (attributes[INPUT_ATTRIBUTES.cutItems] as number) > 0;
  const instructionsValue = attributes[INPUT_ATTRIBUTES.instructions];
  const parsedInstructions = parseJson(instructionsValue);
  // GenAI's `gen_ai.system_instructions` is an array of parts; ours (and many tracers') a plain string.
  const instructions =
    instructionsValue === undefined
      ? null
      : Array.isArray(parsedInstructions)
        ? parsedInstructions.map((p) => (isRecord(p) ? asText(p.content) : asText(p))).join('\n')
        : asText(instructionsValue);
  const toolsValue = parseJson(attributes[INPUT_ATTRIBUTES.tools]);
  const tools = Array.isArray(toolsValue) ? toolsValue : null;
  if (attributes[INPUT_ATTRIBUTES.messages] !== undefined) {
    const messages = parseJson(attributes[INPUT_ATTRIBUTES.messages]);
    if (!Array.isArray(messages)) return 'unreadable';
    return { items: itemsOf(messages), instructions, tools, cut: cutItems || truncated };
  }
  const flattened = openInferenceMessages(attributes);
  if (flattened) return { items: flattened, instructions, tools, cut: truncated };
  const value = attributes['input.value'];
  if (value === undefined) return null;
  const parsed = parseJson(value);
  if (Array.isArray(parsed)) return { items: itemsOf(parsed), instructions, tools, cut: truncated };
  if (isRecord(parsed)) {
    const list = Array.isArray(parsed.input) ? parsed.input : Array.isArray(parsed.messages) ? parsed.messages : null;
    const own = typeof parsed.instructions === 'string' ? parsed.instructions : instructions;
    const ownTools = Array.isArray(parsed.tools) ? parsed.tools : tools;
    if (list) return { items: itemsOf(list), instructions: own, tools: ownTools, cut: truncated };
    if (typeof parsed.input === 'string')
      return { items: [{ role: 'user', content: parsed.input }], instructions: own, tools: ownTools, cut: truncated };
    return 'unreadable';
  }
  // Plain text: one user message, as OpenInference's tracers write a string prompt.
  return typeof value === 'string' ? { items: [{ role: 'user', content: value }], instructions, tools, cut: truncated } : 'unreadable';
}

/**
 * A request's input as the attributes our runs record (and agent commands may send): the items' JSON array, the
 * instructions and the tool definitions, together at most `MAX_RECORDED_INPUT_CHARS`. Over the bound, the newest
 * items are kept and `agent_sessions.input.cut_items` says how many older ones were cut (the instructions first, then
 * the tools, take their share; tools that do not fit are left out).
 */
export function inputAttributes(items: readonly unknown[], instructions?: string | null, tools?: readonly unknown[] | null): Attributes {
  const attrs: Attributes = {};
  let budget = MAX_RECORDED_INPUT_CHARS;
  if (instructions) {
    const text = instructions.slice(0, budget);
    attrs[INPUT_ATTRIBUTES.instructions] = text;
    budget -= text.length;
  }
  if (tools && tools.length > 0) {
    const json = JSON.stringify(tools);
    if (json.length <= budget / 2) {
      attrs[INPUT_ATTRIBUTES.tools] = json;
      budget -= json.length;
    }
  }
  const json = items.map((i) => JSON.stringify(i) ?? 'null');
  let kept = 0;
  let size = 2;
  for (let i = json.length - 1; i >= 0; i--) {
    if (size + json[i]!.length + 1 > budget) break;
    size += json[i]!.length + 1;
    kept++;
  }
  attrs[INPUT_ATTRIBUTES.messages] = `[${json.slice(json.length - kept).join(',')}]`;
  if (kept < json.length) attrs[INPUT_ATTRIBUTES.cutItems] = json.length - kept;
  return attrs;
}
