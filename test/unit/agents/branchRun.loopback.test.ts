/**
 * End to end: runOnBranch with the real @openai/agents runner and the real openai client against the loopback
 * Responses server (test/support/loopbackOpenAI.ts). Every expectation is derived from what the test seeded and
 * what the server recorded it received and sent.
 */
import { strict as assert } from 'node:assert';
import { AdvancedSQLiteSession, openDatabase, type SqliteDatabase } from '../../../src/store';
import { createConfiguredAgent, type AgentConfig, type ConfiguredAgent } from '../../../src/agents/agentConfig';
import { resolveApiKey } from '../../../src/agents/apiKey';
import { runOnBranch, type RunOnBranchOptions } from '../../../src/agents/branchRun';
import type { SpanRecord } from '../../../src/store/traces/spanRecord';
import type { RunEvent, RunOutcome, RunFailedEvent, RunCompletedEvent } from '../../../src/shared/protocol/runEvents';
import {
  closedPort,
  lastUserText,
  startLoopbackOpenAI,
  type LoopbackOpenAI,
  type LoopbackReply,
  type RecordedRequest,
  type SentUsage,
} from '../../support/loopbackOpenAI';
import { Workspace, tables } from '../../support/sessionHelpers';
import {
  TEST_KEY,
  assertWellFormed,
  captureOutput,
  databaseBytes,
  eventLog,
  readBranch,
  seedSession,
  writeAgentModule,
} from './agentTestKit';

/**
 * Every table of the file, timestamps masked, except two bookkeeping tables a rollback cannot restore and that hold
 * no conversation: sqlite_sequence (AUTOINCREMENT counters move on, as after any deleted row) and
 * branch_reservations (popItem reserves the ids of existing branches, here 'main', which is reserved anyway).
 */
function content(path: string): Record<string, unknown> {
  const all: Record<string, unknown> = tables(path);
  delete all.sqlite_sequence;
  delete all.branch_reservations;
  return all;
}

/** The last input item of a request. */
function lastInput(r: RecordedRequest): Record<string, unknown> {
  const input = r.body.input as Record<string, unknown>[];
  return input[input.length - 1] as Record<string, unknown>;
}

/** Roles/types of a request's input items, e.g. ['user', 'assistant', 'function_call']. */
function inputShape(r: RecordedRequest): string[] {
  return (r.body.input as Record<string, unknown>[]).map((i) =>
    typeof i.role === 'string' ? `${i.role}:${lastUserTextOf(i)}` : String(i.type),
  );
}
function lastUserTextOf(item: Record<string, unknown>): string {
  const c = item.content;
  if (typeof c === 'string') return c;
  return Array.isArray(c) ? c.map((p) => String((p as { text?: unknown }).text ?? '')).join('') : '';
}

/** Sums the usage the server sent for some replies, as the store records it. */
function expectedUsage(sent: SentUsage[]) {
  return {
    requests: sent.length,
    inputTokens: sent.reduce((n, u) => n + u.input_tokens, 0),
    outputTokens: sent.reduce((n, u) => n + u.output_tokens, 0),
    totalTokens: sent.reduce((n, u) => n + u.total_tokens, 0),
    cachedTokens: sent.reduce((n, u) => n + u.input_tokens_details.cached_tokens, 0),
    reasoningTokens: sent.reduce((n, u) => n + u.output_tokens_details.reasoning_tokens, 0),
  };
}

