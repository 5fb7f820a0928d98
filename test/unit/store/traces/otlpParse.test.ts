/**
 * OTLP bodies → spans → records: both wire formats, the conventions (ours, GenAI's old and new names, OpenInference),
 * and every bad input: not OTLP, not JSON, truncated protobuf, invalid ids, huge or too many attributes.
 */
import { strict as assert } from 'node:assert';
import { parseOtlpJson, spansFromRequest } from '../../../../src/store/traces/otlpRequest';
import { parseOtlpProtobuf } from '../../../../src/store/traces/otlpProtobuf';
import { TRACE_LIMITS } from '../../../../src/store/traces/otlpSpans';
import { spanRecordOf } from '../../../../src/store/traces/spanConventions';
import { TraceInputError } from '../../../../src/store/traces/traceErrors';
import { turnWindows, SLACK_US } from '../../../../src/store/traces/turnWindows';

const TRACE = '5b8efff798038103d269b633813fc60c';
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number | string) => ({ key, value: { intValue: value } });

function request(spans: unknown[], resource: unknown[] = [str('service.name', 'support-bot')]) {
  return { resourceSpans: [{ resource: { attributes: resource }, scopeSpans: [{ scope: { name: 'test' }, spans }] }] };
}

function span(id: string, attributes: unknown[], extra: Record<string, unknown> = {}) {
  return {
    traceId: TRACE,
    spanId: id,
    name: 'chat gpt-4.1',
    kind: 3,
    startTimeUnixNano: '1764685200000000000',
    endTimeUnixNano: '1764685201500000000',
    attributes,
    ...extra,
  };
}

