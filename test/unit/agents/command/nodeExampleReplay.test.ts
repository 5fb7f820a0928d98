/**
 * The Node example's replay of recorded tool results (examples/node/agent-sessions-replay.mjs, used by
 * examples/node/replay-agent.mjs): the example runs as a user installs it, with the real `@openai/agents` runner against
 * the loopback Responses server, and a version-2 RunAgentInput built here by hand (docs/agent-command.md §2) on its
 * stdin. Its get_weather tool is patched to append to a side-effect file, so a test can tell whether it ran.
 *
 * The store package is this repository's source (src/store, through tsx), so these tests need no build.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startLoopbackOpenAI, toolOutputsIn, type LoopbackOpenAI } from '../../../support/loopbackOpenAI';
import { seedSession } from '../agentTestKit';
import { REPO, installNodeExample } from './commandKit';
import { STORE_SOURCE, exampleInput, runExample, type ExampleRun, type Json } from './nodeExampleKit';
import { commandSpanRecords } from '../../../../src/agents/command/commandSpans';
import { recordedInputOf } from '../../../../src/store/traces/recordedInput';

/** The example's tool, and the same tool writing the city it was called for to SIDE_EFFECT_FILE first. */
const TOOL_LINE = 'execute: async ({ city }) => `${city}: 18°C, light rain`,';
const TOOL_WITH_SIDE_EFFECT =
  "execute: async ({ city }) => { (await import('node:fs')).appendFileSync(process.env.SIDE_EFFECT_FILE, city + '\\n'); return `${city}: 18°C, light rain`; },";

