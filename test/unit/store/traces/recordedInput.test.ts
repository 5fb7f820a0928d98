/**
 * A model request's recorded input (docs/context.md, "Recorded input"): read back from every convention a tracer may
 * use (ours and GenAI's `gen_ai.input.messages` as SDK items or `{role, parts}` messages, OpenInference's flattened
 * `llm.input_messages.*` and `input.value`), written within its bound (newest items kept, the cut counted), kept
 * whole through OTLP decoding up to that bound (other values stay at 16 KB), and read by an agent command's SDK spans.
 */
import { strict as assert } from 'node:assert';
import { sdkSpanRecord } from '../../../../src/agents/sdkSpans';
import {
  INPUT_ATTRIBUTES,
  MAX_RECORDED_INPUT_CHARS,
  inputAttributes,
  recordedInputOf,
  type RecordedInput,
} from '../../../../src/store/traces/recordedInput';
import { parseOtlpJson } from '../../../../src/store/traces/otlpRequest';
import { TRACE_LIMITS } from '../../../../src/store/traces/otlpSpans';

const read = (attrs: Record<string, unknown>): RecordedInput => {
  const r = recordedInputOf(attrs as never);
  assert.ok(r !== null && r !== 'unreadable', JSON.stringify(r));
  return r;
};

/** One OTLP/JSON request holding one span with string attributes. */
function otlpWith(attrs: Record<string, string>): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: 'ab'.repeat(16),
                spanId: 'cd'.repeat(8),
                name: 'chat gpt-4o',
                startTimeUnixNano: '1764685200000000000',
                endTimeUnixNano: '1764685201000000000',
                attributes: Object.entries(attrs).map(([key, v]) => ({ key, value: { stringValue: v } })),
              },
            ],
          },
        ],
      },
    ],
  });
}