describe('OTLP bodies → span records', () => {
  it('reads a GenAI model request: model, usage (new and old names), the conversation as the session', () => {
    const batch = parseOtlpJson(
      JSON.stringify(
        request([
          span('eee19b7ec3c1b174', [
            str('gen_ai.operation.name', 'chat'),
            str('gen_ai.request.model', 'gpt-4.1'),
            str('gen_ai.response.model', 'gpt-4.1-2025-04-14'),
            int('gen_ai.usage.input_tokens', '1200'),
            int('gen_ai.usage.output_tokens', 80),
            int('gen_ai.usage.cache_read.input_tokens', 1024),
            int('gen_ai.usage.reasoning.output_tokens', 16),
            str('gen_ai.conversation.id', 'alice'),
          ]),
          span('eee19b7ec3c1b175', [
            str('gen_ai.operation.name', 'chat'),
            int('gen_ai.usage.prompt_tokens', 7),
            int('gen_ai.usage.completion_tokens', 3),
          ]),
        ]),
      ),
    );
    assert.equal(batch.rejected.count, 0);
    const [a, b] = batch.spans.map((s) => spanRecordOf(s, 'otlp'));
    assert.equal(a!.kind, 'model');
    assert.equal(a!.model, 'gpt-4.1-2025-04-14', 'the model that answered, over the one asked for');
    assert.deepEqual([a!.inputTokens, a!.outputTokens, a!.cachedTokens, a!.reasoningTokens], [1200, 80, 1024, 16]);
    assert.deepEqual(a!.link, { sessionId: 'alice' });
    assert.equal(a!.service, 'support-bot');
    assert.equal(a!.startUs, 1764685200000000);
    assert.equal(a!.endUs - a!.startUs, 1_500_000);
    assert.equal(a!.spanKind, 3);
    assert.deepEqual([b!.inputTokens, b!.outputTokens, b!.link], [7, 3, null]);
  });

  it("reads Sentry's GenAI usage names: cached input tokens and reasoning output tokens", () => {
    // As sentry-python's OpenAI integration sets them on a `chat` span (sentry_sdk/consts.py, SPANDATA).
    const [s] = parseOtlpJson(
      JSON.stringify(
        request([
          span('eee19b7ec3c1b176', [
            str('gen_ai.operation.name', 'chat'),
            int('gen_ai.usage.input_tokens', 900),
            int('gen_ai.usage.input_tokens.cached', 512),
            int('gen_ai.usage.output_tokens', 120),
            int('gen_ai.usage.output_tokens.reasoning', 64),
          ]),
        ]),
      ),
    ).spans.map((x) => spanRecordOf(x, 'otlp'));
    assert.deepEqual([s!.inputTokens, s!.cachedTokens, s!.outputTokens, s!.reasoningTokens], [900, 512, 120, 64]);
  });

  it('reads OpenInference spans: kinds, llm.* usage, session.id; a handoff among tools; a failed tool with its exception', () => {
    const oi = (id: string, kind: string, name: string, attrs: unknown[] = [], extra = {}) =>
      span(id, [str('openinference.span.kind', kind), ...attrs], { name, ...extra });
    const records = parseOtlpJson(
      JSON.stringify(
        request([
          oi('0000000000000001', 'AGENT', 'Support agent', [str('session.id', 'bob')]),
          oi('0000000000000002', 'LLM', 'response', [
            str('llm.model_name', 'gpt-4o'),
            int('llm.token_count.prompt', 50),
            int('llm.token_count.completion', 9),
            int('llm.token_count.prompt_details.cache_read', 32),
            int('llm.token_count.completion_details.reasoning', 4),
          ]),
          oi('0000000000000003', 'TOOL', 'Handoff to Billing agent'),
          oi('0000000000000004', 'TOOL', 'get_weather', [str('tool.name', 'get_weather')], {
            status: { code: 2 },
            events: [
              {
                name: 'exception',
                timeUnixNano: '1764685201000000000',
                attributes: [str('exception.message', 'HTTP 503 from weather API')],
              },
            ],
          }),
          oi('0000000000000005', 'GUARDRAIL', 'no_pii'),
          span('0000000000000006', [str('mcp.method.name', 'tools/call')], { name: 'tools/call search' }),
        ]),
      ),
    ).spans.map((s) => spanRecordOf(s, 'otlp'));
    assert.deepEqual(
      records.map((r) => r.kind),
      ['agent', 'model', 'handoff', 'tool', 'guardrail', 'mcp'],
    );
    assert.deepEqual(records[0]!.link, { sessionId: 'bob' });
    assert.deepEqual(
      [records[1]!.model, records[1]!.inputTokens, records[1]!.outputTokens, records[1]!.cachedTokens, records[1]!.reasoningTokens],
      ['gpt-4o', 50, 9, 32, 4],
    );
    assert.equal(records[3]!.status, 'error');
    assert.equal(records[3]!.error, 'HTTP 503 from weather API');
    assert.equal(records[3]!.toolName, 'get_weather');
  });

  it('our own attributes link a span to a branch and a turn, and say its kind', () => {
    const [r] = parseOtlpJson(
      JSON.stringify(
        request([
          span('0000000000000007', [
            str('agent_sessions.session_id', 'alice'),
            str('agent_sessions.branch_id', 'retry'),
            int('agent_sessions.turn_number', 3),
            str('agent_sessions.span.kind', 'handoff'),
          ]),
        ]),
      ),
    ).spans.map((s) => spanRecordOf(s, 'extension'));
    assert.deepEqual(r!.link, { sessionId: 'alice', branchId: 'retry', turnNumber: 3 });
    assert.equal(r!.kind, 'handoff');
  });

  it('takes ids as hex or base64, keeps the rest of a request when some spans are invalid, and says why', () => {
    const b64Trace = Buffer.from(TRACE, 'hex').toString('base64');
    const batch = parseOtlpJson(
      JSON.stringify(
        request([
          span('0000000000000008', [], { traceId: b64Trace }),
          span('0000000000000000', []),
          span('abc', []),
          span('0000000000000009', [], { traceId: '00000000000000000000000000000000' }),
          span('000000000000000a', [], { startTimeUnixNano: undefined }),
        ]),
      ),
    );
    assert.equal(batch.spans.length, 1);
    assert.equal(batch.spans[0]!.traceId, TRACE);
    assert.equal(batch.rejected.count, 4);
    assert.ok(
      batch.rejected.reasons.some((r) => /spanId.*\(2 spans\)/.test(r)),
      batch.rejected.reasons.join(' | '),
    );
    assert.ok(batch.rejected.reasons.some((r) => /traceId/.test(r)));
    assert.ok(batch.rejected.reasons.some((r) => /start time/.test(r)));
  });

  it('a span whose end comes before its start (clock skew) lasts no time; an int64 beyond 2^53 keeps every digit', () => {
    const [s] = parseOtlpJson(
      JSON.stringify(
        request([
          span('000000000000000b', [int('big', '9007199254740993'), int('small', '-5')], { endTimeUnixNano: '1764685199000000000' }),
        ]),
      ),
    ).spans;
    assert.equal(s!.endUs, s!.startUs);
    assert.equal(s!.attributes.big, '9007199254740993');
    assert.equal(s!.attributes.small, -5);
  });

  it('cuts a huge attribute and drops attributes beyond the limit, marking the span truncated', () => {
    const many = Array.from({ length: TRACE_LIMITS.maxAttributes + 10 }, (_, i) => int(`a${i}`, i));
    const [s] = parseOtlpJson(JSON.stringify(request([span('000000000000000c', [str('prompt', 'x'.repeat(100_000)), ...many])]))).spans;
    assert.ok(s!.truncated);
    assert.equal(Object.keys(s!.attributes).length, TRACE_LIMITS.maxAttributes);
    assert.ok((s!.attributes.prompt as string).length < 20_000);
    assert.match(s!.attributes.prompt as string, /more characters cut\)$/);
  });

  it('keeps attributes named constructor, toString and __proto__ as own attributes: on spans, events, resources, in maps', () => {
    const odd = [str('constructor', 'c'), str('toString', 't'), { key: '__proto__', value: { kvlistValue: { values: [int('a', 1)] } } }];
    const [s] = parseOtlpJson(
      JSON.stringify(
        request(
          [
            span('000000000000000d', [...odd, { key: 'map', value: { kvlistValue: { values: odd } } }], {
              events: [{ name: 'e', timeUnixNano: '1764685200500000000', attributes: odd }],
            }),
          ],
          odd,
        ),
      ),
    ).spans;
    for (const [where, attrs] of [
      ['span', s!.attributes],
      ['map', s!.attributes.map as Record<string, unknown>],
      ['event', s!.events[0]!.attributes],
      ['resource', s!.resource],
    ] as const) {
      assert.deepEqual(Object.keys(attrs).slice(0, 3), ['constructor', 'toString', '__proto__'], where);
      assert.equal(attrs.constructor, 'c', where);
      assert.equal(attrs.toString, 't', where);
      assert.ok(Object.hasOwn(attrs, '__proto__'), where);
      assert.equal(Object.getPrototypeOf(attrs), Object.prototype, `${where}: __proto__ is a value, not the prototype`);
      assert.equal(JSON.stringify(Object.getOwnPropertyDescriptor(attrs, '__proto__')!.value), '{"a":1}', where);
    }
    assert.equal(s!.truncated, false);
  });

  it('cuts a list longer than 256 items to 256, marking the span truncated', () => {
    const list = (n: number) => ({
      key: `list${n}`,
      value: { arrayValue: { values: Array.from({ length: n }, (_, i) => ({ intValue: i })) } },
    });
    const [whole, cut] = parseOtlpJson(
      JSON.stringify(request([span('000000000000000e', [list(256)]), span('000000000000000f', [list(300)])])),
    ).spans;
    assert.equal((whole!.attributes.list256 as unknown[]).length, 256);
    assert.equal(whole!.truncated, false);
    assert.equal((cut!.attributes.list300 as unknown[]).length, 256);
    assert.equal(cut!.truncated, true, 'a cut list marks its span');
  });

  it('rejects a span timed past 2255 (2^53 µs) as it rejects other invalid spans, keeping one timed at the bound', () => {
    const maxNanos = `${Number.MAX_SAFE_INTEGER}000`;
    const batch = parseOtlpJson(
      JSON.stringify(
        request([
          span('0000000000000010', [], { startTimeUnixNano: 1e22, endTimeUnixNano: 1e22 }),
          span('0000000000000011', [], { endTimeUnixNano: '1'.repeat(25) }),
          span('0000000000000012', [], { endTimeUnixNano: '9'.repeat(2000) }),
          span('0000000000000013', [], { events: [{ name: 'later', timeUnixNano: '18446744073709551615' }] }),
          span('0000000000000014', [], { endTimeUnixNano: maxNanos }),
        ]),
      ),
    );
    assert.deepEqual(
      batch.spans.map((s) => [s.spanId, s.endUs]),
      [['0000000000000014', Number.MAX_SAFE_INTEGER]],
    );
    assert.equal(batch.rejected.count, 4);
    assert.deepEqual(batch.rejected.reasons, [
      'a span timed after 2255-06-05 (a start, end or event time past 2^53 microseconds since 1970) (4 spans)',
    ]);
    assert.doesNotThrow(() => new Date(batch.spans[0]!.endUs / 1000).toISOString());
    // From protobuf: a fixed64 as large as it goes.
    const bytes = (field: number, body: Buffer) => Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
    const fixed64 = (field: number, v: bigint) =>
      Buffer.concat([Buffer.from([(field << 3) | 1]), Buffer.from(new BigUint64Array([v]).buffer)]);
    const spanMsg = Buffer.concat([
      bytes(1, Buffer.from(TRACE, 'hex')),
      bytes(2, Buffer.from('00f067aa0ba902b8', 'hex')),
      fixed64(7, 2n ** 64n - 1n),
    ]);
    const proto = parseOtlpProtobuf(bytes(1, bytes(2, bytes(2, spanMsg))));
    assert.deepEqual([proto.spans.length, proto.rejected.count], [0, 1]);
  });

  it('reads at most 50,000 span entries of a request, kept or rejected, and counts the rest as rejected unread', () => {
    const empty = Array.from({ length: TRACE_LIMITS.maxSpansPerBatch }, () => ({}));
    const batch = spansFromRequest(request([...empty, span('0000000000000015', []), span('0000000000000016', [])]));
    assert.equal(batch.spans.length, 0, 'no span is read past the bound, valid or not');
    assert.equal(batch.rejected.count, TRACE_LIMITS.maxSpansPerBatch + 2);
    assert.deepEqual(batch.rejected.reasons, [
      'a span without a valid traceId (16 bytes, not all zero) (50000 spans)',
      'more than 50000 spans in one request (2 spans)',
    ]);
  });

  it('refuses a body of more than 4,000,000 values (413) before building them, JSON or protobuf', () => {
    const isTooMany = (e: unknown) =>
      e instanceof TraceInputError && e.problem === 'too-large' && e.httpStatus === 413 && /more than 4,000,000 values/.test(e.message);
    // 32 MiB of `{},` inflated from 32 KB of gzip built 11 million objects (1.1 GB): past the bound, none is built.
    const spans = (n: number) => `{"resourceSpans":[{"scopeSpans":[{"spans":[${'{},'.repeat(n - 1)}{}]}]}]}`;
    assert.throws(() => parseOtlpJson(spans(TRACE_LIMITS.maxValues / 2 + 1)), isTooMany);
    // Commas and brackets in strings are text, not values.
    const text = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"${',{['.repeat(1_500_000)}\\"]"}]}]}]}`;
    assert.deepEqual(parseOtlpJson(text).rejected.count, 1);
    // Protobuf: two-byte empty ResourceSpans messages, each a message field counting twice.
    const empties = (n: number) => Buffer.alloc(2 * n).fill(Buffer.from([0x0a, 0x00]));
    assert.throws(() => parseOtlpProtobuf(empties(TRACE_LIMITS.maxValues / 2 + 1)), isTooMany);
    assert.deepEqual(parseOtlpProtobuf(empties(1000)).spans, []);
  });

  it('reads JSON that starts with a UTF-8 byte order mark; says what is wrong with JSON that is not, in a sentence', () => {
    const body = JSON.stringify(request([span('0000000000000017', [])]));
    assert.equal(parseOtlpJson(`\ufeff${body}`).spans.length, 1);
    assert.throws(
      () => parseOtlpJson('\ufeff\ufeff{}'),
      (e: unknown) => e instanceof TraceInputError && e.problem === 'malformed',
      'one mark only',
    );
    assert.throws(
      () => parseOtlpJson('{"resourceSpans": ['),
      (e: unknown) => e instanceof TraceInputError && /^The body is not valid JSON: .*[^.]\.$/.test(e.message),
    );
  });

  it('refuses what is not OTLP with a typed error: not JSON, not a trace export', () => {
    assert.throws(
      () => parseOtlpJson('{"resourceSpans": ['),
      (e: unknown) => e instanceof TraceInputError && e.problem === 'malformed' && e.httpStatus === 400,
    );
    assert.throws(
      () => parseOtlpJson('{"resourceMetrics": []}'),
      (e: unknown) => e instanceof TraceInputError && e.problem === 'not-otlp',
    );
    assert.throws(() => spansFromRequest([]), TraceInputError);
  });

  it('refuses JSON with resourceSpans that is not shaped like OTLP, instead of taking nothing silently', () => {
    for (const body of [
      { resourceSpans: 'x' },
      { resourceSpans: {} },
      { resourceSpans: [1] },
      { resourceSpans: [{ scopeSpans: 'x' }] },
      { resourceSpans: [{ scopeSpans: [null] }] },
      { resourceSpans: [{ scopeSpans: [{ spans: { traceId: TRACE } }] }] },
    ])
      assert.throws(
        () => parseOtlpJson(JSON.stringify(body)),
        (e: unknown) =>
          e instanceof TraceInputError && e.problem === 'not-otlp' && e.httpStatus === 400 && /is not|not an object/.test(e.message),
        JSON.stringify(body),
      );
    // An empty export, and levels left out, are OTLP (protobuf's JSON mapping omits empty lists).
    assert.deepEqual(parseOtlpJson('{"resourceSpans":[]}').spans, []);
    assert.deepEqual(parseOtlpJson('{"resourceSpans":[{"resource":{}},{"scopeSpans":[{}]}]}').spans, []);
  });

  it('decodes protobuf, and refuses a truncated body or a field of the wrong wire type', () => {
    // ExportTraceServiceRequest { resource_spans { scope_spans { spans { trace_id, span_id, name, start, end } } } }
    const bytes = (field: number, body: Buffer) => Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
    const fixed64 = (field: number, v: bigint) => {
      const b = Buffer.alloc(9);
      b[0] = (field << 3) | 1;
      b.writeBigUInt64LE(v, 1);
      return b;
    };
    const spanMsg = Buffer.concat([
      bytes(1, Buffer.from(TRACE, 'hex')),
      bytes(2, Buffer.from('00f067aa0ba902b7', 'hex')),
      bytes(5, Buffer.from('execute_tool lookup')),
      fixed64(7, 1764685200000000000n),
      fixed64(8, 1764685200250000000n),
      bytes(9, Buffer.concat([bytes(1, Buffer.from('gen_ai.operation.name')), bytes(2, bytes(1, Buffer.from('execute_tool')))])),
    ]);
    const body = bytes(1, bytes(2, bytes(2, spanMsg)));
    const [s] = parseOtlpProtobuf(body).spans;
    assert.equal(s!.traceId, TRACE);
    assert.equal(s!.spanId, '00f067aa0ba902b7');
    assert.equal(s!.endUs - s!.startUs, 250_000);
    assert.equal(spanRecordOf(s!, 'otlp').kind, 'tool');
    assert.deepEqual(parseOtlpProtobuf(new Uint8Array()).spans, []);
    assert.throws(
      () => parseOtlpProtobuf(body.subarray(0, body.length - 3)),
      (e: unknown) => e instanceof TraceInputError && e.problem === 'malformed',
    );
    // Field 1 of the request as a varint instead of a message.
    assert.throws(() => parseOtlpProtobuf(Buffer.from([0x08, 0x01])), /wire type 0/);
  });
});

describe('turn windows from the session file', () => {
  it('opens each turn a little before its user message and closes it where the next opens; the last is open-ended', () => {
    const w = turnWindows([
      { turn: 2, createdAt: '2026-12-02 10:00:30' },
      { turn: 1, createdAt: '2026-12-02 10:00:00' },
      { turn: 3, createdAt: null },
    ]);
    const t0 = Date.parse('2026-12-02T10:00:00Z') * 1000;
    assert.deepEqual(w.get(1), { startUs: t0 - SLACK_US, endUs: t0 + 30_000_000 - SLACK_US });
    assert.deepEqual(w.get(2), { startUs: t0 + 30_000_000 - SLACK_US, endUs: null });
    assert.equal(w.has(3), false);
  });
});
