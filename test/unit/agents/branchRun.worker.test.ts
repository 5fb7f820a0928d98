/**
 * A run whose session lives in the store worker (as the extension runs it) writes what the same run in this thread
 * writes: the same turn, the same rollback of a failed run, the same fork, the same usage, and the same problems
 * logged. Each case runs twice on identical files, once per store, with the offline scripted model.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { Agent } from '@openai/agents';
import { ScriptedModel } from '../../../src/agents/scriptedModel';
import { createDemoAgent } from '../../../src/agents/demoAgent';
import { runOnBranch, type RunOnBranchOptions } from '../../../src/agents/branchRun';
import type { RunStore } from '../../../src/agents/runSession';
import { workerRunStore } from '../../../src/extension/runs/workerRunStore';
import { StoreClient } from '../../../src/store/worker/storeClient';
import type { RunOutcome } from '../../../src/shared/protocol/runEvents';
import { Workspace, tables } from '../../support/sessionHelpers';
import { readBranch, seedSession } from './agentTestKit';

const WORKER = join(__dirname, '..', '..', '..', 'src', 'store', 'worker', 'storeWorker.ts');

/** What a run left, without what differs between two runs of it anyway (ids the model makes up, times). */
async function footprint(dbPath: string, outcome: RunOutcome, branches: string[]) {
  const dump = tables(dbPath);
  const state = await Promise.all(
    branches.map(async (b) => {
      const branch = await readBranch(dbPath, b);
      return { b, byTurns: [...branch.byTurns], usage: branch.usage.map((u) => [u.userTurnNumber, u.requests, u.totalTokens]) };
    }),
  );
  return {
    kind: outcome.kind,
    written: 'written' in outcome ? outcome.written : undefined,
    rows: Object.fromEntries(Object.entries(dump).map(([t, d]) => [t, d.rows.length])),
    state,
  };
}

describe('runOnBranch through the store worker', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let client: StoreClient;
  beforeEach(() => {
    ws = new Workspace('asi-worker-run-');
    client = new StoreClient(WORKER, { execArgv: ['--require', 'tsx/cjs'] });
  });
  afterEach(async () => {
    await client.dispose();
    ws.cleanup();
  });

  async function both(
    name: string,
    options: Omit<RunOnBranchOptions, 'dbPath' | 'sessionId'>,
    branches: string[],
  ): Promise<{ inThread: unknown; worker: unknown; logs: [string[], string[]] }> {
    const results: unknown[] = [];
    const logs: string[][] = [];
    for (const [label, store] of [
      ['thread', undefined],
      ['worker', workerRunStore(client)],
    ] as [string, RunStore | undefined][]) {
      const dbPath = ws.path(`${name}-${label}.db`);
      await seedSession(dbPath, [['Hello', 'Hi! Ask me about the weather.']]);
      const lines: string[] = [];
      const sent = client.requestsSent;
      const outcome = await runOnBranch({ dbPath, sessionId: 's1', ...options, log: (l) => lines.push(l), ...(store ? { store } : {}) });
      // Every read and write of the run went to the worker (and none of the in-thread run's).
      assert.equal(client.requestsSent > sent, store !== undefined, `${label}: requests to the worker`);
      results.push(await footprint(dbPath, outcome, branches));
      logs.push(lines);
    }
    return { inThread: results[0], worker: results[1], logs: [logs[0]!, logs[1]!] };
  }

  it('continues a branch: the same turn, tool calls and usage row', async () => {
    const r = await both('continue', { agent: createDemoAgent(), input: "What's the weather in Paris?" }, ['main']);
    assert.equal((r.inThread as { kind: string }).kind, 'run/completed');
    assert.deepEqual(r.worker, r.inThread);
  });

  it('forks and runs on the new branch', async () => {
    const r = await both('fork', { agent: createDemoAgent(), input: 'Weather in Oslo?', fork: { fromTurn: 1, name: 'oslo' } }, [
      'main',
      'oslo',
    ]);
    assert.equal((r.inThread as { kind: string }).kind, 'run/completed');
    assert.deepEqual(r.worker, r.inThread);
  });

  it('rolls a failed run back the same way', async () => {
    const failing = () =>
      new Agent({
        name: 'f',
        instructions: 'x',
        model: new ScriptedModel(() => {
          throw new Error('model exploded');
        }),
      });
    const r = await both('failed', { agent: failing, input: 'try' }, ['main']);
    assert.equal((r.inThread as { kind: string }).kind, 'run/failed');
    assert.deepEqual(r.worker, r.inThread);
  });
});
