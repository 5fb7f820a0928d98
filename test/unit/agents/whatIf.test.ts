/**
 * What-if runs below VS Code: the per-model agent cache, a module agent forced onto the picked model, and a stored
 * user message sent again (with its content parts, or edited) on a branch forked before its turn, against the
 * loopback Responses server.
 */
import { strict as assert } from 'node:assert';
import { AgentsByModel, configForModel } from '../../../src/agents/agentCache';
import { createConfiguredAgent, type AgentConfig, type ConfiguredAgent } from '../../../src/agents/agentConfig';
import { runOnBranch } from '../../../src/agents/branchRun';
import { userMessageOf, whatIfInput } from '../../../src/agents/whatIfInput';
import { AdvancedSQLiteSession } from '../../../src/store';
import { lastUserText, startLoopbackOpenAI, type LoopbackOpenAI } from '../../support/loopbackOpenAI';
import { Workspace } from '../../support/sessionHelpers';
import { TEST_KEY, eventLog, readBranch, seedSession, writeAgentModule } from './agentTestKit';

describe('what-if runs (agents)', () => {
  let server: LoopbackOpenAI;
  let ws: Workspace;
  const opened: ConfiguredAgent[] = [];

  before(async () => {
    server = await startLoopbackOpenAI({ script: (r) => ({ kind: 'text', text: `${r.body.model}: ${lastUserText(r.body)}` }) });
  });
  after(async () => server.close());
  beforeEach(() => {
    ws = new Workspace('asi-whatif-');
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((a) => a.close()));
    ws.cleanup();
  });

  const base: AgentConfig = { model: 'configured-model', instructions: 'Be brief.', maxRetries: 0 };

  describe('AgentsByModel', () => {
    /** Builds real agents and notes which models were closed. */
    function builder(closed: string[]): (c: AgentConfig) => Promise<ConfiguredAgent> {
      return async (c) => {
        const agent = await createConfiguredAgent({ ...c, baseUrl: server.baseUrl }, TEST_KEY, { trusted: false });
        const close = agent.close;
        agent.close = async () => {
          closed.push(c.model);
          await close();
        };
        return agent;
      };
    }

    it('builds one agent per model, shared by parallel runs on that model', async () => {
      const cache = new AgentsByModel();
      const closed: string[] = [];
      const build = builder(closed);
      const [a1, a2, b] = await Promise.all([
        cache.get('k', configForModel(base, undefined), build),
        cache.get('k', configForModel(base, 'configured-model'), build),
        cache.get('k', configForModel(base, 'other-model'), build),
      ]);
      assert.equal(a1, a2, 'the configured model, asked for with and without its name: one agent');
      assert.notEqual(a1, b);
      assert.deepEqual(cache.models.sort(), ['configured-model', 'other-model']);
      const outcome = await runOnBranch({ dbPath: ws.path(), sessionId: 's1', createTables: true, agent: b, input: 'hi' });
      assert.equal(outcome.kind, 'run/completed', JSON.stringify(outcome));
      assert.equal(server.requests.at(-1)?.body.model, 'other-model', 'the request names the model the agent was built for');
      await cache.clear();
      assert.deepEqual(closed.sort(), ['configured-model', 'other-model'], 'clear closes every agent');
    });

    it('closes every agent of the old settings when the settings change, and keeps no failed build', async () => {
      const cache = new AgentsByModel();
      const closed: string[] = [];
      const build = builder(closed);
      const old = await cache.get('settings-1', configForModel(base, 'other-model'), build);
      const fresh = await cache.get('settings-2', configForModel(base, 'other-model'), build);
      assert.notEqual(old, fresh);
      await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(closed, ['other-model']);
      assert.deepEqual(cache.models, ['other-model']);
      await assert.rejects(cache.get('settings-2', configForModel(base, 'bad'), () => Promise.reject(new Error('no'))));
      assert.deepEqual(cache.models, ['other-model'], 'the failed build is forgotten, so the next run tries again');
      await cache.clear();
    });
  });

  it('runs a module agent on the picked model, even when the module names its own', async () => {
    writeAgentModule(ws.dir, 'named.js', `exports.agent = new Agent({ name: 'Named', instructions: 'x', model: 'module-model' });`);
    const config = { ...base, baseUrl: server.baseUrl, agentModule: 'named.js' };
    for (const [model, expected] of [
      [undefined, 'module-model'],
      ['picked-model', 'picked-model'],
    ] as const) {
      const agent = await createConfiguredAgent(configForModel(config, model), TEST_KEY, { trusted: true, cwd: ws.dir });
      opened.push(agent);
      const outcome = await runOnBranch({ dbPath: ws.path(), sessionId: 's1', createTables: true, agent, input: 'which model?' });
      assert.equal(outcome.kind, 'run/completed', JSON.stringify(outcome));
      assert.equal(server.requests.at(-1)?.body.model, expected);
    }
  });

  describe('the message sent again', () => {
    const image = { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' };
    const structured = {
      id: 'msg_original',
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'What is in this picture?' }, image],
    };

    it('is the stored text, or the edited text', () => {
      assert.equal(whatIfInput({ role: 'user', content: 'Hello there' }), 'Hello there');
      assert.equal(whatIfInput({ role: 'user', content: 'Hello there' }, 'Hi instead'), 'Hi instead');
      assert.equal(userMessageOf([{ role: 'assistant', content: 'x' }, { type: 'function_call' }]), undefined);
    });

    it('keeps content parts: the same parts without the old id, or the edited text in place of the text parts', () => {
      const same = whatIfInput(structured) as unknown as Record<string, unknown>[];
      assert.equal(same.length, 1);
      assert.equal(same[0]?.id, undefined, 'the retry is a new message');
      assert.deepEqual(
        (same[0]?.content as Record<string, unknown>[]).map((p) => p.type),
        ['input_text', 'input_image'],
      );
      const edited = whatIfInput(structured, 'And now?') as unknown as Record<string, unknown>[];
      assert.deepEqual((edited[0]?.content as Record<string, unknown>[])[0], { type: 'input_text', text: 'And now?' });
      assert.equal((edited[0]?.content as unknown[]).length, 2, 'the image stays');
    });

    it('forks before the turn and sends the structured message as it was stored', async () => {
      const dbPath = ws.path();
      await seedSession(dbPath, [['first question', 'first answer']]);
      const writer = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
      await writer.addItems([structured as never, { role: 'assistant', content: [{ type: 'output_text', text: 'A cat.' }] } as never]);
      await writer.addItems([
        { role: 'user', content: 'third' },
        { role: 'assistant', content: [{ type: 'output_text', text: '3' }] },
      ] as never);
      const stored = (await writer.getStoredItems())[2] as Record<string, unknown>;
      writer.close();
      const agent = await createConfiguredAgent({ ...base, baseUrl: server.baseUrl }, TEST_KEY, { trusted: false });
      opened.push(agent);
      const events = eventLog();
      const outcome = await runOnBranch({
        dbPath,
        sessionId: 's1',
        agent,
        input: whatIfInput(stored),
        fork: { fromTurn: 2, name: 'retry-configured-model-1' },
        onEvent: events.onEvent,
      });
      assert.equal(outcome.kind, 'run/completed', JSON.stringify(outcome));
      const started = events.events[0];
      assert.equal(started?.kind === 'run/started' && started.input, 'What is in this picture? [image]');
      const sent = server.requests.at(-1)?.body.input as Record<string, unknown>[];
      assert.deepEqual(sent.at(-1)?.content, structured.content, 'the same parts went to the model');
      const branch = await readBranch(dbPath, 'retry-configured-model-1');
      assert.deepEqual(branch.turns, [1, 2]);
      assert.deepEqual(
        branch.usage.map((u) => u.userTurnNumber),
        [2],
        'the retry stored its usage on its turn',
      );
      const reader = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, readonly: true });
      try {
        const items = (await reader.getStoredItems(undefined, 'retry-configured-model-1')) as Record<string, unknown>[];
        const { id: _id, ...withoutId } = structured;
        assert.deepEqual(items[2], withoutId, 'stored byte for byte as the original, without its id');
      } finally {
        reader.close();
      }
    });
  });
});
