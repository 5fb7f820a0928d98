/**
 * A turn's timeline as the view gets it: times from the turn's first span, a parent outside the turn dropped (so the
 * span is drawn, not lost), attributes as text and capped, model requests and traces counted, and "none" for a turn
 * without spans.
 */
import { strict as assert } from 'node:assert';
import { timelineOf } from '../../../../src/extension/traces/turnTimeline';
import type { StoredSpan } from '../../../../src/store/traces/traceStore';
import { SPAN_T0_US, spanRecord } from '../../../support/spanRecords';
import { TIMELINE_ATTRIBUTES, TIMELINE_VALUE_CHARS } from '../../../../src/shared/protocol/conversationViews';

const T0 = SPAN_T0_US;
function stored(spanId: string, over: Partial<StoredSpan> = {}): StoredSpan {
  const { link: _link, ...record } = spanRecord({ spanId, name: spanId, status: 'ok' });
  return { id: 1, ...record, ...over };
}

describe('turn timeline view', () => {
  it('times spans from the first start, counts requests and traces, and drops a parent the turn does not hold', () => {
    const view = timelineOf([
      stored('root', { startUs: T0 + 500, endUs: T0 + 2_500_500 }),
      stored('chat', { parentSpanId: 'root', kind: 'model', startUs: T0 + 1_000_500, endUs: T0 + 1_500_500 }),
      stored('elsewhere', { traceId: 'b'.repeat(32), parentSpanId: 'not-here', kind: 'model', startUs: T0, endUs: T0 + 100 }),
    ]);
    assert.equal(view.state, 'ok');
    assert.deepEqual(
      view.spans.map((s) => [s.spanId, s.parentSpanId, s.startMs, s.durationMs]),
      [
        ['root', null, 0.5, 2500],
        ['chat', 'root', 1000.5, 500],
        ['elsewhere', null, 0, 0.1],
      ],
    );
    assert.deepEqual([view.totalMs, view.requests, view.traces, view.omitted], [2500.5, 2, 2, 0]);
  });

  it('sends attributes as text, at most the cap of them, each cut, and says so', () => {
    const attributes = Object.fromEntries(
      Array.from({ length: TIMELINE_ATTRIBUTES + 5 }, (_, i) => [`k${i}`, i === 0 ? 'x'.repeat(5000) : { n: i }]),
    );
    const [s] = timelineOf([stored('big', { attributes })]).spans;
    assert.equal(s!.attributes.length, TIMELINE_ATTRIBUTES);
    assert.equal(s!.attributes[0]![1].length, TIMELINE_VALUE_CHARS + 1);
    assert.equal(s!.attributes[1]![1], '{"n":1}');
    assert.equal(s!.truncated, true);
  });

  it('says none for a turn without spans', () => {
    assert.deepEqual(timelineOf([]), { state: 'none', spans: [], omitted: 0, traces: 0, totalMs: 0, requests: 0 });
  });
});
