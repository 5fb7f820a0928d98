/**
 * Tool arguments compared as JSON values, not as text: the model may write the same arguments with other key order,
 * spacing or number spelling (`1.0`, `1e0`), and a recorded call must still match. Arguments that are not valid JSON
 * are compared as text, and said so.
 */

export type ParsedArguments = { json: true; canonical: string; value: unknown } | { json: false; text: string };

/** Object keys sorted at every depth; numbers as JavaScript spells them (so `1.0` and `1` are one value). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value as Record<string, unknown>).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function parseArguments(text: string): ParsedArguments {
  try {
    const value: unknown = JSON.parse(text);
    return { json: true, canonical: canonical(value), value };
  } catch {
    return { json: false, text };
  }
}

/** A key two arguments are compared by: equal keys, equal arguments. */
export function argumentsKey(parsed: ParsedArguments): string {
  return parsed.json ? `j${parsed.canonical}` : `t${parsed.text}`;
}

const MAX_DIFF_LINES = 8;
const MAX_VALUE_CHARS = 80;

function short(value: unknown): string {
  const text = value === undefined ? '(absent)' : canonical(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/**
 * One line per difference between recorded and new arguments (`city: "Paris" → "Lisbon"`), top-level keys and, inside
 * objects, dotted paths; at most 8 lines. Text arguments differ as a whole.
 */
export function argumentDiff(recorded: ParsedArguments, actual: ParsedArguments): string[] {
  if (!recorded.json || !actual.json) {
    const a = recorded.json ? recorded.canonical : recorded.text;
    const b = actual.json ? actual.canonical : actual.text;
    return a === b ? [] : [`${short(a)} → ${short(b)} (compared as text: not JSON)`];
  }
  const lines: string[] = [];
  const walk = (path: string, a: unknown, b: unknown): void => {
    if (lines.length >= MAX_DIFF_LINES) return;
    const objects = a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b);
    if (objects) {
      const keys = [...new Set([...Object.keys(a as object), ...Object.keys(b as object)])].sort();
      for (const k of keys) walk(path ? `${path}.${k}` : k, (a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
      return;
    }
    if (canonical(a) !== canonical(b) || (a === undefined) !== (b === undefined))
      lines.push(`${path || '(arguments)'}: ${short(a)} → ${short(b)}`);
  };
  walk('', recorded.value, actual.value);
  return lines;
}
