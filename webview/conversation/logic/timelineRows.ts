/**
 * A turn's spans as the rows of a waterfall: parents before their children (children by start time, then as they
 * came), each row's depth, and its bar's left edge and width as percentages of the turn's time. Pure: unit-tested.
 */
import type { TimelineSpanView } from '../../../src/shared/protocol/conversationViews';

export interface TimelineRow {
  span: TimelineSpanView;
  depth: number;
  /** Where the bar starts, 0–100. */
  leftPct: number;
  /** How wide it is, 0–100; never less than `MIN_WIDTH_PCT`, so a span of no time still shows. */
  widthPct: number;
}

export const MIN_WIDTH_PCT = 0.4;
/** Nesting deeper than this is drawn at this depth (a runaway chain of parents must not push bars off the page). */
export const MAX_DEPTH = 12;

export function timelineRows(spans: readonly TimelineSpanView[], totalMs: number): TimelineRow[] {
  const children = new Map<string | null, TimelineSpanView[]>();
  const ids = new Set(spans.map((s) => s.spanId));
  for (const s of spans) {
    const parent = s.parentSpanId !== null && ids.has(s.parentSpanId) && s.parentSpanId !== s.spanId ? s.parentSpanId : null;
    const list = children.get(parent) ?? [];
    list.push(s);
    children.set(parent, list);
  }
  for (const list of children.values()) list.sort((a, b) => a.startMs - b.startMs);
  const rows: TimelineRow[] = [];
  const seen = new Set<string>();
  const span = totalMs > 0 ? totalMs : 1;
  const walk = (parent: string | null, depth: number): void => {
    for (const s of children.get(parent) ?? []) {
      // A cycle of parents (bad input) is drawn once.
      if (seen.has(s.spanId)) continue;
      seen.add(s.spanId);
      const leftPct = Math.min(100, Math.max(0, (s.startMs / span) * 100));
      const widthPct = Math.max(MIN_WIDTH_PCT, Math.min(100 - leftPct, (s.durationMs / span) * 100));
      rows.push({ span: s, depth: Math.min(depth, MAX_DEPTH), leftPct, widthPct });
      walk(s.spanId, depth + 1);
    }
  };
  walk(null, 0);
  // Spans only reachable through a cycle: shown at the top level rather than lost.
  for (const s of spans) if (!seen.has(s.spanId)) rows.push({ span: s, depth: 0, leftPct: 0, widthPct: MIN_WIDTH_PCT });
  return rows;
}

/** "1,234 ms" under ten seconds, "12.3 s" above. */
export function durationLabel(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms).toLocaleString('en-US')} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * What replay did with a tool span's call, from the attribute our runs set on it (`agent_sessions.replay`:
 * `replayed <recorded call id>`, `live`, `unmatched`); undefined for other spans and for runs that set none.
 */
export function spanReplayOutcome(span: Pick<TimelineSpanView, 'kind' | 'attributes'>): 'replayed' | 'live' | 'unmatched' | undefined {
  if (span.kind !== 'tool' && span.kind !== 'mcp') return undefined;
  const value = span.attributes.find(([key]) => key === 'agent_sessions.replay')?.[1] ?? '';
  const word = value.split(' ', 1)[0];
  return word === 'replayed' || word === 'live' || word === 'unmatched' ? word : undefined;
}
