/**
 * A session with every built-in tool type, as the Python SDK stores Responses API items (`call_id`, snake_case
 * fields), plus one JS-SDK-shaped function call pair (`callId`, `function_call_result` with a name), one user message
 * of content parts and an image output. For the tool renderers' unit test and UI test.
 */
import { AdvancedSQLiteSession } from '../../src/store';

/** A 96×64 PNG (a checkerboard), small enough to inline. */
export const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAGAAAABACAIAAABqVuVZAAAAhUlEQVR42u3aMQ0AMAgEQOSgrnMlVkl1VAMj9JKfP+HGD5HrlHJ3ltK9PwABAgQIECBAgAABAgQIECBAgIYB/XZwtR8QIECAAAECBAgQIECAAAECBGgakMHMoggIECBAgAABAgQIECBAgAAB8h9kMLMoAgIECBAgQIAAAQIECBAgQIDGAj0g77H/Sm1ZkgAAAABJRU5ErkJggg==';
export const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;

/** The turns of the fixture session, each a user message and the tool items it led to. */
export const BUILTIN_TOOL_TURNS: unknown[][] = [
  [
    { role: 'user', content: [{ type: 'input_text', text: 'What is the weather in Paris, and what time is it?' }] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_weather', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
    { type: 'function_call', callId: 'call_time', name: 'get_time', arguments: '{"tz":"Europe/Paris"}', status: 'completed' },
    { type: 'function_call_result', callId: 'call_time', name: 'get_time', status: 'completed', output: { type: 'text', text: '12:00' } },
    // Python writes no name on outputs: the pair takes it from the call.
    { type: 'function_call_output', call_id: 'call_weather', output: '{"temp_c":21,"sky":"sunny"}' },
    { type: 'function_call', call_id: 'call_chart', name: 'render_chart', arguments: '{}', status: 'completed' },
    {
      type: 'function_call_output',
      call_id: 'call_chart',
      output: [
        { type: 'input_text', text: 'The chart:' },
        { type: 'input_image', image_url: PNG_DATA_URL },
      ],
    },
    { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Sunny, 21 °C, at noon.' }] },
  ],
  [
    { role: 'user', content: 'Click the search box and take a screenshot.' },
    {
      type: 'computer_call',
      id: 'cu_1',
      call_id: 'call_cu',
      action: { type: 'click', x: 120, y: 340, button: 'left' },
      pending_safety_checks: [],
      status: 'completed',
    },
    { type: 'computer_call_output', call_id: 'call_cu', output: { type: 'computer_screenshot', image_url: PNG_DATA_URL } },
  ],
  [
    { role: 'user', content: 'Find our refund policy and check the web.' },
    {
      type: 'file_search_call',
      id: 'fs_1',
      queries: ['refund policy'],
      status: 'completed',
      results: [{ file_id: 'file_1', filename: 'policy.md', score: 0.92, text: 'Refunds within 30 days of purchase.' }],
    },
    {
      type: 'web_search_call',
      id: 'ws_1',
      status: 'completed',
      action: { type: 'search', query: 'weather in Paris', sources: [{ type: 'url', url: 'https://meteo.example/paris' }] },
    },
  ],
  [
    { role: 'user', content: 'Compute 6 × 7 and draw a picture.' },
    {
      type: 'code_interpreter_call',
      id: 'ci_1',
      container_id: 'cntr_1',
      code: 'print(6 * 7)',
      outputs: [{ type: 'logs', logs: '42\n' }],
      status: 'completed',
    },
    { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: PNG_BASE64, revised_prompt: 'A checkerboard' },
  ],
  [
    { role: 'user', content: 'Ask deepwiki about this repo.' },
    {
      type: 'mcp_list_tools',
      id: 'mcpl_1',
      server_label: 'deepwiki',
      tools: [{ name: 'ask_question', description: 'Ask about a repository', input_schema: { type: 'object' } }],
    },
    {
      type: 'mcp_call',
      id: 'mcp_1',
      server_label: 'deepwiki',
      name: 'ask_question',
      arguments: '{"repo":"openai/openai-agents-python","question":"What is a session?"}',
      output: 'It is a session store.',
      error: null,
    },
    { type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'deepwiki', name: 'delete_repo', arguments: '{"repo":"x"}' },
    { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: false, reason: 'Not allowed' },
  ],
  [
    { role: 'user', content: 'List the files, check git, patch a.ts and run the grammar tool.' },
    {
      type: 'local_shell_call',
      id: 'ls_1',
      call_id: 'call_ls',
      status: 'completed',
      action: { type: 'exec', command: ['ls', '-la'], env: {}, working_directory: '/work' },
    },
    { type: 'local_shell_call_output', id: 'call_ls', output: 'total 0' },
    { type: 'shell_call', id: 'sh_1', call_id: 'call_sh', status: 'completed', action: { commands: ['git status'] } },
    {
      type: 'shell_call_output',
      call_id: 'call_sh',
      output: [{ stdout: 'clean', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
    },
    {
      type: 'apply_patch_call',
      id: 'ap_1',
      call_id: 'call_ap',
      status: 'completed',
      operation: { type: 'update_file', path: 'src/a.ts', diff: '@@\n-const a = 1;\n+const a = 2;' },
    },
    { type: 'apply_patch_call_output', call_id: 'call_ap', status: 'completed', output: 'Updated src/a.ts' },
    { type: 'custom_tool_call', id: 'ct_1', call_id: 'call_ct', name: 'grammar_check', input: 'Their going home.' },
    { type: 'custom_tool_call_output', call_id: 'call_ct', output: 'They’re going home.' },
  ],
];

/** Every item of the fixture, in order. */
export const BUILTIN_TOOL_ITEMS: unknown[] = BUILTIN_TOOL_TURNS.flat();

/** Writes the fixture session `tools` through the store (one `addItems` per turn). */
export async function writeBuiltinToolSession(dbPath: string, sessionId = 'tools'): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath, createTables: true });
  try {
    for (const turn of BUILTIN_TOOL_TURNS) await s.addItems(turn as never);
  } finally {
    s.close();
  }
}
