/**
 * The settlement's marks for what an agent command wrote (src/agents/replay/writtenCalls.ts), and the translator's
 * reading of its tool-replay reports (src/agents/command/agUiEvents.ts): a call is replayed only when it wrote the
 * recorded output of a matching unused call; identical calls are consumed in recorded order; stored values compare as
 * data; reports are checked, bounded and never believed.
 */
import { strict as assert } from 'node:assert';
import { checkWrittenCalls, type ReplayReport } from '../../../../src/agents/replay/writtenCalls';
import { AgUiTranslator, MAX_REPLAY_REPORTS, TOOL_REPLAY_EVENT } from '../../../../src/agents/command/agUiEvents';
import type { RecordedCall, ReplayTable, ToolsMode } from '../../../../src/shared/protocol/replay';
import type { RunEvent } from '../../../../src/shared/protocol/runEvents';

function recorded(callId: string, name: string, args: string, output: unknown, hasOutput = true): RecordedCall {
  return { callId, name, arguments: args, output: hasOutput ? output : null, hasOutput, branchId: 'main', turn: 2 };
}
const TABLE: ReplayTable = {
  branchId: 'main',
  turn: 2,
  calls: [
    recorded('r1', 'now', '{}', '10:00'),
    recorded('r2', 'now', '{}', '10:05'),
    recorded('r3', 'lookup', '{"q":"a"}', [{ type: 'input_text', text: 'parts' }]),
    recorded('r4', 'lookup', '{"q":"never"}', null, false),
  ],
  hosted: [{ type: 'file_search_call', callId: 'fs1' }],
};

/** The stored items of written calls: each call then its output (`output: undefined` writes no output item). */
function written(...calls: [string, string, string, unknown][]): unknown[] {
  return calls.flatMap(([callId, name, args, output]) => [
    { type: 'function_call', call_id: callId, name, arguments: args },
    ...(output === undefined ? [] : [{ type: 'function_call_output', call_id: callId, output }]),
  ]);
}

function check(mode: ToolsMode, items: unknown[], reports: ReplayReport[] = [], nameOnly: string[] = []) {
  return checkWrittenCalls({ mode, table: TABLE, source: { branchId: 'main', turn: 2 }, nameOnly, written: items, reports });
}

