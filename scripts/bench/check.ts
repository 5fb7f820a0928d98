/**
 * `agent-sessions check` at scale (issue 42, docs/check.md): 100 reviewed turns checked with `--concurrency 8` through
 * an agent command that answers in 50 ms. Targets: the whole check within 10 s on the 2-core machine, our overhead per
 * case at most 40 ms, memory bounded by the concurrency (not the number of cases).
 *
 * - The session file: 100 turns of one session, each a `get_weather` call with its output and an answer, as the
 *   Python SDK stores them; the review store: every turn *good*. So 100 cases, each graded by `trajectory`.
 * - The agent: a small Node script that waits 50 ms (its "model"), makes the recorded call (replayed from the table
 *   the input carries, as an agent should), writes its turn through our store (`dist/store.js` when the bench runs
 *   built, else the store bundled from source into the temporary folder) and prints AG-UI events. It appends its own
 *   time to a file: from its process start (`performance.timeOrigin`) to its last act.
 * - Measured, in this process as the CLI runs it (`selectCases`, then `runCheck` with the real graders): the whole
 *   check; each case's time (scratch copy, run, settling, grading) minus its agent's own time, which is **our
 *   overhead**: starting the process through the shell, the input, reading the events, settling the run's writes,
 *   the scratch file and the graders; and this process's peak RSS and heap while the check runs (sampled every
 *   10 ms), also for a check of `memoryCases` cases, to show the peak follows the concurrency; and `sequentialCases`
 *   cases one at a time, the overhead without the check's own cases competing for the cores.
 *
 * Each figure is a range over `runs` runs (the machine is shared: read the ranges, and the load average reported
 * with them).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';
import { openSessionDatabase } from '../../src/store/inspector/sessionDatabase';
import { ReviewStore } from '../../src/store/reviews/reviewStore';
import { contentKey } from '../../src/store/reviews/contentKey';
import { selectCases } from '../../src/agents/check/checkCases';
import { runCheck } from '../../src/agents/check/checkRun';
import { parseGraders } from '../../src/agents/check/graders/graderSpec';
import { acquireGc, median, round } from './measure';
import { buildCliAsNpmBuilds } from './cliBuild';

export const CHECK_TARGETS = { checkMs: 10_000, overheadMs: 40 };
const SESSION = 'check-bench';
const AGENT_DELAY_MS = 50;
const CONCURRENCY = 8;

interface Spread {
  min: number;
  median: number;
  max: number;
}

export interface CheckBenchReport {
  cases: number;
  concurrency: number;
  agentDelayMs: number;
  runs: number;
  store: string;
  /** The whole check: choosing the cases, running and grading them all. */
  checkMs: Spread & { each: number[] };
  /** Per case, over every case of every run: the case's time, its agent's own time, and the difference (ours). */
  caseMs: Spread & { p90: number };
  agentMs: Spread & { p90: number };
  overheadMs: Spread & { p90: number; medianPerRun: number[]; beforeAgent: Spread; afterAgent: Spread };
  /**
   * This process's CPU time (user + system) over the whole check, per case: our own work, whatever the agents'
   * processes take of the 2 cores meanwhile (with 8 agents on 2 cores, a case's wall-time overhead is mostly waiting
   * for a core, which says more about the machine than about the check). One figure per run.
   */
  cpuMsPerCase: Spread;
  /** This process's peak while the check runs, and before it started (MB). */
  memory: { cases: number; peakRssMb: Spread; peakHeapMb: Spread; baseRssMb: number; retainedHeapMb: Spread }[];
  /**
   * `sequentialCases` cases one at a time (`--concurrency 1`): the same per-case figures without the check's own
   * cases competing for the 2 cores, so what remains is the machine's load.
   */
  sequential: {
    cases: number;
    caseMs: Spread;
    agentMs: Spread;
    overheadMs: Spread & { p90: number; beforeAgent: Spread; afterAgent: Spread };
    cpuMsPerCase: number;
  };
  /**
   * The same check as the user runs it: `agent-sessions check … --concurrency 8` as a process of its own (the CLI as
   * `npm run build` makes it), `runs` times after a warm-up. The targets are read here: this is the user's path, and
   * a process that holds only the CLI forks its agents faster than this bench's (a fork copies the parent's page
   * tables: about 1 ms at 46 MB of RSS, 4.5 ms at 150 MB on this machine). Per case: its time (the JUnit report's)
   * minus its agent's own; the case's end is when its line reached this process.
   */
  cli: {
    runs: number;
    checkMs: Spread & { each: number[] };
    overheadMs: Spread & { p90: number; medianPerRun: number[]; beforeAgent: Spread; afterAgent: Spread };
    agentMs: Spread;
    /**
     * The same per case with the agent's own time running to its process's exit (`exitProbe`) instead of its last act:
     * Node's teardown after the agent's last act (tens of milliseconds with 8 agents on 2 cores) is the agent's, not
     * ours. The targets are read on this figure; the one above counts that teardown as ours.
     */
    toExit: {
      overheadMs: Spread & { p90: number; medianPerRun: number[] };
      agentMs: Spread;
      afterAgent: Spread;
      /** From the probe's close (Node's cleanup of its handles) to the process's exit (`exitProbe`). */
      cleanupToExit: Spread;
      /** Per run, the agents gone before they could be seen alive after their close: their last act counts as exit. */
      exitUnseen: number[];
    };
    /** The CLI process's user + system time per case (read from /proc every 20 ms: may miss its last 20 ms). */
    cpuMsPerCase: Spread | null;
    /** Its peak resident memory (VmHWM). */
    peakRssMb: Spread | null;
  };
  loadAverage: { before: number[]; after: number[] };
  targets: { checkMs: number; overheadMs: number; met: { check: boolean; overhead: boolean } };
}

