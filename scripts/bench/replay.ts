/**
 * What replay adds to a run's preparation (issue 41, docs/replay.md), on a 10,000-turn branch whose last turn made 20
 * tool calls; target: at most 5 ms, with either SQLite driver (run the bench under a Node with node:sqlite and no
 * better-sqlite3 build, e.g. the cache's Node 22, for the second).
 *
 * - **fork**: `createBranchFromTurn(10000)`, what a re-run did before (it copies 9,999 turns' structure rows), against
 *   `forkWithTurnItems(10000)`, which also reads turn 10,000's stored items in the same transaction. Timed in pairs,
 *   the order alternating, each fork deleted before the next pair; the added time is each pair's difference.
 * - **turn read**: `getTurnStoredItems(10000, 'main')` alone, the read the fork adds, without the fork's commit (whose
 *   fsync makes the pairs' difference noisy).
 * - **table and matching**: `buildReplayTable` on the turn's items and a matcher deciding the 20 calls, made again
 *   with their arguments' keys in another order (so every call goes through the JSON comparison).
 */
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession, resolveDriver } from '../../src/store';
import { buildReplayTable } from '../../src/agents/replay/replayTable';
import { ReplayMatcher } from '../../src/agents/replay/replayMatcher';
import { median, now, round } from './measure';
import { turnInput } from './workload';

export const REPLAY_TARGET_MS = 5;
const TURNS = 10_000;
const CALLS = 20;
const SESSION = 'replay';

interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export interface ReplayBenchReport {
  driver: string;
  turns: number;
  callsInTurn: number;
  /** Items of the re-run turn (its user message, calls, outputs and answer). */
  turnItems: number;
  generatedMs: number;
  forkMs: Spread;
  forkWithTurnItemsMs: Spread;
  /** forkWithTurnItems − createBranchFromTurn, per pair. */
  addedByForkMs: Spread;
  turnReadMs: Spread;
  tableAndMatchMs: Spread;
  target: { ms: number; met: boolean; how: string };
}

const spread = (runs: number[]): Spread => ({
  median: round(median(runs)),
  min: round(Math.min(...runs)),
  max: round(Math.max(...runs)),
  runs: runs.map(round),
});

/** Arguments of call `i` of the last turn, keys in the order given. */
function callArguments(i: number, reversed: boolean): string {
  const entries: [string, unknown][] = [
    ['city', `City number ${i}`],
    ['day', i],
    ['units', 'C'],
    ['options', { hourly: i % 2 === 0, lang: 'en' }],
  ];
  return JSON.stringify(Object.fromEntries(reversed ? entries.reverse() : entries));
}

/** The last turn: a user message, 20 calls (two of them identical), their outputs, the answer. */
function lastTurn(): AgentInputItem[] {
  const id = (i: number) => `call_last_${i}`;
  const args = (i: number) => callArguments(i === 1 ? 0 : i, false);
  return [
    { role: 'user', content: 'The weather in twenty cities, please.' },
    ...Array.from({ length: CALLS }, (_, i) => ({ type: 'function_call', call_id: id(i), name: 'get_weather', arguments: args(i) })),
    ...Array.from({ length: CALLS }, (_, i) => ({
      type: 'function_call_output',
      call_id: id(i),
      output: `Weather ${i}: `.padEnd(500, '.'),
    })),
    { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Here it is.', annotations: [] }] },
  ] as unknown as AgentInputItem[];
}

/** A file with one `turns`-turn branch, written through the store (so either driver can write it). */
async function writeFile(path: string, turns: number): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, createTables: true });
  try {
    const batch: AgentInputItem[] = [];
    for (let t = 1; t < turns; t++) {
      batch.push(...turnInput(t).items);
      if (t % 250 === 0) await s.addItems(batch.splice(0));
    }
    await s.addItems([...batch, ...lastTurn()]);
  } finally {
    s.close();
  }
}

