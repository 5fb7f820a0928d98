/**
 * Agent runs from VS Code, in the real extension host: the real @openai/agents + openai client path against a
 * loopback Responses API server this test starts (no real API is ever called).
 */
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { AdvancedSQLiteSession, openDatabase } from '../../src/store';
import type { RunOutcome } from '../../src/shared/protocol/runEvents';
import type { WhatIfResult } from '../../src/extension/runs/whatIf';
import { closedPort, lastUserText, startLoopbackOpenAI, type LoopbackOpenAI } from '../support/loopbackOpenAI';
import { api, closeAll, scratch, type Scratch } from './helpers';

const KEY = 'sk-test-never-leaks-4f9d1c';

async function setAgent(settings: Record<string, unknown>): Promise<void> {
  const c = vscode.workspace.getConfiguration('agentSessions.agent');
  for (const [k, v] of Object.entries(settings)) await c.update(k, v, vscode.ConfigurationTarget.Global);
}

async function turns(path: string, sessionId: string, branch: string): Promise<{ byTurn: Record<string, string[]>; usageTurns: number[] }> {
  const s = new AdvancedSQLiteSession({ sessionId, dbPath: path, readonly: true });
  try {
    const byTurn = Object.fromEntries(
      [...(await s.getConversationByTurns(branch))].map(([t, items]) => [String(t), items.map((i) => i.type)]),
    );
    const usageTurns = (await s.getTurnUsage(undefined, branch)).map((u) => u.userTurnNumber);
    return { byTurn, usageTurns };
  } finally {
    s.close();
  }
}

function tableNames(file: string): string[] {
  const db = openDatabase(file, { readonly: true });
  try {
    return db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all<{ name: string }>()
      .map((r) => r.name);
  } finally {
    db.close();
  }
}

