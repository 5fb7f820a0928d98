/**
 * Spec §6: `message_type` and `tool_name` of a stored item, by Python's rules (truthiness, `str()`), on the item as
 * stored (an `undefined` property is absent). Expected values are what the Python reference computes.
 */
import { strict as assert } from 'node:assert';
import { classifyItem, messageTypeOf, pythonStr, pythonTruthy, toolNameOf } from '../../../../src/store/format/itemClassification';

type Row = [name: string, item: unknown, messageType: string, toolName: string | null];

function check(rows: Row[]): void {
  for (const [name, item, messageType, toolName] of rows) {
    it(`${name} → ${messageType} / ${toolName === null ? 'NULL' : JSON.stringify(toolName)}`, () => {
      assert.equal(messageTypeOf(item), messageType, 'messageTypeOf');
      assert.equal(toolNameOf(item), toolName, 'toolNameOf');
      assert.deepStrictEqual(classifyItem(item), { messageType, toolName }, 'classifyItem');
    });
  }
}

describe('itemClassification (spec §6)', () => {
  describe('pythonTruthy', () => {
    const cases: [string, unknown, boolean][] = [
      ['undefined', undefined, false],
      ['null', null, false],
      ['false', false, false],
      ['0', 0, false],
      ['-0', -0, false],
      ['""', '', false],
      ['[]', [], false],
      ['{}', {}, false],
      ['true', true, true],
      ['1', 1, true],
      ['-1', -1, true],
      ['0.5', 0.5, true],
      ['NaN (truthy in Python)', NaN, true],
      ['Infinity', Infinity, true],
      ['" "', ' ', true],
      ['"0"', '0', true],
      ['"False"', 'False', true],
      ['[0]', [0], true],
      ['[null]', [null], true],
      ['{a: 0}', { a: 0 }, true],
    ];
    for (const [name, v, expected] of cases) {
      it(`${name} → ${String(expected)}`, () => assert.equal(pythonTruthy(v), expected));
    }
  });

  describe('pythonStr', () => {
    const cases: [string, unknown, string][] = [
      ['string as is', 'calc', 'calc'],
      ['empty string', '', ''],
      ['non-ASCII string', 'météo', 'météo'],
      ['0', 0, '0'],
      ['42', 42, '42'],
      ['-7', -7, '-7'],
      ['2^53', 2 ** 53, '9007199254740992'],
      // The stored JSON is `1000000000000000000000` (spec §5.1), which Python reads back as an int: str() → digits.
      ['1e21 (an integer: decimal digits)', 1e21, '1000000000000000000000'],
      ['true', true, 'True'],
      ['false', false, 'False'],
      ['null', null, 'None'],
    ];
    for (const [name, v, expected] of cases) {
      it(`${name} → ${JSON.stringify(expected)}`, () => assert.equal(pythonStr(v), expected));
    }
  });

  describe('message_type and tool_name: the §6 table', () => {
    check([
      ['user message', { content: 'hi', role: 'user' }, 'user', null],
      ['user message with type:message', { type: 'message', role: 'user', content: 'hi' }, 'user', null],
      ['user message with list content', { role: 'user', content: [{ type: 'input_text', text: 'hi' }] }, 'user', null],
      [
        'assistant message',
        { id: 'msg_1', role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'x' }] },
        'assistant',
        null,
      ],
      ['system message with type', { type: 'message', role: 'system', content: 'x' }, 'message', null],
      ['developer message with type', { type: 'message', role: 'developer', content: 'x' }, 'message', null],
      ['system without type', { role: 'system', content: 'x' }, 'other', null],
      ['developer without type', { role: 'developer', content: 'x' }, 'other', null],
      ['unknown object', { foo: 1 }, 'other', null],
      ['empty object', {}, 'other', null],
      ['function_call', { type: 'function_call', call_id: 'c1', name: 'calculator', arguments: '{}' }, 'function_call', 'calculator'],
      [
        'function_call with namespace',
        { type: 'function_call', namespace: 'crm', name: 'lookup_account', call_id: 'c1', arguments: '{}' },
        'function_call',
        'crm.lookup_account',
      ],
      [
        'function_call with empty namespace',
        { type: 'function_call', namespace: '', name: 'lookup_account' },
        'function_call',
        'lookup_account',
      ],
      [
        'function_call with namespace equal to name',
        { type: 'function_call', namespace: 'lookup', name: 'lookup' },
        'function_call',
        'lookup',
      ],
      ['function_call with null namespace', { type: 'function_call', namespace: null, name: 'lookup' }, 'function_call', 'lookup'],
      ['function_call_output', { type: 'function_call_output', call_id: 'c1', output: '4' }, 'function_call_output', null],
      [
        'function_call_output with a tool_name key',
        { type: 'function_call_output', call_id: 'c1', output: '4', tool_name: 'calculator' },
        'function_call_output',
        null,
      ],
      ['custom_tool_call', { type: 'custom_tool_call', call_id: 'c1', name: 'custom_tool', input: 'x' }, 'custom_tool_call', 'custom_tool'],
      ['computer_call', { type: 'computer_call', call_id: 'c1', action: { type: 'click' } }, 'computer_call', 'computer_call'],
      ['file_search_call', { type: 'file_search_call', id: 'fs', queries: ['q'] }, 'file_search_call', 'file_search_call'],
      ['web_search_call', { type: 'web_search_call', id: 'ws', status: 'completed' }, 'web_search_call', 'web_search_call'],
      [
        'code_interpreter_call',
        { type: 'code_interpreter_call', id: 'ci', code: 'print(1)' },
        'code_interpreter_call',
        'code_interpreter_call',
      ],
      ['tool_search_call', { type: 'tool_search_call', id: 'ts' }, 'tool_search_call', 'tool_search'],
      ['tool_search_output', { type: 'tool_search_output', id: 'ts' }, 'tool_search_output', 'tool_search'],
      ['reasoning', { type: 'reasoning', id: 'r', summary: [] }, 'reasoning', null],
      ['shell_call', { type: 'shell_call', call_id: 'c', action: { commands: ['ls'] } }, 'shell_call', null],
      ['local_shell_call', { type: 'local_shell_call', call_id: 'c', action: { type: 'exec', command: ['ls'] } }, 'local_shell_call', null],
      ['image_generation_call', { type: 'image_generation_call', id: 'ig', status: 'completed' }, 'image_generation_call', null],
      ['mcp_list_tools', { type: 'mcp_list_tools', id: 'l', server_label: 'srv', tools: [] }, 'mcp_list_tools', null],
    ]);
  });

  describe('non-objects', () => {
    check([
      ['a string', 'hello', 'other', null],
      ['a number', 42, 'other', null],
      ['zero', 0, 'other', null],
      ['true', true, 'other', null],
      ['null', null, 'other', null],
      ['undefined', undefined, 'other', null],
      ['an empty array', [], 'other', null],
      ['an array holding a user message', [{ role: 'user', content: 'x', name: 'n' }], 'other', null],
    ]);
  });

  describe('message_type rules', () => {
    check([
      ['role user wins over type', { role: 'user', type: 'function_call', name: 'calc' }, 'user', 'calc'],
      ['role assistant wins over type', { role: 'assistant', type: 'reasoning' }, 'assistant', null],
      ['role is case-sensitive', { role: 'USER', content: 'x' }, 'other', null],
      ['role USER with type', { role: 'USER', type: 'message' }, 'message', null],
      ['type "" is falsy', { type: '' }, 'other', null],
      ['type 0 is falsy', { type: 0 }, 'other', null],
      ['type false is falsy', { type: false }, 'other', null],
      ['type null is falsy', { type: null }, 'other', null],
      ['type [] is falsy', { type: [] }, 'other', null],
      ['type {} is falsy', { type: {} }, 'other', null],
      ['type undefined is absent', { type: undefined, role: undefined }, 'other', null],
      ['numeric type → str()', { type: 5 }, '5', null],
      ['boolean type → str()', { type: true }, 'True', null],
      ['arbitrary type string', { type: 'something_new' }, 'something_new', null],
    ]);
  });

  describe('rule 1: mcp_call / mcp_approval_request with a server_label key', () => {
    for (const t of ['mcp_call', 'mcp_approval_request']) {
      check([
        [`${t}: label and name`, { type: t, server_label: 'srv', name: 'nm' }, t, 'srv.nm'],
        [`${t}: label only`, { type: t, server_label: 'srv' }, t, 'srv'],
        [`${t}: label, empty name`, { type: t, server_label: 'srv', name: '' }, t, 'srv'],
        [`${t}: label, null name`, { type: t, server_label: 'srv', name: null }, t, 'srv'],
        [`${t}: label, name 0 (falsy)`, { type: t, server_label: 'srv', name: 0 }, t, 'srv'],
        [`${t}: empty label, name`, { type: t, server_label: '', name: 'nm' }, t, 'nm'],
        [`${t}: null label, name`, { type: t, server_label: null, name: 'nm' }, t, 'nm'],
        [`${t}: neither (empty strings) → NULL, no fall-through to rule 4`, { type: t, server_label: '', name: '' }, t, null],
        [`${t}: neither (nulls) → NULL`, { type: t, server_label: null, name: null }, t, null],
        [`${t}: label key only, falsy, no name → NULL`, { type: t, server_label: '' }, t, null],
        [
          `${t}: falsy label and name with namespace → NULL (no fall-through)`,
          { type: t, server_label: '', name: '', namespace: 'ns' },
          t,
          null,
        ],
        [`${t}: namespace ignored under rule 1`, { type: t, server_label: 'srv', name: 'nm', namespace: 'ns' }, t, 'srv.nm'],
        [`${t}: non-string label and name → str()`, { type: t, server_label: 5, name: true }, t, '5.True'],
        [`${t}: boolean label only`, { type: t, server_label: true, name: false }, t, 'True'],
        [`${t}: label equal to name is still joined`, { type: t, server_label: 'x', name: 'x' }, t, 'x.x'],
      ]);
    }
    check([
      ['mcp_call without server_label → rule 4 (name)', { type: 'mcp_call', name: 'nm' }, 'mcp_call', 'nm'],
      ['mcp_call without server_label → rule 4 (namespace.name)', { type: 'mcp_call', name: 'nm', namespace: 'ns' }, 'mcp_call', 'ns.nm'],
      ['mcp_call without server_label, name "" → ""', { type: 'mcp_call', name: '' }, 'mcp_call', ''],
      ['mcp_call without server_label or name → NULL', { type: 'mcp_call', arguments: '{}' }, 'mcp_call', null],
      [
        'server_label undefined counts as absent → rule 4',
        { type: 'mcp_call', server_label: undefined, name: 'nm', namespace: 'ns' },
        'mcp_call',
        'ns.nm',
      ],
      ['server_label undefined, name "" → rule 4 ""', { type: 'mcp_call', server_label: undefined, name: '' }, 'mcp_call', ''],
      ['server_label on another type is irrelevant', { type: 'function_call', server_label: 'srv', name: 'nm' }, 'function_call', 'nm'],
    ]);
  });

  describe('rules 2 and 3 come before the name', () => {
    check([
      ['tool_search_call with a name', { type: 'tool_search_call', name: 'x', namespace: 'y' }, 'tool_search_call', 'tool_search'],
      ['tool_search_output with a null name', { type: 'tool_search_output', name: null }, 'tool_search_output', 'tool_search'],
      ['computer_call with a name', { type: 'computer_call', name: 'x' }, 'computer_call', 'computer_call'],
      ['file_search_call with a name', { type: 'file_search_call', name: 'x', namespace: 'y' }, 'file_search_call', 'file_search_call'],
      ['web_search_call with a null name', { type: 'web_search_call', name: null }, 'web_search_call', 'web_search_call'],
      [
        'code_interpreter_call with an empty name',
        { type: 'code_interpreter_call', name: '' },
        'code_interpreter_call',
        'code_interpreter_call',
      ],
      ['rule 3 self-name even with role user', { role: 'user', type: 'computer_call' }, 'user', 'computer_call'],
    ]);
  });

  describe('rule 4: a name key exists', () => {
    check([
      ['user message with a name', { role: 'user', content: 'x', name: 'bob' }, 'user', 'bob'],
      ['assistant message with a name', { role: 'assistant', content: 'x', name: 'agent' }, 'assistant', 'agent'],
      ['name null → NULL', { type: 'function_call', name: null }, 'function_call', null],
      ['name null with namespace → NULL', { type: 'function_call', name: null, namespace: 'ns' }, 'function_call', null],
      ['name "" → ""', { type: 'function_call', name: '' }, 'function_call', ''],
      ['name "" with namespace → ""', { type: 'function_call', name: '', namespace: 'ns' }, 'function_call', ''],
      ['name without namespace', { type: 'function_call', name: 'calc' }, 'function_call', 'calc'],
      ['shell_call with a name', { type: 'shell_call', name: 'sh' }, 'shell_call', 'sh'],
      ['name 0 → "0"', { type: 'function_call', name: 0 }, 'function_call', '0'],
      ['name 42 → "42"', { type: 'function_call', name: 42 }, 'function_call', '42'],
      ['name -7 → "-7"', { type: 'function_call', name: -7 }, 'function_call', '-7'],
      ['name true → "True"', { type: 'function_call', name: true }, 'function_call', 'True'],
      ['name false → "False"', { type: 'function_call', name: false }, 'function_call', 'False'],
      ['name 1e21 → decimal digits', { type: 'function_call', name: 1e21 }, 'function_call', '1000000000000000000000'],
      ['namespace true → "True.x"', { type: 'function_call', name: 'x', namespace: true }, 'function_call', 'True.x'],
      ['namespace false → "False.x"', { type: 'function_call', name: 'x', namespace: false }, 'function_call', 'False.x'],
      ['namespace 0 → "0.x"', { type: 'function_call', name: 'x', namespace: 0 }, 'function_call', '0.x'],
      ['numeric name equal to numeric namespace', { type: 'function_call', name: 1, namespace: 1 }, 'function_call', '1'],
      ['numeric name equal to string namespace after str()', { type: 'function_call', name: 1, namespace: '1' }, 'function_call', '1'],
      ['True name equal to "True" namespace', { type: 'function_call', name: true, namespace: 'True' }, 'function_call', 'True'],
      ['non-ASCII names', { type: 'function_call', name: 'météo', namespace: 'outils' }, 'function_call', 'outils.météo'],
      ['name key undefined → absent → NULL', { type: 'function_call', name: undefined, namespace: 'ns' }, 'function_call', null],
      ['namespace undefined → empty', { type: 'function_call', name: 'calc', namespace: undefined }, 'function_call', 'calc'],
      ['no name key → NULL', { type: 'function_call', namespace: 'ns', call_id: 'c' }, 'function_call', null],
    ]);
  });

  describe('JS SDK item types (same rules, no translation)', () => {
    check([
      ['JS user message', { type: 'message', role: 'user', content: 'hi' }, 'user', null],
      [
        'JS assistant message',
        { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'x' }] },
        'assistant',
        null,
      ],
      [
        'JS function_call',
        { type: 'function_call', callId: 'c1', name: 'get_weather', arguments: '{}', status: 'completed' },
        'function_call',
        'get_weather',
      ],
      [
        'JS function_call_result (its name)',
        { type: 'function_call_result', name: 'get_weather', callId: 'c1', status: 'completed', output: { type: 'text', text: 'sunny' } },
        'function_call_result',
        'get_weather',
      ],
      [
        'JS function_call_result with namespace',
        { type: 'function_call_result', name: 'lookup', namespace: 'crm', callId: 'c1', output: 'x' },
        'function_call_result',
        'crm.lookup',
      ],
      ['JS function_call_result without name', { type: 'function_call_result', callId: 'c1', output: 'x' }, 'function_call_result', null],
      [
        'JS computer_call_result',
        { type: 'computer_call_result', callId: 'c1', output: { type: 'computer_screenshot', data: 'x' } },
        'computer_call_result',
        null,
      ],
      [
        'JS hosted_tool_call with a name',
        { type: 'hosted_tool_call', name: 'web_search_call', status: 'completed', providerData: {} },
        'hosted_tool_call',
        'web_search_call',
      ],
      ['JS hosted_tool_call without a name', { type: 'hosted_tool_call', status: 'completed' }, 'hosted_tool_call', null],
      [
        'JS hosted_tool_call mcp-ish name',
        { type: 'hosted_tool_call', name: 'mcp_call', server_label: 'srv' },
        'hosted_tool_call',
        'mcp_call',
      ],
      ['JS reasoning', { type: 'reasoning', content: [{ type: 'input_text', text: 'x' }] }, 'reasoning', null],
    ]);
  });

  describe('classifyItem classifies the item as stored', () => {
    it('applies a top-level toJSON', () => {
      const item = { toJSON: () => ({ type: 'function_call', name: 'calc', namespace: 'm' }) };
      assert.deepStrictEqual(classifyItem(item), { messageType: 'function_call', toolName: 'm.calc' });
      const user = { toJSON: () => ({ role: 'user', content: 'hi' }) };
      assert.deepStrictEqual(classifyItem(user), { messageType: 'user', toolName: null });
    });

    it('treats undefined-valued properties as absent', () => {
      assert.deepStrictEqual(classifyItem({ type: 'mcp_call', server_label: undefined, name: 'nm' }), {
        messageType: 'mcp_call',
        toolName: 'nm',
      });
      assert.deepStrictEqual(classifyItem({ type: 'function_call', name: undefined }), { messageType: 'function_call', toolName: null });
      assert.deepStrictEqual(classifyItem({ role: undefined, type: 'reasoning' }), { messageType: 'reasoning', toolName: null });
    });

    it('treats a function-valued name as absent (JSON.stringify drops it, §5.1)', () => {
      // Stored as {"type": "function_call"}: Python sees no name key → NULL.
      assert.deepStrictEqual(classifyItem({ type: 'function_call', name: () => 'x' }), { messageType: 'function_call', toolName: null });
    });

    it('treats a symbol-valued server_label as absent (JSON.stringify drops it, §5.1)', () => {
      // Stored as {"type": "mcp_call", "name": "nm"}: no server_label key → rule 4 → "nm".
      assert.deepStrictEqual(classifyItem({ type: 'mcp_call', server_label: Symbol('srv'), name: 'nm' }), {
        messageType: 'mcp_call',
        toolName: 'nm',
      });
    });

    it('applies a nested toJSON before classifying (stored name is the string it returns)', () => {
      // Stored as {"type": "function_call", "name": "calc"}.
      assert.deepStrictEqual(classifyItem({ type: 'function_call', name: { toJSON: () => 'calc' } }), {
        messageType: 'function_call',
        toolName: 'calc',
      });
    });
  });
});
