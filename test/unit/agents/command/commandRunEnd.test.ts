/**
 * How a run through an agent command or URL ends (docs/agent-command.md §4, §5, §7), through the run module with real
 * processes and a loopback server: RUN_FINISHED sent with `outcome: null` (a Python producer's `model_dump()`), a
 * stream that breaks or stays open after RUN_FINISHED, a command that lingers after it, a run paused on an interrupt
 * (its pending call kept), and a 2xx answer that is not an event stream. Each outcome is checked, and what the file
 * keeps.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommandOnBranch, type CommandRunOptions } from '../../../../src/agents/command/commandRun';
import { assertWellFormed, eventLog, readBranch, seedSession } from '../agentTestKit';
import { REPO, completed, failed, nodeCommand, writeHttpAgentTurn } from './commandKit';

const STORE_JS = join(REPO, 'dist/store.js');

/**
 * A Node agent command: reads its input, runs `body` with `out(event)` and `writeTurn(items?)` (the run's message and
 * an answer, or `items`, written to the branch it was given, through the built store).
 */
function agentScript(body: string): string {
  return `const { AdvancedSQLiteSession } = require(${JSON.stringify(STORE_JS)});
const out = (e) => process.stdout.write(JSON.stringify(e) + '\\n');
let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => (text += c));
process.stdin.on('end', async () => {
  const input = JSON.parse(text);
  const a = input.forwardedProps.agentSessions;
  const writeTurn = async (items) => {
    const s = new AdvancedSQLiteSession({ sessionId: a.sessionId, dbPath: a.store.path });
    if (a.branchId !== 'main') await s.switchToBranch(a.branchId);
    await s.addItems(items ?? [...a.input, { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Complete answer.' }] }]);
    s.close();
  };
  const T = input.threadId, R = input.runId;
  ${body}
});
`;
}

