/**
 * Where a run left the recorded sequence of calls (src/agents/replay/divergence.ts): the first step with another
 * tool, other arguments, or a call more or fewer; none when the run made the recorded calls in order.
 */
import { strict as assert } from 'node:assert';
import { findDivergence } from '../../../../src/agents/replay/divergence';
import { divergenceSentence, type ReplayTable } from '../../../../src/shared/protocol/replay';

const table: ReplayTable = {
  branchId: 'main',
  turn: 2,
  hosted: [],
  calls: [
    { callId: 'r1', name: 'get_weather', arguments: '{"city":"Paris"}', output: 'sunny', hasOutput: true, branchId: 'main', turn: 2 },
    {
      callId: 'r2',
      name: 'lookup_capital',
      arguments: '{"country":"France"}',
      output: 'Paris',
      hasOutput: true,
      branchId: 'main',
      turn: 2,
    },
  ],
};
const c = (name: string, args: string) => ({ name, arguments: args });

describe('replay: divergence from the recorded sequence', () => {
  it('finds none when the calls are the recorded ones, key order and number spelling aside', () => {
    assert.equal(findDivergence(table, [c('get_weather', '{ "city": "Paris" }'), c('lookup_capital', '{"country":"France"}')]), null);
  });

  it('another tool at a step', () => {
    const d = findDivergence(table, [c('get_weather', '{"city":"Paris"}'), c('send_email', '{}')]);
    assert.deepEqual(d, { step: 2, recorded: c('lookup_capital', '{"country":"France"}'), actual: c('send_email', '{}'), diff: [] });
    assert.equal(divergenceSentence(d!), 'diverged at step 2: send_email instead of lookup_capital');
  });

  it('other arguments at a step, with the diff', () => {
    const d = findDivergence(table, [c('get_weather', '{"city":"Lisbon"}')]);
    assert.deepEqual(d, {
      step: 1,
      recorded: c('get_weather', '{"city":"Paris"}'),
      actual: c('get_weather', '{"city":"Lisbon"}'),
      diff: ['city: "Paris" → "Lisbon"'],
    });
    assert.equal(divergenceSentence(d!), 'diverged at step 1: get_weather with other arguments (city: "Paris" → "Lisbon")');
  });

  it('other arguments of a name-only tool are not a divergence', () => {
    assert.equal(
      findDivergence(table, [c('get_weather', '{"city":"Lisbon"}'), c('lookup_capital', '{"country":"France"}')], ['get_weather']),
      null,
    );
  });

  it('fewer calls than recorded', () => {
    const d = findDivergence(table, [c('get_weather', '{"city":"Paris"}')]);
    assert.deepEqual(d, { step: 2, recorded: c('lookup_capital', '{"country":"France"}'), actual: null, diff: [] });
    assert.equal(divergenceSentence(d!), 'diverged at step 2: the recording called lookup_capital next, this run stopped calling tools');
  });

  it('more calls than recorded', () => {
    const d = findDivergence(table, [
      c('get_weather', '{"city":"Paris"}'),
      c('lookup_capital', '{"country":"France"}'),
      c('get_weather', '{"city":"Oslo"}'),
    ]);
    assert.deepEqual(d, { step: 3, recorded: null, actual: c('get_weather', '{"city":"Oslo"}'), diff: [] });
    assert.equal(divergenceSentence(d!), "diverged at step 3: this run called get_weather past the recording's calls");
  });

  it('no calls at all on a turn that had some: diverged at step 1', () => {
    assert.equal(findDivergence(table, [])?.step, 1);
  });
});
