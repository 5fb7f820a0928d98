/**
 * The replay table of a recorded turn (src/agents/replay/replayTable.ts): its function calls in order, each with the
 * output it got, as stored; a call never answered is listed as such; hosted calls are listed apart.
 */
import { strict as assert } from 'node:assert';
import { buildReplayTable } from '../../../../src/agents/replay/replayTable';

const where = { branchId: 'main', turn: 2 };
const call = (callId: string, name: string, args: string) => ({
  type: 'function_call',
  call_id: callId,
  name,
  arguments: args,
  id: `fc_${callId}`,
});
const output = (callId: string, out: unknown) => ({ type: 'function_call_output', call_id: callId, output: out });

describe('replay: the replay table of a recorded turn', () => {
  it('lists the calls in order, each with its output, the source branch and turn', () => {
    const table = buildReplayTable(
      [
        { role: 'user', content: 'Weather in Paris and Oslo?' },
        call('c1', 'get_weather', '{"city":"Paris"}'),
        call('c2', 'get_weather', '{"city":"Oslo"}'),
        output('c2', 'Oslo: 3°C'),
        output('c1', 'Paris: 18°C'),
        call('c3', 'lookup_capital', '{"country":"France"}'),
        output('c3', 'Paris'),
        { role: 'assistant', type: 'message', content: [{ type: 'output_text', text: 'Done.' }] },
      ],
      where,
    );
    assert.deepEqual(table, {
      branchId: 'main',
      turn: 2,
      hosted: [],
      calls: [
        {
          callId: 'c1',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
          output: 'Paris: 18°C',
          hasOutput: true,
          branchId: 'main',
          turn: 2,
        },
        {
          callId: 'c2',
          name: 'get_weather',
          arguments: '{"city":"Oslo"}',
          output: 'Oslo: 3°C',
          hasOutput: true,
          branchId: 'main',
          turn: 2,
        },
        {
          callId: 'c3',
          name: 'lookup_capital',
          arguments: '{"country":"France"}',
          output: 'Paris',
          hasOutput: true,
          branchId: 'main',
          turn: 2,
        },
      ],
    });
  });

  it('lists a call without an output as such', () => {
    const table = buildReplayTable([call('c1', 'send_email', '{"to":"a@b.c"}')], where);
    assert.deepEqual(
      table.calls.map((c) => [c.callId, c.hasOutput, c.output]),
      [['c1', false, null]],
    );
  });

  it('keeps an output that is not a string as stored (content parts stay a list)', () => {
    const parts = [
      { type: 'input_text', text: 'chart:' },
      { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
    ];
    const table = buildReplayTable([call('c1', 'plot', '{}'), output('c1', parts), call('c2', 'count', '{}'), output('c2', 42)], where);
    assert.deepEqual(table.calls[0]!.output, parts);
    assert.deepEqual(table.calls[1]!.output, 42);
  });

  it('reads the JS SDK shape too (callId, function_call_result)', () => {
    const table = buildReplayTable(
      [
        { type: 'function_call', callId: 'j1', name: 'get_weather', arguments: '{}' },
        { type: 'function_call_result', callId: 'j1', name: 'get_weather', output: 'sunny' },
      ],
      where,
    );
    assert.deepEqual(
      table.calls.map((c) => [c.callId, c.output]),
      [['j1', 'sunny']],
    );
  });

  it('reads a JS-shaped output as the SDK reads it back: a text part is its text', () => {
    const table = buildReplayTable(
      [
        { type: 'function_call', callId: 'j1', name: 'get_weather', arguments: '{}' },
        { type: 'function_call_result', callId: 'j1', name: 'get_weather', output: { type: 'text', text: 'Paris: 18C' } },
      ],
      where,
    );
    assert.deepEqual(
      table.calls.map((c) => [c.callId, c.output]),
      [['j1', 'Paris: 18C']],
    );
  });

  it('names a namespaced call with its namespace, and leaves handoffs out', () => {
    const table = buildReplayTable(
      [
        call('h1', 'transfer_to_billing', '{}'),
        output('h1', '{"assistant": "billing"}'),
        { ...call('c1', 'refund', '{"order":7}'), namespace: 'sandbox' },
        output('c1', 'dry run'),
      ],
      where,
    );
    assert.deepEqual(
      table.calls.map((c) => [c.callId, c.name]),
      [['c1', 'sandbox.refund']],
    );
  });

  it('lists calls the SDK runs on this machine (shell, apply_patch) with their outputs, and not as hosted', () => {
    const table = buildReplayTable(
      [
        { type: 'shell_call', call_id: 's1', status: 'completed', action: { commands: ['ls'], timeout_ms: null } },
        { type: 'shell_call_output', call_id: 's1', output: [{ stdout: 'a', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] },
        { type: 'apply_patch_call', call_id: 'p1', status: 'completed', operation: { type: 'delete_file', path: 'x' } },
        { type: 'apply_patch_call_output', call_id: 'p1', status: 'completed', output: 'deleted' },
      ],
      where,
    );
    assert.deepEqual(table.hosted, []);
    assert.deepEqual(
      table.calls.map((c) => [c.callId, c.name, c.arguments, c.output]),
      [
        ['s1', 'shell', '{"commands":["ls"]}', [{ stdout: 'a', stderr: '', outcome: { type: 'exit', exit_code: 0 } }]],
        ['p1', 'apply_patch', '{"type":"delete_file","path":"x"}', { status: 'completed', output: 'deleted' }],
      ],
    );
  });

  it('answers a call with its first output only, and ignores outputs of no call', () => {
    const table = buildReplayTable([call('c1', 't', '{}'), output('c1', 'first'), output('c1', 'second'), output('zz', 'stray')], where);
    assert.deepEqual(
      table.calls.map((c) => [c.callId, c.output]),
      [['c1', 'first']],
    );
  });

  it('keeps arguments that are not a string as their JSON text, so they can still match', () => {
    const table = buildReplayTable([{ type: 'function_call', call_id: 'c1', name: 't', arguments: { a: 1 } }], where);
    assert.equal(table.calls[0]!.arguments, '{"a":1}');
  });

  it('lists hosted calls apart, with their ids: they cannot be replayed; calls run on this machine are calls', () => {
    const table = buildReplayTable(
      [
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'weather' } },
        call('c1', 'get_weather', '{}'),
        output('c1', 'sunny'),
        { type: 'file_search_call', id: 'fs_1', queries: ['x'], status: 'completed' },
        { type: 'code_interpreter_call', id: 'ci_1', code: 'print(1)', status: 'completed' },
        { type: 'computer_call', id: 'cu_1', call_id: 'call_cu_1', action: { type: 'screenshot' }, status: 'completed' },
      ],
      where,
    );
    assert.deepEqual(table.hosted, [
      { type: 'web_search_call', callId: 'ws_1' },
      { type: 'file_search_call', callId: 'fs_1' },
      { type: 'code_interpreter_call', callId: 'ci_1' },
    ]);
    // A computer action is run by the SDK on this machine, not by the provider: a call of the turn (docs/replay.md).
    assert.deepEqual(
      table.calls.map((c) => [c.callId, c.name, c.arguments]),
      [
        ['c1', 'get_weather', '{}'],
        ['call_cu_1', 'computer', '{"type":"screenshot"}'],
      ],
    );
  });

  it('skips items that are not objects or have no type', () => {
    const table = buildReplayTable([null, 'text', 3, [], { role: 'user', content: 'hi' }], where);
    assert.deepEqual(table, { branchId: 'main', turn: 2, calls: [], hosted: [] });
  });
});
