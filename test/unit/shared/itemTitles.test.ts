import { strict as assert } from 'node:assert';
import * as l10n from '@vscode/l10n';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinToolName, itemTitle, toolBadgeName } from '../../../src/shared/itemTitles';
import { messageTypeOf, toolNameOf } from '../../../src/store';
import { BUILTIN_TOOL_ITEMS } from '../../support/builtinToolItems';

/** The title of an item as the tree and the view compute it: from the store's columns (spec §6) and the item. */
const titleOf = (item: unknown, toolName = toolNameOf(item)): string => itemTitle(messageTypeOf(item), toolName, item);

describe('itemTitles', () => {
  afterEach(() => l10n.config({ contents: {} }));

  it('titles messages by role and reasoning as such, whatever the store typed them', () => {
    assert.equal(itemTitle('user', null), 'User');
    assert.equal(itemTitle('assistant', null), 'Assistant');
    assert.equal(titleOf({ role: 'user', content: 'hi' }), 'User');
    assert.equal(titleOf({ role: 'assistant', type: 'message', content: [] }), 'Assistant');
    // The store types a system or developer message `message`: its role decides.
    assert.equal(titleOf({ role: 'system', type: 'message', content: 'be brief' }), 'System');
    assert.equal(titleOf({ role: 'developer', content: 'x' }), 'Developer');
    assert.equal(titleOf({ type: 'reasoning', summary: [] }), 'Reasoning');
  });

  it('titles a function call by its tool and its output as its result, in the Python and the JS SDK shapes', () => {
    assert.equal(titleOf({ type: 'function_call', name: 'get_weather', call_id: 'c', arguments: '{}' }), 'get_weather');
    // Python's output stores no name: the view passes the call's.
    assert.equal(itemTitle('function_call_output', 'get_weather'), 'get_weather result');
    assert.equal(titleOf({ type: 'function_call_output', call_id: 'c', output: 'x' }), 'tool result');
    // The JS SDK's output names its tool.
    assert.equal(
      titleOf({ type: 'function_call_result', name: 'get_time', callId: 'c', output: { type: 'text', text: 'noon' } }),
      'get_time result',
    );
    assert.equal(titleOf({ type: 'custom_tool_call', name: 'grammar_check', call_id: 'c', input: 'x' }), 'grammar_check');
    assert.equal(itemTitle('custom_tool_call_output', 'grammar_check'), 'grammar_check result');
  });

  it('titles every built-in tool item by its people name, never its stored type', () => {
    const tools = (BUILTIN_TOOL_ITEMS as Array<{ type?: string; role?: string }>).filter(
      (i) => i.role === undefined && !String(i.type).startsWith('function_call'),
    );
    const titles = tools.map((i) => [i.type, titleOf(i)]);
    assert.deepEqual(Object.fromEntries(titles), {
      computer_call: 'computer',
      computer_call_output: 'computer result',
      file_search_call: 'file search',
      web_search_call: 'web search',
      code_interpreter_call: 'code interpreter',
      image_generation_call: 'image generation',
      mcp_list_tools: 'MCP tool list',
      mcp_call: 'MCP deepwiki.ask_question',
      mcp_approval_request: 'MCP approval request',
      mcp_approval_response: 'MCP approval',
      local_shell_call: 'shell',
      local_shell_call_output: 'shell result',
      shell_call: 'shell',
      shell_call_output: 'shell result',
      apply_patch_call: 'apply patch',
      apply_patch_call_output: 'apply patch result',
      custom_tool_call: 'grammar_check',
      // The fixture's custom output stores no name (the view passes the call's).
      custom_tool_call_output: 'tool result',
    });
    assert.equal(titleOf({ type: 'tool_search_call', call_id: 'c' }), 'tool search');
    assert.equal(titleOf({ type: 'tool_search_output', call_id: 'c' }), 'tool search result');
  });

  it('titles the JS SDK’s shapes: computer_call_result and hosted_tool_call by the tool it stands for', () => {
    assert.equal(
      titleOf({ type: 'computer_call_result', callId: 'c', output: { type: 'computer_screenshot', data: 'x' } }),
      'computer result',
    );
    assert.equal(titleOf({ type: 'hosted_tool_call', name: 'web_search_call', status: 'completed', providerData: {} }), 'web search');
    assert.equal(titleOf({ type: 'hosted_tool_call', name: 'image_generation_call', providerData: {} }), 'image generation');
    assert.equal(titleOf({ type: 'hosted_tool_call', name: 'mcp_call', providerData: {} }), 'MCP');
    // The view's fallback name for a hosted call the store did not name: the built-in view's stem.
    assert.equal(itemTitle('hosted_tool_call', 'file_search'), 'file search');
    assert.equal(titleOf({ type: 'hosted_tool_call', status: 'completed' }), 'hosted tool call');
  });

  it('keeps a tool’s own name as it is, and an unknown type readable', () => {
    // A function may be called anything, even like a built-in's stem: only the stored types are renamed.
    assert.equal(titleOf({ type: 'function_call', name: 'shell', call_id: 'c', arguments: '{}' }), 'shell');
    assert.equal(itemTitle('function_call', 'computer'), 'computer');
    assert.equal(itemTitle('item_reference', null), 'item reference');
    assert.equal(itemTitle('constructor', null), 'constructor');
  });

  it('names built-in tools on the turn list’s badges by the store’s tool names, other tools as they are', () => {
    for (const [stored, shown] of [
      ['computer_call', 'computer'],
      ['file_search_call', 'file search'],
      ['web_search_call', 'web search'],
      ['code_interpreter_call', 'code interpreter'],
      ['image_generation_call', 'image generation'],
      ['tool_search', 'tool search'],
      ['mcp_call', 'MCP'],
    ] as const) {
      assert.equal(builtinToolName(stored), shown, stored);
      assert.equal(toolBadgeName(stored), shown, stored);
    }
    for (const own of ['get_weather', 'deepwiki.ask_question', 'web_search', 'toString', '__proto__']) {
      assert.equal(builtinToolName(own), undefined, own);
      assert.equal(toolBadgeName(own), own);
    }
  });

  it('is in the user’s language, from the same bundle as the host and the view, and never translates a tool’s name', () => {
    const ko = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'l10n', 'bundle.l10n.ko.json'), 'utf8')) as Record<string, string>;
    l10n.config({ contents: ko });
    assert.equal(itemTitle('user', null), '사용자');
    assert.equal(itemTitle('web_search_call', 'web_search_call'), '웹 검색');
    assert.equal(itemTitle('function_call_output', 'get_weather'), 'get_weather 결과');
    assert.equal(itemTitle('function_call', 'shell'), 'shell');
    assert.equal(toolBadgeName('tool_search'), '도구 검색');
  });
});
