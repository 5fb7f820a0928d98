/**
 * An SDK run (runOnBranch, the offline ScriptedModel) while another writer of the file adds a turn with its usage to
 * the same branch (docs/session-format.md §1, §9): the other writer's turn is written by a second connection at a set
 * moment, right after the runner's write of its turn (or right before it), so the order is always the same. The run's
 * usage goes on the run's turn only, the outcome names that turn, and the other writer's usage row stays as it was.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { Agent, tool, type AgentInputItem } from '@openai/agents';
import { z } from 'zod';
import { ScriptedModel } from '../../../src/agents/scriptedModel';
import { AdvancedSQLiteSession } from '../../../src/store';
import { createDemoAgent } from '../../../src/agents/demoAgent';
import { runOnBranch, type AgentSource } from '../../../src/agents/branchRun';
import { IN_THREAD_STORE, type RunSession, type RunStore } from '../../../src/agents/runSession';
import { workerRunStore } from '../../../src/extension/runs/workerRunStore';
import { StoreClient } from '../../../src/store/worker/storeClient';
import type { RunCompletedEvent, RunFailedEvent, RunOutcome } from '../../../src/shared/protocol/runEvents';
import { Workspace, mk } from '../../support/sessionHelpers';
import { readBranch, seedSession } from './agentTestKit';

const WORKER = join(__dirname, '..', '..', '..', 'src', 'store', 'worker', 'storeWorker.ts');
const OTHER_USAGE = { requests: 1, inputTokens: 700, outputTokens: 77, totalTokens: 777 };

/**
 * A run store whose sessions call `other` once, with the items of the runner's first write, right before (`when:
 * 'before'`) or right after (`'after'`) that write.
 */
