/**
 * The trajectory a check grades (src/agents/check/trajectorySteps.ts): every call of a turn in its order — function
 * and custom tool calls by their tool, MCP calls by server and tool, every other call by its type, the JS SDK's
 * hosted_tool_call as the item it stands for — each with what it got back.
 */
import { strict as assert } from 'node:assert';
import { trajectorySteps } from '../../../../src/agents/check/trajectorySteps';

describe('the trajectory of a turn', () => {
  it('lists every call in order with its output, named by tool or by type', () => {
    const steps = trajectorySteps([
      { role: 'user', content: 'go' },
      { type: 'function_call', callId: 'f1', name: 'lookup', arguments: '{"id":1}' },
      { type: 'function_call_result', callId: 'f1', output: 'found' },
      { type: 'custom_tool_call', call_id: 'k1', name: 'patcher', input: 'diff' },
      { type: 'custom_tool_call_output', call_id: 'k1', output: 'ok' },
      {
        type: 'hosted_tool_call',
        name: 'mcp_call',
        providerData: { type: 'mcp_call', server_label: 'crm', name: 'close', arguments: '{}' },
      },
      { type: 'hosted_tool_call', name: 'web_search', arguments: '{"q":"x"}', output: 'results' },
      { type: 'local_shell_call', id: 'ls1', call_id: 'ls1', action: { command: ['ls'] } },
      { type: 'local_shell_call_output', id: 'ls1', output: 'a b' },
      { type: 'image_generation_call', id: 'ig1', result: 'AAAA' },
      { type: 'mcp_list_tools', server_label: 'crm', tools: [] },
      { type: 'reasoning', summary: [] },
      { role: 'assistant', content: 'done' },
    ]);
    assert.deepEqual(steps, [
      { name: 'lookup', arguments: '{"id":1}', output: 'found' },
      { name: 'patcher', arguments: 'diff', output: 'ok' },
      { name: 'mcp_call crm.close', arguments: '{}', output: null },
      { name: 'web_search_call', arguments: '{"q":"x"}', output: 'results' },
      { name: 'local_shell_call', arguments: '{"command":["ls"]}', output: 'a b' },
      { name: 'image_generation_call', arguments: '', output: null },
    ]);
  });
});