describe("agent commands and URLs: the run's end", function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;
  let servers: Server[] = [];

  before(function () {
    if (!existsSync(STORE_JS)) throw new Error(`${STORE_JS} is missing: run "node esbuild.mjs" first.`);
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-run-end-'));
    dbPath = join(dir, 'conversations.db');
    await seedSession(dbPath, [['Weather in Paris?', 'Mild.']]);
  });
  afterEach(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
    servers = [];
    rmSync(dir, { recursive: true, force: true });
  });

  function run(options: Partial<CommandRunOptions> & Pick<CommandRunOptions, 'agent'>) {
    const log = eventLog();
    const lines: string[] = [];
    const outcome = runCommandOnBranch({
      dbPath,
      sessionId: 's1',
      input: 'And after?',
      env: { PATH: process.env.PATH ?? '' },
      graceMs: 1000,
      onEvent: log.onEvent,
      log: (l) => void lines.push(l),
      ...options,
    });
    return { log, lines, outcome };
  }

  /** A raw HTTP agent: `handle` answers as it likes. */
  async function serve(
    handle: (input: Record<string, unknown>, res: ServerResponse, req: IncomingMessage) => Promise<void>,
  ): Promise<string> {
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => void handle(JSON.parse(body) as Record<string, unknown>, res, req).catch(() => res.destroy()));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  }

  const sse = (res: ServerResponse, event: Record<string, unknown>) => void res.write(`data: ${JSON.stringify(event)}\n\n`);

  /** The texts of the branch's newest items. */
  async function newest(n: number): Promise<string[]> {
    const { items } = await readBranch(dbPath, 'main');
    return items.slice(-n).map((i) => JSON.stringify(i));
  }

  it('RUN_FINISHED with outcome: null (a Python producer) completes the run; its answer is kept', async () => {
    const url = await serve(async (input, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      sse(res, { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId, parentRunId: null, timestamp: null });
      sse(res, { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant', rawEvent: null });
      sse(res, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Answer text.', timestamp: null });
      sse(res, { type: 'TEXT_MESSAGE_END', messageId: 'm1' });
      await writeHttpAgentTurn(input, 'Answer text.');
      sse(res, { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, outcome: null, result: null });
      res.end();
    });
    const { log, outcome } = run({ agent: { kind: 'url', url } });
    const o = completed(await outcome);
    assert.equal(o.command?.invalidLines, 0);
    assert.equal(log.text(), 'Answer text.');
    assert.match((await newest(1))[0] ?? '', /Answer text\./);
  });

  it('a connection that drops after RUN_FINISHED does not fail the run', async () => {
    const url = await serve(async (input, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      sse(res, { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      sse(res, { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm', delta: 'Complete answer.' });
      await writeHttpAgentTurn(input, 'Complete answer.');
      sse(res, { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
      setTimeout(() => res.socket?.destroy(), 200);
    });
    const o = completed(await run({ agent: { kind: 'url', url } }).outcome);
    assert.equal(o.finalOutput, 'Complete answer.');
  });

  it('a stream kept open after RUN_FINISHED is closed and the run completes, with or without a timeout', async () => {
    let closed = 0;
    const url = await serve(async (input, res, req) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      sse(res, { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      sse(res, { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm', delta: 'Complete answer.' });
      await writeHttpAgentTurn(input, 'Complete answer.');
      sse(res, { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
      const beat = setInterval(() => res.write(': ping\n\n'), 200);
      req.socket.once('close', () => {
        clearInterval(beat);
        closed++;
      });
    });
    const t0 = Date.now();
    completed(await run({ agent: { kind: 'url', url } }).outcome);
    assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
    completed(await run({ agent: { kind: 'url', url }, timeoutMs: 1500 }).outcome);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(closed, 2, 'the stream was closed by us');
  });

  it('a command that lingers after RUN_FINISHED is stopped and the run completes, with or without a timeout', async () => {
    const command = nodeCommand(
      dir,
      'linger.js',
      agentScript(`out({ type: 'RUN_STARTED', threadId: T, runId: R });
  out({ type: 'TEXT_MESSAGE_CHUNK', messageId: 'm', delta: 'Complete answer.' });
  await writeTurn();
  out({ type: 'RUN_FINISHED', threadId: T, runId: R });
  setInterval(() => {}, 1000);`),
    );
    const t0 = Date.now();
    const o = completed(await run({ agent: { kind: 'command', name: 'linger', command } }).outcome);
    assert.ok(Date.now() - t0 < 15_000, `took ${Date.now() - t0} ms`);
    assert.equal(o.finalOutput, 'Complete answer.');
    const timed = completed(await run({ agent: { kind: 'command', name: 'linger', command }, timeoutMs: 1500 }).outcome);
    assert.equal(timed.finalOutput, 'Complete answer.');
  });

  it('a run paused on an interrupt keeps its pending call and says what it waits for', async () => {
    const command = nodeCommand(
      dir,
      'interrupt.js',
      agentScript(`out({ type: 'RUN_STARTED', threadId: T, runId: R });
  out({ type: 'TOOL_CALL_START', toolCallId: 'call_send', toolCallName: 'send_email' });
  out({ type: 'TOOL_CALL_ARGS', toolCallId: 'call_send', delta: '{"to":"bob@example.com"}' });
  out({ type: 'TOOL_CALL_END', toolCallId: 'call_send' });
  await writeTurn([...a.input, { type: 'function_call', callId: 'call_send', name: 'send_email', arguments: '{"to":"bob@example.com"}', status: 'completed' }]);
  out({ type: 'RUN_FINISHED', threadId: T, runId: R, outcome: { type: 'interrupt', interrupts: [{ id: 'i1', reason: 'tool_approval', toolCallId: 'call_send', message: 'Send the email?' }] } });`),
    );
    const { log, outcome } = run({ agent: { kind: 'command', name: 'hitl', command } });
    const o = failed(await outcome);
    // Paused, not failed: its own kind, and what it waits for as data (each interrupt's text and call).
    assert.equal(o.failure, 'paused');
    assert.deepEqual(o.interrupts, [{ text: 'Send the email?', toolCallId: 'call_send' }]);
    assertWellFormed(log.events, o);
    assert.match(o.message, /^The agent command 'hitl' paused the run, waiting for input: Send the email\? \(tool call call_send\)/);
    assert.deepEqual(o.written.removed, []);
    const [user, call] = await newest(2);
    assert.match(user ?? '', /And after\?/);
    assert.match(call ?? '', /"function_call".*call_send|call_send.*"function_call"/);
  });

  it("a paused run's interrupts are data: each one's text (its message, else its reason) and its call or null, redacted", async () => {
    const key = 'sk-pausedkey1234567890';
    const command = nodeCommand(
      dir,
      'interrupts.js',
      agentScript(`out({ type: 'RUN_STARTED', threadId: T, runId: R });
  await writeTurn();
  out({ type: 'RUN_FINISHED', threadId: T, runId: R, outcome: { type: 'interrupt', interrupts: [
    { id: 'i1', reason: 'needs_value' },
    { id: 'i2', reason: 'tool_approval', toolCallId: 'call_pay', message: 'Pay with ${key}?' },
  ] } });`),
    );
    const { log, outcome } = run({ agent: { kind: 'command', name: 'hitl', command }, apiKey: key });
    const o = failed(await outcome);
    assert.equal(o.failure, 'paused');
    assert.deepEqual(o.interrupts, [
      { text: 'needs_value', toolCallId: null },
      { text: 'Pay with [redacted]?', toolCallId: 'call_pay' },
    ]);
    assert.ok(!JSON.stringify(log.events).includes(key), 'the key reached an event');
    assert.deepEqual(o.written.removed, []);
  });

  it('a run that fails after its agent paused it (no turn written) is a failure, with no interrupts', async () => {
    const command = nodeCommand(
      dir,
      'interrupt-no-turn.js',
      agentScript(`out({ type: 'RUN_STARTED', threadId: T, runId: R });
  out({ type: 'RUN_FINISHED', threadId: T, runId: R, outcome: { type: 'interrupt', interrupts: [{ id: 'i1', message: 'Which city?' }] } });`),
    );
    const o = failed(await run({ agent: { kind: 'command', name: 'hitl', command } }).outcome);
    assert.equal(o.failure, 'other');
    assert.equal(o.interrupts, undefined);
    assert.match(o.message, /without writing a turn/);
  });

  it('a 200 answer that is not an event stream says what came instead', async () => {
    const url = await serve(async (input, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([{ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }]));
    });
    const o = failed(await run({ agent: { kind: 'url', url } }).outcome);
    assert.match(o.message, /answered HTTP 200 with content type 'application\/json', not an event stream \(text\/event-stream\)/);
    assert.match(o.message, /it began: \[\{"type":"RUN_STARTED"/);
  });
});
