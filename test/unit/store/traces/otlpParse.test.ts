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
