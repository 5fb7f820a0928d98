/**
 * Cross-SDK continuation (issue 11, item 4): sessions written the way the Python SDK writes them (its conformance
 * fixtures, and Responses-shaped items of every type docs/js-sdk-session.md lists) are continued with the real
 * `@openai/agents` runner and `OpenAIResponsesModel` against the loopback Responses server. Each continuation makes a
 * tool round trip. Checked: the run succeeds; every request's `input` is a list of valid Responses input items (no
 * JS-only keys or types, every tool output after its call, every history item still there); the history the file
 * held is unchanged; and the items our run added read back (`getStoredItems()`) in the Python shape.
 */
import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Agent, OpenAIResponsesModel, Runner, tool, type AgentInputItem, type Session } from '@openai/agents';
import { z } from 'zod';
import { AdvancedSQLiteSession, SQLiteSession, pythonJsonDumps, toStoredItem } from '../../../src/store';
import { startLoopbackOpenAI, type LoopbackOpenAI, type RecordedRequest } from '../../support/loopbackOpenAI';
import { Workspace, execSql, query } from '../../support/sessionHelpers';
import { copyFixture } from '../../support/tempFiles';

type Json = Record<string, unknown>;
/** What the checks need of a store session (AdvancedSQLiteSession or SQLiteSession). */
type StoreSession = Session & { readonly sessionId: string; getStoredItems(): Promise<unknown[]> };

const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'conformance');
/** Set ASI_EVIDENCE_DIR to keep the request inputs a continuation sent (for a report); nothing is written otherwise. */
const EVIDENCE_DIR = process.env.ASI_EVIDENCE_DIR;
const CONTINUE = 'Continue please';
const TOOL_OUTPUT = 'Sunny in Paris, 22°C';

const JS_ONLY_TYPES = new Set(['function_call_result', 'computer_call_result', 'hosted_tool_call', 'unknown']);
const JS_ONLY_KEYS = new Set(['callId', 'providerData']);
/** Output item type → the call type it answers (by call_id). */
const OUTPUT_OF: Record<string, string> = {
  function_call_output: 'function_call',
  computer_call_output: 'computer_call',
  custom_tool_call_output: 'custom_tool_call',
  shell_call_output: 'shell_call',
  apply_patch_call_output: 'apply_patch_call',
};

const getWeather = tool({
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async () => TOOL_OUTPUT,
});

/** JS-only keys anywhere in a value (content parts included), as paths. */
function jsOnlyKeys(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => jsOnlyKeys(v, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [...(JS_ONLY_KEYS.has(k) ? [`${path}.${k}`] : []), ...jsOnlyKeys(v, `${path}.${k}`)]);
}

/** Problems that make a request's `input` something other than valid Responses input items. */
function inputProblems(input: unknown): string[] {
  if (!Array.isArray(input)) return [`input is not a list: ${JSON.stringify(input)}`];
  const problems: string[] = [];
  const seenCalls = new Map<string, Set<string>>();
  const answered = new Set<string>();
  input.forEach((raw, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return void problems.push(`[${i}] is not an object`);
    const item = raw as Json;
    const type = typeof item.type === 'string' ? item.type : typeof item.role === 'string' ? 'message' : undefined;
    if (type === undefined) problems.push(`[${i}] has neither type nor role: ${JSON.stringify(item)}`);
    if (type && JS_ONLY_TYPES.has(type)) problems.push(`[${i}] has the JS-only type ${type}`);
    for (const p of jsOnlyKeys(item, `[${i}]`)) problems.push(`${p} is a JS-only key`);
    if (type === 'message' && typeof item.role !== 'string') problems.push(`[${i}] is a message without role`);
    if (type === 'function_call_output' && 'name' in item) problems.push(`[${i}] function_call_output has a name`);
    const callId = typeof item.call_id === 'string' ? item.call_id : undefined;
    if (type && Object.values(OUTPUT_OF).includes(type)) {
      if (!callId) problems.push(`[${i}] ${type} without call_id`);
      else {
        const set = seenCalls.get(type) ?? new Set<string>();
        set.add(callId);
        seenCalls.set(type, set);
      }
    }
    if (type && type in OUTPUT_OF) {
      if (!callId) problems.push(`[${i}] ${type} without call_id`);
      else if (!seenCalls.get(OUTPUT_OF[type]!)?.has(callId)) problems.push(`[${i}] ${type} ${callId} has no ${OUTPUT_OF[type]} before it`);
      else answered.add(`${OUTPUT_OF[type]}:${callId}`);
    }
  });
  for (const id of seenCalls.get('function_call') ?? []) {
    if (!answered.has(`function_call:${id}`)) problems.push(`function_call ${id} has no function_call_output`);
  }
  return problems;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof (p as Json).text === 'string' ? String((p as Json).text) : `<${String((p as Json).type)}>`)).join('|');
}

