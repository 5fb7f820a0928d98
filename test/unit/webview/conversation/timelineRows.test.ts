/**
 * The timeline's rows: parents before children (children by start), depth, bars placed by start and duration, a
 * span of no time still visible, and bad input (a missing parent, a cycle of parents, a span its own parent) drawn
 * without losing a span.
 */
import { strict as assert } from 'node:assert';
import type { TimelineSpanView } from '../../../../src/shared/protocol/conversationViews';
import { MIN_WIDTH_PCT, durationLabel, spanReplayOutcome, timelineRows } from '../../../../webview/conversation/logic/timelineRows';

function span(spanId: string, parentSpanId: string | null, startMs: number, durationMs: number): TimelineSpanView {
  return {
    spanId,
    traceId: 't',
    parentSpanId,
    name: spanId,
    kind: 'other',
    startMs,
    durationMs,
    status: 'ok',
    error: null,
    model: null,
    inputTokens: null,
    outputTokens: null,
    toolName: null,
    agentName: null,
    source: 'otlp',
    attributes: [],
    truncated: false,
  };
}

describe('timeline rows', () => {
  it('orders parents before their children, children by start, with depth and bars in percent of the turn', () => {
    const rows = timelineRows(
      [span('tool', 'agent', 600, 300), span('root', null, 0, 1000), span('model', 'agent', 100, 400), span('agent', 'root', 50, 900)],
      1000,
    );
    assert.deepEqual(
      rows.map((r) => [r.span.spanId, r.depth, r.leftPct, r.widthPct]),
      [
        ['root', 0, 0, 100],
        ['agent', 1, 5, 90],
        ['model', 2, 10, 40],
        ['tool', 2, 60, 30],
      ],
    );
  });

  it('gives a span of no time a visible bar and keeps every bar inside the track', () => {
    const rows = timelineRows([span('a', null, 0, 0), span('b', null, 990, 500)], 1000);
    assert.equal(rows[0]!.widthPct, MIN_WIDTH_PCT);
    assert.ok(rows[1]!.leftPct + rows[1]!.widthPct <= 100 + 1e-9);
  });

  it('draws a span whose parent is missing at the top, and every span of a cycle once', () => {
    const rows = timelineRows([span('orphan', 'gone', 10, 5), span('x', 'y', 0, 1), span('y', 'x', 0, 1), span('self', 'self', 0, 1)], 100);
    assert.deepEqual(rows.map((r) => r.span.spanId).sort(), ['orphan', 'self', 'x', 'y']);
    assert.equal(rows.find((r) => r.span.spanId === 'orphan')!.depth, 0);
  });

  it('says durations in ms under ten seconds and in seconds above', () => {
    assert.equal(durationLabel(1234.4), '1,234 ms');
    assert.equal(durationLabel(12_345), '12.3 s');
  });
});

describe('timeline replay marks', () => {
  it("reads what replay did from a tool span's agent_sessions.replay attribute, and nothing from other spans", () => {
    const span = (kind: 'tool' | 'model' | 'mcp', value?: string) => ({
      kind,
      attributes: value === undefined ? [] : ([['agent_sessions.replay', value]] as [string, string][]),
    });
    assert.equal(spanReplayOutcome(span('tool', 'replayed call_w1')), 'replayed');
    assert.equal(spanReplayOutcome(span('mcp', 'live')), 'live');
    assert.equal(spanReplayOutcome(span('tool', 'unmatched')), 'unmatched');
    assert.equal(spanReplayOutcome(span('tool')), undefined);
    assert.equal(spanReplayOutcome(span('tool', 'something else')), undefined);
    assert.equal(spanReplayOutcome(span('model', 'replayed call_w1')), undefined, 'only tool spans');
  });
});
