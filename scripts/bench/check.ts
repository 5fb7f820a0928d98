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
async function seed(dbPath: string, reviewsPath: string, turns: number): Promise<void> {
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
function agentScript(storeJs: string, timesFile: string): string {
  return `'use strict';
const { appendFileSync } = require('node:fs');
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
  appendFileSync(${JSON.stringify(timesFile)}, JSON.stringify({ question, start: performance.timeOrigin, end: wall() }) + '\\n');
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
async function agentStore(dir: string): Promise<{ storeJs: string; nodePath: string; how: string }> {
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
  const agentTimes = new Map<string, { start: number; end: number }>();
  for (const line of readFileSync(timesFile, 'utf8').split('\n').filter(Boolean)) {
    const t = JSON.parse(line) as { question: string; start: number; end: number };
    agentTimes.set(t.question, t);
  }
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

const mb = (bytes: number): number => round(bytes / 1024 / 1024);

/** A full collection before each check's baseline and after it (null: figures include garbage). */
const { gc } = acquireGc();

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
    const after = loadavg().map(round);

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
      loadAverage: { before, after },
      targets: {
        ...CHECK_TARGETS,
        met: {
          check: Math.max(...checkMs) <= CHECK_TARGETS.checkMs,
          overhead: median(overhead) <= CHECK_TARGETS.overheadMs,
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
    `  whole check      ${range(r.checkMs, 'ms')}   target ≤ ${r.targets.checkMs} ms: ${r.targets.met.check ? 'met' : 'NOT met'}`,
    `  case             ${range(r.caseMs, 'ms')}, p90 ${r.caseMs.p90}`,
    `  agent's own      ${range(r.agentMs, 'ms')}, p90 ${r.agentMs.p90}`,
    `  our overhead     ${range(r.overheadMs, 'ms')}, p90 ${r.overheadMs.p90}; median per run ${r.overheadMs.medianPerRun.join(', ')}   target ≤ ${r.targets.overheadMs} ms: ${r.targets.met.overhead ? 'met' : 'NOT met'}`,
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
