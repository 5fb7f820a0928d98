/**
 * The loopback server speaks the Responses API as the openai client parses it: JSON and SSE, text and function
 * calls, usage details, errors, and the tool-pairing check. Also the non-streaming path of @openai/agents.
 */
import { strict as assert } from 'node:assert';
import { Agent, Runner } from '@openai/agents';
import { createOpenAIClient, ClientModelProvider } from '../../../src/agents/agentConfig';
import { startLoopbackOpenAI, type LoopbackOpenAI } from '../../support/loopbackOpenAI';

describe('loopback OpenAI server', () => {
  let server: LoopbackOpenAI;
  beforeEach(async () => {
    server = await startLoopbackOpenAI({
      script: (r) =>
        JSON.stringify(r.body.input).includes('weather')
          ? { kind: 'calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' }, callId: 'call_fixed' }] }
          : { kind: 'text', text: 'Hello there, friend.' },
    });
  });
  afterEach(() => server.close());
  const client = () => createOpenAIClient({ baseUrl: server.baseUrl, maxRetries: 0 }, 'sk-loop');

  it('answers non-streaming requests with a Response the client parses, usage included', async () => {
    const response = await client().responses.create({ model: 'm', input: 'hi' });
    assert.equal(response.status, 'completed');
    assert.equal(response.output_text, 'Hello there, friend.');
    const sent = server.replies[0]!.usage!;
    assert.deepEqual(response.usage, sent);
    assert.equal(server.requests[0]!.authorization, 'Bearer sk-loop');
    assert.equal(server.requests[0]!.stream, false);
  });

  it('streams text as typed events in API order with increasing sequence numbers', async () => {
    const stream = await client().responses.create({ model: 'm', input: 'hi', stream: true });
    const events: { type: string; sequence_number: number }[] = [];
    let text = '';
    for await (const e of stream) {
      events.push({ type: e.type, sequence_number: e.sequence_number });
      if (e.type === 'response.output_text.delta') text += e.delta;
      if (e.type === 'response.completed') assert.deepEqual(e.response.usage, server.replies[0]!.usage);
    }
    assert.equal(text, 'Hello there, friend.');
    const types = [...new Set(events.map((e) => e.type))];
    assert.deepEqual(types, [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
  });

  it('streams function calls with argument deltas that add up', async () => {
    const stream = await client().responses.create({ model: 'm', input: 'weather?', stream: true });
    let args = '';
    let done: unknown;
    let item: unknown;
    for await (const e of stream) {
      if (e.type === 'response.function_call_arguments.delta') args += e.delta;
      if (e.type === 'response.function_call_arguments.done') done = e.arguments;
      if (e.type === 'response.output_item.done') item = e.item;
    }
    assert.equal(args, '{"city":"Paris"}');
    assert.equal(done, args);
    assert.deepEqual(item, {
      id: (item as { id: string }).id,
      type: 'function_call',
      status: 'completed',
      call_id: 'call_fixed',
      name: 'get_weather',
      arguments: args,
    });
  });

  it('rejects input with a call but no output, as the API does, and returns scripted HTTP errors', async () => {
    await assert.rejects(
      client().responses.create({
        model: 'm',
        input: [{ type: 'function_call', call_id: 'c1', name: 'x', arguments: '{}' }],
      }),
      (e: unknown) => (e as { status?: number }).status === 400 && /No tool output found for function call c1/.test((e as Error).message),
    );
    server.setScript(() => ({ kind: 'error', status: 429, message: 'Slow down' }));
    await assert.rejects(client().responses.create({ model: 'm', input: 'x' }), (e: unknown) => (e as { status?: number }).status === 429);
  });

  it('drives the non-streaming path of @openai/agents too', async () => {
    const runner = new Runner({ modelProvider: new ClientModelProvider(client(), 'loop-model'), tracingDisabled: true });
    const result = await runner.run(new Agent({ name: 'a', instructions: 'i' }), 'hi');
    assert.equal(result.finalOutput, 'Hello there, friend.');
    assert.equal(server.requests[0]!.body.model, 'loop-model');
    assert.equal(result.state.usage.totalTokens, server.replies[0]!.usage!.total_tokens);
  });
});
