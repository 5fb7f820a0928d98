/**
 * The OTLP receiver against OpenTelemetry's own exporters from npm (`@opentelemetry/exporter-trace-otlp-http` for
 * JSON, `-proto` for protobuf, gzip on), sending GenAI-convention and OpenInference-style spans timed inside the turns
 * of a real session file: the spans read back linked to the right session and turn, the unlinked ones listed. Then
 * every bad request: another Host (DNS rebinding), wrong path, method, content type or encoding, malformed, not-OTLP
 * and oversized bodies, a partial success, a flood past the backlog, a locked store, a taken port.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { context, trace, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { AdvancedSQLiteSession } from '../../../../src/store/session/advancedSqliteSession';
import { openSessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { openDatabase } from '../../../../src/store/drivers/openDatabase';
import { OtlpReceiver, OtlpReceiverError, type BatchInfo } from '../../../../src/store/traces/otlpReceiver';
import { TraceStore } from '../../../../src/store/traces/traceStore';
import { hostHeaderAllowed } from '../../../../src/store/traces/receiverAddress';
import { turnWindows, type TurnWindow } from '../../../../src/store/traces/turnWindows';
import { tempDir } from '../../../support/tempFiles';

const SESSION = 'trip-planner';
/** An ingest that stores nothing (for the receiver's own refusals). */
const NOTHING = () => ({ spans: 0, traces: 0, rejected: 0, reasons: [], services: [] });

/** Sends spans through a real tracer provider and exporter, then flushes. */
async function send(exporter: SpanExporter, service: string, build: (tracer: Tracer) => void): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  build(provider.getTracer('agent-test'));
  await provider.forceFlush();
  await provider.shutdown();
}

const child = (tracer: Tracer, parent: Span, name: string, startMs: number, attributes: Record<string, string | number>) =>
  tracer.startSpan(name, { startTime: startMs, attributes }, trace.setSpan(context.active(), parent));

