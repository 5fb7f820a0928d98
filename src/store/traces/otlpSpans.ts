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
  /** Attributes of one span (the rest are dropped). */
  maxAttributes: 256,
  /** Events of one span. */
  maxEvents: 128,
  /** Depth of nested arrays and key-value lists. */
  maxDepth: 8,
  /** Spans in one request or file. */
  maxSpansPerBatch: 50_000,
  /** Bytes of one request body, after decompression. */
  maxBodyBytes: 32 * 1024 * 1024,
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

/** Nanoseconds since the epoch (a decimal string, a number or a bigint) as microseconds; undefined when not a time. */
export function nanosToMicros(value: unknown): number | undefined {
  try {
    if (typeof value === 'bigint') return Number(value / 1000n);
    if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return Number(BigInt(value) / 1000n);
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.floor(value / 1000);
  } catch {
    /* not a time */
  }
  return undefined;
}

/** Cuts a string to the limit (`max`, default `maxStringLength`), saying it was cut. */
export function limitString(value: string, onCut: () => void, max: number = TRACE_LIMITS.maxStringLength): string {
  if (value.length <= max) return value;
  onCut();
  return `${value.slice(0, max)}… (${value.length - max} more characters cut)`;
}

/** Adds `key` unless the span already holds the most attributes it may. */
export function putAttribute(into: Attributes, key: string, value: AttrValue, onCut: () => void): void {
  if (Object.keys(into).length >= TRACE_LIMITS.maxAttributes && !(key in into)) {
    onCut();
    return;
  }
  into[key] = value;
}
