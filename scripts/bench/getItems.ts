/**
 * `getItems()` against its floor, run after run (issue 43: "within 1.5× of the floor in 5 of 5 bench runs, each run's
 * median", not only in the best one). The runner reads a branch's whole history with it before every turn.
 *
 * One T-turn session of the workload W(T) (workload.ts) is written by the store, in NORMAL, and copied for the floor
 * (`FloorSession.getItems`: the same JOIN with better-sqlite3's `pluck()` and one `JSON.parse` per row, rows as
 * stored; on node:sqlite, where the store runs on it, the same statement returning arrays). Each run opens both anew, warms each up with a few calls, then takes `reps` samples of one call each,
 * alternating who goes first; no collection is forced (what a call's garbage costs is part of its time). Reported:
 * each run's medians and ratio, and how many runs were within the target.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openSessionDatabase, type DriverName } from '../../src/store';
import { openNodeSqliteFloor } from './nodeSqliteFloor';
import { FloorSession } from './floor';
import { median, now, round, settle } from './measure';
import { workload } from './workload';

export const GET_ITEMS_TARGET_RATIO = 1.5;
const WARM_CALLS = 3;

export interface GetItemsReport {
  /** The driver the store picked here, and the floor's. */
  driver: DriverName;
  node: string;
  turns: number;
  items: number;
  reps: number;
  runs: { storeMedianMs: number; floorMedianMs: number; ratio: number; storeSamplesMs: number[]; floorSamplesMs: number[] }[];
  ratios: number[];
  target: { ratio: number; runsWithin: number; runs: number; met: boolean };
}

export async function runGetItemsBench(
  config: { turns: number; runs: number; reps: number },
  progress: (m: string) => void,
): Promise<GetItemsReport> {
  const dir = mkdtempSync(join(tmpdir(), 'asi-bench-getitems-'));
  try {
    const storePath = join(dir, 'store.db');
    const floorPath = join(dir, 'floor.db');
    progress(`getItems: writing ${config.turns} turns`);
    const writer = new AdvancedSQLiteSession({ sessionId: 'bench-session', dbPath: storePath, createTables: true, synchronous: 'NORMAL' });
    try {
      for (const turn of workload(config.turns)) {
        await writer.addItems(turn.items);
        await writer.storeRunUsage(turn.runResult);
      }
    } finally {
      writer.close();
    }
    copyFileSync(storePath, floorPath);
    const probe = openSessionDatabase(storePath);
    const driver = probe.driver;
    probe.close();
    const runs: GetItemsReport['runs'] = [];
    let items = 0;
    for (let run = 1; run <= config.runs; run++) {
      progress(`getItems: run ${run}/${config.runs}`);
      const store = new AdvancedSQLiteSession({ sessionId: 'bench-session', dbPath: storePath });
      const floor = itemsFloor(floorPath, driver);
      try {
        for (let i = 0; i < WARM_CALLS; i++) {
          items = (await store.getItems()).length;
          floor.getItems();
        }
        const s: number[] = [];
        const f: number[] = [];
        for (let r = 0; r < config.reps; r++) {
          await settle();
          const timeStore = async (): Promise<void> => {
            const t0 = now();
            await store.getItems();
            s.push(now() - t0);
          };
          const timeFloor = (): void => {
            const t0 = now();
            floor.getItems();
            f.push(now() - t0);
          };
          if (r % 2 === 0) {
            await timeStore();
            timeFloor();
          } else {
            timeFloor();
            await timeStore();
          }
        }
        runs.push({
          storeMedianMs: round(median(s)),
          floorMedianMs: round(median(f)),
          ratio: round(median(s) / median(f)),
          storeSamplesMs: s.map(round),
          floorSamplesMs: f.map(round),
        });
      } finally {
        store.close();
        floor.close();
      }
    }
    const ratios = runs.map((r) => r.ratio);
    const within = ratios.filter((r) => r <= GET_ITEMS_TARGET_RATIO).length;
    return {
      driver,
      node: process.version,
      turns: config.turns,
      items,
      reps: config.reps,
      runs,
      ratios,
      target: { ratio: GET_ITEMS_TARGET_RATIO, runsWithin: within, runs: runs.length, met: within === runs.length },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The floor's read of the branch on `driver`: `FloorSession` on better-sqlite3; on node:sqlite the same statement on a
 * connection of its own, rows as arrays (`openNodeSqliteFloor`).
 */
function itemsFloor(path: string, driver: DriverName): { getItems(): unknown[]; close(): void } {
  if (driver === 'better-sqlite3') return new FloorSession(path, 'bench-session', 'NORMAL');
  const db = openNodeSqliteFloor(path, { readOnly: false });
  const st = db.prepare(
    `SELECT m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
     WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number`,
  );
  return {
    getItems: () => (st.all('bench-session', 'main') as [string][]).map((r) => JSON.parse(r[0]) as unknown),
    close: () => db.close(),
  };
}
