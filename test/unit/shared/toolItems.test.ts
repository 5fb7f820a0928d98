import { strict as assert } from 'node:assert';
import {
  builtinToolSummary,
  builtinToolView,
  callIdOf,
  computerActionText,
  imageDataUrl,
  outputImages,
  pairToolItems,
  pairedToolName,
  previewText,
} from '../../../src/shared/toolItems';
import { BUILTIN_TOOL_ITEMS, PNG_DATA_URL, PNG_BASE64 } from '../../support/builtinToolItems';

const kinds = (entries: ReturnType<typeof pairToolItems<unknown>>): string[] =>
  entries.map((e) => (e.kind === 'pair' ? `pair:${callIdOf(e.call)}` : `item:${String((e.item as { type?: string }).type ?? 'msg')}`));

describe('toolItems', () => {
  it('pairs a call with its output by call_id (Python) and callId (JS SDK), at the call’s place', () => {
    const items = [
      { role: 'user', content: 'weather?' },
      { type: 'function_call', name: 'get_weather', call_id: 'py1', arguments: '{}' },
      { type: 'function_call', name: 'get_time', callId: 'js1', arguments: '{}' },
      { type: 'function_call_result', name: 'get_time', callId: 'js1', output: { type: 'text', text: 'noon' } },
      { type: 'function_call_output', call_id: 'py1', output: 'sunny' },
      { role: 'assistant', content: 'Sunny at noon.' },
    ];
    assert.deepEqual(kinds(pairToolItems(items, (i) => i)), ['item:msg', 'pair:py1', 'pair:js1', 'item:msg']);
  });

  it('keeps an unpaired call, an orphan output and a second output for one call on their own', () => {
    const items = [
      { type: 'function_call', name: 'a', call_id: 'x', arguments: '{}' },
      { type: 'function_call_output', call_id: 'orphan', output: '?' },
      { type: 'function_call', name: 'b', call_id: 'y', arguments: '{}' },
      { type: 'function_call_output', call_id: 'y', output: '1' },
      { type: 'function_call_output', call_id: 'y', output: '2' },
    ];
    assert.deepEqual(kinds(pairToolItems(items, (i) => i)), [
      'item:function_call',
      'item:function_call_output',
      'pair:y',
      'item:function_call_output',
    ]);
  });

  it('pairs built-in calls too: computer, shell, local shell, apply_patch, custom tools, MCP approvals', () => {
    const paired = pairToolItems(BUILTIN_TOOL_ITEMS, (i) => i).filter((e) => e.kind === 'pair');
    const types = paired.map((e) => (e.kind === 'pair' ? String((e.call as { type: string }).type) : ''));
    assert.deepEqual(types.sort(), [
      'apply_patch_call',
      'computer_call',
      'custom_tool_call',
      'function_call',
      'function_call',
      'function_call',
      'local_shell_call',
      'mcp_approval_request',
      'shell_call',
    ]);
  });

  it('names the tool of a pair from the call when the output (written by Python) has none', () => {
    assert.equal(
      pairedToolName({ type: 'function_call' }, { type: 'function_call_output' }, { call: 'get_weather', output: null }),
      'get_weather',
    );
    assert.equal(pairedToolName({ type: 'computer_call' }, { type: 'computer_call_output' }, { call: null, output: null }), 'computer');
  });

  it('shows only base64 data URLs of raster images, never remote URLs or SVG', () => {
    assert.equal(imageDataUrl(PNG_DATA_URL), PNG_DATA_URL);
    assert.equal(imageDataUrl('https://example.invalid/a.png'), undefined);
    assert.equal(imageDataUrl('data:image/svg+xml;base64,PHN2Zz4='), undefined);
    assert.equal(imageDataUrl('data:image/png;base64,AAA"><script>'), undefined);
    assert.deepEqual(outputImages({ type: 'computer_screenshot', image_url: PNG_DATA_URL }).images, [PNG_DATA_URL]);
    assert.deepEqual(outputImages({ type: 'computer_screenshot', data: PNG_BASE64 }).images, [PNG_DATA_URL]);
    assert.deepEqual(
      outputImages([
        { type: 'input_text', text: 'x' },
        { type: 'input_image', image_url: PNG_DATA_URL },
      ]).images,
      [PNG_DATA_URL],
    );
    assert.deepEqual(outputImages({ type: 'image', image: { data: PNG_BASE64, mediaType: 'image/png' } }).images, [PNG_DATA_URL]);
    const remote = outputImages({ type: 'input_image', image_url: 'https://example.invalid/a.png' });
    assert.deepEqual(remote.images, []);
    assert.match(remote.note ?? '', /never loaded/);
  });

  it('says why an SVG (or another unsupported) image in a tool output is not shown', () => {
    const svg = 'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=';
    for (const output of [
      [{ type: 'input_image', image_url: svg }],
      { type: 'image', image: svg },
      { type: 'image', image: { data: 'PHN2Zz48L3N2Zz4=', mediaType: 'image/svg+xml' } },
      { type: 'computer_screenshot', image_url: 'data:image/svg+xml,<svg onload="x()"></svg>' },
    ]) {
      const shown = outputImages(output);
      assert.deepEqual(shown.images, [], JSON.stringify(output));
      assert.match(shown.note ?? '', /SVG images are never shown/, JSON.stringify(output));
    }
    const bmp = outputImages({ type: 'input_image', image_url: 'data:image/bmp;base64,Qk0=' });
    assert.deepEqual(bmp.images, []);
    assert.match(bmp.note ?? '', /only PNG, JPEG, GIF and WebP/);
    // A shown image beside it still shows; the note is for the one left out.
    const mixed = outputImages([
      { type: 'input_image', image_url: PNG_DATA_URL },
      { type: 'input_image', image_url: svg },
    ]);
    assert.deepEqual(mixed.images, [PNG_DATA_URL]);
    assert.match(mixed.note ?? '', /SVG/);
    // A code interpreter's SVG chart, too.
    const chart = builtinToolView({ type: 'code_interpreter_call', code: 'plot()', outputs: [{ type: 'image', url: svg }] });
    assert.match(chart?.imageNote ?? '', /SVG images are never shown/);
  });

  it('extracts the key fields of every built-in tool type', () => {
    const byType = new Map<string, ReturnType<typeof builtinToolView>>();
    for (const item of BUILTIN_TOOL_ITEMS) byType.set(String((item as { type?: string }).type), builtinToolView(item));
    const f = (type: string, label: string): string | undefined => byType.get(type)?.fields.find((x) => x.label === label)?.text;
    assert.equal(f('computer_call', 'Action'), 'click (120, 340) left');
    assert.deepEqual(byType.get('computer_call_output')?.images, [PNG_DATA_URL]);
    assert.equal(byType.get('computer_call_output')?.fields.length, 0, 'the screenshot, not its data URL as text');
    assert.equal(f('file_search_call', 'Queries'), 'refund policy');
    assert.match(f('file_search_call', 'Results') ?? '', /^policy\.md \(score 0\.92\): Refunds within 30 days/);
    assert.equal(f('web_search_call', 'Query'), 'weather in Paris');
    assert.match(f('web_search_call', 'Sources') ?? '', /meteo\.example/);
    assert.equal(f('code_interpreter_call', 'Code'), 'print(6 * 7)');
    assert.equal(f('code_interpreter_call', 'Output'), '42\n');
    assert.deepEqual(byType.get('image_generation_call')?.images, [PNG_DATA_URL]);
    assert.equal(byType.get('mcp_call')?.tool, 'deepwiki.ask_question');
    assert.equal(f('mcp_call', 'Server'), 'deepwiki');
    assert.equal(f('mcp_call', 'Output'), 'It is a session store.');
    assert.match(f('mcp_list_tools', 'Tools') ?? '', /^ask_question — Ask about a repository/);
    assert.equal(f('mcp_approval_request', 'Tool'), 'delete_repo');
    assert.equal(f('mcp_approval_response', 'Decision'), 'denied');
    assert.equal(f('local_shell_call', 'Command'), 'ls -la');
    assert.equal(f('local_shell_call_output', 'Output'), 'total 0');
    assert.equal(f('shell_call', 'Commands'), 'git status');
    assert.equal(f('shell_call_output', 'Output'), 'clean\n[exit code 0]');
    assert.equal(f('apply_patch_call', 'Operation'), 'update_file src/a.ts');
    assert.equal(f('apply_patch_call_output', 'Status'), 'completed');
    assert.equal(byType.get('function_call'), undefined, 'function calls are rendered by the view itself');
    assert.equal(builtinToolSummary({ type: 'web_search_call', action: { type: 'search', query: 'q' } }), 'web_search: search');
  });

  it('reads the JS SDK’s shapes: callId pairs, exitCode, moveTo, screenshots as bare data, hosted tool calls', () => {
    const items = [
      { type: 'shell_call', callId: 's1', status: 'completed', action: { commands: ['npm test'] } },
      { type: 'shell_call_output', callId: 's1', output: [{ stdout: 'ok', stderr: 'warn', outcome: { type: 'exit', exitCode: 1 } }] },
      { type: 'computer_call', callId: 'c1', status: 'completed', action: { type: 'keypress', keys: ['ENTER'] } },
      { type: 'computer_call_result', callId: 'c1', output: { type: 'computer_screenshot', data: PNG_BASE64 } },
    ];
    assert.deepEqual(kinds(pairToolItems(items, (i) => i)), ['pair:s1', 'pair:c1']);
    assert.equal(builtinToolView(items[1])?.fields[0]?.text, 'ok\n[stderr] warn\n[exit code 1]');
    assert.deepEqual(builtinToolView(items[3])?.images, [PNG_DATA_URL]);
    const patch = builtinToolView({
      type: 'apply_patch_call',
      callId: 'p1',
      status: 'completed',
      operation: { type: 'update_file', path: 'a.ts', diff: '', moveTo: 'b.ts' },
    });
    assert.equal(patch?.fields[0]?.text, 'update_file a.ts → b.ts');
    // A hosted tool call renders the Responses API item the SDK kept in providerData, else its own fields.
    const hosted = builtinToolView({
      type: 'hosted_tool_call',
      name: 'web_search_call',
      status: 'completed',
      providerData: { type: 'web_search_call', action: { type: 'search', query: 'agents sdk' } },
    });
    assert.equal(hosted?.tool, 'web_search');
    assert.ok(hosted?.fields.some((f) => f.text === 'agents sdk'));
    const bare = builtinToolView({ type: 'hosted_tool_call', name: 'file_search', arguments: '{"q":"x"}', output: 'found' });
    assert.equal(bare?.tool, 'file_search');
    assert.deepEqual(
      bare?.fields.map((f) => f.text),
      ['{\n  "q": "x"\n}', 'found'],
    );
  });

  it('shows a tool search call and its output as fields, not raw JSON', () => {
    const call = builtinToolView({
      type: 'tool_search_call',
      id: 'ts1',
      call_id: 'c1',
      arguments: { query: 'refund tools' },
      execution: 'server',
      status: 'completed',
    });
    assert.deepEqual(call?.tool, 'tool_search');
    assert.deepEqual(
      call?.fields.map((f) => [f.label, f.text]),
      [
        ['Arguments', '{\n  "query": "refund tools"\n}'],
        ['Execution', 'server'],
        ['Status', 'completed'],
      ],
    );
    const output = builtinToolView({
      type: 'tool_search_output',
      tools: [{ type: 'function', name: 'refund' }, { type: 'mcp' }],
      status: 'completed',
    });
    assert.deepEqual(
      output?.fields.map((f) => [f.label, f.text]),
      [
        ['Tools found', 'refund\nmcp'],
        ['Status', 'completed'],
      ],
    );
  });

  it('writes computer actions as one line', () => {
    assert.equal(computerActionText({ type: 'type', text: 'hi' }), 'type "hi"');
    assert.equal(computerActionText({ type: 'keypress', keys: ['CTRL', 'C'] }), 'keypress CTRL+C');
    assert.equal(computerActionText({ type: 'scroll', x: 1, y: 2, scroll_x: 0, scroll_y: 300 }), 'scroll (1, 2) by (0, 300)');
    assert.equal(computerActionText({ type: 'screenshot' }), 'screenshot');
  });

  it('shows a structured user message’s preview as its text, also when the preview was cut', () => {
    assert.equal(previewText('plain text'), 'plain text');
    assert.equal(
      previewText('[{"type": "input_text", "text": "Describe this"}, {"type": "input_image", "image_url": "data:…"}]'),
      'Describe this [image]',
    );
    assert.equal(previewText('[{"type": "input_text", "text": "a long question about the ...'), 'a long question about the…');
    assert.equal(
      previewText('[{"type": "input_text", "text": "caf\\u00e9"}, {"type": "input_image", "image_url": "data:image/png;ba...'),
      'café',
    );
  });
});
