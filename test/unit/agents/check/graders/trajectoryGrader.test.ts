/** `trajectory` and `trajectory:args`: the recorded tools in order, by name or with arguments as JSON values. */
import { strict as assert } from 'node:assert';
import type { CaseRun, CheckCase, GraderResult } from '../../../../../src/agents/check/checkTypes';
import { TrajectoryGrader, trajectoryScore } from '../../../../../src/agents/check/graders/trajectoryGrader';
import { never, weatherCase, weatherRun } from '../checkKit';

const call = (name: string, args = '{}') => ({ name, arguments: args, output: 'ok' });

/** The grader's result, which it must give (a case with an expected trajectory). */
async function judge(withArguments: boolean, c: CheckCase, run: CaseRun): Promise<GraderResult> {
  const r = await new TrajectoryGrader(withArguments).grade(c, run, never);
  assert.ok(r, 'the grader gave no result');
  return r;
}

describe('trajectory graders', () => {
  it('passes the same tools in the same order, naming them', async () => {
    const r = await judge(false, weatherCase(), weatherRun());
    assert.deepEqual(r, { grader: 'trajectory', pass: true, score: 1, reason: '1 tool call as recorded (get_weather)' });
  });

  it('passes a turn without tool calls when the run makes none', async () => {
    const c = weatherCase({ expected: { answer: 'Hi', trajectory: [] } });
    const r = await judge(false, c, weatherRun({ trajectory: [] }));
    assert.equal(r.pass, true);
    assert.equal(r.reason, 'no tool calls, as recorded');
  });

  it('fails another tool, saying which step and which tools', async () => {
    const r = await judge(false, weatherCase(), weatherRun({ trajectory: [call('search_web')] }));
    assert.equal(r.pass, false);
    assert.equal(r.score, 0);
    assert.equal(r.reason, 'diverged at step 1: search_web instead of get_weather');
  });

  it('fails a missing and an extra call, with the counts', async () => {
    const missing = await judge(false, weatherCase(), weatherRun({ trajectory: [] }));
    assert.equal(missing.pass, false);
    assert.match(
      missing.reason,
      /step 1: the recording called get_weather next, this run stopped calling tools \(recorded 1 call, this run 0\)/,
    );
    const extra = await judge(false, weatherCase(), weatherRun({ trajectory: [call('get_weather'), call('send_email')] }));
    assert.equal(extra.pass, false);
    assert.equal(extra.score, 0.5);
    assert.match(extra.reason, /step 2: this run called send_email past the recording's calls/);
  });

  it('by name, other arguments pass; with :args, they fail with the differing argument', async () => {
    const run = weatherRun({ trajectory: [call('get_weather', '{"city":"Lisbon","unit":"c"}')] });
    assert.equal((await judge(false, weatherCase(), run)).pass, true);
    const r = await judge(true, weatherCase(), run);
    assert.equal(r.grader, 'trajectory:args');
    assert.equal(r.pass, false);
    assert.equal(r.reason, 'diverged at step 1: get_weather with other arguments (city: "Paris" → "Lisbon")');
  });

  it('with :args, the same arguments in another key order and spacing pass', async () => {
    const r = await judge(true, weatherCase(), weatherRun());
    assert.deepEqual([r.pass, r.reason], [true, '1 tool call as recorded (get_weather), same arguments']);
  });

  it("gives no result on a bad turn's case, which expects no calls: neither a pass nor a fail, whatever the run called", async () => {
    const bad = weatherCase({ verdict: 'bad', expected: { answer: 'Rain in Paris.', trajectory: null, rejected: 'Sunny in Lisbon.' } });
    for (const withArguments of [false, true])
      for (const trajectory of [[call('get_weather', '{"city":"Paris"}')], [call('search_web')], []])
        assert.equal(await new TrajectoryGrader(withArguments).grade(bad, weatherRun({ trajectory }), never), null);
  });

  it('scores the share of steps that agree', () => {
    const e = [call('a'), call('b'), call('c'), call('d')];
    assert.equal(trajectoryScore(e, [call('a'), call('b'), call('x'), call('d')], false), 0.75);
    assert.equal(trajectoryScore([], [], true), 1);
    assert.equal(trajectoryScore([call('a', '{"x":1}')], [call('a', '{"x":2}')], true), 0);
  });
});
