/**
 * What the model saw (docs/context.md), end to end: our runs (the real runner and openai client against the loopback
 * Responses server, which records every request) record each model request's input in the trace store; the Context
 * answer built from it equals what the server received, request by request; without the trace store the answer is
 * reconstructed from the stored items by the session's rules and labelled so, and (with the session's limit) holds
 * the same items and leaves the same ones outside. With a session `limit` and with a compaction item.
 */
import { strict as assert } from 'node:assert';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { createConfiguredAgent, type ConfiguredAgent } from '../../../../src/agents/agentConfig';
import { runOnBranch } from '../../../../src/agents/branchRun';
import { IN_THREAD_STORE, type RunStore } from '../../../../src/agents/runSession';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { buildTurnContext } from '../../../../src/store/context/turnContext';
import { countedItem } from '../../../../src/store/context/contextItems';
import { recordedInputOf, type RecordedInput } from '../../../../src/store/traces/recordedInput';
import { TraceStore } from '../../../../src/store/traces/traceStore';
import type { SpanRecord } from '../../../../src/store/traces/spanRecord';
import { startLoopbackOpenAI, type LoopbackOpenAI, type RecordedRequest } from '../../../support/loopbackOpenAI';
import { Workspace } from '../../../support/sessionHelpers';
import { TEST_KEY, seedSession, writeAgentModule } from '../../agents/agentTestKit';

/** A run store whose sessions have Python's `SessionSettings(limit=…)`: the runner's `getItems()` gets the last `limit`. */
function limitedStore(limit: number): RunStore {
  return {
    ...IN_THREAD_STORE,
    openSession: async (options) => new AdvancedSQLiteSession({ ...options, sessionSettings: { limit } }),
  };
}

const keys = (items: readonly unknown[]): string[] => items.map((i) => countedItem(i).key);

