/**
 * The reconstruction against what the real runner sends (docs/context.md, "Reconstructed"): the JS runner of
 * `@openai/agents` with our `AdvancedSQLiteSession` and a fake model that records each request's input (never an
 * API). A call stored without its output (an approval never given) is dropped with its reasoning and shown outside; a
 * run given `[user, system]` makes one request of both, not two; a usage row that counts other than the items show is
 * noted. And the bounds the runner does not decide: a compaction item older than the history read still starts the
 * window; a turn of more requests than are listed keeps its last ones, numbered, and the tool refuses a number it does
 * not list; a recorded input is matched to the stored items from its end, so a repeated "yes" is not taken for an
 * older one; images and files make the counts approximate.
 */
import { strict as assert } from 'node:assert';
import { Agent, Runner, Usage, tool, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { z } from 'zod';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { buildTurnContext, orphanCalls, requestPrefixes, type ContextSpanSource } from '../../../../src/store/context/turnContext';
import { countedItem } from '../../../../src/store/context/contextItems';
import { contextHeader, outsideLines } from '../../../../src/store/context/contextText';
import { turnContext } from '../../../../src/store/query/turnContextQuery';
import { fileQueryStore } from '../../../../src/store/query/queryStore';
import { QueryError } from '../../../../src/store/query/queryErrors';
import { inputAttributes } from '../../../../src/store/traces/recordedInput';
import type { StoredSpan } from '../../../../src/store/traces/traceStore';
import { spanRecord } from '../../../support/spanRecords';
import { Workspace } from '../../../support/sessionHelpers';

/** A model that answers by a script and keeps every request's input, as the runner built it. */
class RecordingModel implements Model {
  readonly inputs: AgentInputItem[][] = [];
  constructor(private readonly reply: (input: AgentInputItem[]) => ModelResponse['output']) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = typeof request.input === 'string' ? [{ role: 'user', content: request.input } as AgentInputItem] : request.input;
    this.inputs.push(structuredClone(input));
    return {
      usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }),
      output: this.reply(input),
      responseId: `resp_${this.inputs.length}`,
    };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed');
  }
}

let ids = 0;
const call = (name: string, args: unknown) => ({
  type: 'function_call' as const,
  id: `fc_${++ids}`,
  callId: `call_${ids}`,
  name,
  arguments: JSON.stringify(args),
  status: 'completed' as const,
});
const answer = (text: string) => ({
  type: 'message' as const,
  id: `msg_${++ids}`,
  role: 'assistant' as const,
  status: 'completed' as const,
  content: [{ type: 'output_text' as const, text }],
});
const user = (content: string) => ({ role: 'user', content }) as AgentInputItem;
const stored = (text: string) =>
  ({
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  }) as unknown as AgentInputItem;

const lookup = tool({
  name: 'lookup',
  description: 'Look up a fact',
  parameters: z.object({ q: z.string() }),
  execute: async ({ q }) => `fact about ${q}`,
});
const runner = new Runner({ tracingDisabled: true });

/** An item as the view lists it and as the runner sent it, comparable: kind and preview. */
const shown = (items: readonly { kind: string; preview: string }[]): string[] => items.map((i) => `${i.kind}|${i.preview}`);
const sent = (items: readonly unknown[]): string[] =>
  items.map((i) => {
    const c = countedItem(i);
    return `${c.kind}|${c.describe().preview}`;
  });