function storeWithOtherWriter(base: RunStore, when: 'before' | 'after', other: (runItems: AgentInputItem[]) => Promise<void>): RunStore {
  return {
    ...base,
    openSession: async (options) => {
      const session = await base.openSession(options);
      let done = false;
      const addItems = async (items: AgentInputItem[]): Promise<void> => {
        const first = !done;
        done = true;
        if (first && when === 'before') await other(items);
        await session.addItems(items);
        if (first && when === 'after') await other(items);
      };
      return new Proxy(session, {
        get: (target, key) => {
          if (key === 'addItems') return addItems;
          const value = Reflect.get(target, key) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      }) as RunSession;
    },
  };
}

describe('runOnBranch while another writer adds a turn to the same branch', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let dbPath: string;
  beforeEach(async () => {
    ws = new Workspace('asi-other-writer-');
    dbPath = ws.path('s.db');
    await seedSession(dbPath, [['Hello', 'Hi! Ask me about the weather.']]);
  });
  afterEach(() => ws.cleanup());

  /** The other writer: a connection of its own appends `items` to main and stores its usage, as a Python agent does. */
  async function otherWriterAppends(items: AgentInputItem[]): Promise<void> {
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
    try {
      await s.addItems(items);
      await s.storeRunUsage({ state: { usage: OTHER_USAGE } });
    } finally {
      s.close();
    }
  }
  const otherTurn = () => [mk.user('Another writer asks'), mk.assistant('Another writer answers')];

  async function run(store: RunStore, agent: AgentSource = createDemoAgent()): Promise<{ outcome: RunOutcome; lines: string[] }> {
    const lines: string[] = [];
    const outcome = await runOnBranch({
      dbPath,
      sessionId: 's1',
      agent,
      input: "What's the weather in Paris?",
      store,
      log: (l) => lines.push(l),
    });
    return { outcome, lines };
  }
  const asCompleted = (o: RunOutcome) => {
    assert.equal(o.kind, 'run/completed', JSON.stringify(o));
    return o as RunCompletedEvent;
  };
  async function usageRows() {
    const main = await readBranch(dbPath, 'main');
    return main.usage.map((u) => [u.userTurnNumber, u.requests, u.totalTokens]);
  }

  it("a turn added after the run's: the run's usage on its own turn, the other writer's row intact", async () => {
    const { outcome } = await run(storeWithOtherWriter(IN_THREAD_STORE, 'after', () => otherWriterAppends(otherTurn())));
    const done = asCompleted(outcome);
    assert.deepEqual(await usageRows(), [
      [2, done.usage?.requests, done.usage?.totalTokens],
      [3, OTHER_USAGE.requests, OTHER_USAGE.totalTokens],
    ]);
    assert.equal(done.written.turn, 2, done.written.summary);
    assert.equal(done.written.usageStored, true);
    assert.match(done.written.summary, /^Saved turn 2 on branch 'main': 4 item\(s\) and its usage\.$/);
    const main = await readBranch(dbPath, 'main');
    assert.deepEqual(
      main.byTurns.get(2)?.map((i) => i.type),
      ['user', 'function_call', 'function_call_output', 'assistant'],
    );
    assert.deepEqual(
      main.byTurns.get(3)?.map((i) => i.type),
      ['user', 'assistant'],
    );
  });

  it("a turn added before the run's write: the run's turn is the newer one", async () => {
    const { outcome } = await run(storeWithOtherWriter(IN_THREAD_STORE, 'before', () => otherWriterAppends(otherTurn())));
    const done = asCompleted(outcome);
    assert.deepEqual(await usageRows(), [
      [2, OTHER_USAGE.requests, OTHER_USAGE.totalTokens],
      [3, done.usage?.requests, done.usage?.totalTokens],
    ]);
    assert.equal(done.written.turn, 3);
    assert.equal(done.written.usageStored, true);
  });

  it("a turn just like the run's added after it: neither is claimed, the usage is not stored and the outcome says so", async () => {
    const { outcome, lines } = await run(storeWithOtherWriter(IN_THREAD_STORE, 'after', (items) => otherWriterAppends(items)));
    const done = asCompleted(outcome);
    assert.deepEqual(await usageRows(), [[3, OTHER_USAGE.requests, OTHER_USAGE.totalTokens]]);
    assert.equal(done.written.turn, null);
    assert.equal(done.written.usageStored, false);
    assert.match(done.written.summary, /The usage was not stored: turns 3, 2 all hold this run's items/);
    assert.ok(
      lines.some((l) => /The usage was not stored/.test(l)),
      lines.join('\n'),
    );
  });

  it("a run that failed after spending keeps its message as its turn: its usage there, not on the other writer's", async () => {
    let calls = 0;
    const agent = new Agent({
      name: 'n',
      instructions: 'x',
      model: new ScriptedModel(() => {
        if (++calls === 2) throw new Error('second request failed');
        return { kind: 'tools', calls: [{ name: 'note', arguments: { text: 'x' } }] };
      }),
      tools: [tool({ name: 'note', description: 'n', parameters: z.object({ text: z.string() }), execute: async () => 'noted' })],
    });
    const { outcome } = await run(
      storeWithOtherWriter(IN_THREAD_STORE, 'after', () => otherWriterAppends(otherTurn())),
      agent,
    );
    assert.equal(outcome.kind, 'run/failed', JSON.stringify(outcome));
    const f = outcome as RunFailedEvent;
    assert.deepEqual(await usageRows(), [
      [2, 1, f.usage?.totalTokens],
      [3, OTHER_USAGE.requests, OTHER_USAGE.totalTokens],
    ]);
    assert.equal(f.written.turn, 2);
    assert.equal(f.written.usageStored, true);
    assert.match(f.written.summary, /^Kept your message as turn 2 on branch 'main', with the usage spent/);
  });

  it('through the store worker (as the extension runs): the same', async () => {
    const client = new StoreClient(WORKER, { execArgv: ['--require', 'tsx/cjs'] });
    try {
      const { outcome } = await run(storeWithOtherWriter(workerRunStore(client), 'after', () => otherWriterAppends(otherTurn())));
      const done = asCompleted(outcome);
      assert.deepEqual(await usageRows(), [
        [2, done.usage?.requests, done.usage?.totalTokens],
        [3, OTHER_USAGE.requests, OTHER_USAGE.totalTokens],
      ]);
      assert.equal(done.written.turn, 2);
      assert.equal(done.written.usageStored, true);
    } finally {
      await client.dispose();
    }
  });
});