describe('agent runs', () => {
  let s: Scratch;
  let server: LoopbackOpenAI;
  let path: string;

  before(async () => {
    server = await startLoopbackOpenAI({
      script: (req) =>
        /weather/i.test(lastUserText(req.body)) && !JSON.stringify(req.body.input).includes('function_call_output')
          ? { kind: 'calls', calls: [{ name: 'lookup_weather', arguments: { city: 'Oslo' } }] }
          : { kind: 'text', text: `You said: ${lastUserText(req.body)}`, chunks: ['You ', 'said: ', lastUserText(req.body)] },
    });
  });
  after(async () => {
    await server.close();
    await setAgent({ baseUrl: undefined, model: undefined, module: undefined });
    await vscode.commands.executeCommand('agentSessions.setApiKey', '');
  });
  beforeEach(async () => {
    s = scratch();
    const a = await api();
    await closeAll(a);
    path = s.copy('conformance/ref-multisession.db');
    await vscode.commands.executeCommand('agentSessions.openDatabase', path);
    await setAgent({ baseUrl: server.baseUrl, model: 'loopback-model', module: undefined });
    await vscode.commands.executeCommand('agentSessions.setApiKey', KEY);
  });
  afterEach(async () => {
    await closeAll(await api());
    s.cleanup();
  });

  const send = (branchId: string, input: string): Thenable<RunOutcome | undefined> =>
    vscode.commands.executeCommand<RunOutcome | undefined>(
      'agentSessions.sendMessage',
      { kind: 'branch', dbPath: path, sessionId: 'alice', branchId },
      input,
    );

  it('continues main: the turn lands on main with the next turn number and a usage row', async () => {
    const outcome = await send('main', 'Continue, please');
    assert.equal(outcome?.kind, 'run/completed', JSON.stringify(outcome));
    const t = await turns(path, 'alice', 'main');
    assert.deepEqual(t.byTurn['3'], ['user', 'assistant']);
    assert.deepEqual(t.usageTurns, [1, 2, 3]);
    const last = server.requests[server.requests.length - 1]!;
    assert.equal(last.authorization, `Bearer ${KEY}`);
    assert.equal(last.body.model, 'loopback-model');
  });

  it('branches at a turn, then continues the branch: items on the branch, turn numbers from the fork', async () => {
    const a = await api();
    const turn = { kind: 'turn', dbPath: path, sessionId: 'alice', branchId: 'main', turn: 2, branchTurnNumber: 2 };
    assert.equal(await vscode.commands.executeCommand('agentSessions.branchFromTurn', turn, 'agent-alt'), 'agent-alt');
    const outcome = await send('agent-alt', 'A different second question');
    assert.equal(outcome?.kind, 'run/completed', JSON.stringify(outcome));
    const t = await turns(path, 'alice', 'agent-alt');
    assert.deepEqual(Object.keys(t.byTurn), ['1', '2']);
    assert.deepEqual(t.byTurn['2'], ['user', 'assistant']);
    assert.deepEqual(t.usageTurns, [2]);
    assert.deepEqual((await turns(path, 'alice', 'main')).usageTurns, [1, 2], 'main is untouched');
    assert.equal(a.failures.length, 0);
  });

  it("runs the user's own agent module with a tool round trip", async () => {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(folder, 'a workspace folder is open');
    writeFileSync(
      join(folder, 'weatherAgent.js'),
      `module.exports = ({ sdk, z }) => new sdk.Agent({
        name: 'Module weather agent',
        instructions: 'Use the tool.',
        tools: [sdk.tool({ name: 'lookup_weather', description: 'weather', parameters: z.object({ city: z.string() }),
          execute: async ({ city }) => city + ': 7 degrees, overcast' })],
      });`,
    );
    await setAgent({ module: 'weatherAgent.js' });
    const outcome = await send('main', 'What is the weather in Oslo?');
    assert.equal(outcome?.kind, 'run/completed', JSON.stringify(outcome));
    const t = await turns(path, 'alice', 'main');
    assert.deepEqual(t.byTurn['3'], ['user', 'function_call', 'function_call_output', 'assistant']);
    const toolOutput = JSON.stringify(server.requests[server.requests.length - 1]!.body.input);
    assert.match(toolOutput, /Oslo: 7 degrees, overcast/);
  });

  it('Retry from Here on a turn with a tool call replays its recorded output: the tool does not run, the marks are kept', async () => {
    const a = await api();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(folder, 'a workspace folder is open');
    // The tool leaves a line in a file each time it really runs: the side effect a replay must not repeat.
    const sideEffects = join(s.dir, 'tool-ran.log');
    writeFileSync(sideEffects, '');
    writeFileSync(
      join(folder, 'replayWeatherAgent.js'),
      `const { appendFileSync } = require('node:fs');
      module.exports = ({ sdk, z }) => new sdk.Agent({
        name: 'Replayed weather agent',
        instructions: 'Use the tool.',
        tools: [sdk.tool({ name: 'lookup_weather', description: 'weather', parameters: z.object({ city: z.string() }),
          execute: async ({ city }) => { appendFileSync(${JSON.stringify(sideEffects)}, city + '\\n'); return city + ': 7 degrees, as recorded'; } })],
      });`,
    );
    await setAgent({ module: 'replayWeatherAgent.js' });
    try {
      const first = await send('main', 'What is the weather in Oslo?');
      assert.equal(first?.kind, 'run/completed', JSON.stringify(first));
      assert.equal(readFileSync(sideEffects, 'utf8'), 'Oslo\n', 'the recording ran the tool once');
      const turn = { kind: 'turn', dbPath: path, sessionId: 'alice', branchId: 'main', turn: 3, branchTurnNumber: 3 };
      const from = server.requests.length;
      // No tools argument: agentSessions.replay.mode's default, replay.
      const result = await vscode.commands.executeCommand<WhatIfResult>('agentSessions.retryFromHere', turn, 'loopback-model');
      const run = result?.runs[0];
      assert.equal(run?.outcome.kind, 'run/completed', JSON.stringify(result?.runs));
      assert.equal(readFileSync(sideEffects, 'utf8'), 'Oslo\n', 'the re-run did not run the tool again');
      // The model got the recorded output as the tool's answer, and the branch stores it exactly.
      assert.match(JSON.stringify(server.requests.slice(from).at(-1)?.body.input), /Oslo: 7 degrees, as recorded/);
      assert.deepEqual((await turns(path, 'alice', run.branchId)).byTurn['3'], [
        'user',
        'function_call',
        'function_call_output',
        'assistant',
      ]);
      const summary = run.outcome.replay;
      assert.equal(summary?.mode, 'replay');
      assert.deepEqual(summary?.source, { branchId: 'main', turn: 3 });
      assert.deepEqual(
        summary?.marks.map((m) => [m.name, m.outcome]),
        [['lookup_weather', 'replayed']],
      );
      // Kept in the replay marks store (never the session file), under the new branch, pointing at the recorded call.
      const kept = await a.replay.marks(path, 'alice', run.branchId);
      assert.deepEqual(
        kept.marks.map((m) => [m.callId, m.outcome, m.recordedCallId, m.recordedBranchId, m.recordedTurn]),
        summary!.marks.map((m) => [m.callId, 'replayed', m.recordedCallId, 'main', 3]),
      );
      assert.deepEqual(
        kept.runs.map((r) => [r.runId, r.turn]),
        [[run.runId, 3]],
      );
      assert.ok(!tableNames(path).some((t) => t.startsWith('replay')), 'nothing of replay in the session file');
    } finally {
      await setAgent({ module: undefined });
    }
  });

  it('stops a run mid-stream and leaves the branch as it was', async () => {
    const a = await api();
    server.setScript(() => ({ kind: 'text', text: 'slow answer', chunks: Array.from({ length: 40 }, (_, i) => `w${i} `), delayMs: 100 }));
    try {
      const panel = a.panels.open({ dbPath: path, sessionId: 'alice', branchId: 'main' });
      await a.panels.whenReady(panel);
      const before = await turns(path, 'alice', 'main');
      const { runId, outcome } = panel.startRun('main', 'This will be stopped');
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(a.runner.stop(runId), true);
      const result = await outcome;
      assert.equal(result.kind, 'run/failed');
      assert.equal(result.kind === 'run/failed' && result.failure, 'cancelled');
      assert.deepEqual(await turns(path, 'alice', 'main'), before, 'nothing half-written');
    } finally {
      server.setScript((req) => ({ kind: 'text', text: `You said: ${lastUserText(req.body)}` }));
    }
  });

  it('refuses to send without a key before anything starts, and a run that gets that far fails as no-key', async () => {
    const a = await api();
    await vscode.commands.executeCommand('agentSessions.setApiKey', '');
    await setAgent({ baseUrl: 'https://models.example.invalid/v1' });
    try {
      const before = await turns(path, 'alice', 'main');
      // The command checks the key before it asks for or sends anything: refused, with the remedy.
      assert.equal(await send('main', 'Will this fail?'), undefined);
      assert.match(a.failures.at(-1)?.message ?? '', /No API key is set for .*Set API Key/);
      // A run started past that check (the view's own path) still ends as a typed no-key failure, writing nothing.
      const panel = a.panels.open({ dbPath: path, sessionId: 'alice', branchId: 'main' });
      await a.panels.whenReady(panel);
      const outcome = await panel.startRun('main', 'Will this fail?').outcome;
      assert.equal(outcome.kind === 'run/failed' && outcome.failure, 'no-key', JSON.stringify(outcome));
      assert.match(outcome.kind === 'run/failed' ? outcome.message : '', /Set API Key/);
      assert.deepEqual(await turns(path, 'alice', 'main'), before);
    } finally {
      await vscode.commands.executeCommand('agentSessions.setApiKey', KEY);
      await setAgent({ baseUrl: server.baseUrl });
    }
  });

  const failures: [string, () => Promise<void>, string, RegExp][] = [
    [
      'an unreachable server',
      async () => setAgent({ baseUrl: `http://127.0.0.1:${await closedPort()}/v1`, maxRetries: 0 }),
      'unreachable',
      /127\.0\.0\.1/,
    ],
    [
      'an HTTP error from the model',
      async () => server.setScript(() => ({ kind: 'error', status: 500, message: 'model exploded' })),
      'http',
      /500/,
    ],
  ];
  for (const [what, arrange, kind, message] of failures) {
    it(`reports ${what} with what was written, and leaves no half turn`, async () => {
      await arrange();
      try {
        const before = await turns(path, 'alice', 'main');
        const outcome = await send('main', 'Will this fail?');
        assert.equal(outcome?.kind, 'run/failed', JSON.stringify(outcome));
        assert.equal(outcome?.kind === 'run/failed' && outcome.failure, kind);
        assert.match(outcome?.kind === 'run/failed' ? outcome.message : '', message);
        assert.ok(outcome?.written.summary, 'says what was written');
        assert.deepEqual(await turns(path, 'alice', 'main'), before);
      } finally {
        server.setScript((req) => ({ kind: 'text', text: `You said: ${lastUserText(req.body)}` }));
        await setAgent({ maxRetries: undefined });
      }
    });
  }

  it('reports a database locked by another writer', async () => {
    // Another writer (say, a Python agent) holds the write lock for longer than the 5 s busy timeout.
    const blocker = openDatabase(path);
    blocker.exec('BEGIN IMMEDIATE');
    try {
      const before = await turns(path, 'alice', 'main');
      const outcome = await send('main', 'Locked?');
      assert.equal(outcome?.kind === 'run/failed' && outcome.failure, 'locked', JSON.stringify(outcome));
      assert.match(outcome?.kind === 'run/failed' ? outcome.written.summary : '', /./);
      assert.deepEqual(await turns(path, 'alice', 'main'), before);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
  });

  it('never writes the API key to settings, logs, the database or the view', async () => {
    const a = await api();
    await send('main', 'Remember nothing secret');
    server.setScript(() => ({ kind: 'error', status: 401, message: 'bad key', echoAuthorization: true }));
    try {
      const outcome = await send('main', 'Echo my key back');
      assert.equal(outcome?.kind, 'run/failed');
      assert.ok(!JSON.stringify(outcome).includes(KEY), 'not in the run outcome');
    } finally {
      server.setScript((req) => ({ kind: 'text', text: `You said: ${lastUserText(req.body)}` }));
    }
    const settings = JSON.stringify(vscode.workspace.getConfiguration('agentSessions'));
    assert.ok(!settings.includes(KEY), 'not in settings');
    assert.ok(!a.runner.logLines.join('\n').includes(KEY), 'not in the log');
    assert.ok(
      !a.failures
        .map((f) => f.message)
        .join('\n')
        .includes(KEY),
      'not in notifications',
    );
    for (const suffix of ['', '-wal']) {
      let bytes = '';
      try {
        bytes = readFileSync(path + suffix).toString('latin1');
      } catch {
        /* no -wal */
      }
      assert.ok(!bytes.includes(KEY), `not in the database file${suffix}`);
    }
  });

  it('continues a Python-written session that used a tool: the request holds valid Responses items, our items read back in that shape', async () => {
    // Written as the Python SDK writes them (Responses input items are stored unchanged).
    const pyPath = join(s.dir, 'python-tools.db');
    const pythonItems = [
      { content: [{ type: 'input_text', text: 'Use metric units.' }], role: 'developer', type: 'message' },
      { content: 'What is the weather in Paris?', role: 'user' },
      { arguments: '{"city":"Paris"}', call_id: 'call_w1', name: 'get_weather', type: 'function_call', id: 'fc_1', status: 'completed' },
      { call_id: 'call_w1', output: 'Sunny, 22°C', type: 'function_call_output' },
      {
        id: 'msg_1',
        content: [{ annotations: [], text: 'Sunny, 22°C.', type: 'output_text', logprobs: [] }],
        role: 'assistant',
        status: 'completed',
        type: 'message',
      },
    ];
    const writer = new AdvancedSQLiteSession({ sessionId: 'py', dbPath: pyPath, createTables: true });
    await writer.addItems(pythonItems as never);
    writer.close();
    await vscode.commands.executeCommand('agentSessions.openDatabase', pyPath);
    const before = server.requests.length;
    const outcome = await vscode.commands.executeCommand<RunOutcome | undefined>(
      'agentSessions.sendMessage',
      { kind: 'branch', dbPath: pyPath, sessionId: 'py', branchId: 'main' },
      'Continue please',
    );
    assert.equal(outcome?.kind, 'run/completed', JSON.stringify(outcome));
    assert.equal(server.requests.length, before + 1);
    const input = server.requests[before]!.body.input as Record<string, unknown>[];
    const wire = JSON.stringify(input);
    for (const jsOnly of ['"callId"', '"providerData"', 'function_call_result'])
      assert.ok(!wire.includes(jsOnly), `no ${jsOnly} in ${wire}`);
    const call = input.findIndex((i) => i.type === 'function_call' && i.call_id === 'call_w1');
    const output = input.findIndex((i) => i.type === 'function_call_output' && i.call_id === 'call_w1');
    assert.ok(call >= 0 && output > call, `the call and its output, in order: ${wire}`);
    assert.deepEqual(input[0], pythonItems[0], 'the developer message goes to the API as Python stored it');
    const reader = new AdvancedSQLiteSession({ sessionId: 'py', dbPath: pyPath, readonly: true });
    try {
      const stored = (await reader.getStoredItems()) as Record<string, unknown>[];
      assert.deepEqual(stored.slice(0, 5), pythonItems, "Python's rows are untouched");
      assert.deepEqual([stored[5]?.role, stored[5]?.content], ['user', 'Continue please']);
      const answer = stored[6] as { type?: string; role?: string; content?: { type?: string; text?: string; annotations?: unknown }[] };
      const part = answer.content?.[0];
      assert.deepEqual(
        [answer.type, answer.role, part?.type, part?.text, Array.isArray(part?.annotations)],
        ['message', 'assistant', 'output_text', 'You said: Continue please', true],
        'the answer is stored in the Responses shape Python reads',
      );
    } finally {
      reader.close();
    }
  });

  it("records the run's trace in the extension's trace store, linked to its branch and turn, and nothing in the session file", async () => {
    const a = await api();
    const store = await a.traces.traces();
    await store.call('clearSession', 'alice');
    const tablesBefore = tableNames(path);
    const before = server.requests.length;
    const outcome = await send('main', 'Trace this, please');
    assert.equal(outcome?.kind, 'run/completed', JSON.stringify(outcome));
    const turn = outcome?.written.turn;
    assert.equal(turn, 3);
    const spans = await store.call('spansOfTurn', { sessionId: 'alice', branchId: 'main', turnNumber: turn! });
    const models = spans.filter((sp) => sp.kind === 'model');
    assert.equal(models.length, server.requests.length - before, 'one span per model request');
    const sent = server.replies[server.replies.length - 1]!;
    assert.deepEqual(
      [models[0]!.model, models[0]!.inputTokens, models[0]!.outputTokens],
      ['loopback-model', sent.usage!.input_tokens, sent.usage!.output_tokens],
    );
    assert.ok(spans.some((sp) => sp.kind === 'agent'));
    assert.ok(spans.every((sp) => sp.source === 'extension'));
    const tablesAfter = tableNames(path);
    assert.deepEqual(tablesAfter, tablesBefore, 'the session file gets no table of ours');
    assert.ok(!a.traces.path.startsWith(dirname(path)), 'the trace store is not beside the session file');
  });

  it("receives OTLP spans while the receiver runs, imports an OTLP JSON file, and clears a session's traces", async () => {
    const a = await api();
    const store = await a.traces.traces();
    const otlp = (spanId: string) =>
      JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: 'elsewhere' } }] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: spanId.padStart(32, 'e'),
                    spanId: spanId.padStart(16, '0'),
                    name: 'chat gpt-4.1',
                    startTimeUnixNano: `${Date.now()}000000`,
                    endTimeUnixNano: `${Date.now() + 800}000000`,
                    attributes: [
                      { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                      { key: 'gen_ai.conversation.id', value: { stringValue: 'bob' } },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      });
    try {
      const url = await vscode.commands.executeCommand<string>('agentSessions.startTraceReceiver', { port: 0 });
      assert.match(url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/v1\/traces$/);
      const res = await fetch(url!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: otlp('a1') });
      assert.equal(res.status, 200);
      assert.equal(await vscode.commands.executeCommand('agentSessions.stopTraceReceiver'), true);
      await assert.rejects(fetch(url!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: otlp('a2') }));
      const file = join(s.dir, 'bob.otlp.json');
      writeFileSync(file, otlp('b3'));
      assert.equal(await vscode.commands.executeCommand('agentSessions.importTraces', [file]), 1);
      const bob = await store.call('tracesOfSession', 'bob');
      assert.deepEqual(bob.map((t) => t.traceId).sort(), ['a1'.padStart(32, 'e'), 'b3'.padStart(32, 'e')]);
      // Exported as OTLP JSON, the file imports back to the same spans.
      const out = join(s.dir, 'bob-export.otlp.json');
      assert.equal(await vscode.commands.executeCommand('agentSessions.exportSessionTraces', { sessionId: 'bob' }, { uri: out }), out);
      const exported = JSON.parse(readFileSync(out, 'utf8')) as { resourceSpans: { scopeSpans: { spans: { spanId: string }[] }[] }[] };
      assert.deepEqual(exported.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((sc) => sc.spans.map((sp) => sp.spanId))).sort(), [
        'a1'.padStart(16, '0'),
        'b3'.padStart(16, '0'),
      ]);
      assert.equal(await vscode.commands.executeCommand('agentSessions.clearSessionTraces', { sessionId: 'bob' }, true), 2);
      assert.deepEqual(await store.call('tracesOfSession', 'bob'), []);
    } finally {
      await vscode.commands.executeCommand('agentSessions.stopTraceReceiver');
    }
  });
});
