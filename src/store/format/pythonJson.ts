/**
 * JSON text exactly as Python's `json.dumps` (default settings) writes it, and decoding as `json.loads` reads it
 * (spec §5). Files written here must be byte-identical to files a Python agent writes, so the separators, the
 * ASCII escaping and the number spellings all follow Python, while the value tree follows `JSON.stringify`.
 */
import { InvalidArgumentError } from '../errors';

// Every UTF-16 code unit from DEL up, matched one unit at a time (no `u` flag), so surrogate pairs become two
// escapes as Python's ensure_ascii writes them.
const NON_ASCII = /[\u007f-\uffff]/g;
const HAS_NON_ASCII = /[\u007f-\uffff]/;

function escapeUnit(ch: string): string {
  return '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0');
}

/**
 * A quoted string with Python's escapes. JSON.stringify already writes `\"`, `\\`, the short escapes, lowercase
 * `\u00XX` for other control characters and escapes for lone surrogates, exactly as Python does; only code units
 * from 0x7F up are left raw, and those are escaped here.
 */
function quote(s: string): string {
  const q = JSON.stringify(s);
  return HAS_NON_ASCII.test(q) ? q.replace(NON_ASCII, escapeUnit) : q;
}

/** Python's repr of a float for a finite non-integer, or digits for an integer value. */
export function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  if (Number.isInteger(n)) {
    // Never an exponent: 1e21 is written out in full, as Python writes int(1e21).
    return Math.abs(n) < 1e21 ? String(n === 0 ? 0 : n) : BigInt(n).toString();
  }
  if (Math.abs(n) < 1e-4) {
    // Python switches to exponent form below 1e-4 and pads the exponent to two digits: 1e-05, 2.5e-07.
    const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
    const sign = exponent.startsWith('-') ? '-' : '+';
    const digits = exponent.replace(/^[+-]/, '').padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(n);
}

type Encoder = (value: unknown, holder: unknown, key: string, stack: unknown[]) => string | undefined;

function makeEncoder(quoteFn: (s: string) => string, itemSeparator = ', ', keySeparator = ': '): Encoder {
  const encode: Encoder = (input, holder, key, stack) => {
    let value = input;
    if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      value = (value as { toJSON: (k: string) => unknown }).toJSON(key);
    }
    void holder;
    if (value instanceof Number) value = Number(value);
    else if (value instanceof String) value = String(value);
    else if (value instanceof Boolean) value = value.valueOf();
    switch (typeof value) {
      case 'string':
        return quoteFn(value);
      case 'number':
        return formatNumber(value);
      case 'boolean':
        return value ? 'true' : 'false';
      case 'bigint':
        throw new InvalidArgumentError('Object of type bigint is not JSON serializable');
      case 'undefined':
      case 'function':
      case 'symbol':
        return undefined;
      default:
        break;
    }
    if (value === null) return 'null';
    if (stack.includes(value)) throw new InvalidArgumentError('Circular reference detected');
    stack.push(value);
    try {
      if (Array.isArray(value)) {
        const parts: string[] = [];
        for (let i = 0; i < value.length; i++) parts.push(encode(value[i], value, String(i), stack) ?? 'null');
        return '[' + parts.join(itemSeparator) + ']';
      }
      const obj = value as Record<string, unknown>;
      const parts: string[] = [];
      for (const k of Object.keys(obj)) {
        const v = encode(obj[k], obj, k, stack);
        if (v !== undefined) parts.push(quoteFn(k) + keySeparator + v);
      }
      return '{' + parts.join(itemSeparator) + '}';
    } finally {
      stack.pop();
    }
  };
  return encode;
}

