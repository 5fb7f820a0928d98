/**
 * The item format of the file (docs/js-sdk-session.md "Item types"): JS items are stored as Responses API input items,
 * Responses items are stored unchanged, and what comes back is what the JS runner's own schema accepts.
 */
import { strict as assert } from 'node:assert';
import { protocol, type AgentInputItem } from '@openai/agents';
import { fromStoredItems, isJsShapedItem, toStoredItem } from '../../../../src/store';

const as = (value: unknown) => value as AgentInputItem;

/** Items as the Python SDK 0.22 stores them (`to_input_item()` / `model_dump()`), one per type the docs list. */
const PYTHON_ITEMS: Record<string, Record<string, unknown>> = {
  'user text': { content: 'What is the weather in Paris?', role: 'user' },
  'user parts': {
    content: [
      { type: 'input_text', text: 'Describe this' },
      { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' },
      { type: 'input_file', file_id: 'file_123', filename: 'notes.pdf' },
      { type: 'input_file', file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' },
    ],
    role: 'user',
    type: 'message',
  },
  'system message': { content: 'Be brief.', role: 'system' },
  assistant: {
    id: 'msg_1',
    content: [{ annotations: [], text: 'It is sunny.', type: 'output_text', logprobs: [] }],
    role: 'assistant',
    status: 'completed',
    type: 'message',
  },
  'assistant refusal': {
    id: 'msg_2',
    content: [{ refusal: 'I cannot help with that.', type: 'refusal' }],
    role: 'assistant',
    status: 'completed',
    type: 'message',
  },
  'function call': {
    arguments: '{"city":"Paris"}',
    call_id: 'call_w1',
    name: 'get_weather',
    type: 'function_call',
    id: 'fc_1',
    status: 'completed',
  },
  'namespaced call': { arguments: '{}', call_id: 'call_n1', name: 'lookup', namespace: 'crm', type: 'function_call' },
  'function output': { call_id: 'call_w1', output: 'Sunny, 22°C', type: 'function_call_output' },
  reasoning: {
    id: 'rs_1',
    summary: [{ text: 'Need the weather tool.', type: 'summary_text' }],
    type: 'reasoning',
    encrypted_content: 'gAAAA',
  },
  'reasoning without summary text': { id: 'rs_2', summary: [], type: 'reasoning' },
  'computer call': {
    id: 'cu_1',
    action: { type: 'click', button: 'left', x: 10, y: 20 },
    call_id: 'call_c1',
    pending_safety_checks: [],
    status: 'completed',
    type: 'computer_call',
  },
  'computer output': {
    call_id: 'call_c1',
    output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,iVBOR' },
    type: 'computer_call_output',
  },
  'web search': { id: 'ws_1', action: { query: 'weather', type: 'search' }, status: 'completed', type: 'web_search_call' },
  'file search': { id: 'fs_1', queries: ['q'], status: 'completed', type: 'file_search_call', results: null },
  'code interpreter': {
    id: 'ci_1',
    code: 'print(1)',
    container_id: 'cntr',
    outputs: [],
    status: 'completed',
    type: 'code_interpreter_call',
  },
  'image generation': { id: 'ig_1', result: 'iVBOR', status: 'completed', type: 'image_generation_call' },
  'mcp call': { id: 'mcp_1', arguments: '{}', name: 'search', server_label: 'docs', type: 'mcp_call', output: 'found' },
  'mcp list tools': { id: 'mcpl_1', server_label: 'docs', tools: [], type: 'mcp_list_tools' },
  'mcp approval request': { id: 'mcpr_1', arguments: '{}', name: 'delete', server_label: 'docs', type: 'mcp_approval_request' },
  'shell call': {
    id: 'sh_1',
    action: { commands: ['ls'], timeout_ms: 1000, max_output_length: null },
    call_id: 'call_s1',
    status: 'completed',
    type: 'shell_call',
  },
  'shell output': {
    call_id: 'call_s1',
    output: [{ stdout: 'a\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
    type: 'shell_call_output',
  },
  'apply patch call': {
    call_id: 'call_p1',
    operation: { type: 'update_file', path: 'a.txt', diff: '@@', move_to: 'b.txt' },
    status: 'completed',
    type: 'apply_patch_call',
  },
  'apply patch output': { call_id: 'call_p1', output: 'done', status: 'completed', type: 'apply_patch_call_output' },
  compaction: { id: 'cmp_1', encrypted_content: 'enc', type: 'compaction' },
  // No exact JS type: read as `unknown`, which the SDK sends to the API verbatim.
  'developer message': { content: [{ type: 'input_text', text: 'Use metric units.' }], role: 'developer', type: 'message' },
  'item reference': { id: 'msg_9', type: 'item_reference' },
  'custom tool call': { call_id: 'call_x1', input: 'raw', name: 'custom_tool', type: 'custom_tool_call' },
  'custom tool output': { call_id: 'call_x1', output: 'ok', type: 'custom_tool_call_output' },
  'local shell call': {
    id: 'ls_1',
    action: { command: ['ls'], env: {}, type: 'exec' },
    call_id: 'call_l1',
    status: 'completed',
    type: 'local_shell_call',
  },
  'mcp approval response': { approval_request_id: 'mcpr_1', approve: true, type: 'mcp_approval_response' },
  'array tool output': { call_id: 'call_w1', output: [{ type: 'input_text', text: 'x' }], type: 'function_call_output' },
};

const OPAQUE = new Set([
  'developer message',
  'item reference',
  'custom tool call',
  'custom tool output',
  'local shell call',
  'mcp approval response',
  'array tool output',
]);

/** Every key at every depth. */
function keysDeep(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysDeep(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      keysDeep(v, out);
    }
  }
  return out;
}

describe('item shape: Responses items in the file, JS items for the runner', () => {
  describe('Python-written (Responses) items', () => {
    for (const [name, item] of Object.entries(PYTHON_ITEMS)) {
      it(`${name}: stored unchanged, read as a valid JS item, and stored back to the same item`, () => {
        assert.equal(isJsShapedItem(item), false, 'not mistaken for a JS item');
        assert.equal(toStoredItem(as(item)), item, 'stored as given (same object, so the same bytes and key order)');
        const [read] = fromStoredItems([item]);
        const parsed = protocol.ModelItem.safeParse(read);
        assert.ok(parsed.success, `the SDK's schema accepts it: ${JSON.stringify(parsed.error?.issues)}`);
        if (OPAQUE.has(name)) {
          assert.deepEqual(read, { type: 'unknown', ...(typeof item.id === 'string' ? { id: item.id } : {}), providerData: item });
        } else {
          assert.notEqual((read as { type?: string }).type, 'unknown', 'read as its own JS type');
        }
        // The JS protocol requires a tool output's status; one stored without it reads as 'completed' and keeps that.
        const restored = name === 'function output' ? { ...item, status: 'completed' } : item;
        assert.deepStrictEqual(toStoredItem(as(read)), restored, 'writing it back stores the same item');
      });
    }

    it('a tool output takes its name from the call with the same call_id; an orphan output is named by its call_id', () => {
      const items = fromStoredItems([
        PYTHON_ITEMS['function call'],
        PYTHON_ITEMS['function output'],
        { call_id: 'lost', output: 'x', type: 'function_call_output' },
      ]);
      assert.deepEqual(items[1], {
        type: 'function_call_result',
        callId: 'call_w1',
        name: 'get_weather',
        status: 'completed',
        output: 'Sunny, 22°C',
      });
      assert.equal((items[2] as { name: string }).name, 'lost');
    });
  });

  describe('JS items (as the runner writes them)', () => {
    const JS_ITEMS: Record<string, { js: Record<string, unknown>; stored: Record<string, unknown> }> = {
      'function call with provider data': {
        js: {
          type: 'function_call',
          id: 'fc_1',
          callId: 'call_1',
          name: 'get_weather',
          status: 'completed',
          arguments: '{}',
          providerData: { id: 'fc_1', type: 'function_call' },
        },
        stored: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{}', status: 'completed' },
      },
      'function result with text output': {
        js: {
          type: 'function_call_result',
          callId: 'call_1',
          name: 'get_weather',
          status: 'completed',
          output: { type: 'text', text: 'Sunny' },
        },
        stored: { type: 'function_call_output', call_id: 'call_1', output: 'Sunny', status: 'completed' },
      },
      'assistant message with a placeholder id': {
        js: { id: '__fake_id__', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi' }] },
        stored: {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hi', annotations: [] }],
          status: 'completed',
        },
      },
      'user message with an image and a file': {
        js: {
          role: 'user',
          content: [
            { type: 'input_image', image: 'https://example.com/a.png' },
            { type: 'input_file', file: { id: 'file_1' }, filename: 'x.pdf' },
          ],
        },
        stored: {
          role: 'user',
          content: [
            { type: 'input_image', image_url: 'https://example.com/a.png' },
            { type: 'input_file', file_id: 'file_1', filename: 'x.pdf' },
          ],
        },
      },
      reasoning: {
        js: { type: 'reasoning', id: 'rs_1', content: [{ type: 'input_text', text: 'think' }], providerData: { encrypted_content: 'enc' } },
        stored: { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'think' }], encrypted_content: 'enc' },
      },
      'hosted web search': {
        js: {
          type: 'hosted_tool_call',
          id: 'ws_1',
          name: 'web_search_call',
          status: 'completed',
          providerData: { id: 'ws_1', type: 'web_search_call', action: { type: 'search', query: 'q' } },
        },
        stored: { id: 'ws_1', type: 'web_search_call', action: { type: 'search', query: 'q' }, status: 'completed' },
      },
      'computer result': {
        js: { type: 'computer_call_result', callId: 'call_c', output: { type: 'computer_screenshot', data: 'data:image/png;base64,AA' } },
        stored: {
          type: 'computer_call_output',
          call_id: 'call_c',
          output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,AA' },
        },
      },
      'shell call': {
        js: { type: 'shell_call', callId: 'call_s', status: 'completed', action: { commands: ['pwd'], timeoutMs: 5 } },
        stored: {
          type: 'shell_call',
          call_id: 'call_s',
          status: 'completed',
          action: { commands: ['pwd'], timeout_ms: 5, max_output_length: null },
        },
      },
      'unknown item': {
        js: { type: 'unknown', id: 'ref_1', providerData: { type: 'item_reference', id: 'ref_1' } },
        stored: { type: 'item_reference', id: 'ref_1' },
      },
    };

    for (const [name, { js, stored }] of Object.entries(JS_ITEMS)) {
      it(`${name}: stored in the Responses shape, with no JS-only key, and read back to an equivalent JS item`, () => {
        assert.equal(isJsShapedItem(js), true);
        const out = toStoredItem(as(js));
        assert.deepStrictEqual(out, stored);
        for (const key of ['callId', 'providerData', 'rawContent', 'timeoutMs']) assert.ok(!keysDeep(out).has(key), `no ${key}`);
        assert.ok(!['function_call_result', 'computer_call_result', 'hosted_tool_call', 'unknown'].includes(String(out.type)));
        const [read] = fromStoredItems([out]);
        assert.ok(protocol.ModelItem.safeParse(read).success, 'the SDK accepts what it reads back');
        assert.deepStrictEqual(toStoredItem(as(read)), stored, 'stable: storing what was read stores the same');
      });
    }

    it('items the runner writes without JS-only metadata read back exactly as written', () => {
      const written = [
        { role: 'user', content: 'hello' },
        { type: 'function_call', callId: 'c1', name: 'get_weather', status: 'completed', arguments: '{}' },
        { type: 'function_call_result', callId: 'c1', name: 'get_weather', status: 'completed', output: 'ok' },
        { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] },
      ];
      assert.deepStrictEqual(fromStoredItems(written.map((i) => toStoredItem(as(i)))), written);
    });

    it('files written in the JS shape by earlier versions read unchanged', () => {
      const legacy = [
        { type: 'function_call', callId: 'c1', name: 'f', status: 'completed', arguments: '{}' },
        { type: 'function_call_result', callId: 'c1', name: 'f', status: 'completed', output: { type: 'text', text: 'ok' } },
      ];
      assert.deepStrictEqual(fromStoredItems(legacy), legacy);
    });
  });
});
