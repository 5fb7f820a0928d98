/**
 * A light start (issue 43): what the extension's activation and `agent-sessions run` cost before they do anything
 * for the user, each against its floor. A section of `npm run bench` (`--light-start[=none]`, under `"lightStart"`),
 * or on its own (`nice -n 5 npx tsx scripts/bench/lightStart.ts [--runs N] [--activation-node PATH]`): it prints JSON. Every figure is a median with its range over N runs (default
 * 11), each run a process of its own, next to the machine's load average before and after.
 *
 * - **cli**: `agent-sessions run FILE SESSION --command AGENT --message …`, built as dist/cli.js is (minified, heavy
 *   packages in ./vendor/, dist/cli.js a loader of dist/cliMain.js through V8's code cache), on a 2-turn session file, its agent a Node script that records its process start. Three
 *   measures against `node -e 0`: wall time from spawning the CLI to the agent's process start (against spawn → exit
 *   of `node -e 0`); time in the CLI's process from its start to its spawning the agent (against `node -e 0`'s start →
 *   exit); and the CLI's CPU by then (against `node -e 0`'s whole CPU). CPU is the least disturbed by the machine's
 *   load; the target (1.5× `node -e 0`) is read on it and on the wall time. The code cache is in a folder of the
 *   bench's own (`XDG_CACHE_HOME`), written by one run before the measured ones (what every run after a command's
 *   first costs); `noCodeCache` is the same run with `AGENT_SESSIONS_CODE_CACHE=off`, measured between them (the
 *   first run of each command after an install or an update, or a machine where the cache cannot be kept).
 * - **activation**: dist/extension.js built as esbuild.mjs builds it, loaded and activated in a plain Node process
 *   with a stand-in for `vscode` (every call answers; nothing is drawn), with the CPU that costs: `cold` without the
 *   code cache (the first start after an install), `warm` with the cache an earlier start kept (every later start);
 *   the CPU (every thread of the process, so the loader's reading and checksums in libuv's pool count too) from loading
 *   dist/extension.js until the API `activate` promises is there (`cpuMs`), and to `activate`'s return (`syncCpuMs`:
 *   the part VS Code's figure counts), Node's own start not included; under `--activation-node` a Node 23.9+ (VS Code
 *   1.139's 24.15.0) adds `threadCpuMs`, the main thread's alone (the reading in libuv's pool left out). VS Code's own figure (the extension host's, with its API and its load) is
 *   read by the UI suite into test-results/activation.json; this one says what our part costs, free of the host's.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { median, round } from './measure';

// Bundled into dist/bench.js, `__dirname` is dist/ (npm runs the bench at the root); from source, scripts/bench/.
const ROOT = existsSync(join(__dirname, 'storeWorker.js')) ? resolve(__dirname, '..') : resolve(__dirname, '..', '..');

interface Spread {
  median: number;
  min: number;
  max: number;
}
const spread = (values: number[]): Spread => ({
  median: round(median(values)),
  min: round(Math.min(...values)),
  max: round(Math.max(...values)),
});
const load = (): number[] => loadavg().map((l) => Number(l.toFixed(2)));

/** Preloaded into `node -e 0`: its time since process start and its CPU when it exits. */
const FLOOR_HOOK = `process.on('exit', () => { const c = process.cpuUsage();
  require('node:fs').writeFileSync(process.env.BENCH_OUT, JSON.stringify({ sinceStartMs: performance.now(), cpuMs: (c.user + c.system) / 1000 })); });`;
/** Preloaded into the CLI: its time since process start and its CPU when it spawns its first process (the agent). */
const SPAWN_HOOK = `const cp = require('node:child_process'); const spawn = cp.spawn; let seen = false;
cp.spawn = function (...args) {
  if (!seen) { seen = true; const c = process.cpuUsage();
    require('node:fs').writeFileSync(process.env.BENCH_SPAWN, JSON.stringify({ sinceStartMs: performance.now(), cpuMs: (c.user + c.system) / 1000 })); }
  return spawn.apply(this, args);
};`;
/** The agent: its process start, on the same clock as the bench's (`performance.timeOrigin` is wall time). */
const AGENT = `require('node:fs').writeFileSync(process.env.BENCH_OUT, String(performance.timeOrigin));`;
/** Loads the extension and activates it with a stand-in `vscode`, then prints the CPU that cost. */
const ACTIVATE = `const Module = require('node:module');
function anything() {
  const handler = {
    get: (_t, key) => (key === 'fsPath' || key === 'path' ? process.env.BENCH_STORAGE : key === 'then' ? undefined
      : key === Symbol.toPrimitive ? () => '' : key === Symbol.iterator ? function* () {} : anything()),
    apply: () => anything(), construct: () => anything(), set: () => true, defineProperty: () => true,
  };
  const proto = new Proxy({}, handler);
  return new Proxy(function () {}, { ...handler, getPrototypeOf: () => proto });
}
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? anything() : load.call(this, request, ...rest); };
const ms = (c) => (c.user + c.system) / 1000;
// The host's thread alone (Node 23.9+): what VS Code's extension host shares with every extension.
const thread = () => (process.threadCpuUsage ? process.threadCpuUsage() : undefined);
const c0 = process.cpuUsage();
const t0 = thread();
const api = require(process.env.BENCH_EXTENSION).activate(anything());
const sync = process.cpuUsage(c0);
Promise.resolve(api).then(() => {
  const c = process.cpuUsage(c0);
  const t = t0 && process.threadCpuUsage(t0);
  require('node:fs').writeFileSync(process.env.BENCH_OUT, JSON.stringify({ cpuMs: ms(c), syncCpuMs: ms(sync), threadCpuMs: t && ms(t) }));
  setTimeout(() => process.exit(0), Number(process.env.BENCH_LINGER_MS));
});`;

