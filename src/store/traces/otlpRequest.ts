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
  putAttribute,
  type AttrValue,
  type Attributes,
  type OtlpBatch,
  type OtlpEvent,
  type OtlpSpan,
  type OtlpStatusCode,
} from './otlpSpans';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

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
  const reject = (reason: string): void => {
    rejected++;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  };
  for (const rs of listOf(request.resourceSpans ?? request.resource_spans, 'resourceSpans')) {
    let resourceCut = false;
    const resource = attributesOf(isObj(rs.resource) ? rs.resource.attributes : undefined, () => (resourceCut = true));
    // `instrumentationLibrarySpans`: the name before OTLP 0.15, still written by old exporters.
    for (const ss of listOf(rs.scopeSpans ?? rs.scope_spans ?? rs.instrumentationLibrarySpans, 'resourceSpans[].scopeSpans')) {
      const scopeObj = isObj(ss.scope) ? ss.scope : isObj(ss.instrumentationLibrary) ? ss.instrumentationLibrary : undefined;
      const scope = typeof scopeObj?.name === 'string' && scopeObj.name !== '' ? scopeObj.name : null;
      const rawSpans = ss.spans ?? [];
      if (!Array.isArray(rawSpans)) throw notOtlp('resourceSpans[].scopeSpans[].spans is not a list');
      for (const raw of rawSpans) {
        if (spans.length >= TRACE_LIMITS.maxSpansPerBatch) {
          reject(`more than ${TRACE_LIMITS.maxSpansPerBatch} spans in one request`);
          continue;
        }
        const span = spanOf(raw, resource, scope, resourceCut);
        if (typeof span === 'string') reject(span);
        else spans.push(span);
      }
    }
  }
  return { spans, rejected: { count: rejected, reasons: [...reasons].map(([r, n]) => (n > 1 ? `${r} (${n} spans)` : r)) } };
}

function spanOf(raw: unknown, resource: Attributes, scope: string | null, resourceCut: boolean): OtlpSpan | string {
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
  if (startUs === undefined || startUs === 0) return 'a span without a start time';
  let truncated = resourceCut;
  const cut = (): void => {
    truncated = true;
  };
  const status = isObj(raw.status) ? raw.status : {};
  const events: OtlpEvent[] = [];
  for (const e of list(raw.events)) {
    if (!isObj(e)) continue;
    if (events.length >= TRACE_LIMITS.maxEvents) {
      cut();
      break;
    }
    events.push({
      name: limitString(typeof e.name === 'string' ? e.name : '', cut),
      timeUs: nanosToMicros(e.timeUnixNano ?? e.time_unix_nano) ?? startUs,
      attributes: attributesOf(e.attributes, cut),
    });
  }
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
    attributes: attributesOf(raw.attributes, cut),
    events,
    status: STATUS_CODES[String(status.code ?? 0)] ?? 'unset',
    statusMessage: typeof status.message === 'string' && status.message !== '' ? limitString(status.message, cut) : null,
    resource,
    scope,
    truncated,
  };
}

/** OTLP's `KeyValue` list → attributes (the first value of a repeated key wins, as OTLP asks receivers to do). */
function attributesOf(raw: unknown, cut: () => void, depth = 0): Attributes {
  const out: Attributes = {};
  for (const kv of list(raw)) {
    if (!isObj(kv) || typeof kv.key !== 'string' || kv.key in out) continue;
    // A model request's recorded input (docs/context.md) may be far longer than other values: it has a bound of its own.
    const max = INPUT_VALUE_KEYS.has(kv.key) ? MAX_RECORDED_INPUT_CHARS : TRACE_LIMITS.maxStringLength;
    putAttribute(out, kv.key, anyValue(kv.value, cut, depth, max), cut);
  }
  return out;
}

/** OTLP's `AnyValue` → plain JSON. */
function anyValue(raw: unknown, cut: () => void, depth: number, maxString: number = TRACE_LIMITS.maxStringLength): AttrValue {
  if (!isObj(raw)) return null;
  if (depth >= TRACE_LIMITS.maxDepth) {
    cut();
    return null;
  }
  if ('stringValue' in raw || 'string_value' in raw) return limitString(String(raw.stringValue ?? raw.string_value ?? ''), cut, maxString);
  if ('boolValue' in raw || 'bool_value' in raw) return Boolean(raw.boolValue ?? raw.bool_value);
  if ('intValue' in raw || 'int_value' in raw) return intValue(raw.intValue ?? raw.int_value);
  if ('doubleValue' in raw || 'double_value' in raw) {
    const d = Number(raw.doubleValue ?? raw.double_value);
    // JSON has no NaN or Infinity: kept as text so the stored attributes stay valid JSON.
    return Number.isFinite(d) ? d : String(d);
  }
  if ('arrayValue' in raw || 'array_value' in raw) {
    const arr = raw.arrayValue ?? raw.array_value;
    return list(isObj(arr) ? arr.values : undefined)
      .slice(0, TRACE_LIMITS.maxAttributes)
      .map((v) => anyValue(v, cut, depth + 1));
  }
  if ('kvlistValue' in raw || 'kvlist_value' in raw) {
    const kvl = raw.kvlistValue ?? raw.kvlist_value;
    return attributesOf(isObj(kvl) ? kvl.values : undefined, cut, depth + 1);
  }
  if ('bytesValue' in raw || 'bytes_value' in raw) {
    const b = raw.bytesValue ?? raw.bytes_value;
    return limitString(b instanceof Uint8Array ? Buffer.from(b).toString('base64') : String(b ?? ''), cut);
  }
  return null;
}

/** An int64: a number when JS holds it exactly, else its decimal text. */
function intValue(raw: unknown): AttrValue {
  if (typeof raw === 'number') return Number.isFinite(raw) ? Math.trunc(raw) : null;
  if (typeof raw === 'bigint')
    return raw >= BigInt(Number.MIN_SAFE_INTEGER) && raw <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(raw) : raw.toString();
  if (typeof raw === 'string' && /^-?\d+$/.test(raw)) {
    const n = Number(raw);
    return Number.isSafeInteger(n) ? n : raw;
  }
  return null;
}

/** An OTLP/JSON body or file → its spans; text that is not JSON or not an OTLP trace request is an error. */
export function parseOtlpJson(text: string): OtlpBatch {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new TraceInputError('malformed', `The body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return spansFromRequest(parsed);
}
