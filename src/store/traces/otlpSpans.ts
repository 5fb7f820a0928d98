/**
 * OTLP's trace data as both wire formats (JSON and protobuf) decode to it, before the conventions are read: one span
 * with its resource and scope, attribute values as plain JSON values, times as microseconds since the epoch.
 *
 * Microseconds, not OTLP's nanoseconds: a JS number holds every microsecond until the year 2255, and no span we are
 * sent is timed more finely than that (the SDKs read `performance.now()` or `time.time_ns()` and round). Export
 * writes them back as nanoseconds (× 1,000).
 */

/** An attribute value: OTLP's `AnyValue`, as plain JSON (bytes as base64, an int64 beyond 2^53 as its decimal text). */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };

export type Attributes = Record<string, AttrValue>;

/**
 * What a stored value's JSON cannot tell (docs/traces.md, "Value kinds"): a double with a whole value (2.0, 1e21) from an
 * int, an int64 beyond 2^53 (kept as its decimal text) or a double that is NaN or ±Infinity (kept as text) from a
 * string, bytes (kept as base64) from a string. Only such values are marked, so export writes back the kind that was
 * sent; a list's or a map's marks are under each item's index or member's key.
 */
export type ValueKind = 'double' | 'int' | 'bytes' | { [keyOrIndex: string]: ValueKind };
export type ValueKinds = Record<string, ValueKind>;

/** The marks (`ValueKind`) of a span's attributes, its resource's and each event's (by the event's index). */
export interface SpanValueKinds {
  attributes?: ValueKinds;
  resource?: ValueKinds;
  events?: Record<string, ValueKinds>;
}

/** OTLP's span status codes. */
export type OtlpStatusCode = 'unset' | 'ok' | 'error';

export interface OtlpEvent {
  name: string;
  timeUs: number;
  attributes: Attributes;
}

export interface OtlpSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP's SpanKind number (0 unspecified … 5 consumer). */
  spanKind: number;
  startUs: number;
  endUs: number;
  attributes: Attributes;
  events: OtlpEvent[];
  status: OtlpStatusCode;
  statusMessage: string | null;
  resource: Attributes;
  scope: string | null;
  /** Attributes, events or text cut to the limits (`TRACE_LIMITS`): the span says so in the view. */
  truncated: boolean;
  /** The kinds of its values that their JSON cannot tell (see `ValueKind`). */
  kinds: SpanValueKinds;
}

/** What one request (or file) held: the spans kept and why the others were not. */
export interface OtlpBatch {
  spans: OtlpSpan[];
  rejected: { count: number; reasons: string[] };
}

/**
 * Limits on what one span may carry (docs/traces.md, "Limits"): a span over them is kept, cut, and marked
 * `truncated`, so a flood of huge attributes cannot grow the store without bound or stall the host that reads it.
 */
export const TRACE_LIMITS = {
  /** Characters of one string value (a prompt recorded in an attribute, say). */
  maxStringLength: 16_384,
  /** Attributes of one span, or members of one map value (the rest are dropped). */
  maxAttributes: 256,
  /** Items of one list value (the rest are dropped). */
  maxArrayValues: 256,
  /** Events of one span. */
  maxEvents: 128,
  /** Depth of nested arrays and key-value lists. */
  maxDepth: 8,
  /** Spans looked at in one request or file, kept or rejected: the rest are rejected unread. */
  maxSpansPerBatch: 50_000,
  /** Bytes of one request body, after decompression. */
  maxBodyBytes: 32 * 1024 * 1024,
  /**
   * Values in one request or file: JSON's object members and list items (counted as its `{`, `[` and `,`), protobuf's
   * fields (a message counting twice, as its `{` and `,` would). Decoding builds every value before a span is read,
   * and a body of empty objects builds millions of them (32 MiB of `{},` took 1.1 GB and 8 s): past this bound the body
   * is refused, counted before anything is built; within it, decoding takes at most about 220 MB. 32 MiB of spans
   * with 15 to 60 attributes each hold 2.2 to 3.2 million.
   */
  maxValues: 4_000_000,
  /**
   * The latest time taken (2255-06-05T23:47:34.740991Z): the last microsecond a JS number holds exactly, within what
   * `Date` shows and what SQLite's INTEGER holds. A span timed later is rejected.
   */
  maxTimeUs: Number.MAX_SAFE_INTEGER,
} as const;

const HEX = /^[0-9a-f]+$/;

/**
 * A trace or span id as lowercase hex, from OTLP JSON's hex (the spec's encoding) or the base64 a generic protobuf
 * JSON mapper writes, or from protobuf's bytes; undefined when it is neither, the wrong length, or all zeros (which
 * OTLP says is invalid).
 */
export function idHex(value: unknown, bytes: 8 | 16): string | undefined {
  let hex: string | undefined;
  if (value instanceof Uint8Array) hex = Buffer.from(value).toString('hex');
  else if (typeof value === 'string') {
    const lower = value.toLowerCase();
    if (lower.length === bytes * 2 && HEX.test(lower)) hex = lower;
    else if (/^[A-Za-z0-9+/]+={0,2}$/.test(value)) {
      const decoded = Buffer.from(value, 'base64');
      if (decoded.length === bytes) hex = decoded.toString('hex');
    }
  }
  if (hex === undefined || hex.length !== bytes * 2 || /^0+$/.test(hex)) return undefined;
  return hex;
}

/**
 * Nanoseconds since the epoch (a decimal string, a number or a bigint) as microseconds; undefined when not a time,
 * `'out-of-range'` when later than `TRACE_LIMITS.maxTimeUs` (a JSON number such as 1e22 is a time, but not one any
 * clock gave, and past it `Date` cannot show it).
 */
export function nanosToMicros(value: unknown): number | 'out-of-range' | undefined {
  let us: bigint | number | undefined;
  if (typeof value === 'bigint' && value >= 0n) us = value / 1000n;
  else if (typeof value === 'string' && /^\d+$/.test(value)) {
    // A long text of digits is out of range without BigInt parsing it (which takes time growing with its square).
    const digits = value.replace(/^0+(?=\d)/, '');
    if (digits.length > 24) return 'out-of-range';
    us = BigInt(digits) / 1000n;
  } else if (typeof value === 'number' && Number.isFinite(value) && value >= 0) us = Math.floor(value / 1000);
  if (us === undefined) return undefined;
  return us > TRACE_LIMITS.maxTimeUs ? 'out-of-range' : Number(us);
}

/** Cuts a string to the limit (`max`, default `maxStringLength`), saying it was cut. */
export function limitString(value: string, onCut: () => void, max: number = TRACE_LIMITS.maxStringLength): string {
  if (value.length <= max) return value;
  onCut();
  return `${value.slice(0, max)}… (${value.length - max} more characters cut)`;
}

/**
 * Sets `key` as an own property of a plain object, even `__proto__` (which assignment would take as the prototype, and
 * drop the value). Attributes are sent by anyone and named anything: `constructor`, `toString` and `__proto__` too.
 */
export function setOwn<T>(into: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  else into[key] = value;
}

/** `from[key]` when it is `from`'s own (never what `{}` inherits: `constructor`, `toString`, `__proto__`). */
export function ownValue<T>(from: Record<string, T> | undefined, key: string): T | undefined {
  return from !== undefined && Object.hasOwn(from, key) ? from[key] : undefined;
}
