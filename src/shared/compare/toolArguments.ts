/**
 * Tool arguments compared as JSON values, not as text: the model may write the same arguments with other key order,
 * spacing or number spelling (`1.0`, `1e0`), and a recorded call must still match. Arguments that are not valid JSON
 * are compared as text, and said so.
 *
 * Numbers are compared by their exact decimal value, from the text the model wrote: `JSON.parse` would round
 * `9007199254740993` to `9007199254740992` and turn `1e400` into `Infinity` (which `JSON.stringify` spells `null`),
 * making different arguments equal and replaying a recorded output for a call that asked for something else. So the
 * arguments are read by a small parser of our own that keeps each number's text (Node's `JSON.parse` gives a reviver
 * no source text before Node 21).
 */

export type ParsedArguments = { json: true; canonical: string; value: unknown } | { json: false; text: string };

/** A JSON number as written, with its exact value in a canonical spelling. */
export class JsonNumber {
  /** The exact value: `0`, or `[-]<digits without trailing zeros>e<exponent>` (`1.0`, `1e0`, `10e-1` → `1e0`). */
  readonly canonical: string;
  constructor(readonly text: string) {
    this.canonical = canonicalNumber(text);
  }
  /** How a diff shows it: as JavaScript spells it when that is the same value, else as written (a big integer). */
  shown(): string {
    const n = Number(this.text);
    return Number.isFinite(n) && canonicalNumber(String(n)) === this.canonical ? String(n) : this.text;
  }
}

const NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

function canonicalNumber(text: string): string {
  const m = NUMBER.exec(text);
  if (!m) return text;
  const [, sign, int, frac = '', exp = '0'] = m;
  let digits = (int! + frac).replace(/^0+/, '');
  // Every zero is one value whatever its spelling or sign (`-0` is `0`, as `JSON.parse` has it).
  if (digits === '') return '0';
  let exponent = BigInt(exp) - BigInt(frac.length);
  const trimmed = digits.replace(/0+$/, '');
  exponent += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  return `${sign}${digits}e${exponent}`;
}

/** Object keys sorted at every depth; numbers by their exact value (so `1.0` and `1` are one value). */
function canonical(value: unknown): string {
  if (value instanceof JsonNumber) return `n${value.canonical}`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value as Record<string, unknown>).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  if (typeof value === 'number') return `n${canonicalNumber(String(value))}`;
  return JSON.stringify(value) ?? 'null';
}

/** A value as a diff line shows it: JSON text, numbers as written when JavaScript cannot spell them exactly. */
function shownValue(value: unknown): string {
  if (value instanceof JsonNumber) return value.shown();
  if (Array.isArray(value)) return `[${value.map(shownValue).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value as Record<string, unknown>).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${shownValue((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Thrown by the parser on text that is not JSON. */
class NotJson extends Error {}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
// JSON strings exclude the control characters U+0000 to U+001F: text with one is not JSON, as for JSON.parse.
// eslint-disable-next-line no-control-regex
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER_AT = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * JSON as RFC 8259 has it (what `JSON.parse` accepts), with numbers kept as `JsonNumber` and objects without a
 * prototype (a `__proto__` key is a key). A key given twice keeps its last value, as `JSON.parse` does.
 */
function parseJson(text: string): unknown {
  let at = 0;
  const space = () => {
    while (at < text.length && WHITESPACE.has(text[at]!)) at++;
  };
  const string = (): string => {
    STRING.lastIndex = at;
    const m = STRING.exec(text);
    if (!m) throw new NotJson();
    at += m[0].length;
    return JSON.parse(m[0]) as string;
  };
  const value = (): unknown => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      const object = Object.create(null) as Record<string, unknown>;
      space();
      if (text[at] === '}') {
        at++;
        return object;
      }
      for (;;) {
        space();
        if (text[at] !== '"') throw new NotJson();
        const key = string();
        space();
        if (text[at++] !== ':') throw new NotJson();
        object[key] = value();
        space();
        const next = text[at++];
        if (next === '}') return object;
        if (next !== ',') throw new NotJson();
      }
    }
    if (c === '[') {
      at++;
      const array: unknown[] = [];
      space();
      if (text[at] === ']') {
        at++;
        return array;
      }
      for (;;) {
        array.push(value());
        space();
        const next = text[at++];
        if (next === ']') return array;
        if (next !== ',') throw new NotJson();
      }
    }
    if (c === '"') return string();
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const)
      if (text.startsWith(word, at)) {
        at += word.length;
        return v;
      }
    NUMBER_AT.lastIndex = at;
    const m = NUMBER_AT.exec(text);
    if (!m) throw new NotJson();
    at += m[0].length;
    return new JsonNumber(m[0]);
  };
  const result = value();
  space();
  if (at !== text.length) throw new NotJson();
  return result;
}

export function parseArguments(text: string): ParsedArguments {
  try {
    const value = parseJson(text);
    return { json: true, canonical: canonical(value), value };
  } catch (err) {
    // Nesting too deep for our parser is still JSON if `JSON.parse` reads it: then its numbers are compared as
    // `JSON.parse` reads them, which is exact for every number JavaScript can spell.
    if (!(err instanceof NotJson)) {
      try {
        const value: unknown = JSON.parse(text);
        return { json: true, canonical: canonical(value), value };
      } catch {
        // Not JSON either way.
      }
    }
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
  const text = value === undefined ? '(absent)' : shownValue(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JsonNumber);

/**
 * One line per difference between recorded and new arguments (`city: "Paris" → "Lisbon"`), top-level keys and, inside
 * objects, dotted paths; at most 8 lines. Text arguments differ as a whole.
 */
export function argumentDiff(recorded: ParsedArguments, actual: ParsedArguments): string[] {
  if (!recorded.json || !actual.json) {
    const a = recorded.json ? shownValue(recorded.value) : recorded.text;
    const b = actual.json ? shownValue(actual.value) : actual.text;
    return argumentsKey(recorded) === argumentsKey(actual) ? [] : [`${short(a)} → ${short(b)} (compared as text: not JSON)`];
  }
  const lines: string[] = [];
  const walk = (path: string, a: unknown, b: unknown): void => {
    if (lines.length >= MAX_DIFF_LINES) return;
    if (isObject(a) && isObject(b)) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const k of keys) walk(path ? `${path}.${k}` : k, a[k], b[k]);
      return;
    }
    if (canonical(a) !== canonical(b) || (a === undefined) !== (b === undefined))
      lines.push(`${path || '(arguments)'}: ${short(a)} → ${short(b)}`);
  };
  walk('', recorded.value, actual.value);
  return lines;
}
