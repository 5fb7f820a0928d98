import { formatNumber } from './pythonJson';

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
  if (typeof v === 'number') return formatNumber(v);
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

const CLASSIFYING_KEYS = ['role', 'type', 'name', 'namespace', 'server_label'] as const;

/** A property's value as encoding stores it: `toJSON` applied, wrappers unwrapped; undefined when dropped. */
function storedValue(v: unknown, key: string): unknown {
  let value = v;
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: (k: string) => unknown }).toJSON(key);
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) value = value.valueOf();
  return typeof value === 'function' || typeof value === 'symbol' ? undefined : value;
}

/**
 * Both columns for an item, classified on the value as it will be stored. Only the keys the rules read are
 * normalised (toJSON, dropped functions and symbols), which is exact and avoids re-parsing every item on write.
 */
export function classifyItem(item: unknown): { messageType: string; toolName: string | null } {
  const top = storedValue(item, '');
  if (typeof top !== 'object' || top === null || Array.isArray(top)) return { messageType: messageTypeOf(top), toolName: null };
  const view: Record<string, unknown> = {};
  for (const key of CLASSIFYING_KEYS) {
    if (!Object.prototype.hasOwnProperty.call(top, key)) continue;
    const v = storedValue((top as Record<string, unknown>)[key], key);
    if (v !== undefined) view[key] = v;
  }
  return { messageType: messageTypeOf(view), toolName: toolNameOf(view) };
}

/** Message types `getToolUsage` counts as tool calls (spec §10.2); `tool_search_output` counts only conditionally. */
export const TOOL_CALL_MESSAGE_TYPES: readonly string[] = [
  'tool_call',
  'function_call',
  'computer_call',
  'file_search_call',
  'web_search_call',
  'code_interpreter_call',
  'tool_search_call',
  'custom_tool_call',
  'mcp_call',
  'mcp_approval_request',
];

/** The same list as an SQL `IN (...)` body (constants only, never data). */
export const TOOL_CALL_TYPES_SQL = TOOL_CALL_MESSAGE_TYPES.map((t) => `'${t}'`).join(', ');
