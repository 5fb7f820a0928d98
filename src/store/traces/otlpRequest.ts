/**
 * An OTLP `ExportTraceServiceRequest` as JSON (`JSON.parse` of an OTLP/JSON body or file) or as the protobuf decoder
 * returns it (the same field names; ids as bytes, times and int64 values as bigints) → the spans it holds. A span
 * that cannot be kept (no valid ids, no times) is counted as rejected with its reason, as OTLP's partial success
 * reports it; the rest of the request is kept. A request that is not an OTLP trace request at all is an error.
 */
import { TraceInputError } from './traceErrors';
import { INPUT_VALUE_KEYS, MAX_RECORDED_INPUT_CHARS } from './recordedInput';
import {
  TRACE_LIMITS,
  idHex,
  limitString,
  nanosToMicros,
  setOwn,
  type AttrValue,
  type Attributes,
  type OtlpBatch,
  type OtlpEvent,
  type OtlpSpan,
  type OtlpStatusCode,
  type SpanValueKinds,
  type ValueKind,
  type ValueKinds,
} from './otlpSpans';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const isEmpty = (o: object): boolean => Object.keys(o).length === 0;

/** OTLP's SpanKind, by number or by its enum name (a generic protobuf JSON mapper writes names). */
const SPAN_KINDS = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
const STATUS_CODES: Record<string, OtlpStatusCode> = {
  '0': 'unset',
  '1': 'ok',
  '2': 'error',
  STATUS_CODE_UNSET: 'unset',
  STATUS_CODE_OK: 'ok',
  STATUS_CODE_ERROR: 'error',
};

const notOtlp = (what: string): TraceInputError => new TraceInputError('not-otlp', `This is not an OTLP trace export: ${what}.`);

/**
 * A level of the request's structure (missing: empty), which must be a list of objects: a body that parses but has
 * another shape is not OTLP, and is refused as a whole (400) rather than answered 200 with nothing stored, which would
 * tell the exporter its spans were taken. A span that is not an object is only that span's fault (partial success).
 */
function listOf(v: unknown, what: string): Obj[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw notOtlp(`${what} is not a list`);
  if (!v.every(isObj)) throw notOtlp(`${what} holds something that is not an object`);
  return v;
}

export function spansFromRequest(request: unknown): OtlpBatch {
  if (!isObj(request) || !('resourceSpans' in request || 'resource_spans' in request)) throw notOtlp('it has no resourceSpans');
  const spans: OtlpSpan[] = [];
  const reasons = new Map<string, number>();
  let rejected = 0;
  const reject = (reason: string, count = 1): void => {
    rejected += count;
    reasons.set(reason, (reasons.get(reason) ?? 0) + count);
  };
  // Spans looked at, kept or rejected: rejected ones cost as much to read, so they count towards the bound too.
  let examined = 0;
  const tooMany = `more than ${TRACE_LIMITS.maxSpansPerBatch} spans in one request`;
  for (const rs of listOf(request.resourceSpans ?? request.resource_spans, 'resourceSpans')) {
    let resourceCut = false;
    const resourceKinds: ValueKinds = {};
    const resource = attributesOf(isObj(rs.resource) ? rs.resource.attributes : undefined, () => (resourceCut = true), 0, resourceKinds);
    // `instrumentationLibrarySpans`: the name before OTLP 0.15, still written by old exporters.
    for (const ss of listOf(rs.scopeSpans ?? rs.scope_spans ?? rs.instrumentationLibrarySpans, 'resourceSpans[].scopeSpans')) {
      const scopeObj = isObj(ss.scope) ? ss.scope : isObj(ss.instrumentationLibrary) ? ss.instrumentationLibrary : undefined;
      const scope = typeof scopeObj?.name === 'string' && scopeObj.name !== '' ? scopeObj.name : null;
      const rawSpans = ss.spans ?? [];
      if (!Array.isArray(rawSpans)) throw notOtlp('resourceSpans[].scopeSpans[].spans is not a list');
      for (let i = 0; i < rawSpans.length; i++) {
        if (examined >= TRACE_LIMITS.maxSpansPerBatch) {
          // The rest are counted, not read.
          reject(tooMany, rawSpans.length - i);
          break;
        }
        examined++;
        const span = spanOf(rawSpans[i], resource, isEmpty(resourceKinds) ? undefined : resourceKinds, scope, resourceCut);
        if (typeof span === 'string') reject(span);
        else spans.push(span);
      }
    }
  }
  return { spans, rejected: { count: rejected, reasons: [...reasons].map(([r, n]) => (n > 1 ? `${r} (${n} spans)` : r)) } };
}

const OUT_OF_RANGE = 'a span timed after 2255-06-05 (a start, end or event time past 2^53 microseconds since 1970)';

