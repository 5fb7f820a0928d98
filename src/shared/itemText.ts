/**
 * Short, plain-text descriptions of stored items for the tree and the conversation view. Items are untrusted data
 * from a database: these functions only read them and return text, which callers must insert as text.
 */

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text parts of a message's content (string, or list parts with `text`/`refusal`/`transcript`). */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const part of content) {
    if (!isObj(part)) continue;
    if (typeof part.text === 'string') parts.push(part.text);
    else if (typeof part.refusal === 'string') parts.push(`[refusal] ${part.refusal}`);
    else if (typeof part.transcript === 'string') parts.push(part.transcript);
    else if (typeof part.type === 'string') parts.push(`[${part.type.replace(/^input_|^output_/, '')}]`);
  }
  return parts.join(' ');
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (isObj(output) && typeof output.text === 'string') return output.text;
  if (Array.isArray(output)) return messageText(output);
  return output === undefined ? '' : JSON.stringify(output) ?? '';
}

/** Collapses whitespace and cuts to `max` code points with an ellipsis. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const points = Array.from(flat);
  return points.length > max ? points.slice(0, max - 1).join('') + '…' : flat;
}

/** A one-line preview of an item, by its kind. */
export function itemPreview(item: unknown): string {
  if (!isObj(item)) return oneLine(JSON.stringify(item) ?? String(item));
  if (item.role === 'user' || item.role === 'assistant' || item.role === 'system' || item.role === 'developer') {
    return oneLine(messageText(item.content));
  }
  switch (item.type) {
    case 'function_call':
    case 'custom_tool_call':
      return oneLine(`${String(item.name ?? '')}(${typeof item.arguments === 'string' ? item.arguments : typeof item.input === 'string' ? item.input : ''})`);
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

/** The display kind of a stored `message_type`: the JS SDK's result types shown like Python's outputs. */
export function displayType(type: string | null): string {
  if (type === 'function_call_result') return 'function_call_output';
  if (type === 'computer_call_result') return 'computer_call_output';
  return type ?? 'unknown';
}
