/**
 * Replay with the run's session in the store worker (as the extension runs it): the fork and the recorded turn cross
 * the worker in one call (`forkWithTurnItems`), and the run writes what the same run in this thread writes. Each case
 * runs once per store on identical files, with the offline scripted model and tools that leave a side-effect file.
 */
import { strict as assert } from 'node:assert';
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, tool } from '@openai/agents';
import { z } from 'zod';
import { ScriptedModel } from '../../../../src/agents/scriptedModel';
import { runOnBranch, type RunOnBranchOptions } from '../../../../src/agents/branchRun';
import type { RunStore } from '../../../../src/agents/runSession';
import { workerRunStore } from '../../../../src/extension/runs/workerRunStore';
import { StoreClient } from '../../../../src/store/worker/storeClient';
import { AdvancedSQLiteSession } from '../../../../src/store';
import type { RunCompletedEvent, RunFailedEvent, RunOutcome } from '../../../../src/shared/protocol/runEvents';
import { Workspace, tables } from '../../../support/sessionHelpers';

const WORKER = join(__dirname, '..', '..', '..', '..', 'src', 'store', 'worker', 'storeWorker.ts');
const QUESTION = 'Weather in Paris, twice, and the capital of France?';
const RECORDED = ['Paris: 18°C at 09:00', 'Paris: 19°C at 09:01', 'Paris'];

/** Every table but the two bookkeeping ones a rollback cannot restore (as in branchRun.loopback.test.ts). */
function content(path: string): Record<string, unknown> {
  const all: Record<string, unknown> = tables(path);
  delete all.sqlite_sequence;
  delete all.branch_reservations;
  return all;
}

async function seedRecorded(dbPath: string): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, createTables: true });
  const fc = (id: string, name: string, args: string) => ({
    type: 'function_call',
    call_id: id,
    name,
    arguments: args,
    status: 'completed',
  });
  try {
    await s.addItems([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Hi!' }] },
      { role: 'user', content: QUESTION },
      fc('call_w1', 'get_weather', '{"city":"Paris"}'),
      fc('call_w2', 'get_weather', '{"city":"Paris"}'),
      fc('call_cap', 'lookup_capital', '{"country":"France"}'),
      { type: 'function_call_output', call_id: 'call_w1', output: RECORDED[0] },
      { type: 'function_call_output', call_id: 'call_w2', output: RECORDED[1] },
      { type: 'function_call_output', call_id: 'call_cap', output: RECORDED[2] },
      { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Mild; Paris.' }] },
    ] as never);
  } finally {
    s.close();
  }
}

/** An agent whose model calls get_weather(city) twice and lookup_capital once, and whose tools log to `side`. */
function agent(side: string, city: string): Agent {
  const log = (line: string) => appendFileSync(side, `${line}\n`);
  return new Agent({
    name: 'Replay agent',
    instructions: 'Use the tools.',
    model: new ScriptedModel((input) => {
      const last = input[input.length - 1] as { type?: string } | undefined;
      if (last?.type === 'function_call_result') return { kind: 'text', text: 'Done.' };
      return {
        kind: 'tools',
        calls: [
          { name: 'get_weather', arguments: { city } },
          { name: 'get_weather', arguments: { city } },
          { name: 'lookup_capital', arguments: { country: 'France' } },
        ],
      };
    }),
    tools: [
      tool({
        name: 'get_weather',
        description: 'Weather now',
        parameters: z.object({ city: z.string() }),
        execute: ({ city: c }) => (log(`get_weather ${c}`), `live: ${c}`),
      }),
      tool({
        name: 'lookup_capital',
        description: 'Capital',
        parameters: z.object({ country: z.string() }),
        execute: ({ country }) => (log(`lookup_capital ${country}`), `live: ${country}`),
      }),
    ],
  });
}

describe('replay through the store worker', function () {
  this.timeout(60_000);
  let ws: Workspace;
  let client: StoreClient;
  beforeEach(() => {
    ws = new Workspace('asi-worker-replay-');
    client = new StoreClient(WORKER, { execArgv: ['--require', 'tsx/cjs'] });
  });
  afterEach(async () => {
    await client.dispose();
    ws.cleanup();
  });

  /** Runs the fork of turn 2 once in this thread and once in the worker; what each left, and each outcome. */
  async function both(name: string, city: string, tools: RunOnBranchOptions['tools']) {
    const results: { outcome: RunOutcome; side: boolean; outputs: unknown[]; branches: string[]; unchanged: boolean }[] = [];
    for (const [label, store] of [
      ['thread', undefined],
      ['worker', workerRunStore(client)],
    ] as [string, RunStore | undefined][]) {
      const dbPath = ws.path(`${name}-${label}.db`);
      const side = ws.path(`${name}-${label}.log`);
      await seedRecorded(dbPath);
      const before = content(dbPath);
      const sent = client.requestsSent;
      const outcome = await runOnBranch({
        dbPath,
        sessionId: 's1',
        agent: agent(side, city),
        input: QUESTION,
        fork: { fromTurn: 2, name: 'whatif' },
        tools,
        ...(store ? { store } : {}),
      });
      assert.equal(client.requestsSent > sent, store !== undefined, `${label}: requests to the worker`);
      const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath, readonly: true });
      try {
        const branches = (await s.listBranches()).map((b) => b.branchId).sort();
        const stored = branches.includes('whatif') ? ((await s.getStoredItems(undefined, 'whatif')) as Record<string, unknown>[]) : [];
        results.push({
          outcome,
          side: existsSync(side),
          outputs: stored.filter((i) => i.type === 'function_call_output').map((i) => i.output),
          branches,
          unchanged: JSON.stringify(content(dbPath)) === JSON.stringify(before),
        });
      } finally {
        s.close();
      }
    }
    return results as [(typeof results)[0], (typeof results)[0]];
  }

  it('replay: the fork and its recorded turn cross the worker; no tool runs; the recorded outputs are stored', async () => {
    const [thread, worker] = await both('replay', 'Paris', undefined);
    for (const r of [thread, worker]) {
      assert.equal(r.outcome.kind, 'run/completed', JSON.stringify(r.outcome));
      const summary = (r.outcome as RunCompletedEvent).replay!;
      assert.deepEqual(
        summary.marks.map((m) => [m.outcome, m.recordedCallId]),
        [
          ['replayed', 'call_w1'],
          ['replayed', 'call_w2'],
          ['replayed', 'call_cap'],
        ],
      );
      assert.deepEqual(summary.source, { branchId: 'main', turn: 2 });
      assert.equal(r.side, false, 'no tool ran');
      assert.deepEqual(r.outputs, RECORDED);
    }
  });

  it('strict: the refusal rolls the worker run back like the in-thread one', async () => {
    const [thread, worker] = await both('strict', 'Lisbon', { mode: 'strict' });
    for (const r of [thread, worker]) {
      assert.equal(r.outcome.kind, 'run/failed');
      const failed = r.outcome as RunFailedEvent;
      assert.equal(failed.failure, 'tool');
      assert.match(failed.message, /^Strict replay: the call get_weather\(\{"city":"Lisbon"\}\) matches no recorded call/);
      assert.match(failed.message, /Nearest recorded call: get_weather \(call_w1\): city: "Paris" → "Lisbon"\.$/);
      assert.equal(r.side, false, 'no tool ran');
      assert.deepEqual(r.branches, ['main'], 'the fork is gone');
      assert.equal(r.unchanged, true, 'every conversation table is as before the run');
    }
  });
});
