/**
 * Stored spans → an OTLP/JSON `ExportTraceServiceRequest`, so a session's traces can go to any backend (or back into
 * another trace store with `traces import`). Spans are grouped by their resource; times go back to nanoseconds.
 */
import type { AttrValue, Attributes } from './otlpSpans';
import type { StoredSpan } from './traceStore';

type OtlpAnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: OtlpAnyValue[] } }
  | { kvlistValue: { values: OtlpKeyValue[] } };
interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

function anyValue(v: AttrValue): OtlpAnyValue {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (v === null) return { stringValue: '' };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  return { kvlistValue: { values: keyValues(v) } };
}

const keyValues = (a: Attributes): OtlpKeyValue[] => Object.entries(a).map(([key, value]) => ({ key, value: anyValue(value) }));
const nanos = (us: number): string => `${us}000`;
const STATUS = { unset: 0, ok: 1, error: 2 } as const;

export function exportOtlpJson(spans: readonly StoredSpan[]): { resourceSpans: unknown[] } {
  const byResource = new Map<string, { resource: Attributes; spans: StoredSpan[] }>();
  for (const s of spans) {
    const key = JSON.stringify(s.resource);
    let group = byResource.get(key);
    if (!group) byResource.set(key, (group = { resource: s.resource, spans: [] }));
    group.spans.push(s);
  }
  return {
    resourceSpans: [...byResource.values()].map((g) => ({
      resource: { attributes: keyValues(g.resource) },
      scopeSpans: [
        {
          scope: { name: 'agent-session-inspector' },
          spans: g.spans.map((s) => ({
            traceId: s.traceId,
            spanId: s.spanId,
            ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
            name: s.name,
            kind: s.spanKind,
            startTimeUnixNano: nanos(s.startUs),
            endTimeUnixNano: nanos(s.endUs),
            attributes: keyValues(s.attributes),
            events: s.events.map((e) => ({ timeUnixNano: nanos(e.timeUs), name: e.name, attributes: keyValues(e.attributes) })),
            status: { code: STATUS[s.status], ...(s.status === 'error' && s.error ? { message: s.error } : {}) },
          })),
        },
      ],
    })),
  };
}
