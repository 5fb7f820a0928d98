/**
 * The conversation view's words about replayed tool calls: the what-if form's preview rows, the badge of each call
 * from the replay marks (and from a live run's events).
 */
import { strict as assert } from 'node:assert';
import type { ReplayMark, ReplayMarksView, ReplayTableView, StoredReplayMark } from '../../../../src/shared/protocol/replay';
import {
  PREVIEW_ARGUMENT_CHARS,
  callBadges,
  replayPreviewRows,
  runCallBadge,
  toolsModeLabel,
} from '../../../../webview/conversation/logic/replayViews';

const mark = (callId: string, name: string, outcome: ReplayMark['outcome'], extra: Partial<StoredReplayMark> = {}): StoredReplayMark => ({
  callId,
  name,
  arguments: '{}',
  outcome,
  recordedCallId: outcome === 'replayed' ? `rec-${callId}` : null,
  runId: 'run-1',
  recordedBranchId: outcome === 'replayed' ? 'main' : null,
  recordedTurn: outcome === 'replayed' ? 2 : null,
  ...extra,
});

describe('replay views', () => {
  it('previews a turn: each recorded call shortened, a call never answered said so, hosted calls by their people name', () => {
    const table: ReplayTableView = {
      branchId: 'main',
      turn: 2,
      mode: 'replay',
      nameOnly: [],
      calls: [
        {
          callId: 'c1',
          name: 'get_weather',
          arguments: '{"city":\n "Paris"}',
          output: 'Sunny, 21 °C',
          hasOutput: true,
          branchId: 'main',
          turn: 2,
        },
        {
          callId: 'c2',
          name: 'search',
          arguments: `{"q":"${'x'.repeat(400)}"}`,
          output: [{ type: 'input_text', text: 'parts' }],
          hasOutput: true,
          branchId: 'main',
          turn: 2,
        },
        { callId: 'c3', name: 'send_email', arguments: '{}', output: null, hasOutput: false, branchId: 'main', turn: 2 },
      ],
      hosted: [{ type: 'web_search_call', callId: 'ws1' }],
    };
    const rows = replayPreviewRows(table);
    assert.deepEqual(rows[0], { kind: 'call', callId: 'c1', name: 'get_weather', arguments: '{"city": "Paris"}', output: 'Sunny, 21 °C' });
    assert.equal(rows[1]?.kind === 'call' && Array.from(rows[1].arguments).length, PREVIEW_ARGUMENT_CHARS);
    assert.ok(rows[1]?.kind === 'call' && rows[1].arguments.endsWith('…'));
    assert.equal(rows[1]?.kind === 'call' && rows[1].output, 'parts');
    assert.equal(rows[2]?.kind === 'call' && rows[2].output, null);
    assert.deepEqual(rows[3], { kind: 'hosted', callId: 'ws1', name: 'web search' });
  });

  it('labels every tools mode', () => {
    assert.deepEqual((['replay', 'strict', 'live'] as const).map(toolsModeLabel), [
      'Replay recorded results',
      'Strict: fail on a call with no recorded result',
      'Live: run every tool again',
    ]);
  });

  it('badges each marked call by its id, a replayed one with the recorded call it got its output from', () => {
    const view: ReplayMarksView = {
      marks: [
        mark('n1', 'get_weather', 'replayed'),
        mark('n2', 'send_email', 'live', { recordedCallId: 'rec-near' }),
        mark('n3', 'lookup', 'unmatched', { reported: 'replayed' }),
        // An older run's mark of the same call id: the newest (listed first) wins.
        mark('n1', 'get_weather', 'live', { runId: 'run-0' }),
      ],
      runs: [],
    };
    const badges = callBadges(view);
    assert.equal(badges.size, 3);
    assert.deepEqual(badges.get('n1'), {
      outcome: 'replayed',
      label: 'replayed',
      title: 'The recorded output of rec-n1 was used; the tool did not run.',
      recorded: { callId: 'rec-n1', branchId: 'main', turn: 2 },
    });
    assert.equal(badges.get('n2')?.outcome, 'live');
    assert.equal(badges.get('n2')?.recorded, null);
    assert.equal(badges.get('n2')?.title, 'The tool ran live: no recorded call matched (nearest: rec-near).');
    assert.equal(badges.get('n3')?.title, "No recorded call matched this call. The agent reported 'replayed'.");
    assert.equal(callBadges(undefined).size, 0);
  });

  it('gives a replayed call no link when the store does not know where its recorded call lives', () => {
    const badges = callBadges({ marks: [mark('n1', 'get_weather', 'replayed', { recordedBranchId: null, recordedTurn: null })], runs: [] });
    assert.equal(badges.get('n1')?.recorded, null);
  });

  it("badges a live run's call from its tool/output event, and nothing without one", () => {
    assert.equal(runCallBadge(undefined), undefined);
    assert.deepEqual(runCallBadge({ outcome: 'replayed', recordedCallId: 'r1' }), {
      outcome: 'replayed',
      label: 'replayed',
      title: 'The recorded output of r1 was used; the tool did not run.',
      recorded: null,
    });
  });
});
