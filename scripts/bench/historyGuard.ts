/**
 * The history guard's cost (issue 44, docs/history-guard.md): on a 10,000-turn session, each of `RUNS` appends of one
 * turn by another connection is followed by what a live refresh reads (the registry's change check, the session list,
 * the branch tree, the newest page of turns and the new turn's items, on a read-only inspector connection keeping
 * totals, as the store worker's) and by the guard's look; both timed in this process (CPU and wall), so their ratio is
 * the guard's share. Target: the look costs at most 5% of the refresh. Also: the first look (every item kept), the
 * bytes the store takes per item, and one removal (a pop) found by a look.
 *
 * Usage: npx tsx scripts/bench/historyGuard.ts [folder]   (default: a new folder under the system's temporary one)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession } from '../../src/store';
import { openSessionDatabase } from '../../src/store/inspector/sessionDatabase';
import { HistoryGuardStore } from '../../src/store/guard/guardStore';
import { observeSessionFile } from '../../src/store/guard/guardObserver';
import { median, now, round } from './measure';
import { turnInput } from './workload';

const TURNS = 10_000;
const RUNS = 30;
const SESSION = 'guard';

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function timed<T>(fn: () => T): { cpu: number; wall: number; value: T } {
  const c0 = cpuMs();
  const w0 = now();
  const value = fn();
  return { cpu: cpuMs() - c0, wall: now() - w0, value };
}

const size = (p: string): number => statSync(p, { throwIfNoEntry: false })?.size ?? 0;

async function main(): Promise<void> {
  const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'asi-guard-bench-'));
  const path = join(dir, 'session.db');
  const guardPath = join(dir, 'guard.db');
  const writer = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path, createTables: true });
  const batch: AgentInputItem[] = [];
  for (let t = 1; t <= TURNS; t++) {
    batch.push(...turnInput(t).items);
    if (t % 250 === 0) await writer.addItems(batch.splice(0));
  }
  const db = openSessionDatabase(path, { readonly: true, keepTotals: true });
  const guard = HistoryGuardStore.open(guardPath);
  const refresh = () => {
    db.hasChanged();
    db.listSessions();
    db.getBranchTree(SESSION);
    const latest = db.getTurnsPageBefore(SESSION, 'main', { limit: 50 });
    const last = latest.turns.at(-1)?.turn;
    if (last !== undefined) db.getTurnItems(SESSION, 'main', last);
  };
  refresh(); // the kept totals' first count, which a live refresh never pays again
  const first = timed(() => observeSessionFile(guard, db));
  guard.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const use = guard.diskUse();
  const sessionBytes = size(path) + size(`${path}-wal`);

  const refreshCpu: number[] = [];
  const refreshWall: number[] = [];
  const guardCpu: number[] = [];
  const guardWall: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    await writer.addItems(turnInput(TURNS + r + 1).items);
    const a = timed(refresh);
    const b = timed(() => observeSessionFile(guard, db));
    if (b.value.kind !== 'grown') throw new Error(`expected a grown file, the look said ${b.value.kind}`);
    refreshCpu.push(a.cpu);
    refreshWall.push(a.wall);
    guardCpu.push(b.cpu);
    guardWall.push(b.wall);
    ratios.push(b.wall / a.wall);
  }
  // A look that finds nothing new (the registry's event came from another file's change, or a second event).
  const unchanged: number[] = [];
  for (let r = 0; r < RUNS; r++) unchanged.push(timed(() => observeSessionFile(guard, db)).cpu);
  await writer.popItem();
  const pop = timed(() => observeSessionFile(guard, db));
  const popRefresh = timed(refresh);

  const report = {
    turns: TURNS,
    items: use.items,
    runs: RUNS,
    firstLook: { cpuMs: round(first.cpu), wallMs: round(first.wall), rowsSeen: first.value.rowsSeen },
    bytes: {
      sessionFile: sessionBytes,
      guardStore: use.fileBytes,
      perItem: use.fileBytes === null ? null : round(use.fileBytes / use.items),
      itemTextPerItem: round(use.itemTextChars / use.items),
    },
    appendRefresh: { cpuMedianMs: round(median(refreshCpu)), wallMedianMs: round(median(refreshWall)) },
    appendGuard: { cpuMedianMs: round(median(guardCpu)), wallMedianMs: round(median(guardWall)) },
    unchangedLook: { cpuMedianMs: round(median(unchanged)) },
    guardShare: {
      medianWallRatio: round(median(ratios)),
      cpuRatioOfSums: round(guardCpu.reduce((x, y) => x + y, 0) / refreshCpu.reduce((x, y) => x + y, 0)),
      target: 0.05,
    },
    removal: {
      lookWallMs: round(pop.wall),
      lookCpuMs: round(pop.cpu),
      refreshWallMs: round(popRefresh.wall),
      layers: pop.value.layers.length,
    },
  };
  writer.close();
  db.close();
  guard.close();
  if (process.argv[2] === undefined) rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