describe('OTLP receiver with real OpenTelemetry exporters', function () {
  this.timeout(30_000);
  const tmp = tempDir('asi-otlp-');
  let store: TraceStore;
  let receiver: OtlpReceiver;
  const batches: BatchInfo[] = [];
  let windows: Map<number, TurnWindow>;

  before(async () => {
    // A real session file with three turns a minute apart (the times a slow conversation would have).
    const dbPath = join(tmp.dir, 'conversations.db');
    const session = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath, createTables: true });
    for (const text of ['Plan a weekend in Lisbon', 'And in Porto?', 'Book the cheaper one'])
      await session.addItems([
        { role: 'user', content: text },
        { role: 'assistant', content: `ok: ${text}` },
      ] as never);
    session.close();
    const raw = openDatabase(dbPath);
    raw.exec(`UPDATE agent_messages SET created_at = datetime('2026-12-02 09:00:00', '+' || ((id - 1) / 2) || ' minutes')`);
    raw.close();
    const sdb = openSessionDatabase(dbPath);
    windows = turnWindows(sdb.getTurnsPage(SESSION, 'main', { limit: 10 }).turns);
    sdb.close();
    assert.equal(windows.size, 3);

    store = TraceStore.open(join(tmp.dir, 'traces.db'));
    receiver = await OtlpReceiver.start({
      port: 0,
      ingest: (body, format) => store.ingestOtlp(body, format),
      onBatch: (b) => batches.push(b),
    });
  });
  after(async () => {
    await receiver?.close();
    store?.close();
    tmp.cleanup();
  });

  const inTurn = (turn: number, offsetMs: number) => windows.get(turn)!.startUs / 1000 + 2000 + offsetMs;

  it('JSON: a GenAI agent run in turn 2, with a model request and a failed tool, reads back as that turn', async () => {
    await send(new JsonExporter({ url: receiver.url }), 'support-bot', (tracer) => {
      const t = inTurn(2, 0);
      const root = tracer.startSpan('invoke_agent Trip planner', {
        startTime: t,
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'Trip planner', 'gen_ai.conversation.id': SESSION },
      });
      const chat = child(tracer, root, 'chat gpt-4.1', t + 10, {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4.1',
        'gen_ai.usage.input_tokens': 812,
        'gen_ai.usage.output_tokens': 64,
      });
      chat.end(t + 1210);
      const tool = child(tracer, root, 'execute_tool search_trains', t + 1220, {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'search_trains',
      });
      tool.recordException(new Error('timetable service timed out'));
      tool.setStatus({ code: SpanStatusCode.ERROR, message: 'timetable service timed out' });
      tool.end(t + 4220);
      root.end(t + 4300);
    });
    const spans = store.spansOfTurn({ sessionId: SESSION, branchId: 'main', turnNumber: 2, window: windows.get(2) });
    assert.deepEqual(
      spans.map((s) => [s.kind, s.name]),
      [
        ['agent', 'invoke_agent Trip planner'],
        ['model', 'chat gpt-4.1'],
        ['tool', 'execute_tool search_trains'],
      ],
    );
    const [root, chat, tool] = spans;
    assert.equal(chat!.parentSpanId, root!.spanId);
    assert.deepEqual([chat!.model, chat!.inputTokens, chat!.outputTokens, chat!.endUs - chat!.startUs], ['gpt-4.1', 812, 64, 1_200_000]);
    assert.deepEqual([tool!.status, tool!.error, tool!.toolName], ['error', 'timetable service timed out', 'search_trains']);
    assert.equal(root!.service, 'support-bot');
    assert.equal(store.spansOfTurn({ sessionId: SESSION, branchId: 'main', turnNumber: 1, window: windows.get(1) }).length, 0);
  });

  it('protobuf with gzip: OpenInference spans with session.id in turn 1 read back as that turn', async () => {
    await send(new ProtoExporter({ url: receiver.url, compression: 'gzip' as never }), 'notebook', (tracer) => {
      const t = inTurn(1, 0);
      const root = tracer.startSpan('Agent run', {
        startTime: t,
        attributes: { 'openinference.span.kind': 'AGENT', 'session.id': SESSION },
      });
      const llm = child(tracer, root, 'response', t + 5, {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o-mini',
        'llm.token_count.prompt': 120,
        'llm.token_count.completion': 30,
      });
      llm.end(t + 505);
      const handoff = child(tracer, root, 'Handoff to Booking agent', t + 510, { 'openinference.span.kind': 'TOOL' });
      handoff.end(t + 512);
      root.end(t + 600);
    });
    const spans = store.spansOfTurn({ sessionId: SESSION, branchId: 'main', turnNumber: 1, window: windows.get(1) });
    assert.deepEqual(
      spans.map((s) => s.kind),
      ['agent', 'model', 'handoff'],
    );
    assert.deepEqual([spans[1]!.model, spans[1]!.inputTokens, spans[1]!.outputTokens], ['gpt-4o-mini', 120, 30]);
    assert.equal(spans[0]!.service, 'notebook');
    assert.equal(batches.at(-1)!.status, 200);
  });

  it('spans that name no session are listed as unlinked, with the reason', async () => {
    await send(new JsonExporter({ url: receiver.url }), 'cron-job', (tracer) => {
      tracer.startSpan('chat gpt-4.1', { attributes: { 'gen_ai.operation.name': 'chat' } }).end();
    });
    const unlinked = store.unlinkedTraces();
    assert.equal(unlinked.length, 1);
    assert.match(unlinked[0]!.reason, /names a session/);
    assert.equal(store.spansOfTrace(unlinked[0]!.traceId)[0]!.service, 'cron-job');
  });

  describe('bad requests', () => {
    const post = (body: string | Uint8Array, headers: Record<string, string>, path = '/v1/traces', method = 'POST') =>
      fetch(receiver.url.replace('/v1/traces', path), { method, headers, body: method === 'POST' ? body : undefined });

    it('answers a wrong path 404, a wrong method 405, a wrong content type or encoding 415, each with the reason', async () => {
      assert.equal((await post('{}', { 'content-type': 'application/json' }, '/v1/metrics')).status, 404);
      assert.equal((await post('', {}, '/v1/traces', 'GET')).status, 405);
      const text = await post('hello', { 'content-type': 'text/plain' });
      assert.equal(text.status, 415);
      assert.match(((await text.json()) as { message: string }).message, /application\/json or application\/x-protobuf/);
      assert.equal((await post('{}', { 'content-type': 'application/json', 'content-encoding': 'br' })).status, 415);
    });

    /** A POST with the `Host` header given (fetch sets its own), its status and body. */
    const postWithHost = (url: string, host: string, body: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(url, { method: 'POST', headers: { host, 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject).end(body);
      });

    it('refuses a request addressed to another Host (a DNS-rebinding page) with 421, and stores nothing from it', async () => {
      const before = store.counts();
      const port = receiver.port;
      const one = JSON.stringify({
        resourceSpans: [
          { scopeSpans: [{ spans: [{ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), startTimeUnixNano: '1764666000000000000' }] }] },
        ],
      });
      for (const host of [`attacker.example:${port}`, `attacker.example`, `127.0.0.1:${port + 1}`, `localhost.attacker.example:${port}`]) {
        const res = await postWithHost(receiver.url, host, one);
        assert.equal(res.status, 421, host);
        assert.match(
          (JSON.parse(res.text) as { message: string }).message,
          /answers requests addressed to 127\.0\.0\.1:\d+, localhost:\d+/,
        );
      }
      assert.deepEqual(store.counts(), before);
      assert.equal(batches.at(-1)!.status, 421);
      // A protobuf exporter gets its google.rpc.Status in protobuf: code 7 (PERMISSION_DENIED), then the message.
      const proto = await new Promise<{ status: number; type: string | undefined; body: Buffer }>((resolve, reject) => {
        const req = request(
          receiver.url,
          { method: 'POST', headers: { host: 'attacker.example', 'content-type': 'application/x-protobuf' } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: Buffer.concat(chunks) }));
          },
        );
        req.on('error', reject).end(Buffer.alloc(0));
      });
      assert.deepEqual([proto.status, proto.type, proto.body[0], proto.body[1]], [421, 'application/x-protobuf', 0x08, 7]);
      // Its own names on its own port are answered.
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST.:${port}`])
        assert.equal((await postWithHost(receiver.url, host, '{"resourceSpans":[]}')).status, 200, host);
    });

    it('answers, on every interface, IP addresses and loopback names but no DNS name unless allowed', () => {
      const wild = { host: '0.0.0.0', port: 4318 };
      assert.ok(hostHeaderAllowed('192.168.1.20:4318', wild));
      assert.ok(hostHeaderAllowed('[fe80::1]:4318', { host: '::', port: 4318 }));
      assert.ok(hostHeaderAllowed('localhost:4318', wild));
      assert.ok(!hostHeaderAllowed('rebound.example:4318', wild));
      assert.ok(hostHeaderAllowed('buildbox.lan:4318', wild, ['buildbox.lan']));
      assert.ok(hostHeaderAllowed('10.0.0.5:4318', { host: '10.0.0.5', port: 4318 }));
      assert.ok(!hostHeaderAllowed('localhost:4318', { host: '10.0.0.5', port: 4318 }));
      assert.ok(!hostHeaderAllowed('10.0.0.5', { host: '10.0.0.5', port: 4318 }), 'no port is port 80');
      assert.ok(!hostHeaderAllowed('[::1]:4318', { host: '127.0.0.1', port: 4319 }));
      assert.ok(hostHeaderAllowed('[::1]:4318', { host: '127.0.0.1', port: 4318 }));
      assert.ok(!hostHeaderAllowed(undefined, { host: '127.0.0.1', port: 4318 }), 'no Host header (HTTP/1.0)');
    });

    it('answers a body that parses but is not OTLP 400 with the reason, and stores nothing', async () => {
      const before = store.counts();
      for (const body of ['{"resourceSpans":"x"}', '{"resourceSpans":[{"scopeSpans":{}}]}', '{"resourceMetrics":[]}', '[]']) {
        const res = await post(body, { 'content-type': 'application/json' });
        assert.equal(res.status, 400, body);
        assert.match(((await res.json()) as { message: string }).message, /not an OTLP trace export/, body);
      }
      assert.deepEqual(store.counts(), before);
    });

    it('answers malformed bodies 400 (JSON, gzip, protobuf) and stores nothing from them', async () => {
      const before = store.counts();
      const bad = await post('{"resourceSpans": [', { 'content-type': 'application/json' });
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as { message: string }).message, /not valid JSON/);
      assert.equal((await post('not gzip', { 'content-type': 'application/json', 'content-encoding': 'gzip' })).status, 400);
      assert.equal((await post(new Uint8Array([0x0a, 0x7f, 0x01]), { 'content-type': 'application/x-protobuf' })).status, 400);
      assert.deepEqual(store.counts(), before);
    });

    it('keeps the valid spans of a request and reports the rest as a partial success', async () => {
      const body = {
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: 'a'.repeat(32),
                    spanId: 'b'.repeat(16),
                    name: 'ok',
                    startTimeUnixNano: '1764666000000000000',
                    endTimeUnixNano: '1764666000000000000',
                  },
                  { traceId: 'a'.repeat(32), spanId: 'nope', name: 'bad', startTimeUnixNano: '1764666000000000000' },
                ],
              },
            ],
          },
        ],
      };
      const res = await post(gzipSync(JSON.stringify(body)), { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      assert.equal(res.status, 200);
      const answer = (await res.json()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
      assert.equal(answer.partialSuccess.rejectedSpans, '1');
      assert.match(answer.partialSuccess.errorMessage, /spanId/);
      assert.equal(store.spansOfTrace('a'.repeat(32)).length, 1);
    });

    it('refuses an oversized body 413, even when it only grows that big when decompressed', async () => {
      const small = await OtlpReceiver.start({ port: 0, ingest: NOTHING, maxBodyBytes: 64 * 1024 });
      try {
        const huge = JSON.stringify({ resourceSpans: [], pad: 'x'.repeat(200_000) });
        const res = await fetch(small.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body: gzipSync(huge),
        });
        assert.equal(res.status, 413);
        assert.match(((await res.json()) as { message: string }).message, /over 0\.06 MiB/);
      } finally {
        await small.close();
      }
    });

    it('refuses a body that decompresses to millions of empty spans 413, before building them', async () => {
      // 32 KB on the wire, 32 MiB of `{},` decompressed: 11 million objects, 1.1 GB, 8 s to read, before the bound.
      const bomb = gzipSync(`{"resourceSpans":[{"scopeSpans":[{"spans":[${'{},'.repeat(11_000_000)}{}]}]}]}`);
      const started = Date.now();
      const res = await post(bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      assert.equal(res.status, 413);
      assert.match(((await res.json()) as { message: string }).message, /more than 4,000,000 values .* export in smaller batches/);
      assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
      assert.equal(batches.at(-1)!.status, 413);
    });

    it('takes a JSON body that starts with a UTF-8 byte order mark', async () => {
      const body = JSON.stringify({
        resourceSpans: [
          { scopeSpans: [{ spans: [{ traceId: 'b'.repeat(32), spanId: 'f'.repeat(16), startTimeUnixNano: '1764666000000000000' }] }] },
        ],
      });
      const res = await post(`\ufeff${body}`, { 'content-type': 'application/json' });
      assert.equal(res.status, 200);
      assert.equal(store.spansOfTrace('b'.repeat(32)).length, 1);
    });

    it('answers 408 and closes the connection when headers or a body trickle in past the deadline, freeing its place', async () => {
      const slow = await OtlpReceiver.start({ port: 0, ingest: NOTHING, maxInFlight: 1, requestTimeoutMs: 300 });
      const port = slow.port;
      /** A connection that sends `start`, then `more` every 100 ms: what it was answered, and when it was closed. */
      const trickle = (start: string, more: string) =>
        new Promise<{ answer: string; ms: number }>((resolve) => {
          const began = Date.now();
          const socket = connect(port, '127.0.0.1');
          let answer = '';
          const timer = setInterval(() => socket.writable && socket.write(more), 100);
          const done = () => {
            clearInterval(timer);
            socket.destroy();
            resolve({ answer, ms: Date.now() - began });
          };
          socket.on('data', (d: Buffer) => (answer += d.toString()));
          socket.on('close', done);
          socket.on('error', () => {});
          // Where there is no deadline, give up after 3 s and say so.
          setTimeout(done, 3000);
          socket.write(start);
        });
      try {
        const headers = `POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n`;
        // The body: it holds the receiver's one place (maxInFlight 1) while it trickles.
        const body = trickle(`${headers}Content-Length: 100000\r\n\r\n{`, ' ');
        await new Promise((r) => setTimeout(r, 100));
        assert.equal((await fetch(slow.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 503);
        const cut = await body;
        assert.match(
          cut.answer,
          /^HTTP\/1\.1 408 .*connection: close.*"code":4,"message":"The body did not arrive within 0\.3 s of the headers; the connection is closed\."/is,
        );
        assert.ok(cut.ms < 2000, `closed after ${cut.ms} ms`);
        assert.equal(
          (await fetch(slow.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceSpans":[]}' })).status,
          200,
          'the place is free again',
        );
        // Headers that never end: Node's own 408.
        const headersOnly = await trickle(headers, 'X-Padding: 1\r\n');
        assert.match(headersOnly.answer, /^HTTP\/1\.1 408 /);
        assert.ok(headersOnly.ms < 2000, `closed after ${headersOnly.ms} ms`);
      } finally {
        await slow.close();
      }
    });

    it('answers 503 with Retry-After while earlier requests are still being stored', async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const slow = await OtlpReceiver.start({ port: 0, ingest: async () => (await held, NOTHING()), maxInFlight: 1 });
      try {
        const first = fetch(slow.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceSpans":[]}' });
        await new Promise((r) => setTimeout(r, 100));
        const second = await fetch(slow.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"resourceSpans":[]}',
        });
        assert.equal(second.status, 503);
        assert.equal(second.headers.get('retry-after'), '1');
        release();
        assert.equal((await first).status, 200);
      } finally {
        await slow.close();
      }
    });

    it('answers 503 with Retry-After while the store is locked by another writer, and takes the spans once it is free', async () => {
      // Another process writing the trace store (the CLI's receiver beside the extension's, a long prune) holds its lock.
      const path = join(tmp.dir, 'locked-traces.db');
      const locked = TraceStore.open(path, { busyTimeoutMs: 50 });
      const holder = openDatabase(path);
      const busy = await OtlpReceiver.start({ port: 0, ingest: (body, format) => locked.ingestOtlp(body, format) });
      const body = JSON.stringify({
        resourceSpans: [
          { scopeSpans: [{ spans: [{ traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), startTimeUnixNano: '1764666000000000000' }] }] },
        ],
      });
      const send = () => fetch(busy.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      try {
        holder.exec('BEGIN IMMEDIATE');
        const refused = await send();
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get('retry-after'), '5');
        const answer = (await refused.json()) as { code: number; message: string };
        assert.equal(answer.code, 14, 'google.rpc UNAVAILABLE: the exporter retries');
        assert.match(answer.message, /could not be stored: .*locked|busy/i);
        holder.exec('ROLLBACK');
        assert.equal(locked.spansOfTrace('f'.repeat(32)).length, 0);
        assert.equal((await send()).status, 200);
        assert.equal(locked.spansOfTrace('f'.repeat(32)).length, 1);
      } finally {
        await busy.close();
        holder.close();
        locked.close();
      }
    });

    it('names a setting that exists when the port is taken', async () => {
      const blocker = createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
      const port = (blocker.address() as { port: number }).port;
      const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as {
        contributes: { configuration: { properties: Record<string, unknown> } };
      };
      try {
        const err = await OtlpReceiver.start({ port, ingest: NOTHING }).then(
          () => assert.fail('started on a taken port'),
          (e: unknown) => e as Error,
        );
        const named = [...err.message.matchAll(/agentSessions\.[\w.]*\w/g)].map((m) => m[0]);
        assert.deepEqual(named, ['agentSessions.traces.receiver.port']);
        for (const name of named) assert.ok(name in manifest.contributes.configuration.properties, `${name} is a setting`);
      } finally {
        blocker.close();
      }
    });

    it('says which port is taken and what to do, instead of starting', async () => {
      const blocker = createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
      const port = (blocker.address() as { port: number }).port;
      try {
        await assert.rejects(
          OtlpReceiver.start({ port, ingest: NOTHING }),
          (e: unknown) =>
            e instanceof OtlpReceiverError && e.problem === 'port-in-use' && /Port \d+ on 127\.0\.0\.1 is taken/.test(e.message),
        );
      } finally {
        blocker.close();
      }
    });
  });
});
