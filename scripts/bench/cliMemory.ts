/**
 * The CLI's memory (issue 43: "peak memory of every CLI command on A within 100 MB, streamed where it is not"): each
 * `agent-sessions` command that reads file A run in a child process of its own, as a user runs it, with its peak
 * resident memory (`VmHWM`, or `process.resourceUsage().maxRSS` off Linux, at its exit, read through a preloaded
 * module; twice, the first run writing the code cache the second reads, as a user's second run does), its CPU time, its
 * wall time and the bytes it printed; once per driver: better-sqlite3 under this Node, node:sqlite under a Node of
 * the tools' cache (`--cli-memory-node`, default 22.22.1) with `AGENT_SESSION_SQLITE_DRIVER` set, next to the floor of
 * each (`node -e 0`, and the CLI's `--version`: what loading it costs before any file is read).
 *
 * The CLI is the one `npm run build` makes (dist/cli.js beside dist/bench.js, its heavy packages in dist/vendor/), or,
 * from source, the same esbuild options written into a temporary folder. Outputs go to a pipe this process drains
 * (counting bytes) or, for `export -o`, to a temporary file; nothing is written beside the session file. `search`'s
 * time is the search section's; its memory is here.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { round } from './measure';
import { ensureScaleFile } from './scaleFiles';
import { buildCliAsNpmBuilds } from './cliBuild';

/** The issue's target: every command's peak resident memory on file A. */
export const CLI_MEMORY_TARGET_MB = 100;

/** The Node whose node:sqlite the second run uses (one of the store suites' versions, kept in the tools' cache). */
export const DEFAULT_SQLITE_NODE = '22.22.1';

/** A command as the user types it; `FILE` stands for file A, `OUT` for a temporary output file. */
interface CliCase {
  name: string;
  args: string[];
}

/**
 * Every command that reads the session file (session `scale-a`; `b1_late` is a branch forked at 75 % of main); the
 * turns asked for are turn 500 and 1,000 of A, or the last ones of a smaller `--scale`.
 */
function casesFor(mainTurns: number): CliCase[] {
  const early = String(Math.min(500, mainTurns));
  const late = String(Math.min(1000, mainTurns));
  return [
    { name: 'ls', args: ['ls', 'FILE'] },
    { name: 'branches', args: ['branches', 'FILE', 'scale-a'] },
    { name: `show --turn ${early}`, args: ['show', 'FILE', 'scale-a', '--turn', early] },
    { name: 'show (whole session)', args: ['show', 'FILE', 'scale-a'] },
    { name: 'show --branch b1_late --json', args: ['show', 'FILE', 'scale-a', '--branch', 'b1_late', '--json'] },
    { name: 'usage', args: ['usage', 'FILE', 'scale-a'] },
    { name: 'usage --json', args: ['usage', 'FILE', 'scale-a', '--json'] },
    { name: `context --turn ${late}`, args: ['context', 'FILE', 'scale-a', '--turn', late] },
    { name: 'doctor', args: ['doctor', 'FILE'] },
    { name: 'export md (whole session) -o', args: ['export', 'FILE', 'scale-a', '--format', 'md', '-o', 'OUT'] },
    { name: 'export json (whole session) -o', args: ['export', 'FILE', 'scale-a', '--format', 'json', '-o', 'OUT'] },
    { name: 'export jsonl (main) -o', args: ['export', 'FILE', 'scale-a', '--format', 'jsonl', '-o', 'OUT'] },
    { name: 'export md --branch b1_late (stdout)', args: ['export', 'FILE', 'scale-a', '--format', 'md', '--branch', 'b1_late'] },
    // A word in many of A's messages (issue 43's `search A berlin`), its hits printed as they are found.
    { name: 'search berlin', args: ['search', 'FILE', 'berlin'] },
    // The issue's other filters. A tool: search builds the index of tool items in its first run (`firstRun`: the
    // file's first such search, the build after its hits) and reads it in the measured one.
    { name: 'search tool:get_weather', args: ['search', 'FILE', 'tool:get_weather'] },
    { name: 'search role:user', args: ['search', 'FILE', 'role:user'] },
    { name: 'search is:failed', args: ['search', 'FILE', 'is:failed'] },
  ];
}

