/**
 * Stored spans → an OTLP/JSON `ExportTraceServiceRequest`, so a session's traces can go to any backend (or back into
 * another trace store with `traces import`). Spans are grouped by their resource, then by their scope; times go back
 * to nanoseconds. A span read from OTLP goes back as it came (`OtlpDetail`): its scope, its status as sent, and each
 * value's kind where its JSON cannot tell it (a whole double, an int64 past 2^53, bytes).
 */
import { ownValue, type AttrValue, type Attributes, type ValueKind, type ValueKinds } from './otlpSpans';
import type { OtlpDetail } from './spanRecord';
import type { StoredSpan } from './traceStore';

type OtlpAnyValue =
  | Record<string, never>
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number | string }
  | { bytesValue: string }
  | { arrayValue: { values: OtlpAnyValue[] } }
  | { kvlistValue: { values: OtlpKeyValue[] } };
interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

/** The scope of spans that came from no OTLP scope: our runs', and spans stored before the scope was kept. */
const OWN_SCOPE = 'agent-session-inspector';
const NOT_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);

function anyValue(v: AttrValue, kind: ValueKind | undefined): OtlpAnyValue {
  // A mark applies only to a value of the shape it was made for (a span an older version wrote again keeps the marks).
  if (kind === 'double' && (typeof v === 'number' || (typeof v === 'string' && NOT_FINITE.has(v)))) return { doubleValue: v };
  if (kind === 'int' && (Number.isSafeInteger(v) || (typeof v === 'string' && /^-?\d{1,19}$/.test(v)))) return { intValue: String(v) };
  if (kind === 'bytes' && typeof v === 'string') return { bytesValue: v };
  const inner = typeof kind === 'object' ? kind : undefined;
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  // A whole number past 2^53 is no int we stored as a number (those are kept as text): a double, written as one.
  if (typeof v === 'number') return Number.isSafeInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  // An empty AnyValue, which reads back as null (a value of no kind, or one cut for its depth).
  if (v === null) return {};
  if (Array.isArray(v)) return { arrayValue: { values: v.map((item, i) => anyValue(item, ownValue(inner, String(i)))) } };
  return { kvlistValue: { values: keyValues(v, inner) } };
}

const keyValues = (a: Attributes, kinds: ValueKinds | undefined): OtlpKeyValue[] =>
  Object.entries(a).map(([key, value]) => ({ key, value: anyValue(value, ownValue(kinds, key)) }));
/** Microseconds → OTLP's nanoseconds, as digits whatever the number (a stored time past 2^53 µs included). */
const nanos = (us: number): string => (Number.isFinite(us) ? (BigInt(Math.trunc(us)) * 1000n).toString() : '0');
const STATUS = { unset: 0, ok: 1, error: 2 } as const;

/** The status as sent when the span was read from OTLP, else the record's (an error with its message). */
function statusOf(s: StoredSpan, detail: OtlpDetail | undefined): { code: number; message?: string } {
  if (detail) return { code: STATUS[detail.status] ?? 0, ...(detail.statusMessage ? { message: detail.statusMessage } : {}) };
  return { code: STATUS[s.status], ...(s.status === 'error' && s.error ? { message: s.error } : {}) };
}

export function exportOtlpJson(spans: readonly StoredSpan[]): { resourceSpans: unknown[] } {
  const byResource = new Map<string, { resource: Attributes; kinds: ValueKinds | undefined; scopes: Map<string, StoredSpan[]> }>();
  for (const s of spans) {
    const kinds = s.otlp?.kinds.resource;
    // Two resources whose JSON is the same differ when a value's kind does (2 and 2.0).
    const key = JSON.stringify([s.resource, kinds ?? null]);
    let group = byResource.get(key);
    if (!group) byResource.set(key, (group = { resource: s.resource, kinds, scopes: new Map() }));
    const scope = s.otlp ? (s.otlp.scope ?? '') : OWN_SCOPE;
    const list = group.scopes.get(scope);
    if (list) list.push(s);
    else group.scopes.set(scope, [s]);
  }
  return {
    resourceSpans: [...byResource.values()].map((g) => ({
      resource: { attributes: keyValues(g.resource, g.kinds) },
      scopeSpans: [...g.scopes].map(([scope, list]) => ({
        scope: scope === '' ? {} : { name: scope },
        spans: list.map((s) => {
          const kinds = s.otlp?.kinds;
          return {
            traceId: s.traceId,
            spanId: s.spanId,
            ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
            name: s.name,
            kind: s.spanKind,
            startTimeUnixNano: nanos(s.startUs),
            endTimeUnixNano: nanos(s.endUs),
            attributes: keyValues(s.attributes, kinds?.attributes),
            events: s.events.map((e, i) => ({
              timeUnixNano: nanos(e.timeUs),
              name: e.name,
              attributes: keyValues(e.attributes, ownValue(kinds?.events, String(i))),
            })),
            status: statusOf(s, s.otlp),
          };
        }),
      })),
    })),
  };
}
