/**
 * Agent commands end to end through the run module (src/agents/command/commandRun.ts): real child processes speaking
 * AG-UI — the Node example running the real `@openai/agents` runner against the loopback Responses server — and an
 * AG-UI HTTP server, on real files. Expectations come from what the test seeded and what the servers recorded.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { runCommandOnBranch, type CommandRunOptions } from '../../../../src/agents/command/commandRun';
import type { SpanRecord } from '../../../../src/store/traces/spanRecord';
import { closedPort, startLoopbackOpenAI, type LoopbackOpenAI } from '../../../support/loopbackOpenAI';
import { TEST_KEY, assertWellFormed, eventLog, readBranch, seedSession } from '../agentTestKit';
import { completed, failed, installNodeExample, nodeCommand, notExecutable, snapshot, startAgUiServer } from './commandKit';

const TURNS: [string, string][] = [
  ['What is the weather in Paris?', 'Mild, 18°C.'],
  ['And tomorrow?', 'Rain.'],
];

describe('agent commands: runs through the user own agent (run module, real processes)', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-command-'));
    dbPath = join(dir, 'conversations.db');
    await seedSession(dbPath, TURNS);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function run(options: Partial<CommandRunOptions> & Pick<CommandRunOptions, 'agent' | 'input'>) {
    const log = eventLog();
    const lines: string[] = [];
    const outcome = runCommandOnBranch({
      dbPath,
      sessionId: 's1',
      env,
      graceMs: 300,
      onEvent: log.onEvent,
      log: (l) => void lines.push(l),
      ...options,
    });
    return { log, lines, outcome };
  }

  describe('the Node example (real @openai/agents runner, loopback Responses server)', () => {
    let server: LoopbackOpenAI;
    let command: string;
    before(async () => {
      server = await startLoopbackOpenAI({
        script: (req) => {
          const text = JSON.stringify(req.body.input);
          if (/Lyon/.test(text) && !/get_weather/.test(text))
            return { kind: 'calls', calls: [{ name: 'get_weather', arguments: { city: 'Lyon' } }] };
          return { kind: 'text', text: `Answer from ${req.body.model}.`, chunks: ['Answer ', `from ${req.body.model}.`] };
        },
      });
    });
    after(() => server.close());
    beforeEach(() => {
      command = installNodeExample(join(dir, 'example'));
    });

    it('forks at turn 2, runs the picked model, streams the answer, and settles the turn with its usage row', async () => {
      const before = server.requests.length;
      const { log, outcome } = run({
        agent: { kind: 'command', name: 'node-agent', command, cwd: join(dir, 'example') },
        fork: { fromTurn: 2, name: 'retry-mini' },
        input: 'And the day after?',
        model: 'gpt-4.1-mini',
        apiKey: TEST_KEY,
        env: { ...env, OPENAI_BASE_URL: server.baseUrl },
      });
      const done = completed(await outcome);
      assertWellFormed(log.events, done);
      const started = log.events[0];
      assert.deepEqual(started?.kind === 'run/started' && [started.branchId, started.forkedFrom, started.agentName], [
        'retry-mini',
        { branchId: 'main', turn: 2 },
        'node-agent',
      ]);
      // The child received the model and the key; the key through its environment only.
      const request = server.requests[before];
      assert.equal(server.requests.length, before + 1);
      assert.equal(request?.body.model, 'gpt-4.1-mini');
      assert.equal(request?.authorization, `Bearer ${TEST_KEY}`);
      assert.equal(log.text(), 'Answer from gpt-4.1-mini.');
      assert.equal(done.finalOutput, 'Answer from gpt-4.1-mini.');
      // What landed: main's turn 1, then the new turn 2 with the usage the server sent.
      const fork = await readBranch(dbPath, 'retry-mini');
      assert.deepEqual(fork.turns, [1, 2]);
      assert.deepEqual(
        fork.byTurns.get(2)?.map((i) => i.type),
        ['user', 'assistant'],
      );
      const sent = server.replies[server.replies.length - 1]?.usage;
      assert.deepEqual(
        fork.usage.map((u) => [u.userTurnNumber, u.requests, u.totalTokens]),
        [[2, 1, sent?.total_tokens]],
      );
      assert.equal(done.usage?.totalTokens, sent?.total_tokens);
      assert.equal(done.written.turn, 2);
      assert.equal(done.written.usageStored, true);
      assert.match(done.written.summary, /^Saved turn 2 on branch 'retry-mini': 2 item\(s\) and its usage\./);
      assert.deepEqual([done.command?.agent, done.command?.exitCode, done.command?.invalidLines], ['node-agent', 0, 0]);
      // main is untouched.
      assert.deepEqual((await readBranch(dbPath, 'main')).turns, [1, 2]);
    });

    it('shows the tool call and its output as the agent makes them, and continues main when not forking', async () => {
      const stored: SpanRecord[] = [];
      const { log, outcome } = run({
        agent: { kind: 'command', name: 'node-agent', command, cwd: join(dir, 'example') },
        input: 'And in Lyon?',
        apiKey: TEST_KEY,
        env: { ...env, OPENAI_BASE_URL: server.baseUrl },
        tracing: { sink: async (records) => void stored.push(...records) },
      });
      const done = completed(await outcome);
      const called = log.events.find((e) => e.kind === 'tool/called');
      const output = log.events.find((e) => e.kind === 'tool/output');
      assert.deepEqual(called?.kind === 'tool/called' && [called.name, JSON.parse(called.arguments)], ['get_weather', { city: 'Lyon' }]);
      assert.deepEqual(output?.kind === 'tool/output' && [output.name, output.output], ['get_weather', 'Lyon: 18°C, light rain']);
      const main = await readBranch(dbPath, 'main');
      assert.deepEqual(
        main.byTurns.get(3)?.map((i) => i.type),
        ['user', 'function_call', 'function_call_output', 'assistant'],
      );
      assert.equal(done.written.turn, 3);
      // Its spans (CUSTOM agent-sessions.spans), linked to the turn it wrote: a model request per request the server
      // answered, with the model and usage it sent, and the tool.
      for (const r of stored) assert.deepEqual(r.link, { sessionId: 's1', branchId: 'main', turnNumber: 3 });
      assert.ok(stored.every((r) => r.source === 'command'));
      const models = stored.filter((r) => r.kind === 'model');
      const replies = server.replies.slice(-models.length);
      assert.equal(models.length, 2);
      assert.deepEqual(
        models.map((m) => [m.inputTokens, m.outputTokens]).sort(),
        replies.map((r) => [r.usage!.input_tokens, r.usage!.output_tokens]).sort(),
      );
      assert.deepEqual(
        stored.filter((r) => r.kind === 'tool').map((r) => r.toolName),
        ['get_weather'],
      );
    });
  });

  describe('an agent served over AG-UI HTTP (server-sent events)', () => {
    it('posts the RunAgentInput, streams its events and settles what it wrote', async () => {
      const agent = await startAgUiServer(async (input, send) => {
        const props = (input.forwardedProps as { agentSessions: { store: { path: string }; branchId: string } }).agentSessions;
        const s = new AdvancedSQLiteSession({ sessionId: String(input.threadId), dbPath: props.store.path });
        try {
          await s.switchToBranch(props.branchId);
          send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
          send({ type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' });
          send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Over ' });
          send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'HTTP.' });
          send({ type: 'TEXT_MESSAGE_END', messageId: 'm1' });
          await s.addItems([
            { role: 'user', content: 'Via the URL?' },
            { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Over HTTP.' }] },
          ] as never);
          send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, usage: [{ inputTokens: 7, outputTokens: 3 }] });
        } finally {
          s.close();
        }
      });
      try {
        const { log, outcome } = run({
          agent: { kind: 'url', url: agent.url },
          fork: { fromTurn: 2, name: 'http-retry' },
          input: 'Via the URL?',
        });
        const done = completed(await outcome);
        assert.equal(log.text(), 'Over HTTP.');
        const input = agent.inputs[0] as { threadId: string; forwardedProps: { agentSessions: Record<string, unknown> } };
        assert.equal(input.threadId, 's1');
        assert.equal(input.forwardedProps.agentSessions.branchId, 'http-retry');
        assert.deepEqual((await readBranch(dbPath, 'http-retry')).turns, [1, 2]);
        // No usage row was stored: the run shows the usage its events reported, and the summary says none is recorded.
        assert.equal(done.written.usageStored, false);
        assert.deepEqual(done.usage && [done.usage.inputTokens, done.usage.outputTokens, done.usage.totalTokens], [7, 3, 10]);
        assert.match(done.written.summary, /no usage recorded/);
      } finally {
        await agent.close();
      }
    });

    it('an unreachable URL and an HTTP error each fail with what happened, and the fork is deleted again', async () => {
      const port = await closedPort();
      const before = await snapshot(dbPath);
      const down = failed(
        await run({ agent: { kind: 'url', url: `http://127.0.0.1:${port}/agent` }, fork: { fromTurn: 2, name: 'down' }, input: 'hi' })
          .outcome,
      );
      assert.match(
        down.message,
        new RegExp(`^The agent at http://127.0.0.1:${port}/agent could not be reached \\(fetch failed: ECONNREFUSED\\)`),
      );
      assert.match(down.written.summary, /The new branch 'down' made for this run was deleted again/);
      const crashing = await startAgUiServer(async () => undefined, { status: 500 });
      try {
        const http = failed(await run({ agent: { kind: 'url', url: crashing.url }, input: 'hi' }).outcome);
        assert.match(http.message, /answered HTTP 500: \{"error":"agent crashed"\}/);
        assert.equal(http.command?.status, 500);
      } finally {
        await crashing.close();
      }
      assert.deepEqual(await snapshot(dbPath), before);
    });
  });

  describe('bad input: each says what happened, names the command, and leaves the file as the settlement says', () => {
    it('a program that is not found', async () => {
      const before = await snapshot(dbPath);
      const o = failed(
        await run({ agent: { kind: 'command', name: 'ghost', command: 'definitely-not-a-program-7f3a --serve' }, input: 'hi' }).outcome,
      );
      assert.match(o.message, /^The agent command 'ghost' could not be started: its program was not found \(exit code 127\)\./);
      assert.match(o.message, /stderr \(last lines\):\n.*definitely-not-a-program-7f3a.*not found/);
      assert.deepEqual([o.command?.exitCode, o.failure], [127, 'other']);
      assert.deepEqual(await snapshot(dbPath), before);
    });

    it('a program that is not executable', async () => {
      const before = await snapshot(dbPath);
      const o = failed(await run({ agent: { kind: 'command', name: 'script', command: notExecutable(dir) }, input: 'hi' }).outcome);
      assert.match(o.message, /^The agent command 'script' could not be started: its program is not executable \(exit code 126\)\./);
      assert.deepEqual(await snapshot(dbPath), before);
    });

    it('a command that exits at once, with its stderr tail, and a fork made for it deleted', async () => {
      const before = await snapshot(dbPath);
      const command = nodeCommand(dir, 'quits.js', `console.error('boom: no config file'); process.exit(3);`);
      const o = failed(
        await run({ agent: { kind: 'command', name: 'quitter', command }, fork: { fromTurn: 2, name: 'q' }, input: 'hi' }).outcome,
      );
      assert.equal(
        o.message,
        "The agent command 'quitter' exited with code 3 before sending any event.\nstderr (last lines):\nboom: no config file",
      );
      assert.deepEqual(o.command?.stderrTail, ['boom: no config file']);
      assert.match(o.written.summary, /The new branch 'q' made for this run was deleted again/);
      assert.deepEqual(await snapshot(dbPath), before);
    });

    it('a fork at turn 1 under a name the store would refuse fails before the command starts, deleting nothing', async () => {
      // The agent makes a turn-1 fork itself; a used name used to fail only in the agent, and the settlement then took
      // the existing branch of that name for the run's fork and deleted it.
      const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
      await s.createBranchFromTurn(2, 'alt');
      await s.switchToBranch('main');
      await s.createBranchFromTurn(2, 'gone');
      await s.deleteBranch('gone', true);
      s.close();
      const before = await snapshot(dbPath);
      const marker = join(dir, 'started');
      const command = nodeCommand(dir, 'marks.js', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x'); process.exit(1);`);
      for (const [name, message] of [
        ['main', /Branch ID 'main' has already been used/],
        ['alt', /Branch ID 'alt' has already been used/],
        ['gone', /Branch ID 'gone' has already been used/],
        ['  ', /Branch ID cannot be empty/],
      ] as const) {
        const o = failed(
          await run({ agent: { kind: 'command', name: 'marker', command }, fork: { fromTurn: 1, name }, input: 'hi' }).outcome,
        );
        assert.match(o.message, message);
        assert.equal(o.command, undefined, `${name}: the command was started`);
        assert.match(o.written.summary, /no branch was made; branch 'main' is as it was/);
      }
      assert.equal(existsSync(marker), false);
      assert.deepEqual(await snapshot(dbPath), before);
    });

    it('a command that exits 0 without writing a turn fails, saying so, and a fork made for it is deleted', async () => {
      const before = await snapshot(dbPath);
      const command = nodeCommand(
        dir,
        'silent.js',
        `console.log(JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Sure.' }));
         console.log(JSON.stringify({ type: 'RUN_FINISHED' }));`,
      );
      const o = failed(
        await run({ agent: { kind: 'command', name: 'silent', command }, fork: { fromTurn: 2, name: 'z' }, input: 'hi' }).outcome,
      );
      assert.deepEqual(
        [o.message, o.failure, o.command?.exitCode],
        ["The agent command 'silent' exited without writing a turn.", 'other', 0],
      );
      assert.equal(o.written.turn, null);
      assert.match(o.written.summary, /^Nothing was written\. The new branch 'z' made for this run was deleted again\./);
      assert.deepEqual(await snapshot(dbPath), before);
    });

    it('lines that are not AG-UI events are counted, logged and ignored; the run still ends by its exit code', async () => {
      const command = nodeCommand(
        dir,
        'noisy.js',
        `console.log('Loading model…'); console.log(JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', delta: 'x' }));
         console.log(JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'fine' }));`,
      );
      const { log, lines, outcome } = run({ agent: { kind: 'command', name: 'noisy', command }, input: 'hi' });
      // It exits 0 but writes no turn: that is the failure, not its noise.
      const done = failed(await outcome);
      assert.equal(done.message, "The agent command 'noisy' exited without writing a turn.");
      assert.equal(log.text(), 'fine');
      assert.equal(done.command?.invalidLines, 2);
      assert.match(done.written.summary, /printed 2 line\(s\) that are not AG-UI events; they were ignored/);
      assert.ok(lines.some((l) => /ignored a line that is not JSON: Loading model…/.test(l)));
      assert.ok(lines.some((l) => /ignored a line that is not a valid TEXT_MESSAGE_CONTENT event/.test(l)));
    });

    it('a command that runs past the timeout is stopped (SIGINT, then SIGTERM) and reported', async () => {
      const command = nodeCommand(
        dir,
        'sleeps.js',
        `process.on('SIGINT', () => console.error('got SIGINT, ignoring it'));
         console.log(JSON.stringify({ type: 'RUN_STARTED', threadId: 's1', runId: 'r' }));
         setTimeout(() => {}, 60000);`,
      );
      const t0 = Date.now();
      const o = failed(await run({ agent: { kind: 'command', name: 'sleeper', command }, input: 'hi', timeoutMs: 800 }).outcome);
      assert.match(o.message, /^The agent command 'sleeper' ran past the 1 s timeout and was stopped\./);
      assert.match(o.message, /got SIGINT, ignoring it/);
      assert.equal(o.command?.signal, 'SIGTERM');
      assert.ok(Date.now() - t0 < 10_000);
    });

    it('Stop sends SIGINT; the run is reported as stopped', async () => {
      const command = nodeCommand(
        dir,
        'waits.js',
        `process.on('SIGINT', () => { console.error('stopping on SIGINT'); console.log(JSON.stringify({ type: 'RUN_ERROR', message: 'interrupted', code: 'cancelled' })); process.exit(130); });
         console.log(JSON.stringify({ type: 'RUN_STARTED', threadId: 's1', runId: 'r' }));
         console.log(JSON.stringify({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'w', role: 'assistant', delta: 'waiting' }));
         setTimeout(() => {}, 60000);`,
      );
      const controller = new AbortController();
      const { log, outcome } = run({ agent: { kind: 'command', name: 'waiter', command }, input: 'hi', signal: controller.signal });
      // Its text says the handler is in place (`run/started` is ours and comes before the program has started: a fixed
      // wait after it lost such a race on a starved machine, in the Python twin of this test).
      while (!log.events.some((e) => e.kind === 'text/delta')) await new Promise((r) => setTimeout(r, 20));
      controller.abort();
      const o = failed(await outcome);
      assert.equal(o.failure, 'cancelled');
      assert.match(o.message, /^The run was stopped\./);
      // The signal reached the program under the shell (its process group), not only the shell.
      assert.deepEqual(o.command?.stderrTail, ['stopping on SIGINT']);
    });

    it('the API key never appears in what the command printed, its stderr or the outcome', async () => {
      const command = nodeCommand(
        dir,
        'leaks.js',
        `const k = process.env.OPENAI_API_KEY; console.error('using key ' + k);
         console.log(JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'key=' + k }));
         console.log(JSON.stringify({ type: 'RUN_ERROR', message: 'bad key ' + k })); process.exit(1);`,
      );
      const { log, lines, outcome } = run({ agent: { kind: 'command', name: 'leaky', command }, input: 'hi', apiKey: TEST_KEY });
      const o = failed(await outcome);
      assert.match(o.message, /reported an error: bad key/);
      const everything = JSON.stringify([log.events, lines]);
      assert.ok(!everything.includes(TEST_KEY), 'the key was shown');
      assert.ok(everything.includes('using key'), 'stderr was logged');
    });
  });
});
