/**
 * Differential tests (issue 11, item 3): each scenario runs the real `@openai/agents` runner with a scripted
 * in-process model, once on the SDK's `MemorySession` and once on `AdvancedSQLiteSession`; after every run the two
 * sessions' items (in the stored Responses shape) must be equal, the runs must end the same way and the model must have
 * been sent the same input, and our turn/branch/usage metadata must be coherent (test/support/differentialHarness.ts).
 * Runs on better-sqlite3 under `npx mocha`, and on node:sqlite through scripts/runStoreSuites.mjs.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Agent,
  MemorySession,
  OpenAIResponsesCompactionSession,
  handoff,
  run,
  setTracingDisabled,
  type AgentInputItem,
  type InputGuardrail,
  type OutputGuardrail,
} from '@openai/agents';
import type OpenAI from 'openai';
import { describeDriverChoice, type AdvancedSQLiteSession, type TurnUsageRow } from '../../../../src/store';
import { runSupportScript } from '../../../support/childProcess';
import { approvalAgent, assistantAgent } from '../../../support/differentialAgents';
import { differential, describeError, storedShape, type Side } from '../../../support/differentialHarness';
import { DifferentialModel, callTools, compactThen, say, think } from '../../../support/differentialModel';

type Json = Record<string, unknown>;

const driver = describeDriverChoice().driver;

/** Creates branch `side` from turn `fromTurn` on the SQLite side, runs one turn on it, and switches back to main. */
async function makeSideBranch(side: Side, fromTurn: number): Promise<void> {
  const s = side.sqlite as AdvancedSQLiteSession;
  const id = await s.createBranchFromTurn(fromTurn, 'side');
  assert.equal(id, 'side');
  // A model of its own (not compared: MemorySession has no branches).
  const result = await run(assistantAgent(new DifferentialModel([say('side answer')], 'side')), 'a side question', { session: s });
  await side.storeUsage(result.state);
  await s.switchToBranch('main');
}

/** Everything of branch `side` a compaction on main must leave alone. */
async function sideBranchState(s: AdvancedSQLiteSession): Promise<unknown> {
  return {
    stored: await s.getStoredItems(undefined, 'side'),
    usage: ((await s.getTurnUsage(null, 'side')) as TurnUsageRow[]).map((r) => ({ ...r })),
    turns: (await s.getConversationTurns('side')).map((t) => ({ turn: t.turn, content: t.content })),
    branch: (await s.listBranches())
      .filter((b) => b.branchId === 'side')
      .map((b) => ({ messageCount: b.messageCount, userTurns: b.userTurns })),
  };
}

/** A stand-in for `client.responses.compact`: keeps the user messages of the input and adds one compaction item. */
function fakeCompactionClient(side: Side): OpenAI {
  let calls = 0;
  const textOf = (content: unknown): string =>
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((p) => String((p as { text?: unknown }).text ?? '')).join('')
        : '';
  return {
    responses: {
      compact: async (request: { model: string; input?: Json[]; previous_response_id?: string }) => {
        calls++;
        side.extra.push({ compactRequest: calls, model: request.model, input: request.input ?? null });
        const users = (request.input ?? []).filter((i) => i.role === 'user');
        return {
          output: [
            ...users.map((u) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: textOf(u.content) }] })),
            { type: 'compaction', encrypted_content: `compacted-${calls}` },
          ],
          usage: {
            input_tokens: 100 * calls,
            output_tokens: 10,
            total_tokens: 100 * calls + 10,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens_details: { reasoning_tokens: 0 },
          },
        };
      },
    },
  } as unknown as OpenAI;
}