const spread = (values: readonly number[]): Spread => ({
  min: round(Math.min(...values)),
  median: round(median(values)),
  max: round(Math.max(...values)),
});

function p90(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)]!);
}

const question = (i: number): string => `Weather in City ${i}?`;

/** The session file (`turns` turns, each one recorded call) and its review store (every turn good). */
export async function seed(dbPath: string, reviewsPath: string, turns: number): Promise<void> {
  const s = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath, createTables: true });
  try {
    for (let i = 1; i <= turns; i++) {
      const callId = `call_${i}`;
      await s.addItems([
        { role: 'user', content: question(i) },
        {
          type: 'function_call',
          call_id: callId,
          name: 'get_weather',
          arguments: JSON.stringify({ city: `City ${i}` }),
          status: 'completed',
        },
        { type: 'function_call_output', call_id: callId, output: `City ${i}: 18°C, sunny` },
        { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: `Sunny in City ${i}, 18°C.` }] },
      ] as never);
    }
  } finally {
    s.close();
  }
  const reader = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath, readonly: true });
  const reviews = ReviewStore.open(reviewsPath);
  try {
    for (let i = 1; i <= turns; i++) {
      const user = (await reader.getTurnStoredItems(i, 'main')).find((item) => (item as { role?: string }).role === 'user');
      reviews.setTurnReview({ sessionId: SESSION, branchId: 'main', turn: i, turnKey: contentKey(user) }, { verdict: 'good' });
    }
  } finally {
    reviews.close();
    reader.close();
  }
}