function spanOf(
  raw: unknown,
  resource: Attributes,
  resourceKinds: ValueKinds | undefined,
  scope: string | null,
  resourceCut: boolean,
): OtlpSpan | string {
  if (!isObj(raw)) return 'a span that is not an object';
  const traceId = idHex(raw.traceId ?? raw.trace_id, 16);
  if (!traceId) return 'a span without a valid traceId (16 bytes, not all zero)';
  const spanId = idHex(raw.spanId ?? raw.span_id, 8);
  if (!spanId) return 'a span without a valid spanId (8 bytes, not all zero)';
  const parentRaw = raw.parentSpanId ?? raw.parent_span_id;
  const parentSpanId =
    parentRaw === undefined || parentRaw === '' || (parentRaw instanceof Uint8Array && parentRaw.length === 0)
      ? null
      : (idHex(parentRaw, 8) ?? null);
  const startUs = nanosToMicros(raw.startTimeUnixNano ?? raw.start_time_unix_nano);
  const endUs = nanosToMicros(raw.endTimeUnixNano ?? raw.end_time_unix_nano);
  if (startUs === 'out-of-range' || endUs === 'out-of-range') return OUT_OF_RANGE;
  if (startUs === undefined || startUs === 0) return 'a span without a start time';
  let truncated = resourceCut;
  const cut = (): void => {
    truncated = true;
  };
  const status = isObj(raw.status) ? raw.status : {};
  const events: OtlpEvent[] = [];
  const eventKinds: Record<string, ValueKinds> = {};
  for (const e of list(raw.events)) {
    if (!isObj(e)) continue;
    if (events.length >= TRACE_LIMITS.maxEvents) {
      cut();
      break;
    }
    const timeUs = nanosToMicros(e.timeUnixNano ?? e.time_unix_nano);
    if (timeUs === 'out-of-range') return OUT_OF_RANGE;
    const kinds: ValueKinds = {};
    events.push({
      name: limitString(typeof e.name === 'string' ? e.name : '', cut),
      timeUs: timeUs ?? startUs,
      attributes: attributesOf(e.attributes, cut, 0, kinds),
    });
    if (!isEmpty(kinds)) eventKinds[String(events.length - 1)] = kinds;
  }
  const attributeKinds: ValueKinds = {};
  const attributes = attributesOf(raw.attributes, cut, 0, attributeKinds);
  const kinds: SpanValueKinds = {};
  if (!isEmpty(attributeKinds)) kinds.attributes = attributeKinds;
  if (resourceKinds) kinds.resource = resourceKinds;
  if (!isEmpty(eventKinds)) kinds.events = eventKinds;
  const kind = raw.kind;
  return {
    traceId,
    spanId,
    parentSpanId,
    name: limitString(typeof raw.name === 'string' ? raw.name : '', cut),
    spanKind: typeof kind === 'number' ? kind : typeof kind === 'string' ? Math.max(0, SPAN_KINDS.indexOf(kind)) : 0,
    startUs,
    // A span still open when exported, or one whose clock stepped back, lasts no time rather than a negative time.
    endUs: endUs === undefined || endUs < startUs ? startUs : endUs,
    attributes,
    events,
    status: STATUS_CODES[String(status.code ?? 0)] ?? 'unset',
    statusMessage: typeof status.message === 'string' && status.message !== '' ? limitString(status.message, cut) : null,
    resource,
    scope,
    truncated,
    kinds,
  };
}

/**
 * OTLP's `KeyValue` list → attributes (the first value of a repeated key wins, as OTLP asks receivers to do), each
 * value whose kind its JSON cannot tell marked in `kinds`. Keys are own properties whatever they are named (`setOwn`):
 * `constructor` or `__proto__` is an attribute like any other.
 */
function attributesOf(raw: unknown, cut: () => void, depth = 0, kinds: ValueKinds = {}): Attributes {
  const out: Attributes = {};
  let count = 0;
  for (const kv of list(raw)) {
    if (!isObj(kv) || typeof kv.key !== 'string' || Object.hasOwn(out, kv.key)) continue;
    if (count >= TRACE_LIMITS.maxAttributes) {
      cut();
      break;
    }
    // A model request's recorded input (docs/context.md) may be far longer than other values: it has a bound of its own.
    const max = INPUT_VALUE_KEYS.has(kv.key) ? MAX_RECORDED_INPUT_CHARS : TRACE_LIMITS.maxStringLength;
    setOwn(out, kv.key, anyValue(kv.value, cut, depth, kinds, kv.key, max));
    count++;
  }
  return out;
}