describe(`differential: MemorySession vs AdvancedSQLiteSession through the runner (${driver})`, function () {
  this.timeout(60_000);
  // Runs here are offline; without this the SDK's tracing exporter complains about the missing key on every run.
  before(() => setTracingDisabled(true));

  it('plain turns', async () => {
    await differential(async (side) => {
      const agent = assistantAgent(side.model([say('Hello!'), say('Paris.'), say('About 2.1 million.')]));
      await side.run('turn 1', agent, 'Hi');
      await side.run('turn 2', agent, 'Capital of France?');
      await side.run('turn 3', agent, [{ role: 'user', content: [{ type: 'input_text', text: 'Population?' }] }]);
    });
  });

  it('one tool call', async () => {
    await differential(async (side) => {
      const agent = assistantAgent(
        side.model([
          think('The user wants weather.', callTools(['get_weather', { city: 'Paris' }])),
          say('It is sunny in Paris.'),
          say('You are welcome.'),
        ]),
      );
      await side.run('tool turn', agent, 'Weather in Paris?');
      await side.run('next turn', agent, 'Thanks');
    });
  });

  it('parallel tool calls', async () => {
    await differential(async (side) => {
      const agent = assistantAgent(
        side.model([
          callTools(['get_weather', { city: 'Paris' }], ['get_time', { city: 'Tokyo' }], ['get_weather', { city: 'Oslo' }]),
          say('Paris sunny, Tokyo noon, Oslo sunny.'),
          callTools(['get_time', { city: 'Lima' }]),
          say('Noon in Lima.'),
        ]),
      );
      await side.run('parallel calls', agent, 'Weather in Paris and Oslo, time in Tokyo?');
      await side.run('single call after', agent, 'And the time in Lima?');
    });
  });

  it('handoffs', async () => {
    await differential(async (side) => {
      const replies = [say('Expert here: sunny.'), say('Triage again: bye.')];
      const model = side.model(replies);
      const expert = new Agent({ name: 'Weather expert', instructions: 'You know the weather.', model });
      const triage = new Agent({ name: 'Triage', instructions: 'Route questions.', model, handoffs: [handoff(expert)] });
      replies.unshift(callTools([handoff(expert).toolName, {}]));
      const first = await side.run('handoff', triage, 'Weather please');
      assert.equal(first.result?.lastAgent?.name, 'Weather expert', describeError(first.error));
      await side.run('after handoff', triage, 'Bye');
    });
  });

  it('streaming', async () => {
    await differential(async (side) => {
      const agent = assistantAgent(
        side.model([callTools(['get_weather', { city: 'Rome' }]), say('Rome is sunny and warm today.'), say('Yes, take sunglasses.')]),
      );
      const a = await side.stream('streamed tool turn', agent, 'Weather in Rome?');
      assert.equal(a.deltas.join(''), 'Rome is sunny and warm today.');
      await side.stream('streamed text turn', agent, 'Sunglasses?');
    });
  });

  it('cancel mid-stream', async () => {
    await differential(async (side) => {
      const agent = assistantAgent(side.model([say('one two three four five six seven eight'), say('Resumed fine.')], 'm', 20));
      const cancelled = await side.stream('cancelled stream', agent, 'Count to eight', { abortAfterDeltas: 2 });
      assert.ok(cancelled.deltas.length < 8, `the stream was not cut short: ${cancelled.deltas.join('')}`);
      await side.run('turn after cancel', agent, 'Are you there?');
    });
  });

  for (const decision of ['approve', 'reject'] as const) {
    it(`tool approval → ${decision} → resume from a serialized RunState in a new process`, async () => {
      await differential(async (side) => {
        const agent = approvalAgent(side.model([callTools(['delete_file', { path: '/tmp/old.log' }])]));
        const first = await side.run('interrupted', agent, 'Delete /tmp/old.log');
        assert.ok(first.result, describeError(first.error));
        assert.equal(first.result.interruptions.length, 1);
        writeFileSync(join(side.dir, 'state.txt'), first.result.state.toString());
        if (side.memory) writeFileSync(join(side.dir, 'items.json'), JSON.stringify(await side.memory.getItems()));

        const child = runSupportScript('resumeApprovalChild.ts', [side.kind, side.dir, decision, await side.base.getSessionId()], 45_000);
        const done = await child.done;
        assert.equal(done.code, 0, `child failed (${side.kind}): ${done.stderr}`);
        const summary = JSON.parse(done.stdout) as {
          pending: number;
          finalOutput: unknown;
          interruptions: number;
          usage: { requests: number; inputTokens: number; outputTokens: number; totalTokens: number };
          modelInputs: AgentInputItem[][];
        };
        assert.equal(summary.pending, 1);
        side.childModelInputs.push(...summary.modelInputs);
        if (side.memory) {
          const items = JSON.parse(readFileSync(join(side.dir, 'items.json'), 'utf8')) as AgentInputItem[];
          await side.memory.clearSession();
          await side.memory.addItems(items);
        }
        if (side.sqlite) {
          // The child stored the resumed run's usage on the latest turn.
          const turns = [...(await side.sqlite.getConversationByTurns()).keys()].filter((t): t is number => t !== null);
          side.recordUsage('main', Math.max(...turns), summary.usage);
        }
        side.notes.push({ label: `resumed (${decision})`, finalOutput: summary.finalOutput, interruptions: summary.interruptions });
        const items = await side.checkpoint(`resumed (${decision})`);
        const output = items.find((i) => i.type === 'function_call_output');
        assert.ok(output, `no function_call_output after the resume: ${JSON.stringify(items)}`);
        if (decision === 'approve') assert.equal(output.output, 'deleted /tmp/old.log');
        else assert.notEqual(output.output, 'deleted /tmp/old.log');
        // The conversation goes on in this process.
        await side.run('turn after resume', approvalAgent(side.model([say('Anything else?')], 'after')), 'Thanks');
      });
    });
  }

  it('input guardrail tripwire', async () => {
    const guardrail: InputGuardrail = {
      name: 'no_forbidden_words',
      runInParallel: false,
      execute: async ({ input }) => ({ tripwireTriggered: JSON.stringify(input).includes('forbidden'), outputInfo: { checked: true } }),
    };
    await differential(async (side) => {
      const agent = assistantAgent(side.model([say('Fine.'), say('Still fine.')]), { inputGuardrails: [guardrail] });
      await side.run('allowed', agent, 'Hello');
      const blocked = await side.run('tripped', agent, 'Say the forbidden word');
      assert.match(describeError(blocked.error), /InputGuardrailTripwireTriggered/);
      await side.run('allowed again', agent, 'Hello again');
    });
  });

  it('output guardrail tripwire', async () => {
    const guardrail: OutputGuardrail = {
      name: 'no_secrets',
      execute: async ({ agentOutput }) => ({ tripwireTriggered: String(agentOutput).includes('secret'), outputInfo: {} }),
    };
    await differential(async (side) => {
      const agent = assistantAgent(
        side.model([say('Nothing to hide.'), callTools(['get_weather', { city: 'Bern' }]), say('The secret is 42.'), say('Sorry.')]),
        { outputGuardrails: [guardrail] },
      );
      await side.run('passes', agent, 'Hi');
      const blocked = await side.run('tripped', agent, 'Weather in Bern, and the secret?');
      assert.match(describeError(blocked.error), /OutputGuardrailTripwireTriggered/);
      await side.run('after the trip', agent, 'Just apologise');
    });
  });

  it('max turns exceeded', async () => {
    await differential(async (side) => {
      const agent = assistantAgent(
        side.model([callTools(['get_weather', { city: 'Lyon' }]), callTools(['get_time', { city: 'Lyon' }]), say('Done now.')]),
      );
      const r = await side.run('max turns', agent, 'Weather and time in Lyon?', { maxTurns: 2 });
      assert.match(describeError(r.error), /MaxTurnsExceededError/);
      await side.run('after max turns', agent, 'Summarise');
    });
  });

  it('model error mid-run', async () => {
    await differential(async (side) => {
      const agent = assistantAgent(
        side.model([callTools(['get_weather', { city: 'Nice' }]), { error: 'model exploded' }, say('Back again.')]),
      );
      const r = await side.run('model error', agent, 'Weather in Nice?');
      assert.match(describeError(r.error), /model exploded/);
      await side.run('after the error', agent, 'Retry');
    });
  });

  it('sessionInputCallback', async () => {
    await differential(async (side) => {
      const agent = assistantAgent(side.model([say('One.'), say('Two.'), say('Three.'), say('Four.')]));
      await side.run('turn 1', agent, 'first');
      await side.run('turn 2', agent, 'second');
      await side.run('keep the last item', agent, 'third', {
        sessionInputCallback: (history, newItems) => [...history.slice(-1), ...newItems],
      });
      await side.run('add context', agent, 'fourth', {
        sessionInputCallback: async (history, newItems) => [
          ...history,
          { role: 'user', content: 'context added by the callback' },
          ...newItems,
        ],
      });
    });
  });

  it('limit', async () => {
    await differential(async (side) => {
      const replies = [1, 2, 3].flatMap((n) => [callTools(['get_weather', { city: `City${n}` }]), say(`Answer ${n}.`)]);
      const agent = assistantAgent(side.model([...replies, say('Limited answer.')]));
      for (const n of [1, 2, 3]) await side.run(`tool turn ${n}`, agent, `Weather in City${n}?`);
      const all = await side.base.getItems();
      for (let limit = 0; limit <= all.length + 2; limit++) {
        side.snapshots.push({ label: `getItems(${limit})`, items: storedShape(await side.base.getItems(limit)) });
      }
      // Python's session settings: a bare getItems() on an instance with sessionSettings.limit, and a run on it.
      const limit = 4;
      if (side.sqlite) {
        const limited = side.openAnother({ sessionSettings: { limit } });
        side.snapshots.push({ label: 'sessionSettings.limit', items: storedShape(await limited.getItems()) });
        await side.run('run with a limited history', agent, 'Limited?', { session: limited });
      } else {
        side.snapshots.push({ label: 'sessionSettings.limit', items: storedShape(await side.base.getItems(limit)) });
        await side.run('run with a limited history', agent, 'Limited?', {
          sessionInputCallback: (history, newItems) => [...history.slice(-limit), ...newItems],
        });
      }
      const request = side.models[0]!.requests.at(-1)!;
      assert.equal(request.input.length, limit + 1, 'the last run saw more history than the limit');
    });
  });

  it('compaction through the runner (replaceHistoryWithCompaction) leaves other branches and usage intact', async () => {
    let before: { stored: unknown[] } | undefined;
    await differential(async (side) => {
      const agent = assistantAgent(
        side.model([say('A1.'), callTools(['get_weather', { city: 'Graz' }]), say('A2.'), compactThen(say('Compacted A3.')), say('A4.')]),
      );
      await side.run('turn 1', agent, 'Q1');
      await side.run('turn 2', agent, 'Q2');
      if (side.sqlite) {
        await makeSideBranch(side, 2);
        before = (await sideBranchState(side.sqlite)) as { stored: unknown[] };
      }
      const compacted = await side.run('compacting turn', agent, 'Q3');
      assert.ok(compacted.result, describeError(compacted.error));
      const items = await side.base.getItems();
      assert.equal(items[0]?.type, 'compaction', `history does not start with the compaction item: ${JSON.stringify(items)}`);
      await side.run('turn after compaction', agent, 'Q4');
      if (side.sqlite) {
        assert.deepStrictEqual(await sideBranchState(side.sqlite), before, 'the compaction changed branch side');
        await side.sqlite.switchToBranch('side');
        await side.checkpoint('branch side after the compaction (sqlite only)');
        side.snapshots.pop();
        await side.sqlite.switchToBranch('main');
      }
    });
    assert.ok(before && before.stored.length > 0, 'branch side was never built');
  });

  it('compaction through OpenAIResponsesCompactionSession on currentBranchSession() leaves other branches and usage intact', async () => {
    let before: unknown;
    await differential(async (side) => {
      const agent = assistantAgent(
        side.model([say('B1.'), callTools(['get_weather', { city: 'Kyiv' }]), say('B2.'), say('B3.'), say('B4.')]),
      );
      await side.run('turn 1', agent, 'Q1');
      await side.run('turn 2', agent, 'Q2');
      if (side.sqlite) {
        await makeSideBranch(side, 2);
        before = await sideBranchState(side.sqlite);
      }
      const wrapper = new OpenAIResponsesCompactionSession({
        client: fakeCompactionClient(side),
        underlyingSession: side.branchSession,
        model: 'gpt-4.1',
        compactionMode: 'input',
        shouldTriggerCompaction: ({ compactionCandidateItems }) => compactionCandidateItems.length >= 5,
      });
      await side.run('turn 3 through the wrapper', agent, 'Q3', { session: wrapper });
      assert.ok(side.extra.length > 0, 'the wrapper never compacted');
      const items = await side.base.getItems();
      assert.ok(
        items.some((i) => i.type === 'compaction'),
        `no compaction item in the history: ${JSON.stringify(items)}`,
      );
      await side.run('turn 4 through the wrapper', agent, 'Q4', { session: wrapper });
      if (side.sqlite) assert.deepStrictEqual(await sideBranchState(side.sqlite), before, 'the wrapper changed branch side');
      // The wrapper's own clearSession goes to the branch view: it empties main only.
      await wrapper.clearSession();
      await side.checkpoint('wrapper.clearSession()');
      if (side.sqlite) {
        assert.deepStrictEqual(await sideBranchState(side.sqlite), before, "the wrapper's clearSession changed branch side");
        assert.deepStrictEqual(
          (await side.sqlite.listBranches()).map((b) => b.branchId),
          ['side'],
          'listBranches after clearing main through the wrapper (a branch without items is not listed)',
        );
        assert.equal(side.sqlite.getCurrentBranchId(), 'main');
      }
    });
  });

  it('prepareHistoryItemsForPersistenceComparison works item by item (the runner compares prepared slices with the prepared whole)', async () => {
    // sessionPersistence.promotePreparedSessionWrite checks prepare([...stored, ...append]) against
    // [...prepare(stored), ...prepare(append)]; a resumed approval appends a tool output whose call is already stored.
    const { sqlite } = await differential(async (side) => {
      const stored = [
        { type: 'message', role: 'user', content: 'Delete /tmp/old.log' },
        {
          type: 'function_call',
          id: 'fc_1',
          callId: 'call_1',
          name: 'delete_file',
          arguments: '{"path":"/tmp/old.log"}',
          status: 'completed',
        },
      ] as AgentInputItem[];
      const append = [
        {
          type: 'function_call_result',
          callId: 'call_1',
          name: 'delete_file',
          status: 'completed',
          output: { type: 'text', text: 'deleted' },
        },
        { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.' }] },
      ] as AgentInputItem[];
      await side.base.addItems(stored);
      await side.base.addItems(append);
      await side.checkpoint('stored in two writes');
      if (side.sqlite) {
        const prepare = (items: AgentInputItem[]) => side.sqlite!.prepareHistoryItemsForPersistenceComparison(structuredClone(items));
        assert.deepStrictEqual(prepare([...stored, ...append]), [...prepare(stored), ...prepare(append)]);
        // And what the session reads back compares equal to what was written.
        assert.deepStrictEqual(prepare(await side.sqlite.getItems()), prepare([...stored, ...append]));
      }
    });
    assert.equal(sqlite.snapshots.length, 1);
  });

  it('history capabilities called directly: mutations, transactions, idempotency across instances', async () => {
    const call = (callId: string, args: string): AgentInputItem =>
      ({ type: 'function_call', callId, name: 'get_weather', arguments: args, status: 'completed' }) as AgentInputItem;
    const output = (callId: string, text: string): AgentInputItem =>
      ({
        type: 'function_call_result',
        callId,
        name: 'get_weather',
        status: 'completed',
        output: { type: 'text', text },
      }) as AgentInputItem;
    const user = (text: string): AgentInputItem => ({ type: 'message', role: 'user', content: text }) as AgentInputItem;
    await differential(async (side) => {
      type Capable = Required<Pick<MemorySession, 'applyHistoryMutations' | 'applyHistoryTransaction'>>;
      const s = side.base as unknown as Capable;
      await side.base.addItems([user('q1'), call('c1', '{"city":"A"}'), output('c1', 'sunny'), user('q2')]);
      await side.checkpoint('seeded');
      await s.applyHistoryMutations({
        mutations: [{ type: 'replace_function_call', callId: 'c1', replacement: call('c1', '{"city":"B"}') as never }],
      });
      await side.checkpoint('replace_function_call');
      const append = { type: 'append_items' as const, items: [call('c2', '{}'), output('c2', 'rain')] };
      await s.applyHistoryTransaction({ operationId: 'op-append', transaction: append });
      await side.checkpoint('append_items');
      // A retry of the same operation is a no-op: on SQLite from another instance (another process would do the same).
      const retrier = (side.sqlite ? side.openAnother() : side.base) as unknown as Capable;
      await s.applyHistoryTransaction({ operationId: 'op-append', transaction: structuredClone(append) });
      await retrier.applyHistoryTransaction({ operationId: 'op-append', transaction: structuredClone(append) });
      await side.checkpoint('append_items retried');
      const attempt = async (label: string, fn: () => Promise<void>) => {
        try {
          await fn();
          side.extra.push({ label, error: null });
        } catch (err) {
          assert.ok(err instanceof Error, `${label}: not an Error: ${String(err)}`);
          side.extra.push({ label, error: err.message });
        }
        await side.checkpoint(label);
      };
      await attempt('same operationId, other transaction', () =>
        retrier.applyHistoryTransaction({ operationId: 'op-append', transaction: { type: 'append_items', items: [user('other')] } }),
      );
      await attempt('suffix mismatch', () =>
        s.applyHistoryTransaction({
          operationId: 'op-suffix-bad',
          transaction: { type: 'replace_suffix', expectedSuffix: [output('c2', 'snow')], replacement: [user('never')] },
        }),
      );
      await attempt('replace_suffix', () =>
        s.applyHistoryTransaction({
          operationId: 'op-suffix',
          transaction: {
            type: 'replace_suffix',
            expectedSuffix: [call('c2', '{}'), output('c2', 'rain')],
            replacement: [call('c2', '{}'), output('c2', 'hail')],
          },
        }),
      );
      await attempt('replace_suffix retried from another instance', () =>
        retrier.applyHistoryTransaction({
          operationId: 'op-suffix',
          transaction: {
            type: 'replace_suffix',
            expectedSuffix: [call('c2', '{}'), output('c2', 'rain')],
            replacement: [call('c2', '{}'), output('c2', 'hail')],
          },
        }),
      );
    });
  });
});
