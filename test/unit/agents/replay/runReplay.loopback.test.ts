/**
 * Replay end to end (src/agents/replay/runReplay.ts through runOnBranch): the real @openai/agents runner and openai
 * client against the loopback Responses server, re-running a recorded turn with three function calls (two tools, one
 * called twice identically). Every tool appends a line to a side-effect file, so "the tool never ran" is a fact on
 * disk, not a mock's word; what the model received is what the server recorded; what was stored is read back as stored.
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { createConfiguredAgent, type ConfiguredAgent } from '../../../../src/agents/agentConfig';
import { runOnBranch, type RunOnBranchOptions } from '../../../../src/agents/branchRun';
import type { RunCompletedEvent, RunFailedEvent, RunOutcome, ToolOutputEvent } from '../../../../src/shared/protocol/runEvents';
import { replaySentence } from '../../../../src/shared/protocol/replay';
import type { SpanRecord } from '../../../../src/store/traces/spanRecord';
import {
  startLoopbackOpenAI,
  toolOutputsIn,
  type LoopbackOpenAI,
  type RecordedRequest,
  type ScriptedCall,
} from '../../../support/loopbackOpenAI';
import { Workspace, tables } from '../../../support/sessionHelpers';
import { TEST_KEY, assertWellFormed, eventLog, writeAgentModule } from '../agentTestKit';

const QUESTION = 'Weather in Paris, twice, and the capital of France?';
/** The recorded outputs: the two identical calls got different answers then (the world moved), so order shows. */
const RECORDED = {
  call_w1: 'Paris: 18°C at 09:00',
  call_w2: 'Paris: 19°C at 09:01',
  call_cap: 'Paris',
};

/** Every table but the two bookkeeping ones a rollback cannot restore (as in branchRun.loopback.test.ts). */
function content(path: string): Record<string, unknown> {
  const all: Record<string, unknown> = tables(path);
  delete all.sqlite_sequence;
  delete all.branch_reservations;
  return all;
}

const fc = (callId: string, name: string, args: string) => ({
  type: 'function_call',
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: args,
  status: 'completed',
});
const out = (callId: string, output: unknown) => ({ type: 'function_call_output', call_id: callId, output });

/**
 * Turn 1 a greeting; turn 2 the recorded turn: get_weather twice with the same arguments, lookup_capital once, their
 * outputs, the answer. `extra` items go into turn 2 before the answer (a hosted call), `capitalOutput` replaces the
 * capital's output (content parts).
 */
async function seedRecorded(dbPath: string, options: { extra?: unknown[]; capitalOutput?: unknown } = {}): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, createTables: true });
  try {
    const items = [
      { role: 'user', content: 'Hello' },
      { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Hi!' }] },
      { role: 'user', content: QUESTION },
      fc('call_w1', 'get_weather', '{"city":"Paris","units":"C"}'),
      fc('call_w2', 'get_weather', '{"city":"Paris","units":"C"}'),
      fc('call_cap', 'lookup_capital', '{"country":"France"}'),
      out('call_w1', RECORDED.call_w1),
      out('call_w2', RECORDED.call_w2),
      out('call_cap', options.capitalOutput ?? RECORDED.call_cap),
      ...(options.extra ?? []),
      { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Mild; Paris.' }] },
    ];
    await s.addItems(items as never);
  } finally {
    s.close();
  }
}

/** The stored items of a branch, exactly as stored. */
async function storedItems(dbPath: string, branchId: string): Promise<Record<string, unknown>[]> {
  const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, readonly: true });
  try {
    return (await s.getStoredItems(undefined, branchId)) as Record<string, unknown>[];
  } finally {
    s.close();
  }
}

async function branchIds(dbPath: string): Promise<string[]> {
  const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, readonly: true });
  try {
    return (await s.listBranches()).map((b) => b.branchId).sort();
  } finally {
    s.close();
  }
}