describe('the Node example replays recorded tool results (forwardedProps version 2)', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;
  let script: string;
  let sideEffects: string;
  let server: LoopbackOpenAI;
  /** The calls the model makes in its first request; later requests (with the outputs) get an answer. */
  let modelCalls: { name: string; arguments: string; callId: string }[] = [];

  before(async () => {
    server = await startLoopbackOpenAI({
      script: (req) =>
        toolOutputsIn(req.body).length === 0 && modelCalls.length > 0
          ? { kind: 'calls', calls: modelCalls }
          : { kind: 'text', text: 'Done.' },
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-node-replay-'));
    dbPath = join(dir, 'conversations.db');
    sideEffects = join(dir, 'side-effects.txt');
    await seedSession(dbPath, [['What is the weather in Paris?', 'Mild.']]);
    const example = join(dir, 'example');
    installNodeExample(example, REPO, STORE_SOURCE);
    script = join(example, 'replay-agent.mjs');
    const source = readFileSync(script, 'utf8');
    assert.ok(source.includes(TOOL_LINE), 'the example tool changed: update TOOL_LINE');
    writeFileSync(script, source.replace(TOOL_LINE, TOOL_WITH_SIDE_EFFECT));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const runInput = (tools?: Json): Json => exampleInput(dbPath, tools);
  const run = (input: Json): Promise<ExampleRun> => runExample(script, dir, input, server.baseUrl, { SIDE_EFFECT_FILE: sideEffects });

  const replayReports = (events: Json[]) =>
    events.filter((e) => e.type === 'CUSTOM' && e.name === 'agent-sessions.tool-replay').map((e) => e.value);
  const toolRuns = () => (existsSync(sideEffects) ? readFileSync(sideEffects, 'utf8').split('\n').filter(Boolean) : []);
  /** The items of main as stored (Python's shape), from turn `turn` on. */
  function stored(turn: number): Json[] {
    const db = new Database(dbPath, { readonly: true });
    try {
      const rows = db
        .prepare(
          `SELECT m.message_data AS data FROM agent_messages m JOIN message_structure s ON s.message_id = m.id
           WHERE s.branch_id = 'main' AND s.user_turn_number >= ? ORDER BY s.sequence_number`,
        )
        .all(turn) as { data: string }[];
      return rows.map((r) => JSON.parse(r.data) as Json);
    } finally {
      db.close();
    }
  }
  function usageRows(): number {
    const db = new Database(dbPath, { readonly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM turn_usage').get() as { n: number }).n;
    } finally {
      db.close();
    }
  }
  const recorded = (callId: string, args: string, output: unknown) => ({
    callId,
    name: 'get_weather',
    arguments: args,
    output,
    hasOutput: true,
    turn: 1,
    branchId: 'main',
  });

  it('replay: the tool never runs; each call is reported replayed with its recorded id; the recorded outputs are stored and sent', async () => {
    const parts = [{ type: 'input_text', text: 'Recorded: fog in Lyon' }];
    modelCalls = [
      { name: 'get_weather', arguments: '{ "city" : "Paris" }', callId: 'call_new_1' },
      { name: 'get_weather', arguments: '{"city":"Lyon"}', callId: 'call_new_2' },
    ];
    const tools = {
      mode: 'replay',
      nameOnly: [],
      recorded: [recorded('call_rec_a', '{"city":"Paris"}', 'Recorded: 12°C in Paris'), recorded('call_rec_b', '{"city":"Lyon"}', parts)],
      hosted: [],
    };
    const before = server.requests.length;
    const r = await run(runInput(tools));
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(toolRuns(), [], 'the tool must never run');
    assert.deepEqual(replayReports(r.events), [
      { callId: 'call_new_1', name: 'get_weather', outcome: 'replayed', recordedCallId: 'call_rec_a' },
      { callId: 'call_new_2', name: 'get_weather', outcome: 'replayed', recordedCallId: 'call_rec_b' },
    ]);
    // The session stores the recorded outputs exactly (the content parts as parts)…
    assert.deepEqual(
      stored(2)
        .filter((i) => i.type === 'function_call_output')
        .map((i) => [i.call_id, i.output]),
      [
        ['call_new_1', 'Recorded: 12°C in Paris'],
        ['call_new_2', parts],
      ],
    );
    // …and the model got them.
    const second = server.requests[before + 1]!;
    assert.deepEqual(
      toolOutputsIn(second.body).map((o) => o.output),
      ['Recorded: 12°C in Paris', parts],
    );
    assert.equal(r.events.at(-1)!.type, 'RUN_FINISHED');
    // The run's usage with its cached and reasoning parts, as the two model responses reported them.
    const [entry] = (r.events.at(-1) as { usage: Record<string, number>[] }).usage;
    const sent = server.requests.slice(before).length;
    assert.equal(sent, 2);
    assert.ok(entry!.cachedInputTokens! > 0 && entry!.cachedInputTokens! < entry!.inputTokens!, JSON.stringify(entry));
    assert.equal(entry!.reasoningTokens, 7 + 3, JSON.stringify(entry));
  });

  it('strict: a changed argument fails the run with RUN_ERROR naming the call before the tool runs; no output and no usage stored', async () => {
    modelCalls = [{ name: 'get_weather', arguments: '{"city":"Lisbon"}', callId: 'call_new_1' }];
    const tools = { mode: 'strict', nameOnly: [], recorded: [recorded('call_rec_a', '{"city":"Paris"}', 'Recorded: Paris')], hosted: [] };
    const r = await run(runInput(tools));
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(toolRuns(), [], 'the tool must not run');
    assert.deepEqual(replayReports(r.events), [
      { callId: 'call_new_1', name: 'get_weather', outcome: 'unmatched', recordedCallId: 'call_rec_a' },
    ]);
    const last = r.events.at(-1)!;
    assert.deepEqual([last.type, last.code, last.usage], ['RUN_ERROR', 'StrictReplayError', undefined]);
    assert.equal(
      last.message,
      'Strict replay: the call get_weather({"city":"Lisbon"}) matches no recorded call, so it was not run and nothing was written. Nearest recorded call: get_weather({"city":"Paris"}), id call_rec_a.',
    );
    // No output of the refused call and no usage: the extension rolls back the rest (docs/agent-command.md §5).
    assert.deepEqual(
      stored(2).filter((i) => i.type === 'function_call_output'),
      [],
    );
    assert.equal(usageRows(), 0);
  });

  it('a recorded call without an output, or with an output the SDK would write otherwise, is not replayed: the call runs live', async () => {
    modelCalls = [{ name: 'get_weather', arguments: '{"city":"Paris"}', callId: 'call_new_1' }];
    const unanswered = { ...recorded('call_rec_a', '{"city":"Paris"}', null), hasOutput: false };
    // A part with a field the SDK's structured outputs do not carry would come back without it.
    const extra = recorded('call_rec_b', '{"city":"Paris"}', [{ type: 'input_text', text: 'x', prompt_cache_breakpoint: 'y' }]);
    const r = await run(runInput({ mode: 'replay', nameOnly: [], recorded: [unanswered, extra], hosted: [] }));
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(toolRuns(), ['Paris']);
    assert.deepEqual(replayReports(r.events), [
      { callId: 'call_new_1', name: 'get_weather', outcome: 'live', recordedCallId: 'call_rec_a' },
    ]);
  });

  it("a tools field that is not the protocol's fails the run before the session is opened", async () => {
    const r = await run(runInput({ mode: 'sometimes', recorded: [] }));
    assert.equal(r.code, 1);
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['RUN_STARTED', 'RUN_ERROR'],
    );
    assert.equal(r.events[1]!.message, 'forwardedProps.agentSessions.tools.mode must be one of replay, strict, live, not "sometimes"');
    assert.deepEqual(stored(2), []);
  });

  it('version 1: the tools run live and nothing is reported', async () => {
    modelCalls = [{ name: 'get_weather', arguments: '{"city":"Paris"}', callId: 'call_new_1' }];
    const r = await run(runInput());
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(toolRuns(), ['Paris']);
    assert.deepEqual(replayReports(r.events), []);
    assert.deepEqual(
      stored(2)
        .filter((i) => i.type === 'function_call_output')
        .map((i) => i.output),
      ['Paris: 18°C, light rain'],
    );
  });

  it('each model request is recorded with what the model received: its input, the instructions and the tools', async () => {
    modelCalls = [{ name: 'get_weather', arguments: '{"city":"Oslo"}', callId: 'call_live_1' }];
    const before = server.requests.length;
    const r = await run(runInput());
    assert.equal(r.code, 0, r.stderr);
    const received = server.requests.slice(before);
    assert.equal(received.length, 2, 'a call, then the answer');
    const spans = r.events
      .filter((e) => e.type === 'CUSTOM' && e.name === 'agent-sessions.spans')
      .flatMap((e) => (e.value as { spans: unknown[] }).spans);
    const link = { sessionId: 's1', branchId: 'main', turnNumber: 2 };
    const models = commandSpanRecords(spans, [], link).records.filter((rec) => rec.kind === 'model');
    assert.equal(models.length, 2, 'one model span per request');
    // The SDK keeps its own item shape on the span (callId), the wire has the API's (call_id): compare what matters.
    const gist = (item: unknown): unknown[] => {
      const i = item as Json;
      const parts = Array.isArray(i.content) ? (i.content as Json[]) : [];
      const text = typeof i.content === 'string' ? i.content : parts.map((p) => p.text).join('');
      return [i.type ?? 'message', i.role ?? null, i.role ? text : null, i.call_id ?? i.callId ?? null, i.output ?? null];
    };
    models.forEach((rec, n) => {
      const input = recordedInputOf(rec.attributes);
      assert.ok(input && input !== 'unreadable', `request ${n + 1}: no readable recorded input`);
      const wire = received[n]!.body;
      assert.deepEqual(input.items.map(gist), (wire.input as unknown[]).map(gist), `request ${n + 1}: the recorded items`);
      assert.equal(input.instructions, wire.instructions);
      assert.deepEqual(
        (input.tools as Json[]).map((t) => t.name),
        (wire.tools ?? []).map((t) => t.name),
      );
    });
  });
});