describe('recorded model input', () => {
  it('reads our attributes: the SDK items, the instructions and the tools as written', () => {
    const items = [
      { role: 'user', content: 'Hi' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
    ];
    const r = read(inputAttributes(items, 'Be brief.', [{ type: 'function', name: 'f' }]));
    assert.deepEqual(r, { items, instructions: 'Be brief.', tools: [{ type: 'function', name: 'f' }], cut: false });
  });

  it("reads GenAI's {role, parts} messages as SDK items, and its instructions as parts", () => {
    const r = read({
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'text', content: 'Weather?' }] },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'get_weather', arguments: { city: 'Oslo' } }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'cold' }] },
      ]),
      'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'Be brief.' }]),
    });
    assert.deepEqual(r.items, [
      { role: 'user', content: 'Weather?' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'cold' },
    ]);
    assert.equal(r.instructions, 'Be brief.');
  });

  it("reads OpenInference's flattened messages and its input.value (chat messages, Responses input, plain text)", () => {
    const flat = read({
      'llm.input_messages.0.message.role': 'system',
      'llm.input_messages.0.message.content': 'Be brief.',
      'llm.input_messages.1.message.role': 'user',
      'llm.input_messages.1.message.content': 'Weather?',
      'llm.input_messages.2.message.role': 'assistant',
      'llm.input_messages.2.message.tool_calls.0.tool_call.id': 'c1',
      'llm.input_messages.2.message.tool_calls.0.tool_call.function.name': 'get_weather',
      'llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments': '{}',
      'llm.input_messages.3.message.role': 'tool',
      'llm.input_messages.3.message.tool_call_id': 'c1',
      'llm.input_messages.3.message.content': 'cold',
    });
    assert.deepEqual(flat.items, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'cold' },
    ]);
    const responses = read({ 'input.value': JSON.stringify({ instructions: 'Be brief.', input: [{ role: 'user', content: 'Hi' }] }) });
    assert.deepEqual([responses.items, responses.instructions], [[{ role: 'user', content: 'Hi' }], 'Be brief.']);
    assert.deepEqual(read({ 'input.value': 'Just text' }).items, [{ role: 'user', content: 'Just text' }]);
    assert.equal(recordedInputOf({}), null, 'a span without an input');
    assert.equal(recordedInputOf({ 'gen_ai.input.messages': '[{"role": "user", "cont… (12 more characters cut)' }), 'unreadable');
  });

  it("reads the JS SDK's own protocol items (a response span's _input) as the API's shape, the stored items' shape", () => {
    const jsItems = [
      { type: 'message', role: 'user', content: 'Weather in Oslo?' },
      { type: 'function_call', callId: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' },
      { type: 'function_call_result', callId: 'call_1', name: 'get_weather', status: 'completed', output: { type: 'text', text: 'Rain' } },
    ];
    const read = recordedInputOf(inputAttributes(jsItems));
    assert.ok(read && read !== 'unreadable');
    assert.deepEqual(
      read.items.map((i) => {
        const r = i as Record<string, unknown>;
        return [r.type, r.call_id ?? null, r.output ?? null];
      }),
      [
        ['message', null, null],
        ['function_call', 'call_1', null],
        ['function_call_output', 'call_1', 'Rain'],
      ],
    );
  });

  it('cuts an input past 1 MB to its newest items and says how many were cut', () => {
    const item = (i: number) => ({ role: 'user', content: `${i} ${'x'.repeat(10_000)}` });
    const items = Array.from({ length: 150 }, (_, i) => item(i));
    const attrs = inputAttributes(items, 'Be brief.', []);
    const json = attrs[INPUT_ATTRIBUTES.messages] as string;
    assert.ok(json.length <= MAX_RECORDED_INPUT_CHARS, `${json.length}`);
    const r = read(attrs);
    assert.ok(r.cut);
    const cut = attrs[INPUT_ATTRIBUTES.cutItems] as number;
    assert.equal(r.items.length + cut, 150);
    assert.deepEqual(r.items[r.items.length - 1], item(149), 'the newest item is kept');
    assert.deepEqual(r.items[0], item(cut), 'the items kept follow on from the cut');
  });

  it('keeps a recorded input through OTLP decoding up to its own bound, while other values stay cut at 16 KB', () => {
    const messages = JSON.stringify([{ role: 'user', content: 'y'.repeat(100_000) }]);
    const other = 'z'.repeat(100_000);
    const span = parseOtlpJson(otlpWith({ 'gen_ai.input.messages': messages, 'app.note': other })).spans[0]!;
    assert.equal(span.attributes['gen_ai.input.messages'], messages);
    assert.ok(String(span.attributes['app.note']).length < TRACE_LIMITS.maxStringLength + 100);
    assert.equal(read(span.attributes).items.length, 1);
    const huge = JSON.stringify([{ role: 'user', content: 'y'.repeat(MAX_RECORDED_INPUT_CHARS) }]);
    const cut = parseOtlpJson(otlpWith({ 'gen_ai.input.messages': huge })).spans[0]!;
    assert.ok(cut.truncated);
    assert.equal(recordedInputOf(cut.attributes, cut.truncated), 'unreadable', 'a cut JSON value is reported, not misread');
  });

  it("reads the input an agent command's SDK spans carry (a generation's input, a response's input with its instructions)", () => {
    const link = { sessionId: 's', branchId: 'main', turnNumber: 1 };
    const generation = sdkSpanRecord(
      { id: 'span_1', trace_id: 'trace_1', span_data: { type: 'generation', model: 'gpt-4o', input: [{ role: 'user', content: 'Hi' }] } },
      link,
      'command',
    );
    assert.deepEqual(read(generation.attributes).items, [{ role: 'user', content: 'Hi' }]);
    const response = sdkSpanRecord(
      {
        id: 'span_2',
        trace_id: 'trace_1',
        span_data: {
          type: 'response',
          input: [{ role: 'user', content: 'Hi' }],
          instructions: 'Be brief.',
          tools: [{ type: 'function', name: 'f' }],
        },
      },
      link,
      'command',
    );
    const r = read(response.attributes);
    assert.deepEqual(
      [r.items, r.instructions, r.tools],
      [[{ role: 'user', content: 'Hi' }], 'Be brief.', [{ type: 'function', name: 'f' }]],
    );
    const plain = sdkSpanRecord({ id: 'span_3', trace_id: 'trace_1', span_data: { type: 'response', response_id: 'r1' } }, link);
    assert.equal(recordedInputOf(plain.attributes), null, 'no input, no attribute');
  });
});