describe('turn context: recorded by our runs, reconstructed otherwise (loopback server)', function () {
  this.timeout(30_000);
  let ws: Workspace;
  let server: LoopbackOpenAI;
  let configured: ConfiguredAgent[];
  let dbPath: string;
  let traces: TraceStore;
  let db: SessionDatabase | undefined;

  async function runTurn(input: string, store?: RunStore): Promise<void> {
    const modulePath = writeAgentModule(
      ws.dir,
      'context.js',
      `exports.agent = new Agent({
  name: 'Context agent',
  instructions: 'Use the tools, then answer.',
  tools: [tool({ name: 'lookup_capital', description: 'Capital of a country', parameters: z.object({ country: z.string() }), execute: async () => 'Paris' })],
});`,
    );
    const agent = await createConfiguredAgent(
      { model: 'gpt-4.1-mini', instructions: 'x', baseUrl: server.baseUrl, maxRetries: 0, agentModule: modulePath },
      TEST_KEY,
      { trusted: true, cwd: ws.dir },
    );
    configured.push(agent);
    const outcome = await runOnBranch({
      dbPath,
      sessionId: 's1',
      busyTimeoutMs: 200,
      agent,
      input,
      ...(store ? { store } : {}),
      tracing: { sink: async (records: SpanRecord[]) => traces.addSpans(records) },
    });
    assert.equal(outcome.kind, 'run/completed', outcome.kind === 'run/failed' ? outcome.message : '');
  }

  /** The recorded inputs of the turn's model spans, in order. */
  function recordedInputs(turn: number): RecordedInput[] {
    return traces
      .spansOfTurn({ sessionId: 's1', branchId: 'main', turnNumber: turn })
      .filter((s) => s.kind === 'model')
      .sort((a, b) => a.startUs - b.startUs)
      .map((s) => recordedInputOf(s.attributes, s.truncated))
      .filter((x): x is RecordedInput => x !== null && x !== 'unreadable');
  }

  function assertRecordedEqualsSent(turn: number): void {
    const inputs = recordedInputs(turn);
    assert.equal(inputs.length, server.requests.length, 'one recorded input per request the server received');
    inputs.forEach((input, k) => {
      const sent: RecordedRequest = server.requests[k]!;
      assert.deepEqual(input.items, sent.body.input, `request ${k + 1}: the recorded items are the items sent`);
      assert.equal(input.instructions, sent.body.instructions, `request ${k + 1}: the instructions sent`);
      assert.deepEqual(
        (input.tools ?? []).map((t) => (t as { name?: string }).name),
        (sent.body.tools ?? []).map((t) => t.name),
        `request ${k + 1}: the tools sent`,
      );
    });
  }

  beforeEach(async () => {
    ws = new Workspace('asi-context-');
    dbPath = ws.path('sessions.db');
    configured = [];
    traces = TraceStore.open(ws.path('traces.db'));
    server = await startLoopbackOpenAI({
      script: (r) => {
        const input = r.body.input as Record<string, unknown>[];
        const last = input[input.length - 1]!;
        if (last.type === 'function_call_output') return { kind: 'text', text: 'It is Paris.' };
        return { kind: 'calls', calls: [{ name: 'lookup_capital', arguments: { country: 'France' } }] };
      },
    });
  });
  afterEach(async () => {
    db?.close();
    db = undefined;
    traces.close();
    for (const c of configured) await c.close();
    await server.close();
    ws.cleanup();
  });

  it('with a session limit: the recorded input is what the server received; the window and the items outside match the reconstruction', async () => {
    await seedSession(dbPath, [
      ['One?', 'First.'],
      ['Two?', 'Second.'],
      ['Three?', 'Third.'],
    ]);
    await runTurn('Capital of France?', limitedStore(2));
    assert.equal(server.requests.length, 2, 'a request, the tool, a second request');
    assertRecordedEqualsSent(4);

    db = openSessionDatabase(dbPath, { readonly: true });
    const recorded = await buildTurnContext(db, traces, { sessionId: 's1', branchId: 'main', turn: 4 });
    assert.equal(recorded.source, 'recorded');
    assert.equal(recorded.requests.length, 2);
    assert.equal(recorded.encoding, 'o200k_base', 'gpt-4.1-mini counts with o200k_base');
    assert.equal(recorded.model, 'gpt-4.1-mini');
    recorded.requests.forEach((r, k) => {
      const sent = server.requests[k]!.body.input as unknown[];
      assert.deepEqual(
        r.items.map((i) => i.kind),
        ['instructions', 'tool-definitions', ...sent.map((i) => countedItem(i).kind)],
        `request ${k + 1}: instructions, tools, then the items in the order sent`,
      );
      assert.ok(r.items.every((i) => i.tokens >= 0) && r.totalTokens > 0);
      assert.equal(r.inputTokens, server.replies[k]!.usage!.input_tokens, 'the span gives the request usage');
    });
    // The limit kept the last two history items: the four before them fell outside, as "limit".
    const stored = db.getItemsPage('s1', 'main', { limit: 100 }).items;
    assert.deepEqual(
      recorded.outside.map((o) => [o.sequence, o.reason]),
      stored.slice(0, 4).map((e) => [e.sequenceNumber, 'limit']),
    );

    // Reconstructed, told the limit: the same items in each request, the same items outside, and labelled.
    const rebuilt = await buildTurnContext(db, undefined, { sessionId: 's1', branchId: 'main', turn: 4, limit: 2, model: 'gpt-4.1-mini' });
    assert.equal(rebuilt.source, 'reconstructed');
    assert.ok(rebuilt.notes.some((n) => n.code === 'no-instructions'));
    assert.ok(rebuilt.notes.some((n) => n.code === 'limit' && n.limit === 2));
    assert.equal(rebuilt.requests.length, 2);
    rebuilt.requests.forEach((r, k) => {
      const sent = server.requests[k]!.body.input as unknown[];
      assert.deepEqual(
        r.items.map((i) => `${i.kind}:${i.preview}`),
        sent.map((i) => `${countedItem(i).kind}:${countedItem(i).describe().preview}`),
        `request ${k + 1} rebuilt as sent`,
      );
    });
    assert.deepEqual(
      rebuilt.outside.map((o) => [o.sequence, o.reason]),
      recorded.outside.map((o) => [o.sequence, o.reason]),
    );
    // Not told the limit, a reconstruction cannot know it: everything before the turn is in its window.
    const unknownLimit = await buildTurnContext(db, undefined, { sessionId: 's1', branchId: 'main', turn: 4 });
    assert.equal(unknownLimit.outsideCount, 0);
    assert.equal(unknownLimit.requests[0]!.itemCount, 7);
    assert.ok(unknownLimit.approximate && unknownLimit.notes.some((n) => n.code === 'unknown-model'));
  });

  it('with a compaction item: recorded as sent, the compaction item in the window, and the reconstruction the same', async () => {
    await seedSession(dbPath, [
      ['One?', 'First.'],
      ['Two?', 'Second.'],
    ]);
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
    await s.replaceHistoryWithCompaction([
      { role: 'user', content: 'One? Two?' } as AgentInputItem,
      { type: 'compaction', encrypted_content: 'enc:summary' } as unknown as AgentInputItem,
    ]);
    s.close();
    await runTurn('Capital of France?');
    assertRecordedEqualsSent(2);
    db = openSessionDatabase(dbPath, { readonly: true });
    const turns = db.getTurnsPage('s1', 'main', { limit: 10 }).turns.map((t) => t.turn);
    const turn = turns[turns.length - 1]!;
    const recorded = await buildTurnContext(db, traces, { sessionId: 's1', branchId: 'main', turn });
    assert.equal(recorded.source, 'recorded');
    const first = recorded.requests[0]!;
    assert.ok(
      first.items.some((i) => i.kind === 'compaction'),
      'the compaction item was sent',
    );
    assert.ok(recorded.notes.some((n) => n.code === 'compaction'));
    // The runner sends the history from the compaction item on: the message stored before it was not sent.
    const stored = db.getItemsPage('s1', 'main', { limit: 100 }).items;
    assert.deepEqual(
      recorded.outside.map((o) => [o.sequence, o.reason, o.preview]),
      [[stored[0]!.sequenceNumber, 'compaction', 'One? Two?']],
    );
    assert.ok(!keys(server.requests[0]!.body.input as unknown[]).includes('user:One? Two?'), 'the server did not receive it');
    const rebuilt = await buildTurnContext(db, undefined, { sessionId: 's1', branchId: 'main', turn });
    assert.equal(rebuilt.source, 'reconstructed');
    assert.equal(rebuilt.requests.length, server.requests.length);
    rebuilt.requests.forEach((r, k) =>
      assert.deepEqual(
        r.items.map((i) => `${i.kind}:${i.preview}`),
        (server.requests[k]!.body.input as unknown[]).map((i) => `${countedItem(i).kind}:${countedItem(i).describe().preview}`),
        `request ${k + 1} rebuilt as sent`,
      ),
    );
    assert.deepEqual(
      rebuilt.outside.map((o) => [o.sequence, o.reason]),
      recorded.outside.map((o) => [o.sequence, o.reason]),
    );
  });
});