describe('replay: the marks of calls an agent command wrote', () => {
  it('identical calls take the recorded outputs in order; an output that is not one of theirs ran live', () => {
    const r = check('replay', written(['c1', 'now', '{}', '10:00'], ['c2', 'now', '{ }', '10:05'], ['c3', 'now', '{}', '10:00']));
    assert.deepEqual(
      r.summary.marks.map((m) => [m.callId, m.outcome, m.recordedCallId]),
      [
        ['c1', 'replayed', 'r1'],
        ['c2', 'replayed', 'r2'],
        // Both recorded `now` outputs are used: the third wrote an output again that no unused call recorded.
        ['c3', 'live', 'r1'],
      ],
    );
    assert.equal(r.strictFailure, null);
  });

  it('the second of two identical calls may take the second output even when the first ran live', () => {
    const r = check('replay', written(['c1', 'now', '{}', '11:00'], ['c2', 'now', '{}', '10:05']));
    assert.deepEqual(
      r.summary.marks.map((m) => [m.outcome, m.recordedCallId]),
      [
        ['live', 'r1'],
        ['replayed', 'r2'],
      ],
    );
  });

  it('outputs compare as stored data: a list of content parts equals the recorded list, not its JSON text', () => {
    const parts = [{ text: 'parts', type: 'input_text' }];
    const same = check('replay', written(['c1', 'lookup', '{"q": "a"}', parts]));
    const text = check('replay', written(['c1', 'lookup', '{"q": "a"}', JSON.stringify(parts)]));
    assert.deepEqual([same.summary.marks[0]?.outcome, text.summary.marks[0]?.outcome], ['replayed', 'live']);
  });

  it('name-only tools match any arguments; a recorded call without an output is never replayed', () => {
    const r = check('replay', written(['c1', 'now', '{"at":"12:00"}', '10:00'], ['c2', 'lookup', '{"q":"never"}', null]), [], ['now']);
    assert.deepEqual(
      r.summary.marks.map((m) => m.outcome),
      ['replayed', 'live'],
    );
  });

  it('a call without an output is not marked (the settlement removes it)', () => {
    const r = check('replay', written(['c1', 'now', '{}', undefined]));
    assert.deepEqual(r.summary.marks, []);
  });

  it('strict: the first call that ran live fails the run; one matching nothing is unmatched', () => {
    const r = check('strict', written(['c1', 'now', '{}', '10:00'], ['c2', 'lookup', '{"q":"b"}', 'b!'], ['c3', 'nope', '{}', 'x']));
    assert.deepEqual(
      r.summary.marks.map((m) => [m.outcome, m.recordedCallId]),
      [
        ['replayed', 'r1'],
        ['unmatched', 'r3'],
        ['unmatched', 'r2'],
      ],
    );
    assert.equal(
      r.strictFailure,
      'Strict replay: the agent ran lookup({"q":"b"}) live, which matches no recorded call, so the run was rolled back and nothing it wrote was kept. Nearest recorded call: lookup (r3): q: "a" → "b".',
    );
  });

  it('strict past the recording (a continued branch): the failure says there is no recorded turn, not that it had no calls', () => {
    const r = checkWrittenCalls({
      mode: 'strict',
      table: { branchId: 'main', turn: 0, calls: [], hosted: [] },
      source: null,
      nameOnly: [],
      written: written(['c1', 'now', '{}', '10:00']),
      reports: [],
    });
    assert.match(r.strictFailure ?? '', /there is no recorded turn, so no call can be replayed\.$/);
    const recordedNone = checkWrittenCalls({
      mode: 'strict',
      table: { branchId: 'main', turn: 2, calls: [], hosted: [] },
      source: { branchId: 'main', turn: 2 },
      nameOnly: [],
      written: written(['c1', 'now', '{}', '10:00']),
      reports: [],
    });
    assert.match(recordedNone.strictFailure ?? '', /The recorded turn has no function calls\.$/);
  });

  it('strict: a call the agent refused (reported, never written) is where the run left the recording', () => {
    const refused: ReplayReport = { callId: 'c1', name: 'now', outcome: 'unmatched', recordedCallId: 'r1', arguments: '{"tz":"UTC"}' };
    const r = check('strict', [], [refused]);
    assert.deepEqual(
      r.summary.marks.map((m) => [m.callId, m.outcome]),
      [['c1', 'unmatched']],
    );
    // Not "this run stopped calling tools": it called `now` with other arguments, and was refused.
    assert.deepEqual(r.summary.divergence, {
      step: 1,
      recorded: { name: 'now', arguments: '{}' },
      actual: { name: 'now', arguments: '{"tz":"UTC"}' },
      diff: ['tz: (absent) → "UTC"'],
    });
  });

  it('strict: the calls an agent replayed before its refusal are what happened, not disagreements', () => {
    // docs/agent-command.md §4: the refused run is rolled back, so nothing is written; the reports tell the calls.
    const r = check(
      'strict',
      [],
      [
        { callId: 'c1', name: 'now', outcome: 'replayed', recordedCallId: 'r1', arguments: '{}' },
        { callId: 'c2', name: 'lookup', outcome: 'unmatched', recordedCallId: 'r3', arguments: '{"q":"b"}' },
      ],
    );
    assert.deepEqual(
      r.summary.marks.map((m) => [m.callId, m.outcome, m.recordedCallId]),
      [
        ['c1', 'replayed', 'r1'],
        ['c2', 'unmatched', 'r3'],
      ],
    );
    assert.deepEqual(r.summary.disagreements, []);
    // Step 1 matched (`now` replayed from r1); the run left the recording at step 2.
    assert.equal(r.summary.divergence?.step, 2);
    // A replayed report of a recorded call that does not exist is still not believed.
    const bad = check(
      'strict',
      [],
      [
        { callId: 'c1', name: 'now', outcome: 'replayed', recordedCallId: 'r9' },
        { callId: 'c2', name: 'now', outcome: 'unmatched', recordedCallId: null },
      ],
    );
    assert.deepEqual(bad.summary.disagreements, ['now (c1): reported replayed from r9, but no such call was written']);
  });

  it('live marks every call live with no recorded call; the summary lists the hosted calls and the divergence', () => {
    const r = check('live', written(['c1', 'now', '{}', '10:00']));
    assert.deepEqual(
      r.summary.marks.map((m) => [m.outcome, m.recordedCallId]),
      [['live', null]],
    );
    assert.deepEqual([r.summary.hosted, r.summary.recordedCalls, r.summary.divergence?.step], [['file_search_call'], 4, 2]);
  });

  it('reports: live and unmatched agree with a live mark; a wrong recorded call and an unwritten call disagree', () => {
    const report = (callId: string, outcome: ReplayReport['outcome'], recordedCallId: string | null): ReplayReport => ({
      callId,
      name: 'now',
      outcome,
      recordedCallId,
    });
    const r = check('replay', written(['c1', 'now', '{}', '10:00'], ['c2', 'now', '{}', '12:00']), [
      report('c1', 'replayed', 'r2'),
      report('c2', 'unmatched', null),
      report('c9', 'live', null),
    ]);
    assert.deepEqual(
      r.summary.marks.map((m) => m.reported),
      ['replayed', undefined],
    );
    assert.deepEqual(r.summary.disagreements, [
      'now (c1): reported replayed from r2, but its written output is the recorded output of r1',
      'now (c9): reported live, but no such call was written',
    ]);
  });
});

