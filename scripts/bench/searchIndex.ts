/**
 * The search's index of tool items (src/store/search/toolIndex.ts) on one file, on whichever driver this Node runs:
 * its first build from nothing, then each query's whole scan without and with the index, alternating, `--runs` times
 * after one unmeasured pair, CPU ms of this process (every hit counted, nothing printed), hits compared. Prints JSON.
 *
 *   npx tsx scripts/bench/searchIndex.ts [FILE] [--runs=5] [--query='tool:get_weather'] [--query='is:failed']
 *   $NODE24 --import tsx scripts/bench/searchIndex.ts …          # node:sqlite (Node 22/24 have no better-sqlite3 build)
 *
 * FILE defaults to the bench's file A (generated into the tools' cache when missing). The index lives in a temporary
 * folder, removed at the end.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSessionDatabase } from '../../src/store';
import { ToolIndex } from '../../src/store/search/toolIndex';
import { CACHE } from '../host/hostTools.mjs';
import { median, round } from './measure';
import { ensureScaleFile } from './scaleFiles';
import { runOurs } from './searchFloors';

const cpuOf = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1000;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? 5);
  const queries = args.filter((a) => a.startsWith('--query=')).map((a) => a.slice(8));
  const file = args.find((a) => !a.startsWith('--')) ?? ensureScaleFile(join(CACHE, 'bench'), 'A', 1, () => {}).path;
  const db = openSessionDatabase(file);
  const dir = mkdtempSync(join(tmpdir(), 'asi-search-index-'));
  try {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const index = ToolIndex.open(dir, db);
    try {
      index.catchUp(db);
    } finally {
      index.close();
    }
    const build = {
      wallMs: round(performance.now() - t0),
      cpuMs: round(cpuOf(process.cpuUsage(c0))),
      bytes: readdirSync(dir).reduce((n, name) => n + statSync(join(dir, name)).size, 0),
    };
    const results = [];
    for (const query of queries.length > 0 ? queries : ['tool:get_weather', 'is:failed']) {
      const without: number[] = [];
      const withIndex: number[] = [];
      let hits = -1;
      for (let r = -1; r < runs; r++) {
        const a = await runOurs(db, query, undefined);
        const b = await runOurs(db, query, undefined, dir);
        if (a.hits !== b.hits) throw new Error(`${query}: ${b.hits} hits with the index, ${a.hits} without`);
        hits = a.hits;
        if (r < 0) continue;
        without.push(round(a.cpuMs));
        withIndex.push(round(b.cpuMs));
      }
      results.push({ query, hits, withoutCpuMs: without, withCpuMs: withIndex, ratio: round(median(withIndex) / median(without)) });
    }
    console.log(JSON.stringify({ file, node: process.version, driver: db.driver, runs, build, results }, null, 2));
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
