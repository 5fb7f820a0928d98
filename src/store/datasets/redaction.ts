/**
 * `--redact` (docs/datasets.md): API keys and e-mail addresses replaced with `[redacted]` in every string of a record.
 * Many of those strings are JSON text (a tool call's `arguments`, a tool's output), where a secret sits behind escapes:
 * `"…\nsk-proj-…"` has no word boundary before the key, an address pattern would take the `n` of `\n` with it (leaving
 * `\[redacted]`, which is not JSON), and `sk-\u0070roj-…` is a key once decoded. So JSON text is redacted string by
 * string, each decoded, and only the strings that change are written back, encoded again: the rest of the text stays
 * as it was, byte for byte, and valid JSON stays valid.
 */

/** API keys and e-mail addresses: what `--redact` replaces when no pattern is given. */
export const DEFAULT_REDACTIONS: readonly RegExp[] = [/\bsk-[A-Za-z0-9_-]{16,}/g, /\b[\w.+-]+@[\w-]+(\.[\w-]+)+\b/g];

const REDACTED = '[redacted]';

/** A string literal of JSON text (outside strings, valid JSON holds no quote, so each match is a whole literal). */
const JSON_STRING = /"(?:[^"\\]|\\[\s\S])*"/g;

/** A backslash escape as text that is not JSON writes them (a Python repr, a log line): `\n`, `\x41`, `\u0041`. */
const ESCAPE = /(\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[\s\S]))/;

const replaceAll = (text: string, patterns: readonly RegExp[]): string => patterns.reduce((s, p) => s.replace(p, REDACTED), text);

/** Whether `text` is JSON holding strings (an object, a list or a string; numbers and literals hold nothing to redact). */
function isJsonWithStrings(text: string): boolean {
  if (!/^\s*["[{]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Text that is not JSON, as it is, and then each stretch between backslash escapes on its own: escapes in such text
 * (`'…\nsk-proj-…'` in a Python dict's repr) would otherwise hide a key from the word boundary its pattern starts with.
 * The whole text goes first, so an address right after an escape is taken whole (with the escape's letter: the text is
 * not JSON, there is no encoding to keep).
 */
function redactPlain(text: string, patterns: readonly RegExp[]): string {
  const whole = replaceAll(text, patterns);
  if (!whole.includes('\\')) return whole;
  return whole
    .split(ESCAPE)
    .map((piece, i) => (i % 2 === 1 ? piece : replaceAll(piece, patterns)))
    .join('');
}

/** `text` with what `patterns` match replaced; JSON text string by string, decoded (see the file's comment). */
export function redactText(text: string, patterns: readonly RegExp[]): string {
  if (!isJsonWithStrings(text)) return redactPlain(text, patterns);
  return text.replace(JSON_STRING, (literal) => {
    const value = JSON.parse(literal) as string;
    // A string inside JSON text may be JSON text itself (a tool output quoting a call's arguments): the same again.
    const redacted = redactText(value, patterns);
    return redacted === value ? literal : JSON.stringify(redacted);
  });
}

/** `value` with every string redacted (`redactText`); objects and lists copied, their keys kept. */
export function redactValue<T>(value: T, patterns: readonly RegExp[]): T {
  if (typeof value === 'string') return redactText(value, patterns) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, patterns)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, patterns)])) as T;
  return value;
}