describe('turn context against the runner (reconstructed) and its bounds', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let db: SessionDatabase | undefined;
  const open = (): SessionDatabase => (db = openSessionDatabase(ws.path(), { readonly: true }));
  const view = (turn: number, over: { limit?: number; model?: string; sessionId?: string } = {}) =>
    buildTurnContext(open(), undefined, { sessionId: over.sessionId ?? 's1', branchId: 'main', turn, ...over });

  beforeEach(() => {
    ws = new Workspace('asi-context-runner-');
  });
  afterEach(() => {
    db?.close();
    db = undefined;
    ws.cleanup();
  });

  it('drops a call stored without its output, and the reasoning before it, as the runner does; shows them outside', async () => {
    const danger = tool({
      name: 'delete_file',
      description: 'Delete a file',
      parameters: z.object({ path: z.string() }),
      needsApproval: true,
      execute: async () => 'deleted',
    });
    const model = new RecordingModel((input) => {
      const last = input[input.length - 1] as { role?: string; content?: unknown };
      if (last.role === 'user' && String(last.content).includes('delete'))
        return [
          { type: 'reasoning', id: `rs_${++ids}`, content: [{ type: 'input_text', text: 'I should delete it' }] } as never,
          call('delete_file', { path: '/tmp/x' }),
        ];
      return [answer('4')];
    });
    const agent = new Agent({ name: 'A', instructions: 'Be helpful.', tools: [danger], model });
    const session = new AdvancedSQLiteSession({ dbPath: ws.path(), sessionId: 's1', createTables: true });
    const first = await runner.run(agent, 'please delete /tmp/x', { session });
    assert.equal(first.interruptions.length, 1, 'the call waits for an approval that never comes');
    await runner.run(agent, 'never mind, what is 2+2?', { session });
    session.close();

    const v = await view(2);
    assert.equal(v.requests.length, 1);
    assert.deepEqual(shown(v.requests[0]!.items), sent(model.inputs[1]!), 'the request holds what the runner sent');
    assert.deepEqual(shown(v.requests[0]!.items), ['user|please delete /tmp/x', 'user|never mind, what is 2+2?']);
    assert.deepEqual(
      v.outside.map((o) => [o.kind, o.reason]),
      [
        ['reasoning', 'not-sent'],
        ['tool-call', 'not-sent'],
      ],
    );
    assert.equal(v.outsideCount, 2);
    assert.match(outsideLines(v).join(''), /not sent \(a call stored without its output/);
  });

  it('keeps a call the run input answers, and reasoning that led elsewhere; reads the JS shape of an output too', () => {
    const reasoning = { type: 'reasoning', summary: [] };
    const fc = (id: string) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
    const history = [
      user('q'),
      reasoning,
      fc('a'),
      reasoning,
      answer('x'),
      fc('b'),
      fc('c'),
      { type: 'function_call_result', callId: 'c' },
    ];
    // a: no output (dropped, with the reasoning before it); b: answered by the run's input; c: by a JS-shaped output.
    assert.deepEqual([...orphanCalls(history, [{ type: 'function_call_output', call_id: 'b', output: '' }])].sort(), [1, 2]);
  });

  it('sends a run input of [user, system] in one request, and notes a usage row that counts otherwise', async () => {
    const model = new RecordingModel((input) =>
      (input[input.length - 1] as { type?: string }).type === 'function_call_result' ? [answer('final')] : [call('lookup', { q: 'x' })],
    );
    const agent = new Agent({ name: 'A', instructions: 'x', tools: [lookup], model });
    const session = new AdvancedSQLiteSession({ dbPath: ws.path(), sessionId: 's1', createTables: true });
    await runner.run(agent, [user('first')], { session });
    const result = await runner.run(agent, [user('second'), { role: 'system', content: 'context B' } as AgentInputItem], { session });
    await session.storeRunUsage(result);
    // Turn 1's row says 1 request where its items show 2 (a row counted otherwise): noted, fewer as well as more.
    await session.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 } } }, { turn: 1 });
    session.close();

    const v = await view(2);
    assert.deepEqual(
      v.requests.map((r) => shown(r.items)),
      model.inputs.slice(2).map(sent),
      'the two requests the runner made, with what each received',
    );
    assert.ok(!v.notes.some((n) => n.code === 'requests-differ'), 'the usage row counts the 2 requests shown');
    const one = await view(1);
    assert.equal(one.requests.length, 2);
    assert.deepEqual(
      one.notes.find((n) => n.code === 'requests-differ'),
      { code: 'requests-differ', usageRequests: 1, shown: 2 },
    );

    const c = (item: unknown) => countedItem(item);
    const out = c({ type: 'function_call_output', call_id: '1', output: 'x' });
    const sys = c({ role: 'system', content: 's' });
    const dev = c({ role: 'developer', content: 'd' });
    const fc = c({ type: 'function_call', call_id: '1', name: 'f', arguments: '{}' });
    assert.deepEqual(requestPrefixes([c(user('q')), sys, dev, fc, out, c(answer('a'))]), [3, 5]);
    assert.deepEqual(requestPrefixes([c(user('q')), c(user('q2'))]), [2], 'a turn with no output yet: one request of its input');
  });

  it('starts the window at a compaction item older than the history read, near or far', async () => {
    const session = new AdvancedSQLiteSession({ dbPath: ws.path(), sessionId: 's1', createTables: true });
    const far = new AdvancedSQLiteSession({ dbPath: ws.path(), sessionId: 's2', createTables: true });
    const turns = (prefix: string, n: number): AgentInputItem[] => {
      const items: AgentInputItem[] = [];
      for (let i = 0; i < n; i++) items.push(user(`${prefix} q ${i}`), stored(`${prefix} a ${i}`));
      return items;
    };
    const compaction = { type: 'compaction', encrypted_content: 'enc:summary' } as unknown as AgentInputItem;
    // s1: 600 items, the compaction item, 1,200 more (more than the 1,000 read), then the turn.
    await session.addItems([...turns('old', 300), compaction, ...turns('new', 600), user('latest')]);
    // s2: the same with 2,400 after it: the items between are counted, not read.
    await far.addItems([...turns('old', 300), compaction, ...turns('new', 1200), user('latest')]);
    session.close();
    far.close();

    const near = await view(901);
    const [r] = near.requests;
    assert.equal(r!.itemCount, 1 + 1200 + 1, 'the compaction item, the items after it and the turn: what the runner sends');
    assert.equal(near.outsideCount, 600);
    assert.deepEqual(
      near.outside.map((o) => o.reason),
      near.outside.map(() => 'compaction'),
    );
    assert.equal(near.outside.length, 200, 'the newest items before it listed');
    assert.equal(near.outside.at(-1)!.preview, 'old a 299');
    assert.ok(near.notes.some((n) => n.code === 'compaction'));

    const farView = await view(1501, { sessionId: 's2' });
    assert.equal(farView.requests[0]!.itemCount, 1 + 2400 + 1);
    assert.equal(farView.outsideCount, 600);
    assert.ok(farView.notes.some((n) => n.code === 'estimated'));
    assert.ok(farView.notes.some((n) => n.code === 'compaction'));
  });

  it('lists the last requests of a turn of more than 50, numbered as made; the tool refuses a number not listed', async () => {
    const session = new AdvancedSQLiteSession({ dbPath: ws.path(), sessionId: 's1', createTables: true });
    const items: AgentInputItem[] = [user('go')];
    for (let k = 1; k < 60; k++)
      items.push(
        {
          type: 'function_call',
          call_id: `c${k}`,
          name: 'lookup',
          arguments: `{"q":"${k}"}`,
          status: 'completed',
        } as unknown as AgentInputItem,
        { type: 'function_call_output', call_id: `c${k}`, output: `fact ${k}` } as unknown as AgentInputItem,
      );
    items.push(stored('done'));
    await session.addItems(items);
    await session.storeRunUsage({ state: { usage: { requests: 60, inputTokens: 600, outputTokens: 60, totalTokens: 660 } } }, { turn: 1 });
    session.close();

    const v = await view(1);
    assert.equal(v.requests.length, 50);
    assert.deepEqual([v.requests[0]!.index, v.requests.at(-1)!.index], [11, 60]);
    assert.equal(v.requests.at(-1)!.itemCount, 1 + 2 * 59, 'the last request, with every output');
    assert.ok(!v.notes.some((n) => n.code === 'requests-differ'), 'the usage row counts the 60 requests there were');
    assert.match(contextHeader(v), /: 60 model requests \(requests 1–10 not listed: only the last 50 are\)/);

    const store = fileQueryStore(open(), 'test');
    const sixty = await turnContext(store, undefined, { session: 's1', turn: 1, request: 60, maxChars: 100_000 });
    assert.match(sixty.text, /Items of request 60, in the order sent:/);
    for (const request of [5, 61])
      await assert.rejects(
        turnContext(store, undefined, { session: 's1', turn: 1, request }),
        (e: unknown) => e instanceof QueryError && e.problem === 'bad-argument' && /11–60/.test(e.message),
      );
  });

  it('matches a recorded input from its end: an older identical "yes" is outside by the limit, not sent', async () => {
    const session = new AdvancedSQLiteSession({ dbPath: ws.path(), sessionId: 's1', createTables: true });
    const history = [user('yes'), stored('First.'), user('Two?'), stored('Second.'), user('Three?'), stored('Third.')];
    await session.addItems([...history, user('yes'), stored('OK.')]);
    session.close();
    // What a runner with a session limit of 2 sent: the last two items and the turn's message.
    const span: StoredSpan = {
      ...spanRecord({
        kind: 'model',
        model: 'gpt-4.1-mini',
        attributes: inputAttributes([history[4], history[5], user('yes')], 'Answer.'),
      }),
      id: 1,
    };
    const traces: ContextSpanSource = { spansOfTurn: () => [span] };
    const v = await buildTurnContext(open(), traces, { sessionId: 's1', branchId: 'main', turn: 4 });
    assert.equal(v.source, 'recorded');
    assert.deepEqual(
      v.requests[0]!.items.map((i) => i.sequence),
      [null, 5, 6, 7],
    );
    assert.deepEqual(
      v.outside.map((o) => [o.sequence, o.reason]),
      [
        [1, 'limit'],
        [2, 'limit'],
        [3, 'limit'],
        [4, 'limit'],
      ],
    );
  });

  it('marks counts approximate when an item holds an image or a file (their tokens are not counted)', async () => {
    const session = new AdvancedSQLiteSession({ dbPath: ws.path(), sessionId: 's1', createTables: true });
    await session.addItems([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in this screenshot?' },
          { type: 'input_image', image: `data:image/png;base64,${'iVBORw0KGgo'.repeat(200)}`, detail: 'high' },
        ],
      } as AgentInputItem,
      stored('A cat.'),
      user('And this?'),
      { type: 'computer_call', call_id: 'cc', action: { type: 'screenshot' }, status: 'completed' } as unknown as AgentInputItem,
      {
        type: 'computer_call_output',
        call_id: 'cc',
        output: { type: 'computer_screenshot', image_url: `data:image/png;base64,${'A'.repeat(40_000)}` },
      } as unknown as AgentInputItem,
      stored('A dog.'),
    ]);
    session.close();
    const one = await view(1, { model: 'gpt-4o' });
    assert.equal(one.approximate, true, 'the image is not counted');
    const two = await view(2, { model: 'gpt-4o' });
    assert.equal(two.approximate, true);
    // Said why, each item once though turn 2's two requests both hold the first turn's image.
    assert.deepEqual(
      one.notes.find((n) => n.code === 'media-uncounted'),
      { code: 'media-uncounted', items: 1 },
    );
    assert.deepEqual(
      two.notes.find((n) => n.code === 'media-uncounted'),
      { code: 'media-uncounted', items: 2 },
    );
    const output = two.requests.at(-1)!.items.find((i) => i.kind === 'tool-output')!;
    assert.ok(output.tokens < 20, `a screenshot is not its data URL's text (${output.tokens} tokens)`);
    const text = new AdvancedSQLiteSession({ dbPath: ws.path(), sessionId: 's2', createTables: true });
    await text.addItems([user('What is in this screenshot?'), stored('A cat.')]);
    text.close();
    assert.equal((await view(1, { model: 'gpt-4o', sessionId: 's2' })).approximate, false, 'text alone is counted exactly');
  });
});