/** The agent: CommonJS, plain Node, our store from `storeJs`; appends `{question, start, end}` to `timesFile`. */
export function agentScript(storeJs: string, timesFile: string, exitProbe?: string): string {
  return `'use strict';
const { appendFileSync } = require('node:fs');
${
  exitProbe === undefined
    ? ''
    : `// Tells the bench when this process is gone: the kernel closes the connection as the process exits, after its
// teardown. Unref'd, so it keeps nothing alive.
const probe = require('node:net').connect(${JSON.stringify(exitProbe)});
probe.on('error', () => undefined);
probe.unref();
probe.write(process.pid + '\\n');`
}
const { AdvancedSQLiteSession } = require(${JSON.stringify(storeJs)});
const wall = () => performance.timeOrigin + performance.now();
const emit = (e) => process.stdout.write(JSON.stringify(e) + '\\n');
(async () => {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  const input = JSON.parse(text);
  const props = input.forwardedProps.agentSessions;
  const question = input.messages.at(-1).content;
  emit({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
  await new Promise((r) => setTimeout(r, ${AGENT_DELAY_MS}));
  const args = JSON.stringify({ city: question.slice('Weather in '.length, -1) });
  const hit = ((props.tools && props.tools.recorded) || []).find((r) => r.name === 'get_weather' && r.hasOutput && r.arguments === args);
  const output = hit ? hit.output : 'live';
  const callId = 'call_new_1';
  const answer = 'Sunny, 18°C.';
  emit({ type: 'TOOL_CALL_START', toolCallId: callId, toolCallName: 'get_weather' });
  emit({ type: 'TOOL_CALL_ARGS', toolCallId: callId, delta: args });
  emit({ type: 'TOOL_CALL_END', toolCallId: callId });
  emit({ type: 'CUSTOM', name: 'agent-sessions.tool-replay', value: { callId, name: 'get_weather', outcome: hit ? 'replayed' : 'live', recordedCallId: hit ? hit.callId : null } });
  emit({ type: 'TOOL_CALL_RESULT', messageId: 'tool-1', toolCallId: callId, content: String(output) });
  emit({ type: 'TEXT_MESSAGE_START', messageId: 'answer', role: 'assistant' });
  emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'answer', delta: answer });
  emit({ type: 'TEXT_MESSAGE_END', messageId: 'answer' });
  const s = new AdvancedSQLiteSession({ sessionId: props.sessionId, dbPath: props.store.path, sessionsTable: props.store.sessionsTable, messagesTable: props.store.messagesTable });
  if (props.fork) await s.createBranchFromTurn(props.fork.fromTurn, props.branchId);
  else if (props.branchId !== 'main') await s.switchToBranch(props.branchId);
  await s.addItems([
    ...props.input,
    { type: 'function_call', call_id: callId, name: 'get_weather', arguments: args, status: 'completed' },
    { type: 'function_call_output', call_id: callId, output },
    { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: answer }] },
  ]);
  await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 30, outputTokens: 10, totalTokens: 40 } } });
  s.close();
  appendFileSync(${JSON.stringify(timesFile)}, JSON.stringify({ question, pid: process.pid, start: performance.timeOrigin, end: wall() }) + '\\n');
  emit({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
})().catch((err) => { emit({ type: 'RUN_ERROR', message: String(err && err.stack || err) }); process.exit(1); });
`;
}

/** The folder holding `src/store/index.ts`, above this file (scripts/bench/ from source, dist/ when built). */
function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'src', 'store', 'index.ts'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('the repository (src/store/index.ts) is not above the bench');
    dir = up;
  }
  return dir;
}

/**
 * The store the agent requires, and the NODE_PATH its packages resolve from: the built `dist/store.js` beside the
 * bench, or (run from source) the store bundled into `dir` with esbuild, its packages left to the repository's.
 */
