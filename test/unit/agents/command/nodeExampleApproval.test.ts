/**
 * The Node example (examples/node/replay-agent.mjs) on a tool call that needs approval: its tool declared with
 * `needsApproval: true` (patched in here), the real `@openai/agents` runner against the loopback Responses server. The
 * SDK stops before the tool runs and stores the turn with the call waiting; the example must say the run is paused
 * (RUN_FINISHED with an `interrupt` outcome, docs/agent-command.md §4), and the command runner must report it so
 * (`run/failed` of kind `paused`, the call kept).
 *
 * The store package is this repository's source (src/store, through tsx), so these tests need no build.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackOpenAI, toolOutputsIn, type LoopbackOpenAI } from '../../../support/loopbackOpenAI';
import { TEST_KEY, assertWellFormed, eventLog, readBranch, seedSession } from '../agentTestKit';
import { REPO, failed, installNodeExample } from './commandKit';
import { STORE_SOURCE, TSX, exampleInput, runExample } from './nodeExampleKit';
import { runCommandOnBranch } from '../../../../src/agents/command/commandRun';

/** The example tool's `execute`, which the test gives `needsApproval: true`. */
const EXECUTE = 'execute: async ({ city }) =>';
const MESSAGE = 'Approve get_weather({"city":"Paris"})?';

describe('the Node example on a tool that needs approval: the run is paused, not completed', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;
  let script: string;
  let server: LoopbackOpenAI;

  before(async () => {
    server = await startLoopbackOpenAI({
      script: (req) =>
        toolOutputsIn(req.body).length === 0
          ? { kind: 'calls', calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}', callId: 'call_ok_1' }] }
          : { kind: 'text', text: 'It ran anyway.' },
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-node-approval-'));
    dbPath = join(dir, 'conversations.db');
    await seedSession(dbPath, [['What is the weather in Paris?', 'Mild.']]);
    const example = join(dir, 'example');
    installNodeExample(example, REPO, STORE_SOURCE);
    script = join(example, 'replay-agent.mjs');
    const source = readFileSync(script, 'utf8');
    assert.ok(source.includes(EXECUTE), 'the example tool changed: update EXECUTE');
    writeFileSync(script, source.replace(EXECUTE, `needsApproval: true, ${EXECUTE}`));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stores the call waiting and its usage, and sends RUN_FINISHED with an interrupt outcome naming the call', async () => {
    const before = server.requests.length;
    const run = await runExample(script, dir, exampleInput(dbPath), server.baseUrl);
    assert.equal(run.code, 0, run.stderr);
    const events = run.events.filter((e) => !(e.type === 'CUSTOM' && e.name === 'agent-sessions.spans'));
    assert.deepEqual(
      events.map((e) => e.type),
      ['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'RUN_FINISHED'],
    );
    const finished = events.at(-1)!;
    assert.deepEqual(finished.outcome, {
      type: 'interrupt',
      interrupts: [{ id: 'call_ok_1', reason: 'tool_approval', toolCallId: 'call_ok_1', message: MESSAGE }],
    });
    // One model request: the SDK did not run the tool, nor ask the model again.
    assert.equal(server.requests.length, before + 1);
    const sent = server.replies.at(-1)!.usage!;
    assert.deepEqual(finished.usage, [
      {
        model: 'gpt-4.1-mini',
        inputTokens: sent.input_tokens,
        outputTokens: sent.output_tokens,
        totalTokens: sent.total_tokens,
        cachedInputTokens: sent.input_tokens_details.cached_tokens,
        reasoningTokens: sent.output_tokens_details.reasoning_tokens,
      },
    ]);
    // What the SDK stored: the message and the call, with no output; and the usage row the example stored.
    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(
      main.byTurns.get(2)?.map((i) => i.type),
      ['user', 'function_call'],
    );
    assert.deepEqual(
      main.usage.map((u) => [u.userTurnNumber, u.requests, u.totalTokens]),
      [[2, 1, sent.total_tokens]],
    );
  });

  it('through the command runner: run/failed of kind paused, with the call it waits for; the turn kept', async () => {
    const log = eventLog();
    const command = `"${process.execPath}" --import "${TSX}" "${script}"`;
    const outcome = await runCommandOnBranch({
      dbPath,
      sessionId: 's1',
      input: 'And now?',
      agent: { kind: 'command', name: 'node-agent', command, cwd: join(dir, 'example') },
      apiKey: TEST_KEY,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', OPENAI_BASE_URL: server.baseUrl },
      graceMs: 300,
      onEvent: log.onEvent,
      log: () => undefined,
    });
    const o = failed(outcome);
    assertWellFormed(log.events, o);
    assert.equal(o.failure, 'paused');
    assert.deepEqual(o.interrupts, [{ text: MESSAGE, toolCallId: 'call_ok_1' }]);
    assert.deepEqual(o.written.removed, []);
    assert.equal(o.written.turn, 2);
    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(
      main.byTurns.get(2)?.map((i) => i.type),
      ['user', 'function_call'],
    );
  });
});
