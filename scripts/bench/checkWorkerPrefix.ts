/**
 * VS Code's check prepares its cases' scratch files in the store worker (docs/check.md, "Scratch storage"): this
 * prepares `cases` cases on the last turns of a `turns`-turn session one after the other, through a `ScratchFolder` on a
 * worker `RunStore` as the extension makes it, with the worker's prefix chain and without it (each case's prefix read
 * from the branch's start, as the extension did before), `rounds` times each way, alternating.
 *
 *   npx tsx scripts/bench/checkWorkerPrefix.ts [turns=3000] [cases=30] [rounds=2]
 */
import { copyFile } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { StoreClient } from '../../src/store/worker/storeClient';
import { AdvancedSQLiteSession } from '../../src/store';
import { ScratchFolder } from '../../src/agents/check/scratchStore';
import type { CheckCase } from '../../src/agents/check/checkTypes';
import type { RunStore } from '../../src/agents/runSession';
import { turnKeyOf } from '../../src/store/reviews/reviewMatching';
import { median, round } from './measure';

const question = (t: number): AgentInputItem => ({ role: 'user', content: `Question ${t}` }) as AgentInputItem;

/** A turn as the Python SDK stores it: the question, one call with its output, the answer. */
function turnItems(t: number): AgentInputItem[] {
  return [
    question(t),
    { type: 'function_call', call_id: `c${t}`, name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' },
    { type: 'function_call_output', call_id: `c${t}`, output: 'Sunny, 18°C.' },
    { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: `Answer ${t}.` }] },
  ] as unknown as AgentInputItem[];
}

async function main(): Promise<void> {
  const [turns = 3000, cases = 30, rounds = 2] = process.argv.slice(2).map(Number);
  const dir = mkdtempSync(join(tmpdir(), 'check-worker-prefix-'));
  const client = new StoreClient(join(__dirname, '..', '..', 'src', 'store', 'worker', 'storeWorker.ts'), {
    execArgv: ['--require', 'tsx/cjs'],
  });
  try {
    const file = join(dir, 'long.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file, createTables: true });
    for (let t = 1; t <= turns; t++) await s.addItems(turnItems(t));
    s.close();
    const remote = await client.openDatabase(file);
    const base: RunStore = {
      openSession: ({ logger, ...options }) => client.openSession(options, { logger }),
      markWrites: (dbPath, tables) => client.fileCall('markWrites', dbPath, tables),
      writesSince: (dbPath, tables, mark) => client.fileCall('writesSince', dbPath, tables, mark),
      releasePrefixChains: (folder) => client.releasePrefixChains(folder),
    };
    const results: { chain: boolean; totalMs: number; firstMs: number; medianMs: number }[] = [];
    for (let r = 0; r < rounds * 2; r++) {
      const chained = r % 2 === 1;
      const store: RunStore = {
        ...base,
        copyBranchPrefix: async (source, target, request, signal, chain) => {
          if (chained) return client.copyBranchPrefix(source, target, request, signal, chain);
          // Before the chain: the target a copy of the folder's empty file, then the prefix copied into it.
          await copyFile(chain.emptyFile, target);
          return client.copyBranchPrefix(source, target, request, signal);
        },
      };
      const folder = ScratchFolder.create(dir, store);
      const each: number[] = [];
      const t0 = performance.now();
      try {
        for (let t = turns - cases + 1; t <= turns; t++) {
          const c: CheckCase = {
            id: `s1/main/${t}`,
            sessionId: 's1',
            branchId: 'main',
            turn: t,
            contentKey: turnKeyOf(question(t)),
            verdict: 'good',
            input: `Question ${t}`,
            expected: { answer: null, trajectory: [] },
            note: null,
            tags: [],
          };
          const at = performance.now();
          const scratch = await folder.prepare(remote, c, t, undefined, file);
          each.push(performance.now() - at);
          await folder.discard(scratch);
        }
      } finally {
        await folder.dispose();
      }
      results.push({ chain: chained, totalMs: round(performance.now() - t0), firstMs: round(each[0]!), medianMs: round(median(each)) });
    }
    await remote.close();
    console.log(JSON.stringify({ turns, cases, rounds, results }, null, 2));
  } finally {
    await client.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