export async function agentStore(dir: string): Promise<{ storeJs: string; nodePath: string; how: string }> {
  const root = repoRoot();
  const nodePath = join(root, 'node_modules');
  const built = join(__dirname, 'store.js');
  if (existsSync(built)) return { storeJs: built, nodePath, how: 'dist/store.js' };
  const esbuild = await import('esbuild');
  const storeJs = join(dir, 'store.cjs');
  await esbuild.build({
    entryPoints: [join(root, 'src', 'store', 'index.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    outfile: storeJs,
    logLevel: 'error',
  });
  return { storeJs, nodePath, how: 'src/store bundled with esbuild (run from source)' };
}

interface RunResult {
  checkMs: number;
  caseMs: number[];
  agentMs: number[];
  overheadMs: number[];
  /** From the case's start to its agent's process start: scratch copy, input, the shell, the process's own start. */
  beforeAgentMs: number[];
  /** From the agent's last act to the case's end: its exit, settling the run, reading its calls, grading. */
  afterAgentMs: number[];
  peakRss: number;
  peakHeap: number;
  baseRss: number;
  /** Heap held after the check, with its report, after a full collection, above the heap before it. */
  retained: number;
  /** This process's CPU time during the check (choosing the cases, running and grading them), per case. */
  cpuMsPerCase: number;
}

/** One check of every case of the files; every case must pass (a bench of failing runs would measure nothing). */
async function checkOnce(
  files: { db: string; reviews: string },
  command: string,
  nodePath: string,
  timesFile: string,
  scratchParent: string,
  concurrency = CONCURRENCY,
): Promise<RunResult> {
  writeFileSync(timesFile, '');
  gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 10);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  // Wall-clock time each case finished, to split our overhead into before the agent's start and after its end.
  const endedAt = new Map<string, number>();
  const reviews = ReviewStore.open(files.reviews, { readonly: true, fileMustExist: true });
  const data = reviews.exportData();
  reviews.close();
  const db = openSessionDatabase(files.db, { readonly: true });
  let outcome;
  try {
    const selection = await selectCases(db, data);
    outcome = await runCheck({
      file: files.db,
      db,
      cases: selection.cases,
      orphaned: selection.orphaned,
      agent: { kind: 'command', name: 'bench-agent', command },
      graders: parseGraders(['trajectory']),
      concurrency,
      scratchParent,
      run: { env: { ...process.env, NODE_PATH: nodePath } },
      onResult: (r) => endedAt.set(r.case.id, performance.timeOrigin + performance.now()),
    });
  } finally {
    db.close();
    clearInterval(sampler);
  }
  const checkMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  // What the finished check still holds (its report of every case), garbage collected away.
  gc?.();
  const retained = process.memoryUsage().heapUsed - base.heapUsed;
  const failed = outcome.report.results.filter((r) => r.status !== 'pass');
  if (failed.length > 0) {
    const first = failed[0]!;
    throw new Error(
      `${failed.length} case(s) did not pass, e.g. ${first.case.id}: ${first.status} ${first.error ?? first.graders.map((g) => g.reason).join('; ')}`,
    );
  }
  const agentTimes = readAgentTimes(timesFile);
  const caseMs: number[] = [];
  const agentMs: number[] = [];
  const overheadMs: number[] = [];
  const beforeAgentMs: number[] = [];
  const afterAgentMs: number[] = [];
  for (const r of outcome.report.results) {
    const agent = agentTimes.get(r.case.input as string);
    const ended = endedAt.get(r.case.id);
    if (agent === undefined || ended === undefined) throw new Error(`no agent time for ${r.case.id}`);
    caseMs.push(r.ms);
    agentMs.push(agent.end - agent.start);
    overheadMs.push(r.ms - (agent.end - agent.start));
    // The case started r.ms before it ended (whole milliseconds: these two are ±1 ms).
    beforeAgentMs.push(agent.start - (ended - r.ms));
    afterAgentMs.push(ended - agent.end);
  }
  const cpuMsPerCase = (cpu.user + cpu.system) / 1000 / Math.max(1, outcome.report.results.length);
  return {
    checkMs,
    caseMs,
    agentMs,
    overheadMs,
    beforeAgentMs,
    afterAgentMs,
    peakRss,
    peakHeap,
    baseRss: base.rss,
    retained,
    cpuMsPerCase,
  };
}

/**
 * The CLI as `npm run build` makes dist/cli.js (a loader of cliMain.js through V8's code cache, the vendor bundles
 * beside it), or dist/cli.js itself when the bench runs built.
 */
async function checkCli(dir: string): Promise<string> {
  const built = join(__dirname, 'cli.js');
  if (existsSync(built) && existsSync(join(__dirname, 'cliMain.js'))) return built;
  return buildCliAsNpmBuilds(join(dir, 'cli'), repoRoot());
}

interface CliRunResult {
  checkMs: number;
  overheadMs: number[];
  agentMs: number[];
  beforeAgentMs: number[];
  afterAgentMs: number[];
  /** The same with the agent's own time ending at its process's exit (its teardown is its own), not its last act. */
  toExit: { overheadMs: number[]; agentMs: number[]; afterAgentMs: number[]; cleanupToExitMs: number[]; exitUnseen: number };
  cpuMsPerCase: number | null;
  peakRssMb: number | null;
}

/** /proc/<pid>'s CPU time (ms) and peak RSS (MB), or null off Linux or once the process is gone. */
function procFigures(pid: number): { cpuMs: number; hwmMb: number } | null {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th (clock ticks of 10 ms).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    // A process that has exited (a zombie until it is reaped) has no memory figures left.
    if (!hwm) return null;
    return { cpuMs: (Number(fields[11]) + Number(fields[12])) * 10, hwmMb: Number(hwm[1]) / 1024 };
  } catch {
    return null;
  }
}

/**
 * When each agent process ended, seen from this process. Each agent connects to this socket as it starts; the
 * connection closes during Node's own cleanup (it closes its handles), which comes before the rest of its teardown
 * (the isolate, the platform's threads) and the kernel's exit: 3–12 ms later with 8 agents on 2 cores (perf's
 * `sched:sched_process_exit` against these closes, 2026-12-05). So from the close on, the process is looked at in
 * `/proc` every millisecond until it is a zombie or gone; its exit is taken as the last time it was seen alive, which
 * is never after the real exit: a late look counts the gap as ours, never as the agent's. A process already gone at
 * the first look (this process heard of the close late) has no such time: it is left out of `seen`, and the caller
 * takes the agent's last act instead. Where `/proc` cannot be read (not Linux), the close is taken as the exit.
 */