describe('runOnBranch end to end (real SDK + openai client, loopback server)', function () {
  this.timeout(30_000);
  let ws: Workspace;
  let server: LoopbackOpenAI;
  let configured: ConfiguredAgent[];
  let dbPath: string;
  let output: ReturnType<typeof captureOutput>;
  /** Every event of every run in the test, searched for the key afterwards. */
  let allEvents: RunEvent[];

  const config = (extra: Partial<AgentConfig> = {}): AgentConfig => ({
    model: 'loopback-model-1',
    instructions: 'Answer briefly.',
    baseUrl: server.baseUrl,
    maxRetries: 0,
    ...extra,
  });
  async function agentFor(extra: Partial<AgentConfig> = {}, key = TEST_KEY): Promise<ConfiguredAgent> {
    const c = await createConfiguredAgent(config(extra), key, { trusted: true, cwd: ws.dir });
    configured.push(c);
    return c;
  }
  async function run(options: Partial<RunOnBranchOptions> & { input: string }) {
    const log = eventLog();
    const outcome = await runOnBranch({
      dbPath,
      sessionId: 's1',
      busyTimeoutMs: 200,
      ...options,
      agent: options.agent ?? (await agentFor()),
      onEvent: (e) => {
        log.onEvent(e);
        allEvents.push(e);
        options.onEvent?.(e);
      },
    });
    assertWellFormed(log.events, outcome);
    return { outcome, log };
  }
  const completed = (o: RunOutcome): RunCompletedEvent => {
    assert.equal(o.kind, 'run/completed', o.kind === 'run/failed' ? `${o.failure}: ${o.message}` : '');
    return o as RunCompletedEvent;
  };
  const failed = (o: RunOutcome, failure: RunFailedEvent['failure']): RunFailedEvent => {
    assert.equal(o.kind, 'run/failed');
    assert.equal((o as RunFailedEvent).failure, failure, (o as RunFailedEvent).message);
    return o as RunFailedEvent;
  };
  /** A script answering every request with `text` plus the user's message, to tie replies to requests. */
  const echoScript = (r: RecordedRequest): LoopbackReply => ({ kind: 'text', text: `Reply to: ${lastUserText(r.body)}` });

  beforeEach(async () => {
    ws = new Workspace('asi-agents-');
    dbPath = ws.path('sessions.db');
    configured = [];
    allEvents = [];
    server = await startLoopbackOpenAI({ script: echoScript });
    output = captureOutput();
  });
  afterEach(async function () {
    output.restore();
    for (const c of configured) await c.close();
    await server.close();
    // The key must never reach an event, the console, or the database — whatever the test did.
    if (this.currentTest?.state !== 'failed') {
      assert.ok(!JSON.stringify(allEvents).includes(TEST_KEY), 'an event contains the API key');
      assert.ok(!output.lines.join('\n').includes(TEST_KEY), 'console output contains the API key');
      if (databaseBytes(dbPath) !== '') assert.ok(!databaseBytes(dbPath).includes(TEST_KEY), 'the database contains the API key');
    }
    ws.cleanup();
  });

  it('continues main: sends the history, streams the answer, stores the turn with its usage', async () => {
    await seedSession(dbPath, [
      ['What is 2+2?', '4.'],
      ['And 3+3?', '6.'],
    ]);
    const { outcome, log } = await run({ input: 'And 4+4?' });
    const done = completed(outcome);

    assert.equal(server.requests.length, 1);
    const req = server.requests[0]!;
    assert.equal(req.authorization, `Bearer ${TEST_KEY}`, 'the configured key is sent');
    assert.equal(req.stream, true);
    assert.equal(req.body.model, 'loopback-model-1');
    assert.equal(req.body.instructions, 'Answer briefly.');
    assert.deepEqual(inputShape(req), ['user:What is 2+2?', 'assistant:4.', 'user:And 3+3?', 'assistant:6.', 'user:And 4+4?']);

    const sent = server.replies[0]!;
    assert.equal(log.text(), 'Reply to: And 4+4?');
    assert.deepEqual(
      log.events.filter((e) => e.kind === 'text/delta').map((e) => (e as { delta: string }).delta),
      sent.deltas,
      'deltas arrive as sent, in order',
    );
    assert.equal(done.finalOutput, 'Reply to: And 4+4?');
    assert.deepEqual(done.usage, expectedUsage([sent.usage!]));

    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(main.turns, [1, 2, 3]);
    assert.deepEqual(main.byTurns.get(3), [
      { type: 'user', toolName: null },
      { type: 'assistant', toolName: null },
    ]);
    assert.deepEqual(
      main.usage.map((u) => [u.userTurnNumber, u.requests, u.inputTokens, u.outputTokens, u.totalTokens]),
      [[3, 1, sent.usage!.input_tokens, sent.usage!.output_tokens, sent.usage!.total_tokens]],
    );
    assert.deepEqual(main.usage[0]!.inputTokensDetails, {
      cache_write_tokens: 0,
      cached_tokens: sent.usage!.input_tokens_details.cached_tokens,
    });
    assert.deepEqual(main.usage[0]!.outputTokensDetails, { reasoning_tokens: sent.usage!.output_tokens_details.reasoning_tokens });
    assert.deepEqual(done.written, {
      summary: "Saved turn 3 on branch 'main': 2 item(s) and its usage.",
      kept: ['user: "And 4+4?"', 'assistant: "Reply to: And 4+4?"'],
      removed: [],
      notSaved: [],
      turn: 3,
      usageStored: true,
    });
  });

  it('continues a branch created at a turn: only the branch history is sent, and the run lands on that branch', async () => {
    await seedSession(dbPath, [
      ['Plan a trip to Paris', 'Sure: Paris.'],
      ['Make it Rome instead', 'OK: Rome.'],
      ['Add a day in Florence', 'Added Florence.'],
    ]);
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
    await s.createBranchFromTurn(2, 'madrid');
    s.close();
    const mainBefore = await readBranch(dbPath, 'main');

    const first = await run({ branchId: 'madrid', input: 'Make it Madrid instead' });
    completed(first.outcome);
    assert.deepEqual(inputShape(server.requests[0]!), [
      'user:Plan a trip to Paris',
      'assistant:Sure: Paris.',
      'user:Make it Madrid instead',
    ]);

    const madrid = await readBranch(dbPath, 'madrid');
    assert.deepEqual(madrid.turns, [1, 2]);
    assert.deepEqual(madrid.byTurns.get(2), [
      { type: 'user', toolName: null },
      { type: 'assistant', toolName: null },
    ]);
    assert.deepEqual(
      madrid.usage.map((u) => [u.userTurnNumber, u.totalTokens]),
      [[2, server.replies[0]!.usage!.total_tokens]],
    );
    assert.deepEqual(await readBranch(dbPath, 'main'), mainBefore, 'main is untouched');

    // Continue the branch once more, then main: each run stays on its branch with the next turn number.
    const second = await run({ branchId: 'madrid', input: 'Two days there' });
    assert.equal(completed(second.outcome).written.turn, 3);
    assert.deepEqual(inputShape(server.requests[1]!).slice(-3), [
      'user:Make it Madrid instead',
      'assistant:Reply to: Make it Madrid instead',
      'user:Two days there',
    ]);
    const third = await run({ branchId: 'main', input: 'Back to Florence' });
    assert.equal(completed(third.outcome).written.turn, 4);
    assert.equal(inputShape(server.requests[2]!).length, 7, 'main sends its own 3 turns plus the new message');

    const check = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, readonly: true });
    const branches = await check.listBranches();
    check.close();
    assert.deepEqual(branches.map((b) => [b.branchId, b.userTurns, b.messageCount]).sort(), [
      ['madrid', 3, 6],
      ['main', 4, 8],
    ]);
    const madridAfter = await readBranch(dbPath, 'madrid');
    assert.deepEqual(
      madridAfter.usage.map((u) => [u.userTurnNumber, u.totalTokens]),
      [
        [2, server.replies[0]!.usage!.total_tokens],
        [3, server.replies[1]!.usage!.total_tokens],
      ],
    );
    assert.deepEqual(
      (await readBranch(dbPath, 'main')).usage.map((u) => [u.userTurnNumber, u.totalTokens]),
      [[4, server.replies[2]!.usage!.total_tokens]],
    );
  });

  it('traces the run into the trace store: its agent, each model request with the model and usage the server sent, its tools, a failed one marked; linked to the branch and turn it wrote', async () => {
    await seedSession(dbPath, [
      ['Hi', 'Hello!'],
      ['Second', 'Sure.'],
    ]);
    const modulePath = writeAgentModule(
      ws.dir,
      'traced.js',
      `exports.agent = new Agent({
  name: 'Traced agent',
  instructions: 'Use the tools.',
  tools: [
    tool({ name: 'lookup_capital', description: 'Capital', parameters: z.object({ country: z.string() }), execute: async () => 'Paris' }),
    tool({ name: 'flaky_weather', description: 'Weather', parameters: z.object({}), execute: async () => { throw new Error('weather service down'); } }),
  ],
});`,
    );
    server.setScript((r) => {
      const last = lastInput(r);
      if (last.type === 'function_call_output') return { kind: 'text', text: 'Paris, weather unknown.' };
      return {
        kind: 'calls',
        calls: [
          { name: 'lookup_capital', arguments: { country: 'France' } },
          { name: 'flaky_weather', arguments: {} },
        ],
      };
    });
    const stored: SpanRecord[][] = [];
    const { outcome, log } = await run({
      agent: await agentFor({ agentModule: modulePath }),
      input: 'Capital and weather of France?',
      fork: { fromTurn: 2, name: 'traced' },
      tracing: { sink: async (records) => void stored.push(records) },
    });
    const done = completed(outcome);
    assert.equal(stored.length, 1, 'one batch, after the run settled');
    const records = stored[0]!;
    const { branchId } = log.events[0] as { branchId: string };
    assert.notEqual(branchId, 'main');
    for (const r of records) assert.deepEqual(r.link, { sessionId: 's1', branchId, turnNumber: done.written.turn });
    assert.equal(done.written.turn, 2);
    const models = records.filter((r) => r.kind === 'model');
    assert.deepEqual(
      models.map((m) => [m.model, m.inputTokens, m.outputTokens, m.cachedTokens, m.reasoningTokens]),
      server.replies.map((reply, i) => [
        server.requests[i]!.body.model,
        reply.usage!.input_tokens,
        reply.usage!.output_tokens,
        reply.usage!.input_tokens_details.cached_tokens,
        reply.usage!.output_tokens_details.reasoning_tokens,
      ]),
    );
    const tools = records.filter((r) => r.kind === 'tool').sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(
      tools.map((t) => [t.toolName, t.status]),
      [
        ['flaky_weather', 'error'],
        ['lookup_capital', 'ok'],
      ],
    );
    assert.match(tools[0]!.error ?? '', /tool/i);
    // The SDK's nesting: the run, its agent, the agent's steps (one per model request), each step's request and tools.
    const root = records.find((r) => r.parentSpanId === null)!;
    assert.equal(root.name, 'Agent Session Inspector run');
    const agent = records.find((r) => r.kind === 'agent')!;
    assert.equal(agent.agentName, 'Traced agent');
    assert.equal(agent.parentSpanId, root.spanId);
    const steps = records.filter((r) => r.parentSpanId === agent.spanId);
    assert.deepEqual(steps.map((r) => r.name).sort(), ['step 1 (Traced agent)', 'step 2 (Traced agent)']);
    for (const m of models)
      assert.ok(
        steps.some((st) => st.spanId === m.parentSpanId),
        `${m.name} under a step`,
      );
    for (const r of records) {
      assert.match(r.traceId, /^[0-9a-f]{32}$/);
      assert.match(r.spanId, /^[0-9a-f]{16}$/);
      assert.ok(r.startUs <= r.endUs);
      if (r !== root) assert.ok(r.parentSpanId, `${r.name} has a parent`);
    }
    // The conversation is in the trace only as each model request's recorded input (docs/context.md), nowhere else.
    assert.ok(models.every((m) => String(m.attributes['gen_ai.input.messages']).includes('Capital and weather')));
    const withoutInputs = records.map((r) => ({ ...r, attributes: { ...r.attributes, 'gen_ai.input.messages': null } }));
    assert.ok(!JSON.stringify(withoutInputs).includes('Capital and weather'), 'no prompt text outside the recorded inputs');
  });

  it('a trace store that cannot take the spans leaves the run completed, and says so in the log', async () => {
    await seedSession(dbPath, [['Hi', 'Hello!']]);
    const lines: string[] = [];
    const { outcome } = await run({
      input: 'Again?',
      log: (line) => lines.push(line),
      tracing: {
        sink: async () => {
          throw new Error('database is locked');
        },
      },
    });
    assert.equal(completed(outcome).written.turn, 2);
    assert.deepEqual(lines, ["The run's trace could not be stored: database is locked"]);
  });

  it('runs a tool round trip with an agent from a workspace module (its tool, our client)', async () => {
    await seedSession(dbPath, [['Hi', 'Hello!']]);
    const modulePath = writeAgentModule(
      ws.dir,
      'capitals.js',
      `const capitals = { France: 'Paris', Japan: 'Tokyo' };
exports.agent = new Agent({
  name: 'Capitals agent',
  instructions: 'Use lookup_capital.',
  tools: [tool({ name: 'lookup_capital', description: 'Capital of a country', parameters: z.object({ country: z.string() }),
    execute: async ({ country }) => capitals[country] ?? 'unknown' })],
});`,
    );
    server.setScript((r) => {
      const last = lastInput(r);
      if (last.type === 'function_call_output') return { kind: 'text', text: `The capital is ${String(last.output)}.` };
      return { kind: 'calls', calls: [{ name: 'lookup_capital', arguments: { country: 'France' } }] };
    });
    const agent = await agentFor({ agentModule: modulePath, model: 'module-default-model' });
    assert.equal(agent.source, 'module');
    const { outcome, log } = await run({ agent, input: 'Capital of France?' });
    const done = completed(outcome);

    assert.equal(server.requests.length, 2);
    for (const r of server.requests) {
      assert.equal(r.body.model, 'module-default-model', 'a module agent without a model uses the configured one');
      assert.equal(r.authorization, `Bearer ${TEST_KEY}`);
      assert.deepEqual(
        r.body.tools?.map((t) => t.name),
        ['lookup_capital'],
      );
    }
    const callId = server.replies[0]!.callIds[0]!;
    const sentOutput = (server.requests[1]!.body.input as Record<string, unknown>[]).find((i) => i.type === 'function_call_output');
    assert.deepEqual({ call_id: sentOutput?.call_id, output: sentOutput?.output }, { call_id: callId, output: 'Paris' });

    const kinds = log.kinds();
    assert.deepEqual(
      kinds.filter((k) => k !== 'text/delta'),
      ['run/started', 'tool/called', 'tool/output', 'item/added', 'run/completed'],
    );
    assert.ok(kinds.indexOf('tool/output') < kinds.indexOf('text/delta'), 'tool events come before the answer streams');
    const called = log.events.find((e) => e.kind === 'tool/called');
    assert.deepEqual(called, {
      kind: 'tool/called',
      runId: outcome.runId,
      callId,
      name: 'lookup_capital',
      arguments: '{"country":"France"}',
    });
    const out = log.events.find((e) => e.kind === 'tool/output');
    // Continuing a branch (no recorded turn to replay) runs the tool live, and says so.
    assert.deepEqual(out, {
      kind: 'tool/output',
      runId: outcome.runId,
      callId,
      name: 'lookup_capital',
      output: 'Paris',
      replay: { outcome: 'live', recordedCallId: null },
    });
    assert.equal((log.events[0] as { agentName: string }).agentName, 'Capitals agent');
    assert.equal(done.finalOutput, 'The capital is Paris.');
    assert.deepEqual(done.usage, expectedUsage([server.replies[0]!.usage!, server.replies[1]!.usage!]));

    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(main.byTurns.get(2), [
      { type: 'user', toolName: null },
      { type: 'function_call', toolName: 'lookup_capital' },
      // The JS SDK's output item type, stored as given (format spec §6).
      { type: 'function_call_output', toolName: null },
      { type: 'assistant', toolName: null },
    ]);
    assert.deepEqual(
      main.usage.map((u) => [u.userTurnNumber, u.requests, u.totalTokens]),
      [[2, 2, done.usage.totalTokens]],
    );
  });

  it('streams deltas in order while the server is still sending', async () => {
    await seedSession(dbPath, [['a', 'b']]);
    const chunks = ['Alpha ', 'beta ', 'gamma ', 'delta ', 'epsilon.'];
    server.setScript(() => ({ kind: 'text', text: chunks.join(''), chunks, delayMs: 60 }));
    const arrivals: number[] = [];
    const { outcome, log } = await run({
      input: 'Greek letters please',
      onEvent: (e) => {
        if (e.kind === 'text/delta') arrivals.push(Date.now());
      },
    });
    completed(outcome);
    const deltas = log.events.filter((e) => e.kind === 'text/delta').map((e) => (e as { delta: string }).delta);
    assert.deepEqual(deltas, chunks);
    const finishedAt = server.replies[0]!.finishedAt!;
    assert.ok(arrivals[0]! < finishedAt - 100, `the first delta arrived ${finishedAt - arrivals[0]!} ms before the server finished`);
    for (let i = 1; i < arrivals.length; i++) assert.ok(arrivals[i]! >= arrivals[i - 1]!);
  });

  it('cancel mid-stream before any usage: rolls the turn back completely; the next run succeeds', async () => {
    await seedSession(dbPath, [['First question', 'First answer']]);
    const before = content(dbPath);
    const words = Array.from({ length: 40 }, (_, i) => `w${i} `);
    server.setScript(() => ({ kind: 'text', text: words.join(''), chunks: words, delayMs: 25 }));
    const controller = new AbortController();
    let deltas = 0;
    const { outcome } = await run({
      input: 'Tell me a long story',
      signal: controller.signal,
      onEvent: (e) => {
        if (e.kind === 'text/delta' && ++deltas === 3) controller.abort();
      },
    });
    const f = failed(outcome, 'cancelled');
    assert.equal(f.usage, null, 'the response never completed, so no usage was reported');
    assert.deepEqual(f.written.removed, ['user: "Tell me a long story"'], 'the SDK had stored the message; it was removed');
    assert.deepEqual(f.written.kept, []);
    assert.equal(f.written.turn, null);
    assert.ok(
      f.written.notSaved.some((l) => /characters of streamed text/.test(l)),
      f.written.notSaved.join('|'),
    );
    assert.match(f.written.summary, /Nothing is stored/);
    assert.deepEqual(content(dbPath), before, 'every conversation table is as before the run');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(server.replies[0]!.clientAborted, true, 'the client dropped the connection');

    server.setScript(echoScript);
    const next = await run({ input: 'Short one then' });
    assert.equal(completed(next.outcome).written.turn, 2);
    assert.deepEqual(inputShape(server.requests[1]!), ['user:First question', 'assistant:First answer', 'user:Short one then']);
  });

  it('cancel after a tool round: keeps the message with the usage spent, reports the unsaved call; the next run succeeds', async () => {
    await seedSession(dbPath, [['q1', 'a1']]);
    const modulePath = writeAgentModule(
      ws.dir,
      'slow.js',
      `exports.agent = new Agent({ name: 'Slow agent', instructions: 'x',
  tools: [tool({ name: 'fetch_data', description: 'd', parameters: z.object({ id: z.number() }), execute: async ({ id }) => 'data-' + id })] });`,
    );
    const words = Array.from({ length: 40 }, (_, i) => `w${i} `);
    server.setScript((r) =>
      lastInput(r).type === 'function_call_output'
        ? { kind: 'text', text: words.join(''), chunks: words, delayMs: 25 }
        : { kind: 'calls', calls: [{ name: 'fetch_data', arguments: { id: 7 } }] },
    );
    const controller = new AbortController();
    let deltas = 0;
    const agent = await agentFor({ agentModule: modulePath });
    const { outcome } = await run({
      agent,
      input: 'Get data 7',
      signal: controller.signal,
      onEvent: (e) => {
        if (e.kind === 'text/delta' && ++deltas === 2) controller.abort();
      },
    });
    const f = failed(outcome, 'cancelled');
    const firstUsage = server.replies[0]!.usage!;
    assert.deepEqual(f.usage, expectedUsage([firstUsage]));
    assert.deepEqual(f.written.kept, ['user: "Get data 7"']);
    assert.equal(f.written.turn, 2);
    assert.equal(f.written.usageStored, true);
    assert.deepEqual(
      f.written.notSaved.filter((l) => !/characters/.test(l)),
      ['function_call fetch_data({"id":7})', 'function_call_result fetch_data: data-7'],
    );
    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(main.byTurns.get(2), [{ type: 'user', toolName: null }]);
    assert.deepEqual(
      main.usage.map((u) => [u.userTurnNumber, u.requests, u.totalTokens]),
      [[2, 1, firstUsage.total_tokens]],
    );

    server.setScript(echoScript);
    const next = await run({ input: 'Never mind' });
    assert.equal(completed(next.outcome).written.turn, 3);
  });

  it('no key: fails before any request or write, naming the command that fixes it', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const before = tables(dbPath);
    const { outcome } = await run({
      // The host's sequence: resolve the key (nothing stored, no OPENAI_API_KEY), then build the agent.
      agent: async () => {
        const key = resolveApiKey({ stored: undefined, env: {}, baseUrl: 'https://models.example.com/v1' });
        return agentFor({ baseUrl: 'https://models.example.com/v1' }, key.key);
      },
      input: 'hello',
    });
    const f = failed(outcome, 'no-key');
    assert.match(f.message, /Run 'Agent Sessions: Set API Key'/);
    assert.match(f.message, /https:\/\/models\.example\.com\/v1/);
    assert.equal(f.written.summary, "Nothing was written; branch 'main' is as it was.");
    assert.equal(server.requests.length, 0);
    assert.deepEqual(tables(dbPath), before);
  });

  it('unreachable server (closed port): says where and why; the message the SDK stored is rolled back', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const before = content(dbPath);
    const port = await closedPort();
    const agent = await agentFor({ baseUrl: `http://127.0.0.1:${port}/v1` });
    const { outcome } = await run({ agent, input: 'anyone there?' });
    const f = failed(outcome, 'unreachable');
    assert.match(f.message, new RegExp(`http://127\\.0\\.0\\.1:${port}/v1`));
    assert.match(f.message, /ECONNREFUSED/);
    assert.match(f.message, /agentSessions\.agent\.baseUrl/);
    assert.deepEqual(f.written.removed, ['user: "anyone there?"']);
    assert.deepEqual(content(dbPath), before);
  });

  it('connection dropped mid-answer: unreachable, nothing kept', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const before = content(dbPath);
    server.setScript(() => ({ kind: 'text', text: 'one two three four five six', closeAfterEvents: 5 }));
    const { outcome, log } = await run({ input: 'go' });
    const f = failed(outcome, 'unreachable');
    assert.match(f.message, /broke off/);
    assert.ok(log.text().length > 0, 'some text had streamed');
    assert.deepEqual(content(dbPath), before);
  });

  it('HTTP 500 (with one retry): two requests, an http failure with the status, nothing kept', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const before = content(dbPath);
    server.setScript(() => ({ kind: 'error', status: 500, message: 'The engine is overloaded' }));
    const agent = await agentFor({ maxRetries: 1 });
    const { outcome } = await run({ agent, input: 'hi' });
    const f = failed(outcome, 'http');
    assert.equal(f.status, 500);
    assert.match(f.message, /answered HTTP 500: The engine is overloaded\. The server had a problem/);
    assert.equal(server.requests.length, 2, 'maxRetries: 1 means one retry');
    assert.deepEqual(content(dbPath), before);
  });

  it('HTTP 401 echoing the key: the key is redacted, the remedy named', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    server.setScript(() => ({ kind: 'error', status: 401, message: 'Unauthorized.', echoAuthorization: true }));
    const lines: string[] = [];
    const { outcome } = await run({ input: 'hi', log: (l) => lines.push(l) });
    const f = failed(outcome, 'http');
    assert.equal(f.status, 401);
    assert.match(f.message, /Incorrect API key provided: \[redacted\]/, 'the server did echo something, and it was redacted');
    assert.match(f.message, /Set API Key/);
    assert.ok(!f.message.includes(TEST_KEY));
    assert.ok(!lines.join('\n').includes(TEST_KEY));
  });

  it('a tool that throws (errorFunction: null) fails the run as a tool failure; the next run does not trip', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const modulePath = writeAgentModule(
      ws.dir,
      'broken.js',
      `exports.agent = new Agent({ name: 'Broken', instructions: 'x',
  tools: [tool({ name: 'explode', description: 'd', parameters: z.object({}), errorFunction: null,
    execute: async () => { throw new Error('the disk is on fire'); } })] });`,
    );
    server.setScript((r) =>
      lastUserText(r.body) === 'boom' ? { kind: 'calls', calls: [{ name: 'explode', arguments: {} }] } : echoScript(r),
    );
    const agent = await agentFor({ agentModule: modulePath });
    const { outcome, log } = await run({ agent, input: 'boom' });
    const f = failed(outcome, 'tool');
    assert.match(f.message, /the disk is on fire/);
    assert.ok(log.kinds().includes('tool/called'));
    const sent = server.replies[0]!.usage!;
    assert.deepEqual(f.usage, expectedUsage([sent]));
    assert.deepEqual(f.written.kept, ['user: "boom"'], 'the turn is kept for the usage it spent');
    assert.deepEqual(f.written.notSaved, ['function_call explode({})']);
    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(main.byTurns.get(2), [{ type: 'user', toolName: null }]);
    assert.deepEqual(
      main.usage.map((u) => [u.userTurnNumber, u.totalTokens]),
      [[2, sent.total_tokens]],
    );

    const next = await run({ agent, input: 'are you ok?' });
    completed(next.outcome);
    assert.deepEqual(inputShape(server.requests[1]!), ['user:q', 'assistant:a', 'user:boom', 'user:are you ok?']);
  });

  it('a tool that throws with the default error handling: the run completes and the error is the tool output', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const modulePath = writeAgentModule(
      ws.dir,
      'soft.js',
      `exports.agent = new Agent({ name: 'Soft', instructions: 'x',
  tools: [tool({ name: 'flaky', description: 'd', parameters: z.object({}), execute: async () => { throw new Error('service down'); } })] });`,
    );
    server.setScript((r) =>
      lastInput(r).type === 'function_call_output'
        ? { kind: 'text', text: 'Sorry, the tool failed.' }
        : { kind: 'calls', calls: [{ name: 'flaky', arguments: {} }] },
    );
    const { outcome, log } = await run({ agent: await agentFor({ agentModule: modulePath }), input: 'try it' });
    completed(outcome);
    const out = log.events.find((e) => e.kind === 'tool/output') as { output: string };
    // The SDK's default error function hides the error from the model; the output says a tool failed.
    assert.equal(out.output, 'An error occurred while running the tool. Please try again.');
    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(
      main.byTurns.get(2)?.map((i) => i.type),
      ['user', 'function_call', 'function_call_output', 'assistant'],
    );
  });

  it('a tool that needs approval: the dangling call the SDK stored is popped, and the next run is accepted', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const modulePath = writeAgentModule(
      ws.dir,
      'guarded.js',
      `exports.agent = new Agent({ name: 'Guarded', instructions: 'x',
  tools: [tool({ name: 'delete_files', description: 'd', parameters: z.object({ glob: z.string() }), needsApproval: true,
    execute: async () => 'deleted' })] });`,
    );
    server.setScript((r) =>
      lastUserText(r.body) === 'clean up'
        ? { kind: 'calls', calls: [{ name: 'delete_files', arguments: { glob: '*.tmp' } }] }
        : echoScript(r),
    );
    const agent = await agentFor({ agentModule: modulePath });
    const { outcome } = await run({ agent, input: 'clean up' });
    const f = failed(outcome, 'tool');
    assert.match(f.message, /'delete_files' asks for approval/);
    assert.deepEqual(f.written.removed, ['function_call delete_files({"glob":"*.tmp"})'], 'the SDK had stored the call without output');
    assert.deepEqual(f.written.kept, ['user: "clean up"']);
    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(main.byTurns.get(2), [{ type: 'user', toolName: null }]);
    assert.ok(!main.items.some((i) => i.type === 'function_call'), 'no call without output remains');

    const next = await run({ agent, input: 'status?' });
    completed(next.outcome);
    assert.equal(server.requests.length, 2);
    assert.ok(!(server.requests[1]!.body.input as { type?: string }[]).some((i) => i.type === 'function_call'));
  });

  it('database locked before the run (EXCLUSIVE on a rollback-journal file): locked, no request, nothing written', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const raw = openDatabase(dbPath);
    raw.exec('PRAGMA journal_mode = DELETE');
    const before = tables(dbPath);
    raw.exec('BEGIN EXCLUSIVE');
    let outcome: RunOutcome;
    try {
      ({ outcome } = await run({ input: 'hi', busyTimeoutMs: 100 }));
    } finally {
      raw.exec('ROLLBACK');
      raw.close();
    }
    const f = failed(outcome, 'locked');
    assert.match(f.message, /locked/);
    assert.equal(server.requests.length, 0);
    assert.equal(f.written.summary, "Nothing was written; branch 'main' is as it was.");
    assert.deepEqual(tables(dbPath), before);
  });

  it('database locked by another writer while the model answers: locked, nothing stored, earlier usage untouched', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const first = await run({ input: 'first' });
    completed(first.outcome);
    const before = tables(dbPath);
    let raw: SqliteDatabase | undefined;
    server.setScript((r) => {
      // Another process starts a long write transaction while our request is in flight.
      raw = openDatabase(dbPath);
      raw.exec('BEGIN IMMEDIATE');
      return echoScript(r);
    });
    let outcome: RunOutcome;
    try {
      ({ outcome } = await run({ input: 'second', busyTimeoutMs: 150 }));
    } finally {
      raw?.exec('ROLLBACK');
      raw?.close();
    }
    const f = failed(outcome, 'locked');
    assert.match(f.message, /locked by another writer/);
    assert.equal(f.written.usageStored, false);
    assert.equal(f.written.turn, null);
    assert.match(f.written.summary, /Nothing was stored: saving the turn failed/);
    assert.match(f.written.summary, /tokens spent are not recorded/);
    assert.ok(f.written.notSaved.includes('assistant: "Reply to: second"'));
    assert.deepEqual(tables(dbPath), before, 'no half turn, and the previous turn keeps its usage row');
  });

  it('custom table names: the run reads and writes the configured tables', async () => {
    await seedSession(dbPath, [['q', 'a']], { sessionsTable: 'agent_sessions', messagesTable: 'agent_messages' });
    const tablesOpt = { sessions: 'agent_sessions', messages: 'agent_messages' };
    const { outcome } = await run({ input: 'custom?', tables: tablesOpt });
    assert.equal(completed(outcome).written.turn, 2);
    assert.deepEqual(inputShape(server.requests[0]!), ['user:q', 'assistant:a', 'user:custom?']);
    const main = await readBranch(dbPath, 'main', { sessionsTable: 'agent_sessions', messagesTable: 'agent_messages' });
    assert.equal(main.items.length, 4);
    const dump = tables(dbPath);
    assert.equal(dump.agent_messages?.rows.length, 4);
    assert.equal(dump.agent_sessions?.rows.length, 1);
  });

  it('the key stays out of events, messages, logs and the database across success and every failure', async () => {
    await seedSession(dbPath, [['q', 'a']]);
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);
    completed((await run({ input: 'ok', log })).outcome);
    server.setScript(() => ({ kind: 'error', status: 401, echoAuthorization: true }));
    failed((await run({ input: 'a', log })).outcome, 'http');
    server.setScript(() => ({ kind: 'error', status: 403, message: `Forbidden for Authorization: Bearer ${TEST_KEY}` }));
    failed((await run({ input: 'b', log })).outcome, 'http');
    server.setScript(() => ({ kind: 'close' }));
    failed((await run({ input: 'c', log })).outcome, 'unreachable');
    const everything = [JSON.stringify(allEvents), lines.join('\n'), output.lines.join('\n'), databaseBytes(dbPath)].join('\n');
    assert.ok(!everything.includes(TEST_KEY));
    assert.ok(!everything.includes(TEST_KEY.slice(3)), 'not even without its prefix');
    assert.equal(
      server.requests.filter((r) => r.authorization === `Bearer ${TEST_KEY}`).length,
      server.requests.length,
      'the key was sent each time',
    );
  });
});
