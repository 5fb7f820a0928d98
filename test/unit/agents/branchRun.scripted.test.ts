/**
 * runOnBranch and the persistence rules with the offline ScriptedModel (no HTTP): the real runner, the real store.
 */
import { strict as assert } from 'node:assert';
import { Agent, Runner, tool, type AgentInputItem } from '@openai/agents';
import { z } from 'zod';
import { AdvancedSQLiteSession } from '../../../src/store';
import { ScriptedModel, type ScriptPolicy } from '../../../src/agents/scriptedModel';
import { createDemoAgent } from '../../../src/agents/demoAgent';
import { runOnBranch, usageView, type RunOnBranchOptions } from '../../../src/agents/branchRun';
import { classify } from '../../../src/agents/runFailures';
import { RecordingSession, firstUnansweredCall, settleRun } from '../../../src/agents/runPersistence';
import type { RunCompletedEvent, RunFailedEvent, RunOutcome } from '../../../src/shared/protocol/runEvents';
import { Workspace, mk, tables } from '../../support/sessionHelpers';
import { assertWellFormed, eventLog, readBranch, seedSession } from './agentTestKit';

describe('runOnBranch with the scripted model', () => {
  let ws: Workspace;
  let dbPath: string;
  beforeEach(async () => {
    ws = new Workspace('asi-scripted-');
    dbPath = ws.path('s.db');
    await seedSession(dbPath, [['Hello', 'Hi! Ask me about the weather.']]);
  });
  afterEach(() => ws.cleanup());

  async function run(options: Partial<RunOnBranchOptions> & { agent: RunOnBranchOptions['agent']; input: string }) {
    const log = eventLog();
    const outcome = await runOnBranch({ dbPath, sessionId: 's1', ...options, onEvent: log.onEvent });
    assertWellFormed(log.events, outcome);
    return { outcome, log };
  }
  const asCompleted = (o: RunOutcome) => {
    assert.equal(o.kind, 'run/completed', JSON.stringify(o));
    return o as RunCompletedEvent;
  };
  const asFailed = (o: RunOutcome, failure: RunFailedEvent['failure']) => {
    assert.equal(o.kind, 'run/failed', JSON.stringify(o));
    assert.equal((o as RunFailedEvent).failure, failure, (o as RunFailedEvent).message);
    return o as RunFailedEvent;
  };

  it('runs the demo agent: tool events, streamed text, one stored turn with the run usage', async () => {
    const { outcome, log } = await run({ agent: createDemoAgent(), input: "What's the weather in Paris?" });
    const done = asCompleted(outcome);
    assert.deepEqual(
      log.kinds().filter((k) => k !== 'text/delta'),
      ['run/started', 'tool/called', 'tool/output', 'item/added', 'run/completed'],
    );
    const called = log.events.find((e) => e.kind === 'tool/called');
    assert.deepEqual(called && { name: called.name, arguments: called.arguments }, { name: 'get_weather', arguments: '{"city":"Paris"}' });
    const out = log.events.find((e) => e.kind === 'tool/output');
    assert.equal(out?.kind === 'tool/output' && out.output, 'Paris: 18°C, light rain');
    assert.equal(log.text(), done.finalOutput);
    assert.match(done.finalOutput, /^Here is what I found: .*Paris: 18°C, light rain/);
    assert.equal(done.usage?.requests, 2);

    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(
      main.byTurns.get(2)?.map((i) => [i.type, i.toolName]),
      [
        ['user', null],
        ['function_call', 'get_weather'],
        ['function_call_output', null],
        ['assistant', null],
      ],
    );
    assert.deepEqual(
      main.usage.map((u) => [u.userTurnNumber, u.requests, u.inputTokens, u.outputTokens, u.totalTokens]),
      [[2, 2, done.usage?.inputTokens, done.usage?.outputTokens, done.usage?.totalTokens]],
    );
    assert.equal(done.written.turn, 2);
    assert.equal(done.written.kept.length, 4);
  });

  it('refuses a second run on the same branch while one is in flight, but runs another branch', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = new Agent({
      name: 'slow',
      instructions: 'x',
      model: new ScriptedModel(() => ({ kind: 'tools', calls: [{ name: 'wait', arguments: {} }] })),
      tools: [tool({ name: 'wait', description: 'w', parameters: z.object({}), execute: async () => (await gate, 'done') })],
    });
    const first = run({ agent: slow, input: 'one', maxTurns: 1 });
    await new Promise((r) => setTimeout(r, 50));
    const second = await run({ agent: createDemoAgent(), input: 'two' });
    const f = asFailed(second.outcome, 'other');
    assert.match(f.message, /already in progress on branch 'main'/);
    const elsewhere = await run({ agent: createDemoAgent(), input: 'two', fork: { fromTurn: 1, name: 'other' } });
    asCompleted(elsewhere.outcome);
    const again = await run({ agent: createDemoAgent(), input: 'two more', branchId: 'other' });
    asCompleted(again.outcome);
    release();
    await first;
    const third = await run({ agent: createDemoAgent(), input: 'three' });
    asCompleted(third.outcome);
  });

  it('forks at turn 1 (edit the first message) and runs on the new branch; main is untouched', async () => {
    const mainBefore = await readBranch(dbPath, 'main');
    const { outcome, log } = await run({ agent: createDemoAgent(), input: "What's the weather in Tokyo?", fork: { fromTurn: 1 } });
    const done = asCompleted(outcome);
    const started = log.events[0];
    assert.ok(started?.kind === 'run/started');
    assert.match(started.branchId, /^branch_from_turn_1_\d+$/);
    assert.deepEqual(started.forkedFrom, { branchId: 'main', turn: 1 });
    assert.equal(done.written.turn, 1);
    const fork = await readBranch(dbPath, started.branchId);
    assert.deepEqual(fork.turns, [1]);
    assert.equal(fork.items.length, 4);
    assert.deepEqual(await readBranch(dbPath, 'main'), mainBefore);
    // A branch continued by id after its first run; a name used before is refused without writing.
    asCompleted((await run({ agent: createDemoAgent(), input: 'And Oslo?', branchId: started.branchId })).outcome);
    const before = tables(dbPath);
    const reused = await run({ agent: createDemoAgent(), input: 'x', fork: { fromTurn: 1, name: started.branchId } });
    assert.match(asFailed(reused.outcome, 'other').message, /already been used/);
    assert.deepEqual(tables(dbPath), before);
  });

  it('a fork whose run fails before spending anything is deleted again; main is untouched', async () => {
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
    await s.addItems([mk.user('second'), mk.assistant('second answer')]);
    s.close();
    const before = tables(dbPath);
    const failing = new Agent({
      name: 'f',
      instructions: 'x',
      model: new ScriptedModel(() => {
        throw new Error('model down');
      }),
    });
    const { outcome, log } = await run({ agent: failing, input: 'edited second', fork: { fromTurn: 2, name: 'edit-2' } });
    const f = asFailed(outcome, 'other');
    assert.equal(log.events[0]?.kind === 'run/started' && log.events[0].branchId, 'edit-2');
    assert.deepEqual(f.written.removed, ['user: "edited second"', "branch 'edit-2' (made for this run)"]);
    assert.match(f.written.summary, /The new branch 'edit-2' made for this run was deleted again/);
    const after = tables(dbPath);
    for (const t of ['message_structure', 'agent_messages', 'turn_usage', 'agent_sessions']) assert.deepEqual(after[t], before[t], t);
    assert.deepEqual(after.branch_reservations?.rows.map((r) => r.branch_id).sort(), ['edit-2', 'main'], 'the name stays used');
  });

  it('a fork whose agent cannot be built starts on the source branch: no forkedFrom, no fork named as a branch', async () => {
    const before = tables(dbPath);
    const { outcome, log } = await run({
      agent: () => Promise.reject(new Error('No API key is set for the OpenAI API.')),
      input: 'again',
      fork: { fromTurn: 1, name: 'retry-gpt-4.1-mini-1' },
    });
    const f = asFailed(outcome, 'other');
    const started = log.events[0];
    assert.ok(started?.kind === 'run/started');
    // The view moves to a run/started's forkedFrom branch: one that does not exist must not be announced.
    assert.equal(started.branchId, 'main');
    assert.equal(started.forkedFrom, undefined);
    assert.equal(f.written.summary, "Nothing was written and no branch was made; branch 'main' is as it was.");
    assert.doesNotMatch(JSON.stringify(log.events), /retry-gpt-4\.1-mini-1/);
    assert.deepEqual(tables(dbPath), before);
  });

  it('an empty branch (made from turn 1 elsewhere) cannot be continued by id; the message says to fork', async () => {
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
    await s.createBranchFromTurn(1, 'empty');
    s.close();
    const { outcome } = await run({ agent: createDemoAgent(), input: 'x', branchId: 'empty' });
    assert.match(asFailed(outcome, 'other').message, /does not exist\. A branch made from turn 1 has no items/);
  });

  it('ignores an onEvent that throws', async () => {
    const outcome = await runOnBranch({
      dbPath,
      sessionId: 's1',
      agent: createDemoAgent(),
      input: 'Hi again',
      onEvent: () => {
        throw new Error('the view is gone');
      },
    });
    asCompleted(outcome);
  });

  it('a signal aborted before the start: cancelled, nothing written', async () => {
    const before = tables(dbPath);
    const { outcome } = await run({ agent: createDemoAgent(), input: 'x', signal: AbortSignal.abort() });
    asFailed(outcome, 'cancelled');
    assert.deepEqual(tables(dbPath), before);
  });

  it('a branch that does not exist, a missing file, an agent factory that throws: other, nothing written', async () => {
    const before = tables(dbPath);
    asFailed((await run({ agent: createDemoAgent(), input: 'x', branchId: 'nope' })).outcome, 'other');
    assert.deepEqual(tables(dbPath), before);
    const missing = await run({ agent: createDemoAgent(), input: 'x', dbPath: ws.path('missing.db') });
    assert.match(asFailed(missing.outcome, 'other').message, /missing\.db does not exist/);
    const factory = await run({
      agent: () => {
        throw new Error('module broke');
      },
      input: 'x',
    });
    assert.equal(asFailed(factory.outcome, 'other').message, 'module broke');
    assert.deepEqual(tables(dbPath), before);
  });

  it('creates the tables of a new file when asked', async () => {
    const fresh = ws.path('fresh.db');
    const { outcome } = await run({
      agent: createDemoAgent(),
      input: 'Weather in Oslo?',
      dbPath: fresh,
      createTables: true,
      sessionId: 'new',
    });
    assert.equal(asCompleted(outcome).written.turn, 1);
    assert.equal((await readBranch(fresh, 'main', { sessionId: 'new' })).items.length, 4);
  });

  it('a model failing on the first request: the stored message is rolled back and the earlier usage row untouched', async () => {
    const seeded = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
    await seeded.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 } } });
    seeded.close();
    const before = tables(dbPath);
    const failing = new Agent({
      name: 'f',
      instructions: 'x',
      model: new ScriptedModel(() => {
        throw new Error('model exploded');
      }),
    });
    const { outcome } = await run({ agent: failing, input: 'try' });
    const f = asFailed(outcome, 'other');
    assert.equal(f.message, 'model exploded');
    assert.deepEqual(f.written.removed, ['user: "try"']);
    const after = tables(dbPath);
    // Rolled back: only bookkeeping moved (see the loopback suite's `content`).
    for (const t of ['message_structure', 'agent_messages', 'turn_usage', 'agent_sessions']) assert.deepEqual(after[t], before[t], t);
    assert.deepEqual(
      (await readBranch(dbPath, 'main')).usage.map((u) => [u.userTurnNumber, u.totalTokens]),
      [[1, 15]],
    );
  });

  it('a model failing after a tool round: the message stays as the turn, with the usage of the first request', async () => {
    let calls = 0;
    const policy: ScriptPolicy = () => {
      if (++calls === 2) throw new Error('second request failed');
      return { kind: 'tools', calls: [{ name: 'note', arguments: { text: 'x' } }] };
    };
    const agent = new Agent({
      name: 'n',
      instructions: 'x',
      model: new ScriptedModel(policy),
      tools: [tool({ name: 'note', description: 'n', parameters: z.object({ text: z.string() }), execute: async () => 'noted' })],
    });
    const { outcome } = await run({ agent, input: 'take a note' });
    const f = asFailed(outcome, 'other');
    assert.equal(f.usage?.requests, 1);
    assert.deepEqual(f.written.kept, ['user: "take a note"']);
    assert.deepEqual(f.written.notSaved, ['function_call note({"text":"x"})', 'function_call_result note: noted']);
    assert.equal(f.written.usageStored, true);
    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(
      main.usage.map((u) => [u.userTurnNumber, u.requests, u.totalTokens]),
      [[2, 1, f.usage!.totalTokens]],
    );
  });

  it('max turns exceeded: other, the message kept with the usage', async () => {
    const loop = new Agent({
      name: 'loop',
      instructions: 'x',
      model: new ScriptedModel(() => ({ kind: 'tools', calls: [{ name: 'again', arguments: {} }] })),
      tools: [tool({ name: 'again', description: 'a', parameters: z.object({}), execute: async () => 'again' })],
    });
    const { outcome } = await run({ agent: loop, input: 'loop', maxTurns: 2 });
    const f = asFailed(outcome, 'other');
    assert.match(f.message, /kept calling tools/);
    assert.equal(f.usage?.requests, 2);
    assert.equal(f.written.turn, 2);
  });
});

