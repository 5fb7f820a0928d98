/** A trace store record with every field at a plain default, for the trace tests to override what they test. */
import type { SpanRecord } from '../../src/store/traces/spanRecord';

export const SPAN_T0_US = 1_764_685_200_000_000;

export function spanRecord(over: Partial<SpanRecord> = {}): SpanRecord {
  return {
    traceId: 'a'.repeat(32),
    spanId: '1'.padStart(16, '0'),
    parentSpanId: null,
    name: 'step',
    kind: 'other',
    spanKind: 1,
    startUs: SPAN_T0_US,
    endUs: SPAN_T0_US + 1000,
    status: 'unset',
    error: null,
    model: null,
    inputTokens: null,
    outputTokens: null,
    cachedTokens: null,
    reasoningTokens: null,
    toolName: null,
    agentName: null,
    link: null,
    source: 'otlp',
    service: null,
    attributes: {},
    resource: {},
    events: [],
    truncated: false,
    ...over,
  };
}
