/**
 * The spans an agent command sends in CUSTOM events: the agents SDK's exported spans and OTLP JSON exports, linked to
 * the run's turn whatever their attributes say; what is not a span left out with a reason; a runaway count capped.
 */
import { strict as assert } from 'node:assert';
import { AgUiTranslator, MAX_RUN_SPANS, OTLP_EVENT, SPANS_EVENT } from '../../../../src/agents/command/agUiEvents';
import { commandSpanRecords } from '../../../../src/agents/command/commandSpans';

const link = { sessionId: 's1', branchId: 'retry', turnNumber: 4 };

describe('spans from agent commands', () => {
  it('reads SDK spans (one, a list, or { spans }) and OTLP exports, linked to the run, and leaves out the rest', () => {
    const t = new AgUiTranslator('run-1', () => undefined);
    const sdk = (id: string, data: Record<string, unknown>) => ({
      object: 'trace.span',
      id: `span_${id.padStart(24, '0')}`,
      trace_id: `trace_${'c'.repeat(32)}`,
      parent_id: null,
      started_at: '2026-12-02T09:00:00.000Z',
      ended_at: '2026-12-02T09:00:01.250Z',
      span_data: data,
      error: null,
    });
    t.event({
      type: 'CUSTOM',
      name: SPANS_EVENT,
      value: { spans: [sdk('1', { type: 'response', model: 'gpt-4.1', usage: { input_tokens: 90, output_tokens: 9 } })] },
    });
    t.event({ type: 'CUSTOM', name: SPANS_EVENT, value: [sdk('2', { type: 'function', name: 'lookup', input: '{}', output: 'x' })] });
    t.event({ type: 'CUSTOM', name: SPANS_EVENT, value: { not: 'a span' } });
    t.event({
      type: 'CUSTOM',
      name: OTLP_EVENT,
      value: {
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: 'd'.repeat(32),
                    spanId: 'e'.repeat(16),
                    name: 'execute_tool search',
                    startTimeUnixNano: '1764666000000000000',
                    attributes: [{ key: 'gen_ai.conversation.id', value: { stringValue: 'someone-else' } }],
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    const { records, rejected } = commandSpanRecords(t.sdkSpans, t.otlp, link);
    assert.deepEqual(
      records.map((r) => [r.kind, r.name, r.model, r.inputTokens, r.endUs - r.startUs]),
      [
        ['model', 'response gpt-4.1', 'gpt-4.1', 90, 1_250_000],
        ['tool', 'lookup', null, null, 1_250_000],
        ['other', 'execute_tool search', null, null, 0],
      ],
    );
    for (const r of records) assert.deepEqual(r.link, link, 'the run knows its turn better than an attribute');
    assert.ok(records.every((r) => r.source === 'command'));
    assert.deepEqual(rejected, ['an agent-sessions.spans value without id and trace_id']);
  });

  it(`keeps at most ${MAX_RUN_SPANS} spans of a run and counts the rest`, () => {
    const t = new AgUiTranslator('run-2', () => undefined);
    const many = Array.from({ length: MAX_RUN_SPANS + 7 }, (_, i) => ({ id: `span_${i}`, trace_id: 'trace_x' }));
    t.event({ type: 'CUSTOM', name: SPANS_EVENT, value: many });
    assert.equal(t.sdkSpans.length, MAX_RUN_SPANS);
    assert.equal(t.droppedSpans, 7);
  });
});