export interface CliRun {
  command: string;
  driver: string;
  peakRssMB: number | null;
  cpuMs: number | null;
  wallMs: number;
  bytesOut: number;
  exitCode: number | null;
  /** The first line the command printed on stderr when it failed. */
  error?: string;
  /**
   * The same command's run just before: through a CLI with the code cache, the run that wrote the cache this one
   * read (a command's first run after an install or an update); the same as this one through a CLI without it. For a
   * `tool:` search, the driver's first: it builds the file's index of tool items after its hits. Counted by the
   * target as the measured run is.
   */
  firstRun?: { peakRssMB: number | null; cpuMs: number | null };
}

export interface CliMemoryReport {
  file: { path: string; bytes: number };
  cli: string;
  nodes: { driver: string; node: string; floorRssMB: number | null; versionRssMB: number | null }[];
  runs: CliRun[];
  /** Code cache files the commands wrote in the bench's folder (0: the CLI ran without its code cache). */
  codeCacheFiles: number;
  target: { peakRssMB: number; worstMB: number; over: string[]; met: boolean };
}

/**
 * Written into the temporary folder and preloaded (`-r`): the process's own peak RSS and CPU time, on fd 3. The peak
 * is `VmHWM` of /proc/self/status where there is one: Linux keeps `getrusage`'s maxrss across `exec`, so a child
 * spawned by this bench (whose own RSS is 50–90 MB) reported at least the bench's RSS at the fork, which hid every
 * figure below it; `VmHWM` is the high-water mark of the process's own memory since its `exec`.
 */
const PEAK_MODULE = `process.on('exit', () => {
  const u = process.resourceUsage();
  let maxRssKB = u.maxRSS;
  try {
    const hwm = /^VmHWM:\\s*(\\d+) kB/m.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'));
    if (hwm) maxRssKB = Number(hwm[1]);
  } catch {}
  try { require('node:fs').writeSync(3, JSON.stringify({ maxRssKB, cpuUs: u.userCPUTime + u.systemCPUTime })); } catch {}
});
`;

