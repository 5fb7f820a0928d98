/**
 * Structural diffs of JSON (a tool call's arguments) for the compare view: jsondiffpatch computes the delta, and this
 * turns its delta format into a flat list of changes by path (`city`, `stops[2].name`) that the view shows as text.
 */
import { create, type Delta } from 'jsondiffpatch';
import type { JsonChange } from '../protocol/compareViews';
import { argumentsKey, JsonNumber, parseArguments } from './toolArguments';

/** A canonical text of a converted value: keys sorted at every depth, so key order is not a difference. */
function canonicalText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalText(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// Array items are matched by their content, so an inserted item reads as one insertion, not as every later item
// changed. The hash is of the canonical form: the same item with its keys in another order is the same item.
const differ = create({
  objectHash: (item: object) => canonicalText(item),
  arrays: { detectMove: true, includeValueOnMove: false },
});

/** At most this many changes are listed for one call; the rest are summed up in one entry. */
export const MAX_JSON_CHANGES = 50;

/**
 * Arguments longer than this (both texts together) are not diffed by structure but shown as replaced, as text diffs
 * are past theirs: jsondiffpatch matches arrays by longest common subsequence, whose time and memory grow with the
 * product of the arrays' lengths (two 60 KB arrays of numbers took 28 s and 1.2 GB; at this bound, about 50 ms), and the host diffs every matched
 * call of a page synchronously.
 */
export const MAX_JSON_DIFF_CHARS = 4_000;

/**
 * Numbers are compared by their exact value, not as `JSON.parse` rounds them (`12345678901234567890` and `…891` are
 * one double): the reader of tool arguments keeps each number's text, and here a number becomes a string marked by
 * `NUMBER` holding its canonical value, so jsondiffpatch compares it exactly; a string that happens to start with the
 * mark is marked as a string, so no string can pass for a number.
 */
const NUMBER = '\u0000n';
const STRING = '\u0000s';

/** A parsed value as jsondiffpatch compares it; `shown` gets how each number is shown, as written the first time. */
function toComparable(value: unknown, shown: Map<string, string>): unknown {
  if (value instanceof JsonNumber) {
    if (!shown.has(value.canonical)) shown.set(value.canonical, value.shown());
    return NUMBER + value.canonical;
  }
  if (typeof value === 'number') return toComparable(new JsonNumber(String(value)), shown);
  if (typeof value === 'string') return value.startsWith('\u0000') ? STRING + value : value;
  if (Array.isArray(value)) return value.map((v) => toComparable(v, shown));
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    // A plain object, `__proto__` being an own key as in the text (the reader gives objects without a prototype).
    return Object.fromEntries(Object.keys(record).map((k) => [k, toComparable(record[k], shown)]));
  }
  return value;
}

function parse(text: string, shown: Map<string, string>): { ok: true; value: unknown } | { ok: false } {
  const parsed = parseArguments(text);
  return parsed.json ? { ok: true, value: toComparable(parsed.value, shown) } : { ok: false };
}

/** A converted value as JSON text, numbers as written. */
function display(v: unknown, shown: Map<string, string>): string {
  if (typeof v === 'string') {
    if (v.startsWith(NUMBER)) {
      const canonical = v.slice(NUMBER.length);
      return shown.get(canonical) ?? canonical;
    }
    return JSON.stringify(v.startsWith(STRING) ? v.slice(STRING.length) : v);
  }
  if (Array.isArray(v)) return `[${v.map((x) => display(x, shown)).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const record = v as Record<string, unknown>;
    return `{${Object.keys(record)
      .map((k) => `${JSON.stringify(k)}:${display(record[k], shown)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
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
  const replaced: JsonChange[] = before === after ? [] : [{ path: '', kind: 'changed', before, after }];
  // Past the bound, equal values (other spacing or key order) are still no change: comparing them is linear.
  if (before.length + after.length > MAX_JSON_DIFF_CHARS)
    return argumentsKey(parseArguments(before)) === argumentsKey(parseArguments(after)) ? [] : replaced;
  const shown = new Map<string, string>();
  const b = parse(before, shown);
  const a = parse(after, shown);
  if (!b.ok || !a.ok) return replaced;
  const delta = differ.diff(b.value, a.value);
  const out: JsonChange[] = [];
  if (delta !== undefined) walk(delta, '', out, (v) => display(v, shown));
  if (out.length > MAX_JSON_CHANGES) {
    const rest = out.length - MAX_JSON_CHANGES + 1;
    out.length = MAX_JSON_CHANGES - 1;
    out.push({ path: '…', kind: 'changed', after: `${rest} more changes` });
  }
  return out;
}

/** Walks a jsondiffpatch delta (docs/deltas.md of jsondiffpatch) into changes. */
function walk(delta: Delta, path: string, out: JsonChange[], compact: (v: unknown) => string): void {
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
  // `_t: 'a'` marks an array delta; elsewhere `_t` is an object's own key (a changed key's delta is an array, never
  // the string 'a'), and its change is listed like any other.
  const inArray = (record as Record<string, unknown>)._t === 'a';
  for (const key of Object.keys(record)) {
    if (inArray && key === '_t') continue;
    // In an array delta, `_3` names index 3 of the old array (removals and moves), `3` index 3 of the new one.
    const name = inArray && key.startsWith('_') ? key.slice(1) : key;
    walk(record[key] as Delta, childPath(path, name, inArray), out, compact);
  }
}