/** OTLP's `AnyValue` → plain JSON; its kind marked as `kinds[key]` when the JSON cannot tell it (`ValueKind`). */
function anyValue(
  raw: unknown,
  cut: () => void,
  depth: number,
  kinds: ValueKinds,
  key: string,
  maxString: number = TRACE_LIMITS.maxStringLength,
): AttrValue {
  if (!isObj(raw)) return null;
  if (depth >= TRACE_LIMITS.maxDepth) {
    cut();
    return null;
  }
  if ('stringValue' in raw || 'string_value' in raw) return limitString(String(raw.stringValue ?? raw.string_value ?? ''), cut, maxString);
  if ('boolValue' in raw || 'bool_value' in raw) return Boolean(raw.boolValue ?? raw.bool_value);
  if ('intValue' in raw || 'int_value' in raw) {
    const v = intValue(raw.intValue ?? raw.int_value, cut);
    if (v.int && typeof v.value === 'string') setOwn<ValueKind>(kinds, key, 'int');
    return v.value;
  }
  if ('doubleValue' in raw || 'double_value' in raw) {
    const d = Number(raw.doubleValue ?? raw.double_value);
    // A whole double (2.0) reads back as an int, and NaN or Infinity as text: marked, export writes a double again.
    if (Number.isInteger(d) || !Number.isFinite(d)) setOwn<ValueKind>(kinds, key, 'double');
    // JSON has no NaN or Infinity: kept as text so the stored attributes stay valid JSON.
    return Number.isFinite(d) ? d : String(d);
  }
  if ('arrayValue' in raw || 'array_value' in raw) {
    const arr = raw.arrayValue ?? raw.array_value;
    const items = list(isObj(arr) ? arr.values : undefined);
    if (items.length > TRACE_LIMITS.maxArrayValues) cut();
    const itemKinds: ValueKinds = {};
    const out: AttrValue[] = [];
    for (let i = 0; i < Math.min(items.length, TRACE_LIMITS.maxArrayValues); i++)
      out.push(anyValue(items[i], cut, depth + 1, itemKinds, String(i)));
    if (!isEmpty(itemKinds)) setOwn<ValueKind>(kinds, key, itemKinds);
    return out;
  }
  if ('kvlistValue' in raw || 'kvlist_value' in raw) {
    const kvl = raw.kvlistValue ?? raw.kvlist_value;
    const memberKinds: ValueKinds = {};
    const out = attributesOf(isObj(kvl) ? kvl.values : undefined, cut, depth + 1, memberKinds);
    if (!isEmpty(memberKinds)) setOwn<ValueKind>(kinds, key, memberKinds);
    return out;
  }
  if ('bytesValue' in raw || 'bytes_value' in raw) {
    const b = raw.bytesValue ?? raw.bytes_value;
    let whole = true;
    const text = limitString(b instanceof Uint8Array ? Buffer.from(b).toString('base64') : String(b ?? ''), () => {
      whole = false;
      cut();
    });
    // Cut base64 is no longer the bytes: it is kept, and exported, as the text it now is.
    if (whole) setOwn<ValueKind>(kinds, key, 'bytes');
    return text;
  }
  return null;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * An int64: a number when JS holds it exactly, else its decimal text (`int`: it is an int64, not text). A value that
 * is no int64 (1e21, 20 digits) keeps its digits as text, not marked: it is exported as the string it is.
 */
function intValue(raw: unknown, cut: () => void): { value: AttrValue; int: boolean } {
  let n: bigint;
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw)) return { value: null, int: false };
    if (Number.isSafeInteger(Math.trunc(raw))) return { value: Math.trunc(raw), int: true };
    n = BigInt(Math.trunc(raw));
  } else if (typeof raw === 'bigint') n = raw;
  else if (typeof raw === 'string' && /^-?\d+$/.test(raw)) {
    // More than 19 digits is past int64 without BigInt parsing it (whose time grows with the square of the length).
    if (raw.replace(/^-?0*/, '').length > 19) return { value: limitString(raw, cut), int: false };
    n = BigInt(raw);
  } else return { value: null, int: false };
  if (n < INT64_MIN || n > INT64_MAX) return { value: n.toString(), int: false };
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER)
    ? { value: Number(n), int: true }
    : { value: n.toString(), int: true };
}

/**
 * Whether `text` holds more than `max` JSON values, counted as its `{`, `[` and `,` outside strings (members and items,
 * give or take one a container), without building any: `JSON.parse` builds them all before a span can be read.
 */
function jsonValuesOver(text: string, max: number): boolean {
  // Each counted value takes a character at least.
  if (text.length <= max) return false;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, past escaped characters.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if ((c === 0x7b || c === 0x5b || c === 0x2c) && ++n > max) return true;
  }
  return false;
}

/** The bound on a body's values (`TRACE_LIMITS.maxValues`) as an error, for both formats. */
export function tooManyValues(): TraceInputError {
  return new TraceInputError(
    'too-large',
    `The body holds more than ${TRACE_LIMITS.maxValues.toLocaleString('en-US')} values (object members, list items, protobuf fields): export in smaller batches.`,
  );
}

/** An OTLP/JSON body or file → its spans; text that is not JSON or not an OTLP trace request is an error. */
export function parseOtlpJson(text: string): OtlpBatch {
  // A UTF-8 byte order mark (what Windows tools write first) is not JSON, but says nothing against the rest.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (jsonValuesOver(json, TRACE_LIMITS.maxValues)) throw tooManyValues();
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new TraceInputError('malformed', `The body is not valid JSON: ${detail}${/[.!?]$/.test(detail) ? '' : '.'}`);
  }
  return spansFromRequest(parsed);
}