export async function runCliMemoryBench(
  options: { cacheDir: string; scale: number; sqliteNode: string | null; cliDir?: string; only?: string[] },
  progress: (m: string) => void,
): Promise<CliMemoryReport> {
  const scaleFile = ensureScaleFile(options.cacheDir, 'A', options.scale, progress);
  const file = scaleFile.path;
  const cases = casesFor(scaleFile.spec.sessions[0]!.turns).filter((c) => !options.only || options.only.includes(c.args[0]!));
  const dir = mkdtempSync(join(tmpdir(), 'asi-bench-cli-memory-'));
  try {
    const cli = options.cliDir ? join(options.cliDir, 'cli.js') : await buildCli(dir, progress);
    // The CLI as users run it loads itself through V8's code cache (src/cli/cliLoader.ts), written by a command's
    // first run: each command runs twice, the first writing the cache into a folder of the bench's own (never the
    // user's), the second measured. The cache holds compiled code: 5–10 MB of the peak of `search`. A folder per
    // driver: each one's first `tool:` search builds the file's index of tool items, as a user's first search does
    // (before, the better-sqlite3 run built it and the node:sqlite runs found it current: a first build on node:sqlite
    // peaked at 212–219 MB unseen). The first runs count for the target too.
    const xdgOf = (driver: string) => join(dir, `xdg-${driver.replace(/[^\w.-]/g, '_')}`);
    const peak = join(dir, 'peak.js');
    writeFileSync(peak, PEAK_MODULE);
    const nodes: { driver: string; node: string }[] = [{ driver: 'better-sqlite3', node: process.execPath }];
    // One or more Nodes for node:sqlite, comma-separated ("22.22.1,24.15.0"): V8 sizes its heap differently by version.
    for (const version of options.sqliteNode ? options.sqliteNode.split(',') : []) {
      const { nodePaths } = (await import(pathToFileURL(join(repositoryRoot(), 'scripts', 'host', 'hostTools.mjs')).href)) as {
        nodePaths(version: string): { bin: string };
      };
      const bin = nodePaths(version).bin;
      if (existsSync(bin)) nodes.push({ driver: options.sqliteNode!.includes(',') ? `node:sqlite@${version}` : 'node:sqlite', node: bin });
      else progress(`cli memory: no Node ${version} in the tools' cache (${bin}): node:sqlite not measured`);
    }
    const report: CliMemoryReport = {
      file: { path: file, bytes: statSync(file).size },
      cli,
      nodes: [],
      runs: [],
      codeCacheFiles: 0,
      target: undefined!,
    };
    for (const { driver, node } of nodes) {
      const env = {
        ...process.env,
        AGENT_SESSION_SQLITE_DRIVER: driver.replace(/@.*/, ''),
        NODE_PATH: join(repositoryRoot(), 'node_modules'),
        NO_COLOR: '1',
        XDG_CACHE_HOME: xdgOf(driver),
      };
      const floor = await runOne(node, ['-r', peak, '-e', '0'], env);
      const version = await runOne(node, ['-r', peak, cli, '--version'], env);
      report.nodes.push({ driver, node, floorRssMB: floor.peakRssMB, versionRssMB: version.peakRssMB });
      for (const c of cases) {
        progress(`cli memory (${driver}): ${c.name}`);
        const out = join(dir, 'out');
        rmSync(out, { force: true });
        const args = c.args.map((a) => (a === 'FILE' ? file : a === 'OUT' ? out : a));
        const first = await runOne(node, ['-r', peak, cli, ...args], env);
        rmSync(out, { force: true });
        const r = await runOne(node, ['-r', peak, cli, ...args], env);
        const bytesOut = existsSync(out) ? statSync(out).size : r.bytesOut;
        rmSync(out, { force: true });
        report.runs.push({ command: c.name, driver, ...r, bytesOut, firstRun: { peakRssMB: first.peakRssMB, cpuMs: first.cpuMs } });
      }
    }
    for (const { driver } of nodes) {
      const cacheDir = join(xdgOf(driver), 'agent-session-inspector', 'code-cache');
      report.codeCacheFiles += existsSync(cacheDir) ? readdirSync(cacheDir).length : 0;
    }
    const measured = report.runs.filter((r) => r.peakRssMB !== null);
    const over = [
      ...measured.filter((r) => r.peakRssMB! > CLI_MEMORY_TARGET_MB).map((r) => `${r.command} (${r.driver})`),
      ...report.runs
        .filter((r) => r.firstRun?.peakRssMB != null && r.firstRun.peakRssMB > CLI_MEMORY_TARGET_MB)
        .map((r) => `${r.command} (${r.driver}, first run)`),
    ];
    const worst = Math.max(...measured.map((r) => r.peakRssMB!), ...report.runs.map((r) => r.firstRun?.peakRssMB ?? 0));
    report.target = {
      peakRssMB: CLI_MEMORY_TARGET_MB,
      worstMB: worst,
      over,
      met: over.length === 0 && measured.length === report.runs.length,
    };
    return report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One child process: its peak RSS and CPU time from the preloaded module, its wall time, what it printed. */
function runOne(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<Omit<CliRun, 'command' | 'driver'>> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(node, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    let bytesOut = 0;
    let stderr = '';
    let usage = '';
    child.stdout!.on('data', (chunk: Buffer) => (bytesOut += chunk.length));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    (child.stdio[3] as NodeJS.ReadableStream).setEncoding('utf8');
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: string) => (usage += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const wallMs = round(performance.now() - t0);
      let peakRssMB: number | null = null;
      let cpuMs: number | null = null;
      try {
        const u = JSON.parse(usage) as { maxRssKB: number; cpuUs: number };
        peakRssMB = round(u.maxRssKB / 1024);
        cpuMs = round(u.cpuUs / 1000);
      } catch {
        // The process died before its exit handler ran: no figure.
      }
      const error = code === 0 ? undefined : stderr.trim().split('\n')[0]?.slice(0, 300);
      resolve({ peakRssMB, cpuMs, wallMs, bytesOut, exitCode: code, ...(error !== undefined ? { error } : {}) });
    });
  });
}

