/**
 * The first hit of `agent-sessions search FILE WORD` (issue 43: "the CLI prints hits as they are found: first hit on A
 * within 200 ms for a common word"), against `node -e` printing one line, alternating, in processes of their own, on
 * both drivers: better-sqlite3 under this Node, node:sqlite under a Node of the tools' cache (`--sqlite-node`, default
 * 22.22.1) with `AGENT_SESSION_SQLITE_DRIVER` set, as cliMemory.ts runs them.
 *
 * A preloaded module records, at the child's first write to stdout (the search writes its header with its first batch
 * of hits), the time since the process started (`performance.now()`, Node's own start included) and the process's
 * CPU time by then; the parent also takes the wall time from spawn to the first bytes on the pipe, then ends the child
 * (the rest of the scan is not this figure). CPU is the figure the load of a shared machine moves least.
 *
 * The CLI is built as `npm run build` builds dist/cli.js (a loader and cliMain.js through V8's code cache), into a
 * temporary folder, with its code cache in that folder; one unmeasured run per driver writes the cache first.
 *
 *   npx tsx scripts/bench/cliFirstHit.ts A|B|C|L|--file=PATH [--query=berlin] [--runs=7] [--sqlite-node=22.22.1|none]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, round } from './measure';
import { standaloneBenchArgs } from './scaleFiles';
import { DEFAULT_SQLITE_NODE } from './cliMemory';
import { buildCliAsNpmBuilds } from './cliBuild';

/** The target: the first hit of a common word on file A. */
export const FIRST_HIT_TARGET_MS = 200;

const ROOT = join(__dirname, '..', '..');

/** Preloaded (`-r`): at the first write to stdout, the time since the process started and its CPU time, on fd 3. */
const FIRST_WRITE_MODULE = `const write = process.stdout.write.bind(process.stdout);
let seen = false;
process.stdout.write = (chunk, ...rest) => {
  if (!seen) {
    seen = true;
    const u = process.cpuUsage();
    try { require('node:fs').writeSync(3, JSON.stringify({ ms: performance.now(), cpuMs: (u.user + u.system) / 1000 }) + '\\n'); } catch {}
  }
  return write(chunk, ...rest);
};
`;

interface Sample {
  /** Process start → first write to stdout, the child's clock. */
  firstWriteMs: number;
  /** The child's CPU by its first write. */
  cpuMs: number;
  /** Spawn → first bytes on the pipe, the parent's clock. */
  wallMs: number;
}

/** One child: its first write's figures, then it is ended. */
function firstWrite(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(node, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    let wallMs = NaN;
    let mark = '';
    let stderr = '';
    let done = false;
    const finish = (): void => {
      if (done || !Number.isFinite(wallMs) || !mark.includes('\n')) return;
      done = true;
      child.kill('SIGKILL');
      const m = JSON.parse(mark.slice(0, mark.indexOf('\n'))) as { ms: number; cpuMs: number };
      resolve({ firstWriteMs: m.ms, cpuMs: m.cpuMs, wallMs });
    };
    child.stdout!.once('data', () => {
      wallMs = performance.now() - t0;
      finish();
    });
    child.stdout!.resume();
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-2000)));
    (child.stdio[3] as NodeJS.ReadableStream).setEncoding('utf8');
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (c: string) => {
      mark += c;
      finish();
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (!done) reject(new Error(`${args.join(' ')} ended (${code}) before writing: ${stderr.trim().split('\n')[0] ?? ''}`));
    });
  });
}

const summary = (xs: Sample[]) => {
  const of = (k: keyof Sample) => {
    const v = xs.map((x) => x[k]);
    return { min: round(Math.min(...v)), median: round(median(v)), max: round(Math.max(...v)) };
  };
  return { firstWriteMs: of('firstWriteMs'), cpuMs: of('cpuMs'), wallMs: of('wallMs') };
};

export interface CliFirstHitReport {
  file: { path: string; bytes: number };
  query: string;
  runs: number;
  load: { start: number[]; end: number[] };
  drivers: {
    driver: string;
    node: string;
    search: ReturnType<typeof summary>;
    floor: ReturnType<typeof summary>;
    /** Medians' ratios, search / floor. */
    ratioCpu: number;
    ratioFirstWrite: number;
    ratioWall: number;
    /** Runs whose first write came within the target (the child's clock, from its process start). */
    runsWithinTarget: number;
  }[];
  target: { ms: number };
}