export interface ExitProbe {
  path: string;
  /** By pid: the last time the process was seen alive, once it was seen to have ended (see above). */
  seen: Map<number, number>;
  /** By pid: when its connection closed (Node's cleanup). */
  closed: Map<number, number>;
  /** Resolves once every closed connection's process was seen to end. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** Whether `pid` is still running: false once it exited (a zombie until the CLI reaps it) or is gone. */
function running(pid: number): boolean | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    return state !== 'Z' && state !== 'X';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? false : undefined;
  }
}

export async function exitProbe(path: string): Promise<ExitProbe> {
  const seen = new Map<number, number>();
  const closed = new Map<number, number>();
  const now = () => performance.timeOrigin + performance.now();
  const proc = running(process.pid) === true;
  /** Closed but not yet seen ended: the last time each was seen alive (null: not yet seen since the close). */
  const watching = new Map<number, number | null>();
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    for (const [pid, alive] of watching) {
      const at = now();
      if (running(pid) === true) watching.set(pid, at);
      else {
        if (alive !== null) seen.set(pid, alive);
        watching.delete(pid);
      }
    }
    if (watching.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const server = createServer((socket) => {
    let pid: number | undefined;
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (pid === undefined && text.includes('\n')) pid = Number(text.slice(0, text.indexOf('\n')));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (pid === undefined) return;
      const at = now();
      closed.set(pid, at);
      if (!proc) return void seen.set(pid, at);
      watching.set(pid, null);
      look();
      timer ??= setInterval(look, 1);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  return {
    path,
    seen,
    closed,
    settled: async () => {
      while (watching.size > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        server.close(() => resolve());
      }),
  };
}

/** One `agent-sessions check` of every case as a process of its own; every case must pass. */
async function checkViaCli(
  files: { db: string; reviews: string },
  cli: string,
  command: string,
  env: NodeJS.ProcessEnv,
  timesFile: string,
  junit: string,
  cases: number,
  exits: ExitProbe,
): Promise<CliRunResult> {
  writeFileSync(timesFile, '');
  exits.seen.clear();
  exits.closed.clear();
  rmSync(junit, { force: true });
  const endedAt = new Map<string, number>();
  let last: { cpuMs: number; hwmMb: number } | null = null;
  const t0 = performance.now();
  const exit = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [cli, 'check', files.db, '--reviews', files.reviews, '--command', command, '--concurrency', String(CONCURRENCY), '--junit', junit],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const sampler = setInterval(() => (last = procFigures(child.pid!) ?? last), 20);
    let rest = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const at = performance.timeOrigin + performance.now();
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const m = /^(?:PASS|FAIL|ERROR) (\S+)/.exec(line);
        if (m) endedAt.set(m[1]!, at);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(sampler);
      resolve({ code, stderr });
    });
  });
  const checkMs = performance.now() - t0;
  if (exit.code !== 0) throw new Error(`agent-sessions check exited ${exit.code}: ${exit.stderr}`);
  const caseMs = new Map<string, number>();
  for (const m of readFileSync(junit, 'utf8').matchAll(/<testcase classname="([^"]+)" name="turn (\d+)" time="([\d.]+)"/g))
    caseMs.set(`${m[1]}/${m[2]}`, Number(m[3]) * 1000);
  await exits.settled();
  const agentTimes = readAgentTimes(timesFile);
  const r: CliRunResult = {
    checkMs,
    overheadMs: [],
    agentMs: [],
    beforeAgentMs: [],
    afterAgentMs: [],
    toExit: { overheadMs: [], agentMs: [], afterAgentMs: [], cleanupToExitMs: [], exitUnseen: 0 },
    cpuMsPerCase: null,
    peakRssMb: null,
  };
  for (let turn = 1; turn <= cases; turn++) {
    const id = `${SESSION}/main/${turn}`;
    const agent = agentTimes.get(question(turn));
    const ms = caseMs.get(id);
    const ended = endedAt.get(id);
    if (agent === undefined || ms === undefined || ended === undefined) throw new Error(`no times for ${id}`);
    r.agentMs.push(agent.end - agent.start);
    r.overheadMs.push(ms - (agent.end - agent.start));
    r.beforeAgentMs.push(agent.start - (ended - ms));
    r.afterAgentMs.push(ended - agent.end);
    const closed = exits.closed.get(agent.pid);
    if (closed === undefined) throw new Error(`no exit seen for ${id}'s agent (pid ${agent.pid})`);
    // Gone before it could be seen alive after its close: its last act is the latest time it is known to have run.
    const exited = exits.seen.get(agent.pid) ?? agent.end;
    if (!exits.seen.has(agent.pid)) r.toExit.exitUnseen++;
    r.toExit.agentMs.push(exited - agent.start);
    r.toExit.overheadMs.push(ms - (exited - agent.start));
    r.toExit.afterAgentMs.push(ended - exited);
    if (exits.seen.has(agent.pid)) r.toExit.cleanupToExitMs.push(exited - closed);
  }
  const figures = last as { cpuMs: number; hwmMb: number } | null;
  if (figures) {
    r.cpuMsPerCase = figures.cpuMs / cases;
    r.peakRssMb = figures.hwmMb;
  }
  return r;
}