describe('replay end to end (real SDK, loopback server)', function () {
  this.timeout(30_000);
  let ws: Workspace;
  let server: LoopbackOpenAI;
  let configured: ConfiguredAgent[];
  let dbPath: string;
  let sideEffects: string;

  /** The model's first reply: these calls (default: the recorded three, same arguments); then an answer. */
  function modelCalls(calls: ScriptedCall[]): void {
    server.setScript((r: RecordedRequest) => {
      const input = r.body.input as Record<string, unknown>[];
      if (input[input.length - 1]?.type === 'function_call_output') return { kind: 'text', text: 'Done.' };
      return { kind: 'calls', calls };
    });
  }
  const recordedCalls = (): ScriptedCall[] => [
    { name: 'get_weather', arguments: { city: 'Paris', units: 'C' } },
    { name: 'get_weather', arguments: { city: 'Paris', units: 'C' } },
    { name: 'lookup_capital', arguments: { country: 'France' } },
  ];

  async function agent(): Promise<ConfiguredAgent> {
    const modulePath = writeAgentModule(
      ws.dir,
      'replayAgent.cjs',
      `const fs = require('node:fs');
const SIDE = ${JSON.stringify(sideEffects)};
exports.agent = new Agent({
  name: 'Replay agent',
  instructions: 'Use the tools.',
  tools: [
    tool({ name: 'get_weather', description: 'Weather now', parameters: z.object({ city: z.string(), units: z.string() }),
      execute: async ({ city, units }) => { fs.appendFileSync(SIDE, 'get_weather ' + city + ' ' + units + '\\n'); return 'live: ' + city + ' 25' + units; } }),
    tool({ name: 'lookup_capital', description: 'Capital of a country', parameters: z.object({ country: z.string() }),
      execute: async ({ country }) => { fs.appendFileSync(SIDE, 'lookup_capital ' + country + '\\n'); return 'live: capital of ' + country; } }),
  ],
});`,
    );
    const c = await createConfiguredAgent(
      { model: 'loopback-model-1', instructions: 'x', baseUrl: server.baseUrl, maxRetries: 0, agentModule: modulePath },
      TEST_KEY,
      { trusted: true, cwd: ws.dir },
    );
    configured.push(c);
    return c;
  }

  /** Re-runs turn 2 on a fork (a what-if retry of the recorded turn), with `tools` options. */
  async function rerun(tools?: RunOnBranchOptions['tools'], forkName = 'whatif', tracing?: RunOnBranchOptions['tracing']) {
    const log = eventLog();
    const outcome = await runOnBranch({
      dbPath,
      sessionId: 's1',
      busyTimeoutMs: 200,
      agent: await agent(),
      input: QUESTION,
      fork: { fromTurn: 2, name: forkName },
      ...(tools ? { tools } : {}),
      ...(tracing ? { tracing } : {}),
      onEvent: log.onEvent,
    });
    assertWellFormed(log.events, outcome);
    const toolOutputs = log.events.filter((e): e is ToolOutputEvent => e.kind === 'tool/output');
    return { outcome, log, toolOutputs, branchId: (log.events[0] as { branchId: string }).branchId };
  }
  const completed = (o: RunOutcome): RunCompletedEvent => {
    assert.equal(o.kind, 'run/completed', o.kind === 'run/failed' ? `${o.failure}: ${o.message}` : '');
    return o as RunCompletedEvent;
  };
  const sideEffectLines = (): string[] => (existsSync(sideEffects) ? readFileSync(sideEffects, 'utf8').split('\n').filter(Boolean) : []);
  /** The outputs the model's second request carried, in the order of its first reply's calls. */
  const outputsSentBack = (): unknown[] => {
    const byId = new Map(toolOutputsIn(server.requests[1]!.body).map((o) => [o.call_id, o.output]));
    return server.replies[0]!.callIds.map((id) => byId.get(id));
  };
  const storedOutputs = async (branchId: string): Promise<unknown[]> =>
    (await storedItems(dbPath, branchId)).filter((i) => i.type === 'function_call_output').map((i) => i.output);

  beforeEach(async () => {
    ws = new Workspace('asi-replay-');
    dbPath = ws.path('sessions.db');
    sideEffects = ws.path('side-effects.log');
    configured = [];
    server = await startLoopbackOpenAI({ script: () => ({ kind: 'text', text: 'unused' }) });
  });
  afterEach(async () => {
    for (const c of configured) await c.close();
    await server.close();
    ws.cleanup();
  });

  it('replay (the default on a fork): no tool runs, the model gets the recorded outputs, and they are stored exactly', async () => {
    await seedRecorded(dbPath);
    const mainBefore = await storedItems(dbPath, 'main');
    modelCalls(recordedCalls());
    const { outcome, toolOutputs, branchId } = await rerun();
    const done = completed(outcome);

    assert.deepEqual(sideEffectLines(), [], 'no tool function ran');
    assert.equal(existsSync(sideEffects), false);
    assert.equal(server.requests.length, 2);
    // The identical calls got the recorded outputs in recorded order.
    assert.deepEqual(outputsSentBack(), [RECORDED.call_w1, RECORDED.call_w2, RECORDED.call_cap]);
    assert.deepEqual(await storedOutputs(branchId), [RECORDED.call_w1, RECORDED.call_w2, RECORDED.call_cap]);

    const newIds = server.replies[0]!.callIds;
    assert.deepEqual(
      toolOutputs.map((e) => [e.callId, e.replay]),
      [
        [newIds[0], { outcome: 'replayed', recordedCallId: 'call_w1' }],
        [newIds[1], { outcome: 'replayed', recordedCallId: 'call_w2' }],
        [newIds[2], { outcome: 'replayed', recordedCallId: 'call_cap' }],
      ],
    );
    const summary = done.replay!;
    assert.equal(summary.mode, 'replay');
    assert.deepEqual(summary.source, { branchId: 'main', turn: 2 });
    assert.equal(summary.recordedCalls, 3);
    assert.deepEqual(
      summary.marks.map((m) => [m.callId, m.name, m.outcome, m.recordedCallId]),
      [
        [newIds[0], 'get_weather', 'replayed', 'call_w1'],
        [newIds[1], 'get_weather', 'replayed', 'call_w2'],
        [newIds[2], 'lookup_capital', 'replayed', 'call_cap'],
      ],
    );
    assert.deepEqual(summary.hosted, []);
    assert.equal(summary.divergence, null);
    assert.equal(replaySentence(summary), '3 tool calls replayed.');
    assert.deepEqual(await storedItems(dbPath, 'main'), mainBefore, 'the source branch is untouched');
  });

  it('replay: a call with other arguments runs live, the rest replay, and the summary says where it diverged', async () => {
    await seedRecorded(dbPath);
    modelCalls([
      { name: 'get_weather', arguments: { city: 'Paris', units: 'C' } },
      { name: 'get_weather', arguments: { city: 'Lisbon', units: 'C' } },
      { name: 'lookup_capital', arguments: { country: 'France' } },
    ]);
    const { outcome, branchId } = await rerun({ mode: 'replay' });
    const summary = completed(outcome).replay!;
    assert.deepEqual(sideEffectLines(), ['get_weather Lisbon C'], 'only the unmatched call ran');
    assert.deepEqual(outputsSentBack(), [RECORDED.call_w1, 'live: Lisbon 25C', RECORDED.call_cap]);
    assert.deepEqual(await storedOutputs(branchId), [RECORDED.call_w1, 'live: Lisbon 25C', RECORDED.call_cap]);
    assert.deepEqual(
      summary.marks.map((m) => [m.outcome, m.recordedCallId]),
      [
        ['replayed', 'call_w1'],
        // The nearest: the unused get_weather call, one argument apart.
        ['live', 'call_w2'],
        ['replayed', 'call_cap'],
      ],
    );
    assert.deepEqual(summary.divergence, {
      step: 2,
      recorded: { name: 'get_weather', arguments: '{"city":"Paris","units":"C"}' },
      actual: { name: 'get_weather', arguments: '{"city":"Lisbon","units":"C"}' },
      diff: ['city: "Paris" → "Lisbon"'],
    });
    assert.equal(
      replaySentence(summary),
      '2 tool calls replayed, 1 ran live (get_weather); diverged at step 2: get_weather with other arguments (city: "Paris" → "Lisbon").',
    );
  });

  it("marks each call's tool span with what replay did, so the timeline can show it", async () => {
    await seedRecorded(dbPath);
    modelCalls([
      { name: 'get_weather', arguments: { city: 'Paris', units: 'C' } },
      { name: 'get_weather', arguments: { city: 'Lisbon', units: 'C' } },
    ]);
    const spans: SpanRecord[] = [];
    const { outcome } = await rerun({ mode: 'replay' }, 'traced', {
      sink: async (records) => {
        spans.push(...records);
      },
    });
    completed(outcome);
    assert.deepEqual(
      spans.filter((r) => r.kind === 'tool').map((r) => [r.toolName, r.attributes['agent_sessions.replay']]),
      [
        ['get_weather', 'replayed call_w1'],
        ['get_weather', 'live'],
      ],
    );
  });

  it('strict with a changed argument: fails before the tool runs, writes nothing, names the call and the nearest', async () => {
    await seedRecorded(dbPath);
    const before = content(dbPath);
    modelCalls([
      { name: 'get_weather', arguments: { city: 'Paris', units: 'C' } },
      { name: 'get_weather', arguments: { city: 'Paris', units: 'F' } },
      { name: 'lookup_capital', arguments: { country: 'France' } },
    ]);
    const { outcome } = await rerun({ mode: 'strict' });
    assert.equal(outcome.kind, 'run/failed');
    const failed = outcome as RunFailedEvent;
    assert.equal(failed.failure, 'tool', failed.message);
    assert.equal(
      failed.message,
      'Strict replay: the call get_weather({"city":"Paris","units":"F"}) matches no recorded call, so it was not run and nothing was written. ' +
        'Nearest recorded call: get_weather (call_w2): units: "C" → "F".',
    );
    assert.equal(existsSync(sideEffects), false, 'no tool ran');
    assert.equal(server.requests.length, 1, 'the model was not asked again');
    assert.deepEqual(await branchIds(dbPath), ['main'], 'the fork is gone');
    assert.deepEqual(content(dbPath), before, 'every conversation table is as before the run');
    assert.deepEqual(
      failed.replay?.marks.find((m) => m.outcome === 'unmatched'),
      {
        callId: server.replies[0]!.callIds[1],
        name: 'get_weather',
        arguments: '{"city":"Paris","units":"F"}',
        outcome: 'unmatched',
        recordedCallId: 'call_w2',
      },
    );
    assert.equal(failed.written.usageStored, false, 'no usage row is kept for a refused run');
  });

  it('strict with the recorded calls: completes, every call replayed', async () => {
    await seedRecorded(dbPath);
    modelCalls(recordedCalls());
    const { outcome } = await rerun({ mode: 'strict' });
    const summary = completed(outcome).replay!;
    assert.equal(existsSync(sideEffects), false);
    assert.deepEqual(
      summary.marks.map((m) => m.outcome),
      ['replayed', 'replayed', 'replayed'],
    );
  });

  it('live: the tools run, the model gets their outputs, every call is marked live', async () => {
    await seedRecorded(dbPath);
    modelCalls(recordedCalls());
    const { outcome, toolOutputs, branchId } = await rerun({ mode: 'live' });
    const summary = completed(outcome).replay!;
    assert.deepEqual(sideEffectLines().sort(), ['get_weather Paris C', 'get_weather Paris C', 'lookup_capital France']);
    assert.deepEqual(outputsSentBack(), ['live: Paris 25C', 'live: Paris 25C', 'live: capital of France']);
    assert.deepEqual(await storedOutputs(branchId), ['live: Paris 25C', 'live: Paris 25C', 'live: capital of France']);
    assert.deepEqual(
      toolOutputs.map((e) => e.replay),
      [1, 2, 3].map(() => ({ outcome: 'live', recordedCallId: null })),
    );
    assert.equal(summary.mode, 'live');
    assert.equal(replaySentence(summary), 'Tools live: 3 ran live (get_weather, lookup_capital).');
  });

  it('key order and number spelling in the model arguments do not stop a replay', async () => {
    await seedRecorded(dbPath);
    modelCalls([
      { name: 'get_weather', arguments: '{"units":"C","city":"Paris"}' },
      { name: 'get_weather', arguments: '{ "units" : "C", "city" : "Paris" }' },
      { name: 'lookup_capital', arguments: '{"country":"France"}' },
    ]);
    const { outcome } = await rerun();
    const summary = completed(outcome).replay!;
    assert.equal(existsSync(sideEffects), false);
    assert.deepEqual(outputsSentBack(), [RECORDED.call_w1, RECORDED.call_w2, RECORDED.call_cap]);
    assert.deepEqual(
      summary.marks.map((m) => [m.outcome, m.arguments]),
      [
        ['replayed', '{"units":"C","city":"Paris"}'],
        ['replayed', '{ "units" : "C", "city" : "Paris" }'],
        ['replayed', '{"country":"France"}'],
      ],
    );
    assert.equal(summary.divergence, null);
  });

  it('name-only: a tool named so replays whatever its arguments; without the option it runs live', async () => {
    const calls: ScriptedCall[] = [
      { name: 'get_weather', arguments: { city: 'Paris', units: 'K' } },
      { name: 'get_weather', arguments: { city: 'Rome', units: 'C' } },
      { name: 'lookup_capital', arguments: { country: 'France' } },
    ];
    await seedRecorded(dbPath);
    modelCalls(calls);
    const named = await rerun({ nameOnly: ['get_weather'] });
    assert.equal(existsSync(sideEffects), false);
    assert.deepEqual(outputsSentBack(), [RECORDED.call_w1, RECORDED.call_w2, RECORDED.call_cap]);
    assert.deepEqual(
      completed(named.outcome).replay!.marks.map((m) => m.outcome),
      ['replayed', 'replayed', 'replayed'],
    );
    assert.equal(completed(named.outcome).replay!.divergence, null, 'a name-only tool does not diverge on its arguments');

    server.requests.length = 0;
    server.replies.length = 0;
    const plain = await rerun(undefined, 'whatif-2');
    assert.deepEqual(sideEffectLines(), ['get_weather Paris K', 'get_weather Rome C']);
    assert.deepEqual(
      completed(plain.outcome).replay!.marks.map((m) => m.outcome),
      ['live', 'live', 'replayed'],
    );
  });

  it('a hosted call in the recorded turn is listed as not replayable', async () => {
    await seedRecorded(dbPath, {
      extra: [{ type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'Paris weather' } }],
    });
    modelCalls(recordedCalls());
    const { outcome } = await rerun();
    const summary = completed(outcome).replay!;
    assert.deepEqual(summary.hosted, ['web_search_call']);
    assert.equal(replaySentence(summary), '3 tool calls replayed; not replayable (run by the provider): web_search_call.');
  });

  it('a recorded output that is a list of content parts is stored back exactly', async () => {
    const parts = [
      { type: 'input_text', text: 'Paris, with its flag:' },
      { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
    ];
    await seedRecorded(dbPath, { capitalOutput: parts });
    const recorded = (await storedItems(dbPath, 'main')).find((i) => i.type === 'function_call_output' && i.call_id === 'call_cap');
    assert.deepEqual(recorded?.output, parts, 'the seed stored the parts as given');
    modelCalls(recordedCalls());
    const { outcome, branchId } = await rerun();
    completed(outcome);
    assert.equal(existsSync(sideEffects), false);
    assert.deepEqual(await storedOutputs(branchId), [RECORDED.call_w1, RECORDED.call_w2, parts]);
    assert.deepEqual(completed(outcome).written.removed, [], 'the replayed output answers its call: nothing is popped');
    assert.deepEqual(outputsSentBack(), [RECORDED.call_w1, RECORDED.call_w2, parts], 'the model gets the parts it got then');
  });

  it('a recorded output the SDK has no shape for is stored back exactly too, and still answers its call', async () => {
    // `text` parts are the JS SDK's, not the Responses API's: the store's conversion would rename them.
    const odd = [
      { type: 'text', text: 'Paris' },
      { kind: 'note', n: 1.5 },
    ];
    await seedRecorded(dbPath, { capitalOutput: odd });
    modelCalls(recordedCalls());
    const { outcome, branchId } = await rerun();
    const done = completed(outcome);
    assert.equal(existsSync(sideEffects), false);
    assert.deepEqual(await storedOutputs(branchId), [RECORDED.call_w1, RECORDED.call_w2, odd]);
    assert.deepEqual(outputsSentBack()[2], JSON.stringify(odd), 'parts the SDK cannot send go to the model as their text');
    assert.deepEqual(done.written.removed, [], 'nothing of the run is popped as a call without its output');
    assert.equal(done.written.turn, 2);
  });
});
