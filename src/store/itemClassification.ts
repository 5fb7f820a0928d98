/**
 * The `message_type` and `tool_name` columns computed for each stored item (spec §6), by the same rules Python
 * applies, so a file holds the same `message_structure` rows whichever SDK wrote it.
 */

/** Python truthiness of a JSON value: present and not null, false, 0, "", [] or {}. */
export function pythonTruthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '') return false;
  if (typeof v === 'number') return v !== 0; // NaN is truthy in Python
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** Python's `str()` of the scalar kinds that occur in SDK items. */
export function pythonStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(v);
  return JSON.stringify(v) ?? String(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether `key` is present in the item as stored (an `undefined` property is dropped by encoding). */
function has(item: Record<string, unknown>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(item, key) && item[key] !== undefined;
}

/** `message_type` of a stored item. Only `user` starts a turn. */
export function messageTypeOf(item: unknown): string {
  if (!isPlainObject(item)) return 'other';
  if (item.role === 'user') return 'user';
  if (item.role === 'assistant') return 'assistant';
  if (pythonTruthy(item.type)) return pythonStr(item.type);
  return 'other';
}

const SELF_NAMED_TOOLS = new Set(['computer_call', 'file_search_call', 'web_search_call', 'code_interpreter_call']);

/** `tool_name` of a stored item, or null. */
export function toolNameOf(item: unknown): string | null {
  if (!isPlainObject(item)) return null;
  const t = item.type;
  if ((t === 'mcp_call' || t === 'mcp_approval_request') && has(item, 'server_label')) {
    const label = item.server_label;
    const name = item.name;
    if (pythonTruthy(label) && pythonTruthy(name)) return `${pythonStr(label)}.${pythonStr(name)}`;
    if (pythonTruthy(label)) return pythonStr(label);
    if (pythonTruthy(name)) return pythonStr(name);
    return null;
  }
  if (t === 'tool_search_call' || t === 'tool_search_output') return 'tool_search';
  if (typeof t === 'string' && SELF_NAMED_TOOLS.has(t)) return t;
  if (has(item, 'name')) {
    if (item.name === null) return null;
    const n = pythonStr(item.name);
    const ns = item.namespace === undefined || item.namespace === null ? '' : pythonStr(item.namespace);
    if (n !== '' && ns !== '') return n === ns ? n : `${ns}.${n}`;
    return n;
  }
  return null;
}

/** Both columns for an item, classifying the value as it will be stored (after `toJSON`). */
export function classifyItem(item: unknown): { messageType: string; toolName: string | null } {
  const stored =
    typeof item === 'object' && item !== null && typeof (item as { toJSON?: unknown }).toJSON === 'function'
      ? (JSON.parse(JSON.stringify(item)) as unknown)
      : item;
  return { messageType: messageTypeOf(stored), toolName: toolNameOf(stored) };
}
