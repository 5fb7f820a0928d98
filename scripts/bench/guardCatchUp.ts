/**
 * The history guard's share of the live refresh the user waits for (issue 44: "the guard adds at most 5% to the
 * live-refresh cost"), through the store worker as the extension runs both: two copies of one 10,000-turn session
 * file, one guarded, one not; `RUNS` times per copy (the copies alternating, so load drifts hit both alike), another
 * process appends a turn (4 items and its usage, as a run writes), and once it has committed this process does what
 * the extension does on the registry's change event: for the guarded copy the guard's look (guardService.ts), and the
 * live refresh's requests (the change check, the session list, the branch tree, the newest page of turns and the new
 * turn's items, on a connection keeping totals). The catch-up is the wall time from the commit to the refresh's last
 * answer. `--look-first`: the look is asked at the commit, before the refresh's reads (the order the extension had
 * before `GUARD_LOOK_DELAY_MS`); default: `GUARD_LOOK_DELAY_MS` after the commit, as guardService.ts asks it now.
 *
 * `--control`: the second copy is not looked at either (an A/A run: what the two copies differ by without the guard).
 *
 * Usage: npx tsx scripts/bench/guardCatchUp.ts [--runs N] [--look-first | --control] [--file PATH --session S]
 * (default: a generated 10,000-turn file in a new temporary folder; `--file` copies PATH twice into it)
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession } from '../../src/store';
import { StoreClient, type WorkerSessionDatabase } from '../../src/store/worker/storeClient';
import { median, now, round } from './measure';
import { turnInput } from './workload';
import { runInOtherProcess, storeWorkerModule } from './benchModules';
import { GUARD_LOOK_DELAY_MS } from '../../src/store/guard/guardedFiles';

const TURNS = 10_000;

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** Another process appends a turn on `main` and prints `committed`; resolves then (its exit is not waited for). */
async function appendInOtherProcess(path: string, session: string, n: number): Promise<void> {
  let committed: () => void = () => undefined;
  const seen = new Promise<void>((resolve) => (committed = resolve));
  const done = runInOtherProcess(
    `const [path, session, n] = process.argv.slice(-3);
     (async () => {
       const s = new STORE.AdvancedSQLiteSession({ sessionId: session, dbPath: path });
       await s.addItems([
         { role: 'user', content: 'appended question ' + n },
         { type: 'function_call', name: 'lookup', callId: 'guard_append_' + n, arguments: '{}' },
         { type: 'function_call_result', name: 'lookup', callId: 'guard_append_' + n, status: 'completed', output: 'ok' },
         { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'appended answer ' + n }] },
       ]);
       await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 2, totalTokens: 12 } } });
       console.log('committed');
       s.close();
     })().catch((e) => { console.error(e); process.exit(1); });`,
    [path, session, String(n)],
    (line) => {
      if (line === 'committed') committed();
    },
  );
  const ended = done.then((r) => {
    if (r.code !== 0) throw new Error(`the appending process failed (${r.code}): ${r.stderr.slice(0, 500)}`);
  });
  await Promise.race([seen, ended]);
  // Let the child's exit not land inside the next timed window.
  await ended;
}

/** The live refresh's reads after a `rows` change, as the registry and the conversation view ask them. */
async function refresh(db: WorkerSessionDatabase, session: string): Promise<void> {
  await db.hasChanged();
  await db.listSessions();
  await db.getBranchTree(session);
  const latest = await db.getTurnsPageBefore(session, 'main', { limit: 50 });
  const last = latest.turns.at(-1)?.turn;
  if (last !== undefined) await db.getTurnItems(session, 'main', last);
}

function spread(values: number[]): { median: number; min: number; max: number } {
  return { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) };
}

async function main(): Promise<void> {
  const runs = Number(option('--runs') ?? 20);
  const lookFirst = process.argv.includes('--look-first');
  const control = process.argv.includes('--control');
  const dir = mkdtempSync(join(tmpdir(), 'asi-guard-catchup-'));
  const source = option('--file');
  const session = source ? (option('--session') ?? 'scale-a') : 'guard';
  const plain = join(dir, 'plain.db');
  const guarded = join(dir, 'guarded.db');
  const guardPath = join(dir, 'history-guard.db');
  if (source) {
    copyFileSync(source, plain);
  } else {
    const writer = new AdvancedSQLiteSession({ sessionId: session, dbPath: plain, createTables: true });
    const batch: AgentInputItem[] = [];
    for (let t = 1; t <= TURNS; t++) {
      batch.push(...turnInput(t).items);
      if (t % 250 === 0) await writer.addItems(batch.splice(0));
    }
    writer.close();
  }
  copyFileSync(plain, guarded);

  const worker = await storeWorkerModule();
  const client = new StoreClient(worker.file, { execArgv: worker.execArgv, codeCacheDir: worker.codeCacheDir });
  const catchUp = { plain: [] as number[], guarded: [] as number[] };
  const lookMs: number[] = [];
  let driver = '';
  try {
    const dbs = {
      plain: await client.openDatabase(plain, { keepTotals: true }),
      guarded: await client.openDatabase(guarded, { keepTotals: true }),
    };
    driver = dbs.plain.driver;
    // The kept totals' first count and the guard's first look: a live refresh never pays them again.
    await refresh(dbs.plain, session);
    await refresh(dbs.guarded, session);
    const first = now();
    await client.fileCall('lookAtGuardedFile', guarded, guardPath);
    const firstLookMs = now() - first;
    for (let run = 0; run < runs * 2; run++) {
      // Alternate which copy goes first, so each kind takes its turn right after the other's.
      const kind: 'plain' | 'guarded' = (run + Math.floor(run / 2)) % 2 === 0 ? 'plain' : 'guarded';
      const path = kind === 'plain' ? plain : guarded;
      await appendInOtherProcess(path, session, run);
      const t0 = now();
      if (kind === 'guarded' && control) {
        await refresh(dbs.guarded, session);
        catchUp.guarded.push(now() - t0);
      } else if (kind === 'guarded') {
        // The guard service does not wait for its look: the refresh's requests queue beside it in the worker.
        const look = lookFirst
          ? client.fileCall('lookAtGuardedFile', guarded, guardPath)
          : new Promise((resolve) => setTimeout(resolve, GUARD_LOOK_DELAY_MS)).then(() => {
              const l0 = now();
              return client.fileCall('lookAtGuardedFile', guarded, guardPath).then((seen) => {
                lookMs.push(now() - l0);
                return seen;
              });
            });
        await refresh(dbs.guarded, session);
        catchUp.guarded.push(now() - t0);
        const seen = await look;
        if (seen.kind !== 'grown') throw new Error(`expected a grown file, the look said ${seen.kind}`);
      } else {
        await refresh(dbs.plain, session);
        catchUp.plain.push(now() - t0);
      }
    }
    await dbs.plain.close();
    await dbs.guarded.close();
    const report = {
      driver,
      node: process.version,
      runs,
      lookFirst,
      control,
      firstLookMs: round(firstLookMs),
      catchUpMs: { withoutGuard: spread(catchUp.plain), withGuard: spread(catchUp.guarded) },
      ...(lookMs.length > 0 ? { lookDelayMs: GUARD_LOOK_DELAY_MS, lookMs: spread(lookMs) } : {}),
      ratioOfMedians: round(median(catchUp.guarded) / median(catchUp.plain)),
      target: 1.05,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await client.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