export async function runCliFirstHitBench(
  options: { path: string; query: string; runs: number; sqliteNode: string | null },
  progress: (m: string) => void,
): Promise<CliFirstHitReport> {
  const start = loadavg().map(round);
  const dir = mkdtempSync(join(tmpdir(), 'asi-bench-first-hit-'));
  try {
    progress('cli first hit: building the CLI as npm run build does');
    const cli = await buildCliAsNpmBuilds(join(dir, 'cli'), ROOT);
    const pre = join(dir, 'first-write.js');
    writeFileSync(pre, FIRST_WRITE_MODULE);
    const nodes: { driver: string; node: string }[] = [{ driver: 'better-sqlite3', node: process.execPath }];
    if (options.sqliteNode) {
      const { nodePaths } = (await import(pathToFileURL(join(ROOT, 'scripts', 'host', 'hostTools.mjs')).href)) as {
        nodePaths(version: string): { bin: string };
      };
      const bin = nodePaths(options.sqliteNode).bin;
      if (existsSync(bin)) nodes.push({ driver: 'node:sqlite', node: bin });
      else progress(`cli first hit: no Node ${options.sqliteNode} in the tools' cache (${bin}): node:sqlite not measured`);
    }
    const report: CliFirstHitReport = {
      file: { path: options.path, bytes: statSync(options.path).size },
      query: options.query,
      runs: options.runs,
      load: { start, end: [] },
      drivers: [],
      target: { ms: FIRST_HIT_TARGET_MS },
    };
    for (const { driver, node } of nodes) {
      const cache = join(dir, `xdg-${driver.replace(/\W/g, '')}`);
      mkdirSync(cache, { recursive: true, mode: 0o700 });
      // better-sqlite3 is external to the bundle: found in the repository's node_modules, as cliMemory.ts finds it.
      const env = {
        ...process.env,
        AGENT_SESSION_SQLITE_DRIVER: driver,
        NODE_PATH: join(ROOT, 'node_modules'),
        NO_COLOR: '1',
        XDG_CACHE_HOME: cache,
      };
      const searchArgs = ['-r', pre, cli, 'search', options.path, options.query];
      const floorArgs = ['-r', pre, '-e', "process.stdout.write('x\\n')"];
      await firstWrite(node, searchArgs, env); // writes the code cache
      const search: Sample[] = [];
      const floor: Sample[] = [];
      for (let r = 0; r < options.runs; r++) {
        if (r % 2 === 0) {
          floor.push(await firstWrite(node, floorArgs, env));
          search.push(await firstWrite(node, searchArgs, env));
        } else {
          search.push(await firstWrite(node, searchArgs, env));
          floor.push(await firstWrite(node, floorArgs, env));
        }
        progress(`cli first hit (${driver}): run ${r + 1}/${options.runs}: ${round(search.at(-1)!.firstWriteMs)} ms`);
      }
      const s = summary(search);
      const f = summary(floor);
      report.drivers.push({
        driver,
        node: node === process.execPath ? process.versions.node : (options.sqliteNode ?? ''),
        search: s,
        floor: f,
        ratioCpu: round(s.cpuMs.median / f.cpuMs.median),
        ratioFirstWrite: round(s.firstWriteMs.median / f.firstWriteMs.median),
        ratioWall: round(s.wallMs.median / f.wallMs.median),
        runsWithinTarget: search.filter((x) => x.firstWriteMs <= FIRST_HIT_TARGET_MS).length,
      });
    }
    report.load.end = loadavg().map(round);
    return report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Alone only (not part of dist/bench.js): `__filename` is this source file.
if (/[\\/]cliFirstHit\.ts$/.test(__filename) && process.argv[1] && /[\\/]cliFirstHit\.ts$/.test(process.argv[1])) {
  void (async () => {
    const { path, runs, opt } = await standaloneBenchArgs(process.argv.slice(2), 7);
    const sqliteNode = opt('sqlite-node') ?? DEFAULT_SQLITE_NODE;
    const report = await runCliFirstHitBench(
      { path, query: opt('query') ?? 'berlin', runs, sqliteNode: sqliteNode === 'none' ? null : sqliteNode },
      (m) => process.stderr.write(`${m}\n`),
    );
    for (const d of report.drivers) {
      process.stderr.write(
        `first hit of '${report.query}' (${d.driver}): ${d.search.firstWriteMs.min}–${d.search.firstWriteMs.max} ms (median ${d.search.firstWriteMs.median}), ` +
          `CPU ${d.search.cpuMs.median} ms; floor ${d.floor.firstWriteMs.median} ms, CPU ${d.floor.cpuMs.median} ms; ratios CPU ${d.ratioCpu}×, ` +
          `first write ${d.ratioFirstWrite}×, wall ${d.ratioWall}×; within ${FIRST_HIT_TARGET_MS} ms: ${d.runsWithinTarget} of ${report.runs}\n`,
      );
    }
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  })().catch((err: unknown) => {
    process.stderr.write(`cli first hit bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
