/**
 * The extension's replay rules (src/extension/replay/replayRecords.ts): the tools defaults as the settings give them
 * (a typo never means live), the mode a run uses (a run past the recording is live whatever was chosen), which runs
 * are recorded, the what-if form's preview of a stored turn, and a compare column's counts.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import {
  NAME_ONLY_LIMITS,
  replayCounts,
  replayDefaults,
  replayTableView,
  runRecordOf,
  runToolsMode,
  startedRunOf,
} from '../../../../src/extension/replay/replayRecords';
import type { ReplaySummary } from '../../../../src/shared/protocol/replay';
import type { RunCompletedEvent, RunFailedEvent } from '../../../../src/shared/protocol/runEvents';
import { AdvancedSQLiteSession, openSessionDatabase } from '../../../../src/store';
import { tempDir } from '../../../support/tempFiles';

const summary = (over: Partial<ReplaySummary> = {}): ReplaySummary => ({
  mode: 'replay',
  source: { branchId: 'main', turn: 2 },
  recordedCalls: 2,
  marks: [
    { callId: 'n1', name: 'get_weather', arguments: '{"city":"Paris"}', outcome: 'replayed', recordedCallId: 'c1' },
    { callId: 'n2', name: 'send_email', arguments: '{"to":"a@b.c"}', outcome: 'live', recordedCallId: null },
  ],
  hosted: [],
  divergence: null,
  disagreements: [],
  ...over,
});
const written = (turn: number | null) => ({ summary: '', kept: [], removed: [], notSaved: [], turn, usageStored: false });
const completed = (turn: number | null, replay?: ReplaySummary): RunCompletedEvent => ({
  kind: 'run/completed',
  runId: 'r1',
  finalOutput: 'ok',
  usage: null,
  written: written(turn),
  ...(replay ? { replay } : {}),
});

describe('replay records', () => {
  it('reads the settings as defaults: an unknown mode is replay, never live; names checked and bounded', () => {
    assert.deepEqual(replayDefaults('strict', ['get_time']), { mode: 'strict', nameOnly: ['get_time'] });
    assert.deepEqual(replayDefaults('live', []), { mode: 'live', nameOnly: [] });
    for (const bad of ['off', 'LIVE', '', 3, null, undefined, { mode: 'live' }])
      assert.equal(replayDefaults(bad, []).mode, 'replay', String(bad));
    assert.deepEqual(
      replayDefaults('replay', [' get_time ', 7, '', 'get_time', 'x'.repeat(NAME_ONLY_LIMITS.nameChars + 1), null]).nameOnly,
      ['get_time'],
    );
    assert.deepEqual(replayDefaults('replay', 'get_time').nameOnly, []);
    const many = Array.from({ length: NAME_ONLY_LIMITS.names + 5 }, (_, i) => `tool_${i}`);
    assert.equal(replayDefaults('replay', many).nameOnly.length, NAME_ONLY_LIMITS.names);
  });

  it('runs a fork in the chosen mode, else the default; a run past the recording is live whatever was chosen', () => {
    const defaults = { mode: 'strict' as const, nameOnly: [] };
    assert.equal(runToolsMode(true, undefined, defaults), 'strict');
    assert.equal(runToolsMode(true, 'live', defaults), 'live');
    assert.equal(runToolsMode(true, 'replay', defaults), 'replay');
    assert.equal(runToolsMode(false, undefined, defaults), 'live');
    assert.equal(runToolsMode(false, 'strict', defaults), 'live');
  });

  it('records a run that stored a turn and re-ran a recording or called a tool; under the branch it started on', () => {
    const started = startedRunOf({
      kind: 'run/started',
      runId: 'r1',
      sessionId: 'trip',
      branchId: 'retry-1',
      forkedFrom: { branchId: 'main', turn: 2 },
      input: 'Weather?',
      agentName: 'a',
      warnings: [],
    });
    assert.deepEqual(started, { sessionId: 'trip', branchId: 'retry-1', forked: true });
    assert.equal(startedRunOf(completed(2, summary())), undefined);
    assert.deepEqual(runRecordOf(started, completed(2, summary())), {
      sessionId: 'trip',
      branchId: 'retry-1',
      turn: 2,
      summary: summary(),
      freshBranch: true,
    });
    // Nothing stored (a strict refusal rolls the run back whole): no call of it exists to be marked.
    const failed: RunFailedEvent = { ...completed(null, summary()), kind: 'run/failed', failure: 'tool', message: 'no match' };
    assert.equal(runRecordOf(started, failed), null);
    // No summary (a run that never started its tools), or nothing to show (a chat past the recording, no tools).
    assert.equal(runRecordOf(started, completed(2)), null);
    assert.equal(runRecordOf(started, completed(3, summary({ mode: 'live', source: null, marks: [] }))), null);
    assert.notEqual(runRecordOf(started, completed(3, summary({ mode: 'live', source: null }))), null);
    assert.equal(runRecordOf(undefined, completed(2, summary())), null);
  });

  it("previews a stored turn's recorded calls with the defaults; unreadable items skipped", async () => {
    const tmp = tempDir('asi-replay-table-');
    try {
      const path = join(tmp.dir, 'trip.db');
      const s = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: path, createTables: true });
      await s.addItems([
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'Paris: 18°C' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: '18°C.' }] },
      ] as never);
      s.close();
      const db = openSessionDatabase(path);
      try {
        const view = replayTableView(
          db.getTurnItems('trip', 'main', 1),
          { branchId: 'main', turn: 1 },
          { mode: 'strict', nameOnly: ['get_time'] },
        );
        assert.deepEqual(view.calls, [
          {
            callId: 'c1',
            name: 'get_weather',
            arguments: '{"city":"Paris"}',
            output: 'Paris: 18°C',
            hasOutput: true,
            branchId: 'main',
            turn: 1,
          },
        ]);
        assert.deepEqual(view.hosted, [{ type: 'web_search_call', callId: 'ws_1' }]);
        assert.deepEqual([view.mode, view.nameOnly, view.branchId, view.turn], ['strict', ['get_time'], 'main', 1]);
        const corrupt = replayTableView([{ corrupt: true } as never], { branchId: 'main', turn: 1 }, { mode: 'replay', nameOnly: [] });
        assert.deepEqual(corrupt.calls, []);
      } finally {
        db.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it("counts a compare column's calls from the newest run on its branch", () => {
    assert.equal(replayCounts([]), undefined);
    const divergence = {
      step: 2,
      recorded: { name: 'get_weather', arguments: '{}' },
      actual: { name: 'send_email', arguments: '{}' },
      diff: [],
    };
    const older = { runId: 'r0', turn: 2, summary: summary({ marks: [] }) };
    const newer = { runId: 'r1', turn: 3, summary: summary({ divergence }) };
    assert.deepEqual(replayCounts([older, newer]), { replayed: 1, live: 1, unmatched: 0, divergence });
    assert.deepEqual(replayCounts([newer, older]), { replayed: 0, live: 0, unmatched: 0, divergence: null });
  });
});
