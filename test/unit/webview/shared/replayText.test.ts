/**
 * The run summary's sentence and the divergence in the views' language: in English they must say exactly what the
 * CLI's `replaySentence` and `divergenceSentence` say (src/shared/protocol/replay.ts).
 */
import { strict as assert } from 'node:assert';
import { divergenceSentence, replaySentence, type ReplayMark, type ReplaySummary } from '../../../../src/shared/protocol/replay';
import { divergenceText, replaySummaryShown, replaySummaryText } from '../../../../webview/shared/logic/replayText';

const mark = (callId: string, name: string, outcome: ReplayMark['outcome']): ReplayMark => ({
  callId,
  name,
  arguments: '{}',
  outcome,
  recordedCallId: null,
});

const summary = (s: Partial<ReplaySummary>): ReplaySummary => ({
  mode: 'replay',
  source: { branchId: 'main', turn: 2 },
  recordedCalls: 0,
  marks: [],
  hosted: [],
  divergence: null,
  disagreements: [],
  ...s,
});

describe('replay text', () => {
  it('says in English exactly what the CLI says about a run', () => {
    const diverged = {
      step: 2,
      recorded: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      actual: { name: 'get_weather', arguments: '{"city":"Lisbon"}' },
      diff: ['city: "Paris" → "Lisbon"'],
    };
    const cases: ReplaySummary[] = [
      summary({ marks: [mark('a', 'x', 'replayed')] }),
      summary({
        marks: [mark('a', 'x', 'replayed'), mark('b', 'x', 'replayed'), mark('c', 'x', 'replayed'), mark('d', 'send_email', 'live')],
      }),
      summary({ marks: [] }),
      summary({ mode: 'strict', marks: [mark('a', 'x', 'unmatched'), mark('b', 'y', 'unmatched')] }),
      summary({ mode: 'live', marks: [] }),
      summary({ mode: 'live', marks: [mark('a', 'x', 'live'), mark('b', 'y', 'live')] }),
      summary({
        marks: [mark('a', 'x', 'live')],
        hosted: ['web_search_call', 'web_search_call'],
        divergence: diverged,
        disagreements: ['z'],
      }),
      summary({
        marks: [mark('a', 'x', 'replayed')],
        divergence: { step: 2, recorded: { name: 'a', arguments: '{}' }, actual: { name: 'b', arguments: '{}' }, diff: [] },
      }),
      summary({ divergence: { step: 1, recorded: { name: 'a', arguments: '{}' }, actual: null, diff: [] } }),
      summary({ divergence: { step: 3, recorded: null, actual: { name: 'b', arguments: '{}' }, diff: [] } }),
      summary({ divergence: { step: 3, recorded: null, actual: null, diff: [] } }),
    ];
    for (const s of cases) assert.equal(replaySummaryText(s), replaySentence(s));
    assert.equal(replaySummaryText(cases[1] as ReplaySummary), '3 tool calls replayed, 1 ran live (send_email).');
    assert.equal(divergenceText(diverged), divergenceSentence(diverged));
  });

  it('shows a summary for a re-run of a recorded turn or a run that called a tool, not for a plain chat run', () => {
    assert.equal(replaySummaryShown(summary({ mode: 'live', source: null })), false);
    assert.equal(replaySummaryShown(summary({ mode: 'live', source: null, marks: [mark('a', 'x', 'live')] })), true);
    assert.equal(replaySummaryShown(summary({ marks: [] })), true, 'a re-run that called nothing says so');
  });
});
