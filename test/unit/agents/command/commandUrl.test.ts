/**
 * An agent URL (AG-UI over HTTP, server-sent events) through the run module, against a loopback server started here:
 * a timeout, Stop, a stream that ends early, a malformed stream, an event over the bound, and AG-UI 1.0's events we
 * read (reasoning, a `cancelled` outcome, subagents, events after the run's end). Each outcome is checked against what
 * the server sent and the file as the settlement leaves it.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCommandOnBranch, type CommandRunOptions } from '../../../../src/agents/command/commandRun';
import { eventLog, readBranch, seedSession } from '../agentTestKit';
import { completed, failed, snapshot, startAgUiServer, writeHttpAgentTurn } from './commandKit';

type Send = (event: Record<string, unknown>) => void;

describe('agent URLs: every way an AG-UI HTTP stream can end', function () {
  this.timeout(30_000);
  let dir: string;
  let dbPath: string;
  /** Every server a test started, closed after it (one left open would keep mocha from ending). */
  let servers: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-url-'));
    dbPath = join(dir, 'conversations.db');
    await seedSession(dbPath, [
      ['Weather in Paris?', 'Mild.'],
      ['Tomorrow?', 'Rain.'],
    ]);
  });
  afterEach(async () => {
    await Promise.all(servers.map((close) => close()));
    servers = [];
    rmSync(dir, { recursive: true, force: true });
  });

  async function serve(handle: (input: Record<string, unknown>, send: Send, req: IncomingMessage) => Promise<void>) {
    const server = await startAgUiServer(handle);
    servers.push(server.close);
    return server.url;
  }

  function run(url: string, options: Partial<CommandRunOptions> = {}) {
    const log = eventLog();
    const lines: string[] = [];
    const outcome = runCommandOnBranch({
      dbPath,
      sessionId: 's1',
      agent: { kind: 'url', url },
      input: 'And after?',
      onEvent: log.onEvent,
      log: (l) => void lines.push(l),
      ...options,
    });
    return { log, lines, outcome };
  }

  /** Resolves when the request is closed by the client (an abort), so a hanging server ends with it. */
  const closed = (req: IncomingMessage) => new Promise<void>((r) => req.socket.once('close', () => r()));

  it('a server that never finishes is aborted at the timeout; the fork made for it is deleted again', async () => {
    const url = await serve(async (input, send, req) => {
      send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      await writeHttpAgentTurn(input, 'half');
      await closed(req);
    });
    const before = await snapshot(dbPath);
    const t0 = Date.now();
    const o = failed(await run(url, { timeoutMs: 500, fork: { fromTurn: 2, name: 'slow' } }).outcome);
    assert.ok(Date.now() - t0 < 5000);
    assert.match(o.message, /^The agent at http:\/\/127\.0\.0\.1:\d+\/agent ran past the 1 s timeout; the request was aborted\./);
    assert.equal(o.failure, 'other');
    assert.match(o.written.summary, /The new branch 'slow' made for this run was deleted again/);
    assert.deepEqual(await snapshot(dbPath), before);
  });

  it('Stop aborts the request and the run is reported as stopped', async () => {
    const url = await serve(async (input, send, req) => {
      send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Thinking' });
      await closed(req);
    });
    const controller = new AbortController();
    const { log, outcome } = run(url, { signal: controller.signal });
    while (log.text() === '') await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    const o = failed(await outcome);
    assert.equal(o.failure, 'cancelled');
    assert.match(o.message, /^The run was stopped\./);
    assert.equal(log.text(), 'Thinking');
  });

  it('a stream that ends before RUN_FINISHED fails: the run did not complete, and what it wrote is removed', async () => {
    const url = await serve(async (input, send) => {
      send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      await writeHttpAgentTurn(input, 'cut off');
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'cut' });
      // The handler returns: the server ends the response without RUN_FINISHED.
    });
    const before = await snapshot(dbPath);
    const o = failed(await run(url).outcome);
    assert.match(o.message, /event stream ended before RUN_FINISHED; the run did not complete\./);
    assert.deepEqual(await snapshot(dbPath), before);
  });

  it('a server that finishes without writing a turn fails, saying so: "Done" is only for a saved turn', async () => {
    const url = await serve(async (input, send) => {
      send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Sure.' });
      send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
    });
    const before = await snapshot(dbPath);
    const o = failed(await run(url).outcome);
    assert.match(o.message, /^The agent at http:\/\/127\.0\.0\.1:\d+\/agent finished without writing a turn\.$/);
    assert.equal(o.written.turn, null);
    assert.deepEqual(await snapshot(dbPath), before);
  });

  it('a malformed stream: events with a missing field or an unknown type are counted and ignored', async () => {
    const url = await serve(async (input, send) => {
      send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      send({ type: 'TEXT_MESSAGE_CONTENT', delta: 'no message id' });
      send({ type: 'NOT_AN_EVENT' });
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Fine.' });
      await writeHttpAgentTurn(input, 'Fine.');
      send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
    });
    const { log, lines, outcome } = run(url);
    const o = completed(await outcome);
    assert.equal(log.text(), 'Fine.');
    assert.equal(o.command?.invalidLines, 2);
    assert.ok(lines.some((l) => /ignored a line that is not a valid TEXT_MESSAGE_CONTENT event/.test(l)));
  });

  it('an event over the bound fails the run naming the bound; the events after it are still read', async () => {
    const url = await serve(async (input, send) => {
      send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'x'.repeat(5000) });
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'after' });
      send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
    });
    const { log, outcome } = run(url, { maxEventChars: 1000 });
    const o = failed(await outcome);
    assert.match(
      o.message,
      /sent 1 server-sent event longer than 1,000 characters, the bound of one AG-UI event \(MAX_EVENT_LINE_CHARS\); it was discarded unread\./,
    );
    assert.equal(log.text(), 'after');
  });

  /** A plain HTTP server of the test's own, closed after it. */
  async function rawServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const server = createServer(handle);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  }

  it('an error answer with an endless body: its first 500 characters are quoted, the rest is never read', async () => {
    let written = 0;
    const url = await rawServer((req, res) => {
      req.resume();
      res.writeHead(502, { 'content-type': 'text/plain' });
      const chunk = 'bad gateway '.repeat(1000);
      const more = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    const o = failed(await run(url).outcome);
    assert.match(o.message, /answered HTTP 502: (bad gateway ){41}bad gate\./);
    assert.equal(o.status ?? o.command?.status, 502);
    assert.ok(written < 64 * 1024 * 1024, `the server wrote ${written} characters before we let go`);
  });

  it('a redirect is not followed: the run fails naming it, and the other address never gets the input', async () => {
    const before = await snapshot(dbPath);
    const elsewhere: string[] = [];
    const target = await rawServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        elsewhere.push(body);
        res.end();
      });
    });
    for (const status of [301, 302, 307, 308]) {
      const url = await rawServer((req, res) => {
        req.resume();
        res.writeHead(status, { location: `${target}/landed` });
        res.end();
      });
      const o = failed(await run(url).outcome);
      assert.match(o.message, new RegExp(`answered HTTP ${status}: a redirect to ${target}/landed, which is not followed`));
    }
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(await snapshot(dbPath), before);
  });

  for (const [name, eol] of [
    ['CR alone', '\r'],
    ['CR LF', '\r\n'],
  ] as const)
    it(`an event stream whose lines end with ${name} is read as with LF, a CR LF split across chunks too`, async () => {
      const url = await rawServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          const input = JSON.parse(body) as Record<string, unknown>;
          void writeHttpAgentTurn(input, 'Sunny.').then(async () => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            const events = [
              { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId },
              { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
              { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Sunny.' },
              { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
              { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId },
            ];
            // Each event's line end cut in two pieces where it has two characters, sent apart.
            for (const e of events) {
              const text = `data: ${JSON.stringify(e)}${eol}${eol}`;
              res.write(text.slice(0, -1));
              await new Promise((r) => setTimeout(r, 5));
              res.write(text.slice(-1));
            }
            res.end();
          });
        });
      });
      const r = run(url);
      const o = completed(await r.outcome);
      assert.equal(o.finalOutput, 'Sunny.');
      assert.deepEqual(
        r.log.events.filter((e) => e.kind === 'text/delta').map((e) => (e as { delta: string }).delta),
        ['Sunny.'],
      );
    });

  describe("AG-UI 1.0's events", () => {
    it('reasoning streams as reasoning/delta, apart from the answer, and is not stored', async () => {
      const url = await serve(async (input, send) => {
        send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
        send({ type: 'REASONING_START', messageId: 'r1' });
        send({ type: 'REASONING_MESSAGE_START', messageId: 'r1', role: 'reasoning' });
        send({ type: 'REASONING_MESSAGE_CONTENT', messageId: 'r1', delta: 'Check the ' });
        send({ type: 'REASONING_MESSAGE_CONTENT', messageId: 'r1', delta: 'forecast.' });
        send({ type: 'REASONING_MESSAGE_END', messageId: 'r1' });
        send({ type: 'REASONING_END', messageId: 'r1' });
        send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Sunny.' });
        await writeHttpAgentTurn(input, 'Sunny.');
        send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
      });
      const { log, outcome } = run(url);
      const o = completed(await outcome);
      assert.equal(o.command?.invalidLines, 0);
      const reasoning = log.events.flatMap((e) => (e.kind === 'reasoning/delta' ? [e.delta] : [])).join('');
      assert.equal(reasoning, 'Check the forecast.');
      assert.equal(log.text(), 'Sunny.');
      // Only what the agent stored is in the branch: its answer, no reasoning item of ours.
      const items = (await readBranch(dbPath, 'main')).items as { type?: string }[];
      assert.ok(!items.some((i) => i.type === 'reasoning'));
    });

    it("a RUN_FINISHED with outcome 'cancelled' is settled as a Stop: what the run wrote is removed", async () => {
      const url = await serve(async (input, send) => {
        send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
        await writeHttpAgentTurn(input, 'never mind');
        send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, outcome: { type: 'cancelled' } });
      });
      const before = await snapshot(dbPath);
      const o = failed(await run(url, { fork: { fromTurn: 2, name: 'cancelled' } }).outcome);
      assert.equal(o.failure, 'cancelled');
      assert.match(o.message, /^The agent at .* cancelled the run\./);
      assert.deepEqual(await snapshot(dbPath), before);
    });

    it('subagent events are accepted; their attributed content is shown with the run', async () => {
      const url = await serve(async (input, send) => {
        send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
        send({ type: 'SUBAGENT_STARTED', subagentRunId: 'sub-1', name: 'researcher' });
        send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Found it. ', subagentRunId: 'sub-1' });
        send({ type: 'SUBAGENT_ERROR', subagentRunId: 'sub-1', message: 'one source was down' });
        send({ type: 'SUBAGENT_FINISHED', subagentRunId: 'sub-1' });
        send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'n', delta: 'Done.' });
        await writeHttpAgentTurn(input, 'Done.');
        send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
      });
      const { log, outcome } = run(url);
      const o = completed(await outcome);
      assert.equal(o.command?.invalidLines, 0, 'a subagent event was taken for an unknown one');
      // Two messages (`m`, `n`): a break between their text, so they do not run together.
      assert.equal(log.text(), 'Found it. \n\nDone.');
    });

    it("events after the run's end are ignored, as AG-UI says, and reported; a RUN_ERROR after RUN_FINISHED counts", async () => {
      const url = await serve(async (input, send) => {
        send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
        send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Sunny.' });
        await writeHttpAgentTurn(input, 'Sunny.');
        send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
        send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: ' And late.' });
      });
      const { log, outcome } = run(url);
      const o = completed(await outcome);
      assert.equal(log.text(), 'Sunny.');
      assert.match(o.written.summary, /sent 1 event\(s\) after the run's end \(the first: TEXT_MESSAGE_CONTENT\); AG-UI allows none/);

      const failing = await serve(async (input, send) => {
        send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
        send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
        send({ type: 'RUN_ERROR', message: 'the write-back failed' });
      });
      const late = failed(await run(failing).outcome);
      assert.match(late.message, /reported an error: the write-back failed/);
    });
  });
});
