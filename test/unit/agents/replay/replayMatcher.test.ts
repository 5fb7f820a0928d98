/**
 * Matching a run's calls against the replay table (src/agents/replay/replayMatcher.ts): name and JSON-equal
 * arguments; identical calls consumed in recorded order; name-only tools; strict refuses with the nearest call and an
 * argument diff; a renamed tool is unmatched with the nearest name; live replays nothing.
 */
import { strict as assert } from 'node:assert';
import { ReplayMatcher, StrictReplayError } from '../../../../src/agents/replay/replayMatcher';
import type { RecordedCall, ReplayTable, ToolsMode } from '../../../../src/shared/protocol/replay';

function recorded(callId: string, name: string, args: string, output: unknown = `out ${callId}`, hasOutput = true): RecordedCall {
  return { callId, name, arguments: args, output: hasOutput ? output : null, hasOutput, branchId: 'main', turn: 2 };
}
function table(...calls: RecordedCall[]): ReplayTable {
  return { branchId: 'main', turn: 2, calls, hosted: [] };
}
const matcher = (t: ReplayTable, mode: ToolsMode = 'replay', nameOnly: string[] = []) => new ReplayMatcher(t, { mode, nameOnly });

/** The strict refusal `fn` throws. */
function refusal(fn: () => unknown): StrictReplayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof StrictReplayError, String(err));
    return err;
  }
  assert.fail('no StrictReplayError');
}