describe('the tool-replay reports an agent command sends', () => {
  const translator = () => {
    const events: RunEvent[] = [];
    return { t: new AgUiTranslator('run', (e) => void events.push(e)), events };
  };
  const custom = (value: unknown) => ({ type: 'CUSTOM', name: TOOL_REPLAY_EVENT, value });

  it('keeps valid reports, counts invalid ones, and puts a report on the output of its call', () => {
    const { t, events } = translator();
    t.event(custom({ callId: 'c1', name: 'now', outcome: 'replayed', recordedCallId: 'r1' }));
    t.event(custom({ callId: 'c2', name: 'now', outcome: 'live' }));
    for (const bad of [null, [], { callId: 'c3', name: 'now', outcome: 'skipped' }, { callId: '', name: 'n', outcome: 'live' }])
      t.event(custom(bad));
    t.event(custom({ callId: 'c4', name: 'now', outcome: 'live', recordedCallId: 'x'.repeat(513) }));
    t.event({ type: 'TOOL_CALL_RESULT', messageId: 'm', toolCallId: 'c1', content: '10:00' });
    assert.deepEqual(
      t.replayReports.map((r) => [r.callId, r.outcome, r.recordedCallId]),
      [
        ['c1', 'replayed', 'r1'],
        ['c2', 'live', null],
      ],
    );
    assert.equal(t.invalidReplayReports, 5);
    assert.deepEqual(events[0]?.kind === 'tool/output' && events[0].replay, { outcome: 'replayed', recordedCallId: 'r1' });
  });

  it(`keeps at most ${MAX_REPLAY_REPORTS} reports and counts the rest`, () => {
    const { t } = translator();
    for (let i = 0; i < MAX_REPLAY_REPORTS + 3; i++)
      t.event(custom({ callId: `c${i}`, name: 'now', outcome: 'live', recordedCallId: null }));
    assert.deepEqual([t.replayReports.length, t.droppedReplayReports], [MAX_REPLAY_REPORTS, 3]);
  });
});