/** True when running as the `dist/bench.js` bundle (its siblings are the other bundles). */
const BUNDLED = existsSync(join(__dirname, 'storeWorker.js'));

function repositoryRoot(): string {
  // Bundled, `__dirname` is dist/ (npm runs the bench at the root); from source, scripts/bench/.
  return BUNDLED ? join(__dirname, '..') : join(__dirname, '..', '..');
}

/** The CLI as `npm run build` makes it: dist/cli.js when bundled, else the same options into `dir`. */
async function buildCli(dir: string, progress: (m: string) => void): Promise<string> {
  if (BUNDLED) return join(__dirname, 'cli.js');
  progress('cli memory: building the CLI as npm run build does');
  return buildCliAsNpmBuilds(dir, repositoryRoot(), { codeCache: true });
}

/** The section as a table for stderr: MB of peak RSS per command and driver. */
export function cliMemoryTable(r: CliMemoryReport): string {
  const drivers = r.nodes.map((n) => n.driver);
  const rows = [
    ['command', ...drivers.map((d) => `${d}: peak MB [first run's] / CPU ms / out MB`)],
    ['node -e 0', ...r.nodes.map((n) => `${n.floorRssMB ?? '–'}`)],
    ['--version', ...r.nodes.map((n) => `${n.versionRssMB ?? '–'}`)],
    ...[...new Set(r.runs.map((x) => x.command))].map((command) => [
      command,
      ...drivers.map((d) => {
        const x = r.runs.find((y) => y.command === command && y.driver === d);
        if (!x) return '';
        // A first run that peaked higher (the index's build, the cache's writing) in brackets after it.
        const first =
          x.firstRun?.peakRssMB != null && x.peakRssMB !== null && x.firstRun.peakRssMB > x.peakRssMB + 2
            ? ` [${x.firstRun.peakRssMB}]`
            : '';
        const figures = `${x.peakRssMB ?? '–'}${first} / ${x.cpuMs ?? '–'} / ${round(x.bytesOut / 1e6)}`;
        return x.exitCode === 0 ? figures : `${figures} (exit ${x.exitCode}: ${x.error ?? ''})`;
      }),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return [
    `CLI memory on ${r.file.path} (${round(r.file.bytes / 1e6)} MB); target: peak RSS <= ${r.target.peakRssMB} MB: ${r.target.met ? 'met' : `not met (${r.target.over.join(', ')})`}`,
    ...rows.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')),
  ].join('\n');
}

// Alone: `npx tsx scripts/bench/cliMemory.ts [--scale=1] [--sqlite-node=22.22.1[,24.15.0]|none] [--cli-dir=DIR] [--only=show,…]`
// (JSON on stdout, the table on stderr). Only as this source file: bundled into dist/bench.js, `__filename` is the bundle's.
if (/[\\/]cliMemory\.ts$/.test(__filename) && process.argv[1] && /[\\/]cliMemory\.ts$/.test(process.argv[1])) {
  void (async () => {
    const opt = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
    const { CACHE } = (await import(pathToFileURL(join(repositoryRoot(), 'scripts', 'host', 'hostTools.mjs')).href)) as { CACHE: string };
    const sqliteNode = opt('sqlite-node') ?? DEFAULT_SQLITE_NODE;
    const report = await runCliMemoryBench(
      {
        cacheDir: join(CACHE, 'bench'),
        scale: Number(opt('scale') ?? 1),
        sqliteNode: sqliteNode === 'none' ? null : sqliteNode,
        // A CLI built elsewhere (its folder, with vendor/ beside it): e.g. an older commit's, for a before/after.
        ...(opt('cli-dir') ? { cliDir: opt('cli-dir') } : {}),
        // Only these commands (comma-separated first words: --only=show,export).
        ...(opt('only') ? { only: opt('only')!.split(',') } : {}),
      },
      (m) => process.stderr.write(`${m}\n`),
    );
    process.stderr.write(`\n${cliMemoryTable(report)}\n`);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  })();
}
