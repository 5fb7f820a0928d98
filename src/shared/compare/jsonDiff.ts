/**
 * Structural diffs of JSON (a tool call's arguments) for the compare view: jsondiffpatch computes the delta, and this
 * turns its delta format into a flat list of changes by path (`city`, `stops[2].name`) that the view shows as text.
 */
import { create, type Delta } from 'jsondiffpatch';
import type { JsonChange } from '../protocol/compareViews';

// Array items are matched by their content, so an inserted item reads as one insertion, not as every later item
// changed. Values are JSON from a model: strings, numbers, plain objects and arrays.
const differ = create({
  objectHash: (item: object) => JSON.stringify(item),
  arrays: { detectMove: true, includeValueOnMove: false },
});

/** At most this many changes are listed for one call; the rest are summed up in one entry. */
export const MAX_JSON_CHANGES = 50;

const compact = (v: unknown): string => JSON.stringify(v) ?? 'undefined';

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function childPath(path: string, key: string, inArray: boolean): string {
  if (inArray) return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The changes from `before` to `after`, two JSON texts. Texts that are not JSON are compared as whole values; equal
 * JSON with other spacing has no changes.
 */
export function diffJsonText(before: string, after: string): JsonChange[] {
  const b = parse(before);
  const a = parse(after);
  if (!b.ok || !a.ok) return before === after ? [] : [{ path: '', kind: 'changed', before, after }];
  const delta = differ.diff(b.value, a.value);
  const out: JsonChange[] = [];
  if (delta !== undefined) walk(delta, '', out);
  if (out.length > MAX_JSON_CHANGES) {
    const rest = out.length - MAX_JSON_CHANGES + 1;
    out.length = MAX_JSON_CHANGES - 1;
    out.push({ path: '…', kind: 'changed', after: `${rest} more changes` });
  }
  return out;
}

/** Walks a jsondiffpatch delta (docs/deltas.md of jsondiffpatch) into changes. */
function walk(delta: Delta, path: string, out: JsonChange[]): void {
  if (Array.isArray(delta)) {
    // [new] added · [old, new] changed · [old, 0, 0] removed · ['', to, 3] moved (text diffs, [d, 0, 2], are off).
    if (delta.length === 1) out.push({ path, kind: 'added', after: compact(delta[0]) });
    else if (delta.length === 2) out.push({ path, kind: 'changed', before: compact(delta[0]), after: compact(delta[1]) });
    else if (delta[2] === 0) out.push({ path, kind: 'removed', before: compact(delta[0]) });
    else if (delta[2] === 3) out.push({ path, kind: 'moved', after: `to ${String(delta[1])}` });
    return;
  }
  if (typeof delta !== 'object' || delta === null) return;
  const record = delta as Record<string, Delta>;
  const inArray = (record as Record<string, unknown>)._t === 'a';
  for (const key of Object.keys(record)) {
    if (key === '_t') continue;
    // In an array delta, `_3` names index 3 of the old array (removals and moves), `3` index 3 of the new one.
    const name = inArray && key.startsWith('_') ? key.slice(1) : key;
    walk(record[key] as Delta, childPath(path, name, inArray), out);
  }
}