describe('run persistence rules', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-persist-')));
  afterEach(() => ws.cleanup());

  const call = (id: string) => ({ type: 'function_call', name: 't', callId: id, arguments: '{}' }) as unknown as AgentInputItem;
  const result = (id: string) =>
    ({ type: 'function_call_result', name: 't', callId: id, status: 'completed', output: 'ok' }) as unknown as AgentInputItem;

  it('what @openai/agents writes in a streamed run (the facts settleRun relies on)', async () => {
    const typesOf = (batches: AgentInputItem[][]) => batches.map((b) => b.map((i) => ('role' in i ? String(i.role) : String(i.type))));
    async function streamed(policy: ScriptPolicy, tools: ReturnType<typeof tool>[], abortOn?: string) {
      const recording = new RecordingSession(ws.open({ sessionId: `s${Math.random()}` }));
      const controller = new AbortController();
      const agent = new Agent({ name: 'a', instructions: 'x', model: new ScriptedModel(policy), tools });
      let error: unknown;
      try {
        const result = await new Runner({ tracingDisabled: true }).run(agent, 'go', {
          session: recording,
          stream: true,
          signal: controller.signal,
        });
        for await (const e of result) if (e.type === 'run_item_stream_event' && e.name === abortOn) controller.abort();
        await result.completed;
      } catch (err) {
        error = err;
      }
      return { batches: typesOf(recording.written), error };
    }
    const echo = tool({ name: 'echo', description: 'e', parameters: z.object({}), execute: async () => 'echoed' });
    const guarded = tool({ name: 'guarded', description: 'g', parameters: z.object({}), needsApproval: true, execute: async () => 'x' });
    const toolThenText: ScriptPolicy = (input) =>
      input[input.length - 1]?.type === 'function_call_result'
        ? { kind: 'text', text: 'done' }
        : { kind: 'tools', calls: [{ name: 'echo', arguments: {} }] };
    // Completed: one write, with the input and every turn's items, at the end.
    assert.deepEqual((await streamed(toolThenText, [echo])).batches, [['user', 'function_call', 'function_call_result', 'assistant']]);
    // Failed after the model was called: the input only.
    let n = 0;
    const failSecond: ScriptPolicy = (input) => {
      if (++n === 2) throw new Error('down');
      return toolThenText(input, undefined as never);
    };
    const failed = await streamed(failSecond, [echo]);
    assert.ok(failed.error instanceof Error);
    assert.deepEqual(failed.batches, [['user']]);
    // Cancelled after a tool call: the input only.
    assert.deepEqual((await streamed(toolThenText, [echo], 'tool_called')).batches, [['user']]);
    // Stopped for an approval: the input and the call, without an output.
    assert.deepEqual((await streamed(() => ({ kind: 'tools', calls: [{ name: 'guarded', arguments: {} }] }), [guarded])).batches, [
      ['user', 'function_call'],
    ]);
  });

  it('finds the first call without an output', () => {
    assert.equal(firstUnansweredCall([mk.user('q'), call('a'), result('a'), mk.assistant('x')]), -1);
    assert.equal(firstUnansweredCall([mk.user('q'), call('a')]), 1);
    assert.equal(firstUnansweredCall([mk.user('q'), call('a'), call('b'), result('b')]), 1);
    assert.equal(firstUnansweredCall([mk.user('q'), call('a'), mk.output('a')]), -1, 'Python-shaped outputs count');
    assert.equal(
      firstUnansweredCall([mk.user('q'), { type: 'web_search_call', id: 'w', status: 'completed' } as unknown as AgentInputItem]),
      -1,
    );
  });

  it('pops a trailing unanswered call (and what follows it) but keeps completed items', async () => {
    const s = ws.open();
    await s.addItems([mk.user('old'), mk.assistant('old answer')]);
    const written = [mk.user('q'), call('a'), result('a'), call('b')];
    await s.addItems(written);
    const settled = await settleRun(s, written, { completed: false, spent: true });
    assert.deepEqual(settled.removed, [call('b')]);
    assert.equal(settled.problem, undefined);
    assert.deepEqual((await s.getItems()).length, 5);
  });

  it('never pops another writer’s item: stops and says so', async () => {
    const s = ws.open();
    const written = [mk.user('q')];
    await s.addItems(written);
    const other = ws.open();
    await other.addItems([mk.user('someone else'), mk.assistant('their answer')]);
    const settled = await settleRun(s, written, { completed: false, spent: false });
    assert.deepEqual(settled.removed, []);
    assert.match(settled.problem ?? '', /another writer/);
    assert.equal((await s.getItems()).length, 3);
  });

  it('never removes an item another writer commits between the cleanup’s look at the branch and its removal', async () => {
    const s = ws.open();
    await s.addItems([mk.user('old'), mk.assistant('old answer')]);
    const written = [mk.user('q')];
    await s.addItems(written);
    // Another connection commits once the cleanup has started: after its first read, before its first write, whichever
    // comes first. A check and a removal in two transactions removes this item instead of the run's.
    const other = ws.open();
    let committed = false;
    const commitOnce = async () => {
      if (committed) return;
      committed = true;
      await other.addItems([mk.user('someone else')]);
    };
    const racing = new Proxy(s, {
      get(target, prop) {
        const value = (target as unknown as Record<PropertyKey, unknown>)[prop];
        if (typeof value !== 'function') return value;
        if (prop === 'getItems' || prop === 'getStoredItems')
          return async (...args: unknown[]) => {
            const read = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            await commitOnce();
            return read;
          };
        if (prop === 'popItem')
          return async (...args: unknown[]) => {
            await commitOnce();
            return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
    const settled = await settleRun(racing, written, { completed: false, spent: false });
    assert.ok(committed);
    assert.deepEqual(settled.removed, []);
    assert.match(settled.problem ?? '', /another writer/);
    const items = await s.getItems();
    assert.deepEqual(
      items.slice(2).map((i) => 'content' in i && i.content),
      ['q', 'someone else'],
    );
  });

  it('removes its items newest first, stopping at another writer’s item among them; all of them when they are last', async () => {
    const s = ws.open();
    const other = ws.open();
    await s.addItems([mk.user('q'), call('a')]);
    await other.addItems([mk.assistant('theirs')]);
    await s.addItems([call('b')]);
    const written = [mk.user('q'), call('a'), call('b')];
    const partly = await settleRun(s, written, { completed: false, spent: false });
    assert.deepEqual(partly.removed, [call('b')]);
    assert.deepEqual(partly.kept, [mk.user('q'), call('a')]);
    assert.match(partly.problem ?? '', /another writer added items\), so 2 item\(s\) of this run were left in place/);
    assert.equal((await s.getItems()).length, 3);

    const t = ws.open({ sessionId: 's2' });
    const mine = [mk.user('q2'), call('c'), call('d')];
    await t.addItems(mine);
    const whole = await settleRun(t, mine, { completed: false, spent: false });
    assert.deepEqual([whole.removed, whole.problem], [mine, undefined]);
    assert.deepEqual(await t.getItems(), []);
  });

  it('removes nothing of a run whose items are not known to be its own alone, and says why', async () => {
    const s = ws.open();
    const written = [mk.user('q')];
    await s.addItems(written);
    const settled = await settleRun(s, written, { completed: false, spent: false }, 'its user message is not the message the run gave');
    assert.deepEqual([settled.kept, settled.removed], [written, []]);
    assert.equal(settled.problem, 'its user message is not the message the run gave, so 1 item(s) of this run were left in place');
    assert.equal((await s.getItems()).length, 1);
  });

  it('the recording session records writes and refuses clearSession (it would delete every branch)', async () => {
    const s = ws.open();
    const r = new RecordingSession(s);
    await r.addItems([mk.user('a')]);
    await r.addItems([]);
    assert.deepEqual(r.writtenItems(), [mk.user('a')]);
    await assert.rejects(() => r.clearSession(), /every branch/);
    assert.equal((await s.getItems()).length, 1);
  });

  it('usageView sums the per-request detail records', () => {
    assert.deepEqual(
      usageView({
        requests: 2,
        inputTokens: 30,
        outputTokens: 8,
        totalTokens: 38,
        inputTokensDetails: [{ cached_tokens: 4 }, { cached_tokens: 6 }],
        outputTokensDetails: [{ reasoning_tokens: 1 }, {}],
      }),
      { requests: 2, inputTokens: 30, outputTokens: 8, totalTokens: 38, cachedTokens: 10, reasoningTokens: 1 },
    );
    assert.deepEqual(usageView(undefined), {
      requests: 0,
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      cachedTokens: 0,
      reasoningTokens: 0,
    });
  });

  it('classifies SQLite busy errors from either driver as locked', () => {
    assert.equal(classify(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }), { cancelled: false }).failure, 'locked');
    assert.equal(
      classify(Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 5 }), { cancelled: false }).failure,
      'locked',
    );
    assert.equal(classify(new Error('whatever'), { cancelled: true }).failure, 'cancelled');
    assert.equal(classify(new Error('whatever'), { cancelled: false }).failure, 'other');
  });
});