const encodeAscii = makeEncoder(quote);
// ensure_ascii=False: only '"', '\\', the short escapes and other code units below 0x20 are escaped; everything
// else, lone surrogates included, stays raw (JSON.stringify would escape lone surrogates).
const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };
// eslint-disable-next-line no-control-regex
const RAW_NEEDS_ESCAPE = /["\\\u0000-\u001f]/g;
function quoteRaw(s: string): string {
  return '"' + s.replace(RAW_NEEDS_ESCAPE, (ch) => SHORT_ESCAPES[ch] ?? escapeUnit(ch)) + '"';
}
const encodeRaw = makeEncoder(quoteRaw);

/**
 * `json.dumps(value)` with Python's defaults. Throws `InvalidArgumentError` for a BigInt or a cycle, as Python
 * raises for values it cannot serialise. A top-level `undefined` (no JSON value at all) is written as `null`.
 */
export function pythonJsonDumps(value: unknown): string {
  return encodeAscii(value, { '': value }, '', []) ?? 'null';
}

const encodeCompactAscii = makeEncoder(quote, ',', ':');
const encodeCompactRaw = makeEncoder(quoteRaw, ',', ':');

/**
 * `json.dumps(value, separators=(",", ":"), ensure_ascii=…)`: how Python's `SQLAlchemySession` (ensure_ascii
 * configurable, default True) and `RedisSession` (always True) store items. Same value rules as `pythonJsonDumps`.
 */
export function pythonJsonDumpsCompact(value: unknown, options: { ensureAscii?: boolean } = {}): string {
  const encode = options.ensureAscii === false ? encodeCompactRaw : encodeCompactAscii;
  return encode(value, { '': value }, '', []) ?? 'null';
}

/**
 * Python-style separators with raw non-ASCII text (`json.dumps(v, ensure_ascii=False)`): how the conversation
 * previews show non-string user content (spec §5.2).
 */
export function previewJson(value: unknown): string {
  return encodeRaw(value, { '': value }, '', []) ?? 'null';
}

/** The outcome of decoding one stored row. */
export type Decoded = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * `json.loads(text)`: JSON plus the bare tokens `NaN`, `Infinity` and `-Infinity` that Python writes for
 * non-finite floats. The fast path is `JSON.parse`; the small parser below runs only when that fails.
 */
export function pythonJsonLoads(text: string): Decoded {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    if (!/NaN|Infinity/.test(text)) return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  try {
    return { ok: true, value: new LenientParser(text).parseDocument() };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** A strict JSON parser that also accepts Python's non-finite number tokens. */
class LenientParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parseDocument(): unknown {
    const value = this.value();
    this.ws();
    if (this.pos !== this.text.length) this.fail('Extra data');
    return value;
  }

  private fail(what: string): never {
    throw new SyntaxError(`${what} at position ${this.pos}`);
  }

  private ws(): void {
    while (this.pos < this.text.length && ' \t\n\r'.includes(this.text[this.pos] as string)) this.pos++;
  }

  private literal(word: string, value: unknown): unknown {
    if (this.text.startsWith(word, this.pos)) {
      this.pos += word.length;
      return value;
    }
    return this.fail('Expecting value');
  }

  private value(): unknown {
    this.ws();
    const ch = this.text[this.pos];
    switch (ch) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      case 'N':
        return this.literal('NaN', NaN);
      case 'I':
        return this.literal('Infinity', Infinity);
      default:
        if (this.text.startsWith('-Infinity', this.pos)) return this.literal('-Infinity', -Infinity);
        return this.number();
    }
  }

  private number(): number {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.pos));
    if (!m) this.fail('Expecting value');
    this.pos += m[0].length;
    return Number(m[0]);
  }

  private string(): string {
    // Reuse JSON.parse for the string body: find the closing quote, honouring backslash escapes.
    const start = this.pos;
    this.pos++;
    while (this.pos < this.text.length) {
      const c = this.text[this.pos];
      if (c === '\\') this.pos += 2;
      else if (c === '"') break;
      else this.pos++;
    }
    if (this.pos >= this.text.length) this.fail('Unterminated string');
    this.pos++;
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  private array(): unknown[] {
    this.pos++;
    const out: unknown[] = [];
    this.ws();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.text[this.pos++];
      if (c === ']') return out;
      if (c !== ',') this.fail("Expecting ',' delimiter");
    }
  }

  private object(): Record<string, unknown> {
    this.pos++;
    const out: Record<string, unknown> = {};
    this.ws();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.text[this.pos] !== '"') this.fail('Expecting property name enclosed in double quotes');
      const key = this.string();
      this.ws();
      if (this.text[this.pos++] !== ':') this.fail("Expecting ':' delimiter");
      // defineProperty, not assignment: a "__proto__" key must become a key, as it does with JSON.parse.
      Object.defineProperty(out, key, { value: this.value(), enumerable: true, writable: true, configurable: true });
      this.ws();
      const c = this.text[this.pos++];
      if (c === '}') return out;
      if (c !== ',') this.fail("Expecting ',' delimiter");
    }
  }
}
