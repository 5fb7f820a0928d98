/**
 * A turn's timeline for the conversation view (`turn/timeline`): the turn's time window read from the session file
 * (its user message to the next turn's), the spans of the traces linked to it from the trace store, and the view's
 * plain-JSON form of them (times from the turn's first span, attributes as text, capped).
 */
import type { SessionReader } from '../../store/inspector/sessionReader';
import type { StoredSpan } from '../../store/traces/traceStore';
import { turnWindows } from '../../store/traces/turnWindows';
import type { AttrValue } from '../../store/traces/otlpSpans';
import {
  TIMELINE_ATTRIBUTES,
  TIMELINE_MAX_SPANS,
  TIMELINE_VALUE_CHARS,
  type TimelineSpanView,
  type TimelineView,
} from '../../shared/protocol/conversationViews';
import type { TraceService } from './traceService';

function valueText(v: AttrValue): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > TIMELINE_VALUE_CHARS ? `${text.slice(0, TIMELINE_VALUE_CHARS)}…` : text;
}

/** Stored spans → the view's form, times relative to the earliest start. */
export function timelineOf(spans: readonly StoredSpan[]): TimelineView {
  if (spans.length === 0) return { state: 'none', spans: [], omitted: 0, traces: 0, totalMs: 0, requests: 0 };
  const t0 = Math.min(...spans.map((s) => s.startUs));
  const t1 = Math.max(...spans.map((s) => s.endUs));
  const shown = spans.slice(0, TIMELINE_MAX_SPANS);
  const ids = new Set(shown.map((s) => s.spanId));
  const views: TimelineSpanView[] = shown.map((s) => ({
    spanId: s.spanId,
    traceId: s.traceId,
    // A parent the turn does not hold (another trace's, or never received) would leave the span unreachable.
    parentSpanId: s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : null,
    name: s.name,
    kind: s.kind,
    startMs: (s.startUs - t0) / 1000,
    durationMs: (s.endUs - s.startUs) / 1000,
    status: s.status,
    error: s.error,
    model: s.model,
    inputTokens: s.inputTokens,
    outputTokens: s.outputTokens,
    toolName: s.toolName,
    agentName: s.agentName,
    source: s.source,
    attributes: Object.entries(s.attributes)
      .slice(0, TIMELINE_ATTRIBUTES)
      .map(([k, v]) => [k, valueText(v)]),
    truncated: s.truncated || Object.keys(s.attributes).length > TIMELINE_ATTRIBUTES,
  }));
  return {
    state: 'ok',
    spans: views,
    omitted: spans.length - shown.length,
    traces: new Set(spans.map((s) => s.traceId)).size,
    totalMs: (t1 - t0) / 1000,
    requests: spans.filter((s) => s.kind === 'model').length,
  };
}

/** The timeline of `turn` on `branchId` (the branch that ran it) of a session. */
export async function turnTimeline(
  reader: Pick<SessionReader, 'getTurnsPage'>,
  traces: TraceService,
  sessionId: string,
  branchId: string,
  turn: number,
): Promise<TimelineView> {
  // The turn and the next one: the window runs from one's user message to the other's.
  const page = await reader.getTurnsPage(sessionId, branchId, { afterTurn: turn > 1 ? turn - 1 : null, limit: 2 });
  const window = turnWindows(page.turns).get(turn);
  const store = await traces.traces();
  const spans = await store.call('spansOfTurn', { sessionId, branchId, turnNumber: turn, ...(window ? { window } : {}) });
  return timelineOf(spans);
}