async function importScript<T>(path: string): Promise<T> {
  return (await import(pathToFileURL(join(ROOT, 'scripts', path)).href)) as T;
}

interface Timed {
  sinceStartMs: number;
  cpuMs: number;
}

function cli(dir: string, RUNS: number): Record<string, unknown> {
  const out = join(dir, 'out.json');
  const spawned = join(dir, 'spawn.json');
  for (const [name, text] of [
    ['floor.cjs', FLOOR_HOOK],
    ['spawnHook.cjs', SPAWN_HOOK],
    ['agent.cjs', AGENT],
  ] as const)
    writeFileSync(join(dir, name), text);
  const env = {
    ...process.env,
    BENCH_OUT: out,
    BENCH_SPAWN: spawned,
    NODE_PATH: join(ROOT, 'node_modules'),
    XDG_CACHE_HOME: join(dir, 'xdg'),
    AGENT_SESSIONS_CODE_CACHE: '',
  };
  const wall = (): number => performance.timeOrigin + performance.now();
  const m = {
    floorWall: [] as number[],
    floorIn: [] as number[],
    floorCpu: [] as number[],
    wall: [] as number[],
    inProcess: [] as number[],
    cpu: [] as number[],
    noCacheWall: [] as number[],
    noCacheIn: [] as number[],
    noCacheCpu: [] as number[],
  };
  /** One `run`: wall time to the agent's start, time in process and CPU by the spawn. */
  const runOnce = (extraEnv: Record<string, string>): [number, number, number] => {
    const db = join(dir, 'run.db');
    copyFileSync(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-basic.db'), db);
    const t = wall();
    const agent = `"${process.execPath}" "${join(dir, 'agent.cjs')}"`;
    const args = ['-r', join(dir, 'spawnHook.cjs'), join(dir, 'cli.js'), 'run', db, 'basic_session', '--command', agent, '--message', 'Hi'];
    const r = spawnSync(process.execPath, args, { env: { ...env, ...extraEnv }, encoding: 'utf8' });
    if (!/exited without writing a turn/.test(r.stdout + r.stderr)) throw new Error(`run did not end as expected:\n${r.stdout}${r.stderr}`);
    const s = JSON.parse(readFileSync(spawned, 'utf8')) as Timed;
    return [Number(readFileSync(out, 'utf8')) - t, s.sinceStartMs, s.cpuMs];
  };
  // The first run of `run` keeps its code cache (written as it exits); the measured runs read it.
  runOnce({});
  const before = load();
  for (let i = 0; i < RUNS; i++) {
    const t = wall();
    spawnSync(process.execPath, ['-r', join(dir, 'floor.cjs'), '-e', '0'], { env });
    m.floorWall.push(wall() - t);
    const floor = JSON.parse(readFileSync(out, 'utf8')) as Timed;
    m.floorIn.push(floor.sinceStartMs);
    m.floorCpu.push(floor.cpuMs);
    const [w, inProcess, cpu] = runOnce({});
    m.wall.push(w);
    m.inProcess.push(inProcess);
    m.cpu.push(cpu);
    const [nw, nIn, nCpu] = runOnce({ AGENT_SESSIONS_CODE_CACHE: 'off' });
    m.noCacheWall.push(nw);
    m.noCacheIn.push(nIn);
    m.noCacheCpu.push(nCpu);
  }
  const ratio = (a: number[], b: number[]) => round(median(a) / median(b));
  return {
    runs: RUNS,
    loadAverage: { before, after: load() },
    wallMs: { run: spread(m.wall), nodeE0: spread(m.floorWall), ratio: ratio(m.wall, m.floorWall) },
    inProcessMs: { run: spread(m.inProcess), nodeE0: spread(m.floorIn), ratio: ratio(m.inProcess, m.floorIn) },
    cpuMs: { run: spread(m.cpu), nodeE0: spread(m.floorCpu), ratio: ratio(m.cpu, m.floorCpu) },
    noCodeCache: {
      wallMs: { run: spread(m.noCacheWall), ratio: ratio(m.noCacheWall, m.floorWall) },
      inProcessMs: { run: spread(m.noCacheIn), ratio: ratio(m.noCacheIn, m.floorIn) },
      cpuMs: { run: spread(m.noCacheCpu), ratio: ratio(m.noCacheCpu, m.floorCpu) },
    },
    target: 1.5,
  };
}

/** One activation's CPU, every thread of the process's. */
interface Activation {
  /** From loading dist/extension.js until the API `activate` gives is there (a promise of it: until it resolves). */
  cpuMs: number;
  /** From loading dist/extension.js to `activate`'s return: what VS Code's figure counts. */
  syncCpuMs: number;
  /** `cpuMs` on the main thread alone, under a Node that can tell (23.9+: `--activation-node`). */
  threadCpuMs?: number;
}

function activation(dir: string, RUNS: number, node: string): Record<string, unknown> {
  const out = join(dir, 'out.json');
  writeFileSync(join(dir, 'activate.cjs'), ACTIVATE);
  const storage = join(dir, 'storage');
  const runOnce = (lingerMs: number): Activation => {
    const env = {
      ...process.env,
      BENCH_OUT: out,
      BENCH_STORAGE: storage,
      BENCH_EXTENSION: join(dir, 'extension.js'),
      BENCH_LINGER_MS: String(lingerMs),
    };
    const r = spawnSync(node, [join(dir, 'activate.cjs')], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`activation failed: ${r.stderr}`);
    return JSON.parse(readFileSync(out, 'utf8')) as Activation;
  };
  const before = load();
  const cold: Activation[] = [];
  for (let i = 0; i < RUNS; i++) {
    rmSync(storage, { recursive: true, force: true });
    cold.push(runOnce(0));
  }
  // One start that stays until the cache is written (CACHE_WRITE_DELAY_MS after activation), then the later starts.
  rmSync(storage, { recursive: true, force: true });
  runOnce(6000);
  const warm = Array.from({ length: RUNS }, () => runOnce(0));
  const cpu = (runs: Activation[]) => runs.map((r) => r.cpuMs);
  const syncCpu = (runs: Activation[]) => runs.map((r) => r.syncCpuMs);
  const threadCpu = (runs: Activation[]) => runs.map((r) => r.threadCpuMs ?? NaN);
  return {
    runs: RUNS,
    node: node === process.execPath ? process.version : node,
    loadAverage: { before, after: load() },
    cpuMs: { cold: spread(cpu(cold)), warm: spread(cpu(warm)) },
    syncCpuMs: { cold: spread(syncCpu(cold)), warm: spread(syncCpu(warm)) },
    ...(cold[0]?.threadCpuMs === undefined ? {} : { threadCpuMs: { cold: spread(threadCpu(cold)), warm: spread(threadCpu(warm)) } }),
    warmOverCold: round(median(cpu(warm)) / median(cpu(cold))),
  };
}

/** The section's report: `{ node, cli, activation }`, each process run `runs` times. */
export async function runLightStartBench(runs = 11, activationNode = process.execPath): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'asi-light-start-'));
  try {
    const { cliBuildOptions } = await importScript<{ cliBuildOptions: (f: string, o: object) => esbuild.BuildOptions }>(
      'store-package/cliBuild.mjs',
    );
    const { vendorBuildOptions } = await importScript<{
      vendorBuildOptions: (d: string, c: esbuild.BuildOptions) => (esbuild.BuildOptions & { outfile: string })[];
    }>('vendorBundles.mjs');
    const { nodeBundleOptions, extensionBuildOptions } = await importScript<{
      nodeBundleOptions: (o: object) => esbuild.BuildOptions;
      extensionBuildOptions: (o: object) => esbuild.BuildOptions;
    }>('extensionBuild.mjs');
    // As esbuild.mjs builds dist/ for the VSIX (production), into this folder.
    await Promise.all([
      esbuild.build(cliBuildOptions(join(dir, 'cli.js'), { minify: true, serverDrivers: true, vendorDir: './vendor/', codeCache: true })),
      esbuild.build({ ...extensionBuildOptions({ production: true, outdir: dir }), logLevel: 'silent' }),
      ...vendorBuildOptions(join(dir, 'vendor'), nodeBundleOptions({ production: true }))
        .filter((o) => /\/(agUi|zod)\.js$/.test(o.outfile))
        .map((o) => esbuild.build({ ...o, logLevel: 'silent' })),
    ]);
    return { node: process.version, cli: cli(dir, runs), activation: activation(dir, runs, activationNode) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// On its own (`npx tsx scripts/bench/lightStart.ts`), not when bench.ts imports it.
if (/lightStart\.ts$/.test(process.argv[1] ?? '')) {
  const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 11;
  const node = process.argv.includes('--activation-node') ? process.argv[process.argv.indexOf('--activation-node') + 1] : undefined;
  void runLightStartBench(runs, node)
    .then((report) => process.stdout.write(`${JSON.stringify(report, null, 2)}\n`))
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