/** What identifies a history item in a request: role and text for messages, type and call id / id otherwise. */
function identity(item: Json): string {
  if (typeof item.role === 'string' && (item.type === undefined || item.type === 'message')) return `${item.role}:${textOf(item.content)}`;
  const ref = item.call_id ?? item.id ?? item.encrypted_content;
  return `${String(item.type)}:${typeof ref === 'string' ? ref : JSON.stringify(item)}`;
}

describe('cross-SDK continuation: Python-shaped sessions through the runner, OpenAIResponsesModel and the loopback server', function () {
  this.timeout(30_000);
  let ws: Workspace;
  let server: LoopbackOpenAI;
  let runner: Runner;
  let agent: Agent;

  before(() => {
    if (EVIDENCE_DIR) mkdirSync(EVIDENCE_DIR, { recursive: true });
  });
  beforeEach(async () => {
    ws = new Workspace('asi-xsdk-');
    // One tool round trip per run: a call to get_weather, then an answer once its output is in the input.
    server = await startLoopbackOpenAI({
      script: (r) => {
        const input = r.body.input as Json[];
        return input.at(-1)?.type === 'function_call_output'
          ? { kind: 'text', text: 'It is sunny in Paris.' }
          : { kind: 'calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] };
      },
    });
    const client = new OpenAI({ apiKey: 'sk-loopback-test', baseURL: server.baseUrl, organization: null, project: null, maxRetries: 0 });
    agent = new Agent({
      name: 'Continuer',
      instructions: 'Continue the conversation.',
      model: new OpenAIResponsesModel(client, 'gpt-4.1'),
      tools: [getWeather],
    });
    runner = new Runner({ tracingDisabled: true });
  });
  afterEach(async () => {
    await server.close();
    ws.cleanup();
  });

  /**
   * Continues `session` (on its current branch) and checks everything; returns the first request's input.
   * `history` is the current branch's items as the file holds them before the run.
   */
  async function continueAndCheck(session: StoreSession, dbPath: string, what: string): Promise<unknown[]> {
    const history = (await session.getStoredItems()) as Json[];
    const first = server.requests.length;
    const result = await runner.run(agent, CONTINUE, { session });
    assert.equal(result.finalOutput, 'It is sunny in Paris.', `${what}: final output`);
    const requests: RecordedRequest[] = server.requests.slice(first);
    assert.equal(requests.length, 2, `${what}: one call request and one answer request`);
    for (const [n, r] of requests.entries()) {
      assert.deepStrictEqual(inputProblems(r.body.input), [], `${what}: request ${n + 1}'s input is not valid Responses input`);
    }
    // The whole history reaches the model (after the latest compaction item, which the runner keeps as the start).
    const firstInput = requests[0]!.body.input as Json[];
    const sent = firstInput.map(identity);
    const compactionAt = history.map((h) => h.type).lastIndexOf('compaction');
    // (Rows in the JS shape of earlier versions are compared in their stored, Responses form.)
    const expectedHistory = (compactionAt >= 0 ? history.slice(compactionAt) : history).map((h) =>
      identity(toStoredItem(h as unknown as AgentInputItem)),
    );
    assert.deepStrictEqual(sent.slice(0, -1), expectedHistory, `${what}: the history sent to the model`);
    assert.equal(identity(firstInput.at(-1)!), `user:${CONTINUE}`, `${what}: the new input comes last`);
    const callId = server.replies[first]!.callIds[0]!;

    // The file: history unchanged, and what we added in the Python shape.
    const after = (await session.getStoredItems()) as Json[];
    assert.deepStrictEqual(after.slice(0, history.length), history, `${what}: the stored history changed`);
    const added = after.slice(history.length);
    assert.deepStrictEqual(
      added.map((i) => i.type ?? `(${String(i.role)})`),
      [added[0]!.type ?? '(user)', 'function_call', 'function_call_output', 'message'],
      `${what}: the items added: ${JSON.stringify(added)}`,
    );
    assert.equal(added[0]!.role, 'user');
    assert.equal(textOf(added[0]!.content), CONTINUE);
    for (const item of added) {
      assert.deepStrictEqual(jsOnlyKeys(item), [], `${what}: a stored item has JS-only keys: ${JSON.stringify(item)}`);
      assert.ok(!JS_ONLY_TYPES.has(String(item.type)), `${what}: a stored item has a JS-only type: ${JSON.stringify(item)}`);
    }
    const call = added[1]!;
    assert.equal(call.call_id, callId, `${what}: function_call call_id`);
    assert.equal(call.name, 'get_weather');
    assert.equal(call.arguments, JSON.stringify({ city: 'Paris' }));
    const output = added[2]!;
    assert.deepStrictEqual(
      { type: output.type, call_id: output.call_id, output: output.output },
      { type: 'function_call_output', call_id: callId, output: TOOL_OUTPUT },
      `${what}: function_call_output`,
    );
    assert.ok(!('name' in output), `${what}: function_call_output stored with a name (Python's has none): ${JSON.stringify(output)}`);
    assert.equal(added[3]!.role, 'assistant');
    assert.equal(textOf(added[3]!.content), 'It is sunny in Paris.');
    // The raw row is Python's JSON encoding of that item (what Python reads back with json.loads).
    const raw = query<{ message_data: string }>(
      dbPath,
      `SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id DESC LIMIT 4`,
      session.sessionId,
    ).reverse();
    assert.deepStrictEqual(
      raw.map((r) => r.message_data),
      added.map((i) => pythonJsonDumps(i)),
      `${what}: message_data is not Python's encoding`,
    );
    // A second continuation reads our own items back and sends them as valid input too.
    const again = server.requests.length;
    await runner.run(agent, 'And tomorrow?', { session });
    for (const r of server.requests.slice(again)) {
      assert.deepStrictEqual(inputProblems(r.body.input), [], `${what}: a second continuation's input is not valid`);
    }
    return firstInput;
  }

  /** Every (session, branch) of a conformance fixture. */
  function fixtureBranches(file: string): { sessionId: string; branchId: string }[] {
    return query<{ sessionId: string; branchId: string }>(
      join(FIXTURES, file),
      'SELECT DISTINCT session_id AS sessionId, branch_id AS branchId FROM message_structure ORDER BY session_id, branch_id',
    );
  }

  for (const file of ['ref-basic.db', 'ref-multisession.db']) {
    it(`Python fixture ${file}: every session and branch continues`, async () => {
      const branches = fixtureBranches(file);
      assert.ok(branches.length > 0, `${file} has no branches`);
      for (const { sessionId, branchId } of branches) {
        // A fresh copy for each branch, so every continuation starts from what Python wrote.
        const dir = join(ws.dir, `${sessionId}-${branchId}`);
        mkdirSync(dir);
        const dbPath = copyFixture(join(FIXTURES, file), dir);
        const session = ws.track(new AdvancedSQLiteSession({ sessionId, dbPath }));
        await session.switchToBranch(branchId);
        const input = await continueAndCheck(session, dbPath, `${file} ${sessionId}/${branchId}`);
        if (EVIDENCE_DIR) {
          writeFileSync(
            join(EVIDENCE_DIR, `${file}-${sessionId}-${branchId}.json`),
            `${JSON.stringify({ file, sessionId, branchId, input }, null, 2)}\n`,
          );
        }
      }
    });
  }

  /** Python-shaped sessions (Responses input items as the Python SDK stores them), one per group of item types. */
  const pythonSessions: Record<string, Json[]> = {
    'messages: user (plain and parts), developer, system, assistant': [
      { content: 'You are a weather bot.', role: 'developer', type: 'message' },
      { role: 'developer', type: 'message', content: [{ type: 'input_text', text: 'Answer in English.' }] },
      { content: 'Keep it short.', role: 'system' },
      { content: 'Hi there', role: 'user' },
      {
        id: 'msg_py1',
        content: [{ annotations: [], text: 'Hello!', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in this picture and file?' },
          { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
          { type: 'input_file', filename: 'notes.txt', file_data: 'data:text/plain;base64,aGVsbG8=' },
        ],
      },
      {
        id: 'msg_py2',
        content: [{ annotations: [], text: 'A tiny image and a note.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    'function tool with reasoning (the session of the issue)': [
      { content: 'Weather in Paris?', role: 'user' },
      { id: 'rs_py1', summary: [{ text: 'Need the weather tool.', type: 'summary_text' }], type: 'reasoning' },
      { arguments: '{"city":"Paris"}', call_id: 'call_w1', name: 'get_weather', type: 'function_call', id: 'fc_py1', status: 'completed' },
      { call_id: 'call_w1', output: 'Sunny, 22°C', type: 'function_call_output' },
      {
        id: 'msg_py3',
        content: [{ annotations: [], text: 'It is sunny, 22°C.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    'computer call and output': [
      { content: 'Click the button', role: 'user' },
      {
        id: 'cu_py1',
        action: { button: 'left', type: 'click', x: 10, y: 20 },
        call_id: 'call_c1',
        pending_safety_checks: [],
        status: 'completed',
        type: 'computer_call',
      },
      {
        call_id: 'call_c1',
        output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
        type: 'computer_call_output',
      },
      {
        id: 'msg_py4',
        content: [{ annotations: [], text: 'Clicked.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    'hosted tools: web search, file search, code interpreter, image generation': [
      { content: 'Research this', role: 'user' },
      { id: 'ws_py1', action: { query: 'weather paris', type: 'search' }, status: 'completed', type: 'web_search_call' },
      { id: 'fs_py1', queries: ['paris'], status: 'completed', type: 'file_search_call', results: null },
      { id: 'ci_py1', code: 'print(1)', container_id: 'cntr_1', outputs: null, status: 'completed', type: 'code_interpreter_call' },
      { id: 'ig_py1', result: 'iVBORw0KGgo=', status: 'completed', type: 'image_generation_call' },
      {
        id: 'msg_py5',
        content: [{ annotations: [], text: 'Done researching.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    'MCP: list tools, call, approval request and response': [
      { content: 'Use the MCP server', role: 'user' },
      {
        id: 'mcpl_py1',
        server_label: 'docs',
        tools: [{ input_schema: { type: 'object' }, name: 'search', annotations: null, description: null }],
        type: 'mcp_list_tools',
      },
      { id: 'mcp_py1', arguments: '{}', name: 'search', server_label: 'docs', type: 'mcp_call', error: null, output: 'found' },
      { id: 'mcpr_py1', arguments: '{}', name: 'search', server_label: 'docs', type: 'mcp_approval_request' },
      { approval_request_id: 'mcpr_py1', approve: true, type: 'mcp_approval_response' },
      {
        id: 'msg_py6',
        content: [{ annotations: [], text: 'Searched the docs.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    'tool search call and output': [
      { content: 'Find a tool', role: 'user' },
      {
        id: 'ts_py1',
        arguments: { query: 'weather' },
        call_id: 'call_ts1',
        execution: 'client',
        status: 'completed',
        type: 'tool_search_call',
      },
      { id: 'tso_py1', call_id: 'call_ts1', execution: 'client', status: 'completed', tools: [], type: 'tool_search_output' },
      {
        id: 'msg_py7',
        content: [{ annotations: [], text: 'No extra tools.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    'shell and apply_patch calls with outputs': [
      { content: 'Patch the file', role: 'user' },
      { id: 'sh_py1', action: { commands: ['ls'] }, call_id: 'call_sh1', status: 'completed', type: 'shell_call' },
      {
        call_id: 'call_sh1',
        output: [{ stdout: 'a.txt\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
        type: 'shell_call_output',
      },
      {
        id: 'ap_py1',
        call_id: 'call_ap1',
        operation: { type: 'update_file', path: 'a.txt', diff: '@@\n-a\n+b\n' },
        status: 'completed',
        type: 'apply_patch_call',
      },
      { call_id: 'call_ap1', status: 'completed', output: 'patched', type: 'apply_patch_call_output' },
      {
        id: 'msg_py8',
        content: [{ annotations: [], text: 'Patched.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    'custom tool call and output, item reference': [
      { content: 'Run the grammar tool', role: 'user' },
      { id: 'ct_py1', call_id: 'call_ct1', input: 'x = 1', name: 'python_grammar', type: 'custom_tool_call' },
      { call_id: 'call_ct1', output: 'ok', type: 'custom_tool_call_output' },
      { id: 'msg_ref1', type: 'item_reference' },
      {
        id: 'msg_py9',
        content: [{ annotations: [], text: 'Grammar ok.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
    'compaction item': [
      { content: 'Old question', role: 'user' },
      { encrypted_content: 'gAAAA-compacted', id: 'cmp_py1', type: 'compaction' },
      { content: 'After compaction', role: 'user' },
      {
        id: 'msg_py10',
        content: [{ annotations: [], text: 'Still here.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ],
  };

  for (const [name, items] of Object.entries(pythonSessions)) {
    it(`Python-shaped items: ${name}`, async () => {
      const session = ws.open({ sessionId: 'py', dbPath: ws.path('python-shaped.db') });
      await session.addItems(structuredClone(items) as AgentInputItem[]);
      // Responses-shaped input is stored unchanged, in Python's JSON encoding.
      assert.deepStrictEqual(await session.getStoredItems(), items, 'the Python-shaped items were not stored unchanged');
      assert.deepStrictEqual(
        query<{ message_data: string }>(session.dbPath, 'SELECT message_data FROM agent_messages ORDER BY id').map((r) => r.message_data),
        items.map((i) => pythonJsonDumps(i)),
      );
      const input = await continueAndCheck(session, session.dbPath, name);
      if (EVIDENCE_DIR)
        writeFileSync(join(EVIDENCE_DIR, `python-shaped-${name.replace(/\W+/g, '-')}.json`), `${JSON.stringify(input, null, 2)}\n`);
    });
  }

  it("Python's plain SQLiteSession: the session of the issue continues", async () => {
    const dbPath = ws.path('plain.db');
    const session = ws.track(new SQLiteSession({ sessionId: 'plain', dbPath }));
    const items = pythonSessions['function tool with reasoning (the session of the issue)']!;
    await session.addItems(structuredClone(items) as AgentInputItem[]);
    assert.deepStrictEqual(await session.getStoredItems(), items, 'the Python-shaped items were not stored unchanged');
    await continueAndCheck(session, dbPath, 'SQLiteSession');
  });

  it('rows in the JS shape of earlier versions of this store continue, and new rows are Python-shaped', async () => {
    const session = ws.open({ sessionId: 'legacy', dbPath: ws.path('legacy.db') });
    const legacy: Json[] = [
      { role: 'user', content: 'Weather in Oslo?' },
      { type: 'function_call', callId: 'call_old1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed', id: 'fc_old1' },
      {
        type: 'function_call_result',
        callId: 'call_old1',
        name: 'get_weather',
        status: 'completed',
        output: { type: 'text', text: 'Snow' },
      },
      { role: 'assistant', type: 'message', status: 'completed', id: 'msg_old1', content: [{ type: 'output_text', text: 'It snows.' }] },
    ];
    // Write the rows as an earlier version did: the JS items verbatim, classified as they were (tool name of the result).
    await session.addItems(legacy.map(() => ({ role: 'user', content: 'x' })) as AgentInputItem[]);
    const ids = query<{ id: number }>(session.dbPath, 'SELECT id FROM agent_messages WHERE session_id = ? ORDER BY id', 'legacy');
    assert.equal(ids.length, legacy.length);
    const types = ['user', 'function_call', 'function_call_result', 'assistant'];
    ids.forEach(({ id }, i) => {
      execSql(session.dbPath, 'UPDATE agent_messages SET message_data = ? WHERE id = ?', pythonJsonDumps(legacy[i]), id);
      execSql(
        session.dbPath,
        'UPDATE message_structure SET message_type = ?, tool_name = ?, user_turn_number = ?, branch_turn_number = ? WHERE message_id = ?',
        types[i]!,
        i === 1 || i === 2 ? 'get_weather' : null,
        1,
        1,
        id,
      );
    });
    assert.deepStrictEqual(await session.getStoredItems(), legacy);
    await continueAndCheck(session, session.dbPath, 'legacy JS-shaped rows');
  });
});