describe('replay: matching calls against the table', () => {
  const weatherTurn = () =>
    table(
      recorded('r1', 'get_weather', '{"city":"Paris"}', 'sunny'),
      recorded('r2', 'get_weather', '{"city":"Paris"}', 'rain'),
      recorded('r3', 'lookup_capital', '{"country":"France"}', 'Paris'),
    );

  it('replays identical calls in recorded order, each recorded call once', () => {
    const m = matcher(weatherTurn());
    const a = m.decide('n1', 'get_weather', '{"city":"Paris"}');
    const b = m.decide('n2', 'get_weather', '{ "city" : "Paris" }');
    const c = m.decide('n3', 'get_weather', '{"city":"Paris"}');
    assert.deepEqual(
      [a, b].map((d) => (d.outcome === 'replayed' ? [d.recorded.callId, d.recorded.output] : d.outcome)),
      [
        ['r1', 'sunny'],
        ['r2', 'rain'],
      ],
    );
    assert.equal(c.outcome, 'live', 'a third identical call has no recorded output left');
    assert.deepEqual(m.marks, [
      { callId: 'n1', name: 'get_weather', arguments: '{"city":"Paris"}', outcome: 'replayed', recordedCallId: 'r1' },
      { callId: 'n2', name: 'get_weather', arguments: '{ "city" : "Paris" }', outcome: 'replayed', recordedCallId: 'r2' },
      { callId: 'n3', name: 'get_weather', arguments: '{"city":"Paris"}', outcome: 'live', recordedCallId: 'r1' },
    ]);
  });

  it('matches out of recorded order: any unused recorded call with the same name and arguments', () => {
    const m = matcher(weatherTurn());
    const first = m.decide('n1', 'lookup_capital', '{"country":"France"}');
    assert.equal(first.outcome === 'replayed' && first.recorded.callId, 'r3');
    const second = m.decide('n2', 'get_weather', '{"city":"Paris"}');
    assert.equal(second.outcome === 'replayed' && second.recorded.callId, 'r1');
  });

  it('ignores key order and number spelling', () => {
    const m = matcher(table(recorded('r1', 'book', '{"room":1,"nights":2,"opts":{"b":true,"a":false}}')));
    const d = m.decide('n1', 'book', '{"opts":{"a":false,"b":true},"nights":2.0,"room":1e0}');
    assert.equal(d.outcome, 'replayed');
  });

  it('runs a call with other arguments live, naming the nearest recorded call', () => {
    const m = matcher(weatherTurn());
    const d = m.decide('n1', 'get_weather', '{"city":"Lisbon"}');
    assert.equal(d.outcome, 'live');
    assert.equal(d.outcome === 'live' && d.nearest?.callId, 'r1');
    assert.deepEqual(m.marks[0], {
      callId: 'n1',
      name: 'get_weather',
      arguments: '{"city":"Lisbon"}',
      outcome: 'live',
      recordedCallId: 'r1',
    });
  });

  it('never replays a recorded call that has no output', () => {
    const m = matcher(table(recorded('r1', 'send_email', '{"to":"a"}', null, false)));
    assert.equal(m.decide('n1', 'send_email', '{"to":"a"}').outcome, 'live');
  });

  it('matches a name-only tool by its name alone, still in recorded order, and only that tool', () => {
    const t = table(
      recorded('r1', 'now', '{"nonce":"aaa"}', 't1'),
      recorded('r2', 'now', '{"nonce":"bbb"}', 't2'),
      recorded('r3', 'get_weather', '{"city":"Paris"}'),
    );
    const m = matcher(t, 'replay', ['now']);
    const a = m.decide('n1', 'now', '{"nonce":"zzz"}');
    const b = m.decide('n2', 'now', 'not even json');
    assert.deepEqual(
      [a, b].map((d) => d.outcome === 'replayed' && d.recorded.output),
      ['t1', 't2'],
    );
    assert.equal(m.decide('n3', 'get_weather', '{"city":"Oslo"}').outcome, 'live', 'other tools still compare arguments');
  });

  it('compares arguments that are not JSON as text', () => {
    const m = matcher(table(recorded('r1', 'raw', 'city=Paris', 'ok'), recorded('r2', 'raw', 'city=Paris', 'ok2')));
    assert.equal(m.decide('n1', 'raw', 'city=Paris').outcome, 'replayed');
    assert.equal(m.decide('n2', 'raw', 'city= Paris').outcome, 'live');
  });

  it('strict: refuses an unmatched call with the nearest recorded call and the argument diff', () => {
    const m = matcher(weatherTurn(), 'strict');
    assert.equal(m.decide('n1', 'get_weather', '{"city":"Paris"}').outcome, 'replayed');
    const err = refusal(() => m.decide('n2', 'lookup_capital', '{"country":"Spain"}'));
    assert.equal(err.nearest?.callId, 'r3');
    assert.deepEqual(err.diff, ['country: "France" → "Spain"']);
    assert.deepEqual(err.call, { name: 'lookup_capital', arguments: '{"country":"Spain"}' });
    assert.equal(
      err.message,
      'Strict replay: the call lookup_capital({"country":"Spain"}) matches no recorded call, so it was not run and nothing was written. ' +
        'Nearest recorded call: lookup_capital (r3): country: "France" → "Spain".',
    );
    assert.deepEqual(m.marks[1], {
      callId: 'n2',
      name: 'lookup_capital',
      arguments: '{"country":"Spain"}',
      outcome: 'unmatched',
      recordedCallId: 'r3',
    });
  });

  it('strict: a call repeated more often than recorded is refused, and says its twin was used', () => {
    const m = matcher(table(recorded('r1', 'get_weather', '{"city":"Paris"}')), 'strict');
    m.decide('n1', 'get_weather', '{"city":"Paris"}');
    const err = refusal(() => m.decide('n2', 'get_weather', '{"city":"Paris"}'));
    assert.match(err.message, /Nearest recorded call: get_weather \(r1\) \(its output was already used by an identical call\)\.$/);
  });

  it('strict: arguments that are not JSON are said to be compared as text', () => {
    const m = matcher(table(recorded('r1', 'raw', 'a=1')), 'strict');
    const err = refusal(() => m.decide('n1', 'raw', 'a=2'));
    assert.match(err.message, /Its arguments are not valid JSON, so they were compared as text\./);
    assert.deepEqual(err.diff, ['"a=1" → "a=2" (compared as text: not JSON)']);
  });

  it('strict: a turn without calls refuses every call, saying so', () => {
    const err = refusal(() => matcher(table(), 'strict').decide('n1', 'get_weather', '{}'));
    assert.equal(err.nearest, null);
    assert.match(err.message, /The recorded turn has no tool calls\.$/);
  });

  it('strict: a call recorded without an output is said to have none, not to have been used', () => {
    const err = refusal(() => matcher(table(recorded('r1', 'charge', '{"a":5}', null, false)), 'strict').decide('n1', 'charge', '{"a":5}'));
    assert.match(err.message, /Nearest recorded call: charge \(r1\) \(it was recorded without an output, so it cannot be replayed\)\.$/);
  });

  it('strict past the recording: says there is no recorded turn', () => {
    const m = new ReplayMatcher(table(), { mode: 'strict', recorded: false });
    const err = refusal(() => m.decide('n1', 'send_mail', '{}'));
    assert.match(err.message, /The run continues past the recording: there is no recorded turn, so no call can be replayed\.$/);
  });

  it('strict: a name-only tool called once more than recorded is told its output was used, with no argument diff', () => {
    const m = matcher(table(recorded('m1', 'send_mail', '{"ts":1}')), 'strict', ['send_mail']);
    m.decide('n1', 'send_mail', '{"ts":2}');
    const err = refusal(() => m.decide('n2', 'send_mail', '{"ts":3}'));
    assert.deepEqual(err.diff, []);
    assert.match(err.message, /send_mail \(m1\) \(send_mail is matched by name only; its output was already used by an earlier call\)\.$/);
  });

  it('plans a response: the model order decides between identical calls, and marks follow it', () => {
    const m = matcher(table(recorded('r1', 'now', '{}', 'first'), recorded('r2', 'now', '{}', 'second')));
    m.plan([
      { callId: 'a', name: 'now', arguments: '{}' },
      { callId: 'b', name: 'now', arguments: '{}' },
    ]);
    // The SDK reaches b's tool first.
    const b = m.decide('b', 'now', '{}');
    const a = m.decide('a', 'now', '{}');
    assert.deepEqual([a.outcome === 'replayed' && a.recorded.callId, b.outcome === 'replayed' && b.recorded.callId], ['r1', 'r2']);
    assert.deepEqual(
      m.marks.map((x) => x.callId),
      ['a', 'b'],
    );
  });

  it('matches namespaced tools by namespace and name', () => {
    const m = matcher(table(recorded('r1', 'sandbox.refund', '{"o":7}')), 'replay');
    assert.equal(m.decide('n1', 'billing.refund', '{"o":7}').outcome, 'live');
    assert.equal(m.decide('n2', 'sandbox.refund', '{"o":7}').outcome, 'replayed');
  });

  it('never replays a call that cannot be replayed (a computer action): live in replay, refused in strict', () => {
    assert.equal(
      matcher(table(recorded('r1', 'computer', '{"type":"click"}'))).decide('n1', 'computer', '{"type":"click"}', false).outcome,
      'live',
    );
    const err = refusal(() =>
      matcher(table(recorded('r1', 'computer', '{"type":"click"}')), 'strict').decide('n1', 'computer', '{"type":"click"}', false),
    );
    assert.match(err.message, /runs on this machine and cannot be replayed, so it was not run/);
  });

  it('a renamed tool is unmatched, with the nearest recorded name', () => {
    const t = table(recorded('r1', 'lookup_capital', '{"country":"France"}'), recorded('r2', 'get_weather', '{"city":"Paris"}'));
    const live = matcher(t).decide('n1', 'get_weather_v2', '{"city":"Paris"}');
    assert.equal(live.outcome === 'live' && live.nearest?.name, 'get_weather');
    const err = refusal(() => matcher(t, 'strict').decide('n1', 'get_weather_v2', '{"city":"Paris"}'));
    assert.equal(err.nearest?.callId, 'r2');
    assert.deepEqual(err.diff, [], 'no argument diff across two tools');
    assert.match(err.message, /Nearest recorded call: get_weather \(r2\), another tool\.$/);
  });

  it('live: nothing is replayed, every call is marked live without a recorded call', () => {
    const m = matcher(weatherTurn(), 'live');
    assert.equal(m.decide('n1', 'get_weather', '{"city":"Paris"}').outcome, 'live');
    assert.equal(m.decide('n2', 'lookup_capital', '{"country":"France"}').outcome, 'live');
    assert.deepEqual(
      m.marks.map((x) => [x.callId, x.outcome, x.recordedCallId]),
      [
        ['n1', 'live', null],
        ['n2', 'live', null],
      ],
    );
  });
});
