/**
 * Plain-text descriptions of items (stored or produced by a run) for the tree, the conversation view and the run
 * events: previews, one-line labels, tool names, tool output. Items are untrusted data from a database or a
 * model: these functions only read them and return text, which callers must insert as text.
 */

/** A plain object (not null, not an array). */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const MESSAGE_ROLES = new Set(['user', 'assistant', 'system', 'developer']);

/** A message item (user, assistant, system or developer), whose text is its `content`. */
export function isMessageItem(item: unknown): item is Record<string, unknown> & { role: string } {
  return isRecord(item) && typeof item.role === 'string' && MESSAGE_ROLES.has(item.role);
}

/** The text parts of a message's content (string, or list parts with `text`/`refusal`/`transcript`). */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (typeof part.text === 'string') parts.push(part.text);
    else if (typeof part.refusal === 'string') parts.push(`[refusal] ${part.refusal}`);
    else if (typeof part.transcript === 'string') parts.push(part.transcript);
    else if (typeof part.type === 'string') parts.push(`[${part.type.replace(/^input_|^output_/, '')}]`);
  }
  return parts.join(' ');
}

/** JSON indented by two spaces; a string that holds JSON is re-indented, any other string is returned as is. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}

/**
 * The text of a tool call's `output` as items store it: a string, a `{ text }` part, or a list of content parts;
 * anything else as JSON (compact, or indented with `pretty`; nothing at all is '' when compact).
 */
export function outputText(output: unknown, options: { pretty?: boolean } = {}): string {
  if (typeof output === 'string') return output;
  if (isRecord(output) && typeof output.text === 'string') return output.text;
  if (Array.isArray(output)) return messageText(output);
  if (options.pretty) return prettyJson(output);
  return output === undefined ? '' : (JSON.stringify(output) ?? '');
}

/**
 * A value a run returns (its final output, a tool's return value) as text: strings as they are, a `{ type: 'text' }`
 * part as its text, nothing as '', anything else (structured output) as compact JSON.
 */
export function runValueText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (isRecord(value) && value.type === 'text' && typeof value.text === 'string') return value.text;
  return JSON.stringify(value) ?? String(value);
}

/** The arguments of a tool call as the model wrote them (`arguments`, or `input` for custom tools), if text. */
export function callArguments(item: Record<string, unknown>): string | undefined {
  return typeof item.arguments === 'string' ? item.arguments : typeof item.input === 'string' ? item.input : undefined;
}

/** The name of the tool an item calls or answers: its `name`, else its `type` (a hosted tool), else 'tool'. */
export function toolName(item: unknown): string {
  const r = isRecord(item) ? item : {};
  return typeof r.name === 'string' ? r.name : typeof r.type === 'string' ? r.type : 'tool';
}

/** An item's type: its `type`, else `message` for an item with a role, else `item`. */
export function itemType(item: unknown): string {
  if (!isRecord(item)) return 'item';
  if (typeof item.type === 'string') return item.type;
  return 'role' in item ? 'message' : 'item';
}

/** Collapses whitespace and cuts to `max` code points with an ellipsis. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const points = Array.from(flat);
  return points.length > max ? points.slice(0, max - 1).join('') + '…' : flat;
}

/** A one-line preview of an item, by its kind. */
export function itemPreview(item: unknown): string {
  if (!isRecord(item)) return oneLine(JSON.stringify(item) ?? String(item));
  if (isMessageItem(item)) return oneLine(messageText(item.content));
  switch (item.type) {
    case 'function_call':
    case 'custom_tool_call':
      return oneLine(`${String(item.name ?? '')}(${readableJsonText(callArguments(item) ?? '')})`);
    case 'function_call_output':
    case 'function_call_result':
    case 'custom_tool_call_output':
    case 'computer_call_output':
    case 'computer_call_result':
      return oneLine(outputText(item.output));
    case 'reasoning': {
      const summary = Array.isArray(item.summary) ? messageText(item.summary) : '';
      return oneLine(summary || messageText(item.content) || 'reasoning');
    }
    default:
      return oneLine(typeof item.name === 'string' ? item.name : String(item.type ?? 'item'));
  }
}

/** One line per item for people: `user: "…"`, `function_call get_weather({…})`, `function_call_result get_weather: …`. */
export function itemLabel(item: unknown): string {
  const i = isRecord(item) ? item : {};
  const type = itemType(item);
  if (typeof i.role === 'string') return `${i.role}: "${itemPreview(item)}"`;
  if (type.endsWith('_result') || type.endsWith('_output'))
    return `${type}${typeof i.name === 'string' ? ` ${i.name}` : ''}: ${itemPreview(item)}`;
  return `${type} ${itemPreview(item)}`;
}