/** The agents' `{question, start, end}` lines, by question. */
function readAgentTimes(timesFile: string): Map<string, { start: number; end: number; pid: number }> {
  const times = new Map<string, { start: number; end: number; pid: number }>();
  for (const line of readFileSync(timesFile, 'utf8').split('\n').filter(Boolean)) {
    const t = JSON.parse(line) as { question: string; start: number; end: number; pid: number };
    times.set(t.question, t);
  }
  return times;
}

const mb = (bytes: number): number => round(bytes / 1024 / 1024);

/**
 * A full collection before each check's baseline and after it (null: figures include garbage). Taken when the bench
 * runs, not when this module loads: exposing `gc` sets a V8 flag, which changes the flag hash of every code cache the
 * process makes afterwards, and a test that imports this module for `exitProbe` must leave its process as it was.
 */
let gc: (() => void) | null = null;

/** Runs the check bench in a folder of its own under `tmpDir` (removed at the end). */
export async function runCheckBench(
  tmpDir: string,
  options: { cases?: number; runs?: number; memoryCases?: number; sequentialCases?: number } = {},
  progress: (message: string) => void = () => undefined,
): Promise<CheckBenchReport> {
  const cases = options.cases ?? 100;
  const runs = options.runs ?? 3;
  const memoryCases = options.memoryCases ?? 300;
  const sequentialCases = options.sequentialCases ?? 20;
  gc = acquireGc().gc;
  const dir = join(tmpDir, 'check-bench');
  mkdirSync(dir, { recursive: true });
  try {
    const { storeJs, nodePath, how } = await agentStore(dir);
    const timesFile = join(dir, 'agent-times.jsonl');
    const agent = join(dir, 'agent.cjs');
    writeFileSync(agent, agentScript(storeJs, timesFile));
    const command = `"${process.execPath}" "${agent}"`;
    const scratch = join(dir, 'scratch');
    mkdirSync(scratch);
    const seeded = async (n: number) => {
      const files = { db: join(dir, `sessions-${n}.db`), reviews: join(dir, `reviews-${n}.db`) };
      progress(`check: seeding ${n} reviewed turns`);
      await seed(files.db, files.reviews, n);
      return files;
    };

    const files = await seeded(cases);
    const before = loadavg().map(round);
    progress('check: warm-up run');
    await checkOnce(files, command, nodePath, timesFile, scratch);
    const results: RunResult[] = [];
    for (let i = 1; i <= runs; i++) {
      progress(`check: run ${i} of ${runs} (${cases} cases, concurrency ${CONCURRENCY})`);
      results.push(await checkOnce(files, command, nodePath, timesFile, scratch));
    }
    const memory = [{ cases, runs: results }];
    if (memoryCases !== cases) {
      const more = await seeded(memoryCases);
      progress(`check: ${memoryCases} cases, for the memory peak`);
      memory.push({ cases: memoryCases, runs: [await checkOnce(more, command, nodePath, timesFile, scratch)] });
    }
    const few = await seeded(sequentialCases);
    progress(`check: ${sequentialCases} cases one at a time`);
    const sequential = await checkOnce(few, command, nodePath, timesFile, scratch, 1);

    progress('check: building the CLI');
    const cli = await checkCli(dir);
    const xdg = join(dir, 'xdg-cache');
    mkdirSync(xdg);
    // The CLI's scratch folders under the bench's folder; its code cache in a folder of the bench's own (the first,
    // warm-up run writes it, as a user's first check does).
    const cliEnv = { ...process.env, NODE_PATH: nodePath, TMPDIR: scratch, XDG_CACHE_HOME: xdg, NO_COLOR: '1' };
    const junit = join(dir, 'check.junit.xml');
    const exits = await exitProbe(join(dir, 'exit.sock'));
    const probed = join(dir, 'agent-probed.cjs');
    writeFileSync(probed, agentScript(storeJs, timesFile, exits.path));
    const probedCommand = `"${process.execPath}" "${probed}"`;
    const cliRuns: CliRunResult[] = [];
    try {
      progress('check: through the CLI, warm-up run');
      await checkViaCli(files, cli, probedCommand, cliEnv, timesFile, junit, cases, exits);
      for (let i = 1; i <= runs; i++) {
        progress(`check: through the CLI, run ${i} of ${runs}`);
        cliRuns.push(await checkViaCli(files, cli, probedCommand, cliEnv, timesFile, junit, cases, exits));
      }
    } finally {
      await exits.close();
    }
    const after = loadavg().map(round);
    const cliAll = (pick: (r: CliRunResult) => number[]) => cliRuns.flatMap(pick);
    const cliOverhead = cliAll((r) => r.overheadMs);
    const toExitOverhead = cliAll((r) => r.toExit.overheadMs);
    const cliCheckMs = cliRuns.map((r) => round(r.checkMs));
    const known = (values: (number | null)[]): number[] | null => (values.every((v) => v !== null) ? (values as number[]) : null);
    const cliCpu = known(cliRuns.map((r) => r.cpuMsPerCase));
    const cliRss = known(cliRuns.map((r) => r.peakRssMb));

    const all = (pick: (r: RunResult) => number[]) => results.flatMap(pick);
    const checkMs = results.map((r) => round(r.checkMs));
    const overhead = all((r) => r.overheadMs);
    const report: CheckBenchReport = {
      cases,
      concurrency: CONCURRENCY,
      agentDelayMs: AGENT_DELAY_MS,
      runs,
      store: how,
      checkMs: { ...spread(checkMs), each: checkMs },
      caseMs: { ...spread(all((r) => r.caseMs)), p90: p90(all((r) => r.caseMs)) },
      agentMs: { ...spread(all((r) => r.agentMs)), p90: p90(all((r) => r.agentMs)) },
      overheadMs: {
        ...spread(overhead),
        p90: p90(overhead),
        medianPerRun: results.map((r) => round(median(r.overheadMs))),
        beforeAgent: spread(all((r) => r.beforeAgentMs)),
        afterAgent: spread(all((r) => r.afterAgentMs)),
      },
      cpuMsPerCase: spread(results.map((r) => r.cpuMsPerCase)),
      memory: memory.map((m) => ({
        cases: m.cases,
        peakRssMb: spread(m.runs.map((r) => mb(r.peakRss))),
        peakHeapMb: spread(m.runs.map((r) => mb(r.peakHeap))),
        baseRssMb: mb(m.runs[0]!.baseRss),
        retainedHeapMb: spread(m.runs.map((r) => mb(r.retained))),
      })),
      sequential: {
        cases: sequentialCases,
        caseMs: spread(sequential.caseMs),
        agentMs: spread(sequential.agentMs),
        overheadMs: {
          ...spread(sequential.overheadMs),
          p90: p90(sequential.overheadMs),
          beforeAgent: spread(sequential.beforeAgentMs),
          afterAgent: spread(sequential.afterAgentMs),
        },
        cpuMsPerCase: round(sequential.cpuMsPerCase),
      },
      cli: {
        runs,
        checkMs: { ...spread(cliCheckMs), each: cliCheckMs },
        overheadMs: {
          ...spread(cliOverhead),
          p90: p90(cliOverhead),
          medianPerRun: cliRuns.map((r) => round(median(r.overheadMs))),
          beforeAgent: spread(cliAll((r) => r.beforeAgentMs)),
          afterAgent: spread(cliAll((r) => r.afterAgentMs)),
        },
        agentMs: spread(cliAll((r) => r.agentMs)),
        toExit: {
          overheadMs: {
            ...spread(toExitOverhead),
            p90: p90(toExitOverhead),
            medianPerRun: cliRuns.map((r) => round(median(r.toExit.overheadMs))),
          },
          agentMs: spread(cliAll((r) => r.toExit.agentMs)),
          afterAgent: spread(cliAll((r) => r.toExit.afterAgentMs)),
          cleanupToExit: spread(cliAll((r) => r.toExit.cleanupToExitMs)),
          exitUnseen: cliRuns.map((r) => r.toExit.exitUnseen),
        },
        cpuMsPerCase: cliCpu ? spread(cliCpu) : null,
        peakRssMb: cliRss ? spread(cliRss) : null,
      },
      loadAverage: { before, after },
      // Read on the user's path: every CLI run within the whole-check target, each run's median overhead within its.
      targets: {
        ...CHECK_TARGETS,
        met: {
          check: Math.max(...cliCheckMs) <= CHECK_TARGETS.checkMs,
          overhead: cliRuns.every((r) => median(r.toExit.overheadMs) <= CHECK_TARGETS.overheadMs),
        },
      },
    };
    return report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A table of the report for stderr. */
export function checkTable(r: CheckBenchReport): string {
  const range = (s: Spread, unit: string) => `${s.min}–${s.max} ${unit} (median ${s.median})`;
  return [
    `check: ${r.cases} cases, --concurrency ${r.concurrency}, an agent answering in ${r.agentDelayMs} ms; ${r.runs} runs; agent store: ${r.store}`,
    `  agent-sessions check (its own process, the user's path):`,
    `  whole check      ${range(r.cli.checkMs, 'ms')}   target ≤ ${r.targets.checkMs} ms: ${r.targets.met.check ? 'met' : 'NOT met'}`,
    `  our overhead     ${range(r.cli.toExit.overheadMs, 'ms')}, p90 ${r.cli.toExit.overheadMs.p90}; median per run ${r.cli.toExit.overheadMs.medianPerRun.join(', ')}   target ≤ ${r.targets.overheadMs} ms (every run): ${r.targets.met.overhead ? 'met' : 'NOT met'}`,
    `    before the agent's start ${range(r.cli.overheadMs.beforeAgent, 'ms')}, after its exit ${range(r.cli.toExit.afterAgent, 'ms')}; agent's own, start to exit ${range(r.cli.toExit.agentMs, 'ms')} (its exit ${range(r.cli.toExit.cleanupToExit, 'ms')} after Node closed its handles; exit unseen, last act taken, per run: ${r.cli.toExit.exitUnseen.join(', ')})`,
    `    with the agent's teardown counted as ours (its last act, not its exit): overhead ${range(r.cli.overheadMs, 'ms')}, p90 ${r.cli.overheadMs.p90}; median per run ${r.cli.overheadMs.medianPerRun.join(', ')}; after its last act ${range(r.cli.overheadMs.afterAgent, 'ms')}`,
    `  CLI process      CPU per case ${r.cli.cpuMsPerCase ? range(r.cli.cpuMsPerCase, 'ms') : '–'}, peak RSS ${r.cli.peakRssMb ? range(r.cli.peakRssMb, 'MB') : '–'}`,
    `  in this process (runCheck as the CLI calls it, run from source):`,
    `  whole check      ${range(r.checkMs, 'ms')}`,
    `  case             ${range(r.caseMs, 'ms')}, p90 ${r.caseMs.p90}`,
    `  agent's own      ${range(r.agentMs, 'ms')}, p90 ${r.agentMs.p90}`,
    `  our overhead     ${range(r.overheadMs, 'ms')}, p90 ${r.overheadMs.p90}; median per run ${r.overheadMs.medianPerRun.join(', ')}`,
    `    before the agent's start ${range(r.overheadMs.beforeAgent, 'ms')}, after its end ${range(r.overheadMs.afterAgent, 'ms')}`,
    `  our CPU per case ${range(r.cpuMsPerCase, 'ms')} (this process's user + system time over the check, per case)`,
    ...r.memory.map(
      (m) =>
        `  memory, ${m.cases} cases: peak RSS ${range(m.peakRssMb, 'MB')}, peak heap ${range(m.peakHeapMb, 'MB')} (RSS before ${m.baseRssMb} MB), held after ${range(m.retainedHeapMb, 'MB')}`,
    ),
    `  one at a time    ${r.sequential.cases} cases: case ${range(r.sequential.caseMs, 'ms')}, agent ${range(r.sequential.agentMs, 'ms')}, ` +
      `our overhead ${range(r.sequential.overheadMs, 'ms')}, p90 ${r.sequential.overheadMs.p90} ` +
      `(before the agent's start ${range(r.sequential.overheadMs.beforeAgent, 'ms')}, after its end ${range(r.sequential.overheadMs.afterAgent, 'ms')}); ` +
      `our CPU per case ${r.sequential.cpuMsPerCase} ms`,
    `  load average     before ${r.loadAverage.before.join(' ')}, after ${r.loadAverage.after.join(' ')}`,
  ].join('\n');
}