/** The table of the turn's items and the 20 calls decided, as a re-run's preparation and its tools do. */
function tableAndMatch(items: unknown[], turn: number): number {
  const t0 = now();
  const table = buildReplayTable(items, { branchId: 'main', turn });
  const matcher = new ReplayMatcher(table, { mode: 'replay' });
  let replayed = 0;
  for (let i = 0; i < CALLS; i++)
    if (matcher.decide(`new_${i}`, 'get_weather', callArguments(i === 1 ? 0 : i, true)).outcome === 'replayed') replayed++;
  const ms = now() - t0;
  if (table.calls.length !== CALLS || replayed !== CALLS)
    throw new Error(`replay bench: ${replayed} of ${table.calls.length} calls replayed`);
  return ms;
}

/** `turns` other than 10,000 only for the benchmark's own test (the target is set for 10,000). */
export async function runReplayBench(
  tmpDir: string,
  reps: number,
  progress: (m: string) => void,
  turns = TURNS,
): Promise<ReplayBenchReport> {
  const path = join(tmpDir, `replay-${turns}.db`);
  progress(`writing a ${turns}-turn branch`);
  const g0 = now();
  await writeFile(path, turns);
  const generatedMs = now() - g0;
  const s = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path });
  const fork: number[] = [];
  const withItems: number[] = [];
  const added: number[] = [];
  const reads: number[] = [];
  const tables: number[] = [];
  let turnItems = 0;
  try {
    const timedFork = async (name: string, read: boolean): Promise<number> => {
      await s.switchToBranch('main');
      const t0 = now();
      if (read) {
        const made = await s.forkWithTurnItems(turns, name);
        turnItems = made.turnItems.length;
      } else await s.createBranchFromTurn(turns, name);
      const ms = now() - t0;
      await s.switchToBranch('main');
      await s.deleteBranch(name);
      return ms;
    };
    // One pair of warm-up, not counted: the statements are prepared and the pages read once.
    await timedFork('warm-plain', false);
    await timedFork('warm-read', true);
    for (let i = 0; i < reps; i++) {
      const readFirst = i % 2 === 1;
      const a = await timedFork(`rep-${i}-${readFirst ? 'read' : 'plain'}`, readFirst);
      const b = await timedFork(`rep-${i}-${readFirst ? 'plain' : 'read'}`, !readFirst);
      const [plain, read] = readFirst ? [b, a] : [a, b];
      fork.push(plain);
      withItems.push(read);
      added.push(read - plain);
      const r0 = now();
      const items = await s.getTurnStoredItems(turns, 'main');
      reads.push(now() - r0);
      tables.push(tableAndMatch(items, turns));
    }
  } finally {
    s.close();
  }
  const report: ReplayBenchReport = {
    driver: resolveDriver(),
    turns,
    callsInTurn: CALLS,
    turnItems,
    generatedMs: round(generatedMs),
    forkMs: spread(fork),
    forkWithTurnItemsMs: spread(withItems),
    addedByForkMs: spread(added),
    turnReadMs: spread(reads),
    tableAndMatchMs: spread(tables),
    target: {
      ms: REPLAY_TARGET_MS,
      met: median(reads) + median(tables) <= REPLAY_TARGET_MS,
      how: 'median turn read + median table and matching; the fork pairs differ by the read plus commit noise',
    },
  };
  progress(
    `replay (${report.driver}): fork ${report.forkMs.min}–${report.forkMs.max} ms (median ${report.forkMs.median}), ` +
      `with the turn read ${report.forkWithTurnItemsMs.min}–${report.forkWithTurnItemsMs.max} (median ${report.forkWithTurnItemsMs.median}); ` +
      `added ${report.addedByForkMs.min}–${report.addedByForkMs.max} (median ${report.addedByForkMs.median}); ` +
      `turn read alone ${report.turnReadMs.min}–${report.turnReadMs.max} (median ${report.turnReadMs.median}); ` +
      `table + ${CALLS} matches ${report.tableAndMatchMs.min}–${report.tableAndMatchMs.max} (median ${report.tableAndMatchMs.median}); ` +
      `target ${REPLAY_TARGET_MS} ms ${report.target.met ? 'met' : 'NOT met'}`,
  );
  return report;
}