/** The display kind of a stored `message_type`: the JS SDK's result types shown like Python's outputs. */
export function displayType(type: string | null): string {
  if (type === 'function_call_result') return 'function_call_output';
  if (type === 'computer_call_result') return 'computer_call_output';
  return type ?? 'unknown';
}

/** Keys whose values are identifiers, states or binary payloads rather than text a person wrote or read. */
const NON_TEXT_KEYS = new Set(['type', 'id', 'call_id', 'callId', 'status', 'role', 'providerData', 'encrypted_content']);

/** The string leaves of a value (never its keys), skipping identifiers and data URLs (images, files). */
function stringLeaves(value: unknown, out: string[], depth = 0): void {
  if (depth > 8) return;
  if (typeof value === 'string') {
    if (value !== '' && !value.startsWith('data:')) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) stringLeaves(v, out, depth + 1);
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) if (!NON_TEXT_KEYS.has(k)) stringLeaves(v, out, depth + 1);
  }
}

/**
 * The texts search matches in a function call's arguments, a JSON text: its values (strings, and numbers as JSON
 * spells them), decoded, so `{"city": "\uc11c\uc6b8"}` (Python's `json.dumps` escapes non-ASCII) is found by 서울, and
 * never its names (`celsius` does not find `{"celsius": 22}`). Arguments that are not JSON (a model can write
 * anything) are one text, as written.
 */
export function argumentTexts(args: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return args === '' ? [] : [args];
  }
  const out: string[] = [];
  const walk = (value: unknown, depth: number): void => {
    if (depth > 16) return;
    if (typeof value === 'string') {
      if (value !== '') out.push(value);
    } else if (typeof value === 'number') out.push(JSON.stringify(value));
    else if (Array.isArray(value)) for (const v of value) walk(v, depth + 1);
    else if (isRecord(value)) for (const v of Object.values(value)) walk(v, depth + 1);
  };
  walk(parsed, 0);
  return out;
}

/**
 * A JSON text with its `\uXXXX` escapes of non-ASCII characters written as the characters (surrogate pairs joined),
 * everything else as it was: how people read arguments Python stored (`{"city": "\uc11c\uc6b8"}` reads
 * `{"city": "서울"}`). An escaped backslash before a `u` is left alone; control characters stay escaped.
 */
export function readableJsonText(text: string): string {
  if (!text.includes('\\u')) return text;
  return text.replace(/\\(\\|u([0-9a-fA-F]{4}))/g, (whole, _escape: string, hex: string | undefined) => {
    if (hex === undefined) return whole; // an escaped backslash: skip both characters
    const code = parseInt(hex, 16);
    return code < 0x80 ? whole : String.fromCharCode(code);
  });
}

/**
 * The texts of an item that search matches (spec §12 a, extended past user messages), each on its own: a message's
 * text parts (`text`, `refusal`, `transcript`; a string content as it is), a call's arguments as the model wrote them,
 * an output's text, reasoning summaries, and for other items (built-in tools) the string values of their fields.
 * Never JSON keys, ids, types or statuses, and never image or file data.
 */
export function searchableTexts(item: unknown): string[] {
  if (!isRecord(item)) return typeof item === 'string' ? [item] : [];
  const out: string[] = [];
  if (isMessageItem(item)) {
    const content = item.content;
    if (typeof content === 'string') return [content];
    if (!Array.isArray(content)) return [];
    for (const part of content) {
      if (!isRecord(part)) continue;
      for (const key of ['text', 'refusal', 'transcript'] as const) if (typeof part[key] === 'string') out.push(part[key]);
    }
    return out;
  }
  switch (item.type) {
    case 'function_call': {
      const args = callArguments(item);
      return args === undefined ? [] : argumentTexts(args);
    }
    case 'custom_tool_call': {
      // A custom tool's input is free text, not JSON: matched as written.
      const input = callArguments(item);
      return input === undefined ? [] : [input];
    }
    case 'function_call_output':
    case 'function_call_result':
    case 'custom_tool_call_output': {
      const text = outputText(item.output);
      return text === '' ? [] : [text];
    }
    case 'reasoning':
      stringLeaves(item.summary, out);
      stringLeaves(item.content, out);
      return out;
    default:
      stringLeaves(item, out);
      return out;
  }
}
