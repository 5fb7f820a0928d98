/**
 * What running the user's own agent through an agent command adds to the command's own time (issue 23), on a
 * 10,000-turn branch (the run forks it at turn 9,000, as *Retry from Here* deep in a long conversation):
 *
 * - **start**: from `runCommandOnBranch`'s call to the command's process start (the child's `performance.timeOrigin`:
 *   fork, input built and validated, the shell, the process), target 150 ms;
 * - **events**: from the command printing an AG-UI event to its run event reaching `onEvent`, target 50 ms (median
 *   and worst of 20 events per run);
 * - **settle**: from the command's last act before exiting to the run's outcome (process exit, where it wrote, the
 *   run's items, the usage row, the outcome), target 100 ms.
 *
 * The child is Node writing its turn through the built store (`dist/store.js`), so the figures hold what a real
 * command does to the file. The webview's click → host message is not in here (the in-host suites show it is a
 * message, not work); nor is the command's own work, which is the user's.
 */
import { mkdtempSync, rmSync, writeFileSync, copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runCommandOnBranch } from '../../src/agents/command/commandRun';
import { median, round } from './measure';
import { GENERATOR_VERSION, writeScaleFile, type FileSpec } from './scaleFiles';

export const COMMAND_TARGETS = { startMs: 150, eventMs: 50, settleMs: 100 };
const TURNS = 10_000;
const EVENTS = 20;

interface ModeTimes {
  /** From the call to the command's process start (its `performance.timeOrigin`). */
  startMs: { median: number; max: number; runs: number[] };
  /** From the command's last act to the outcome. */
  settleMs: { median: number; max: number; runs: number[] };
}

export interface AgentCommandReport {
  turns: number;
  runs: number;
  /** Continuing main: what the command path adds. */
  continue: ModeTimes;
  /**
   * Retrying turn 9,000: the same, with the fork first (the store copies 9,000 turns' structure rows, as it does for
   * the extension's own retries; its cost is the store's, measured against its floor in the scale section).
   */
  retry: ModeTimes;
  /** From the command printing an event to its run event (median and worst of every run's 20). */
  eventMs: { median: number; max: number };
  targets: {
    startMs: number;
    eventMs: number;
    settleMs: number;
    met: { start: boolean; startWithFork: boolean; events: boolean; settle: boolean };
  };
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes on one machine. */
const wall = (): number => performance.timeOrigin + performance.now();

function childScript(storeJs: string): string {
  return `const wall = () => performance.timeOrigin + performance.now();
const print = (e) => process.stdout.write(JSON.stringify(e) + '\\n');
// Timing marks go to stderr, which the run hands to its log line by line.
console.error('bench.start ' + performance.timeOrigin);
let text = '';
process.stdin.on('data', (c) => (text += c));
process.stdin.on('end', async () => {
  const input = JSON.parse(text);
  const p = input.forwardedProps.agentSessions;
  const { AdvancedSQLiteSession } = require(${JSON.stringify(storeJs)});
  const s = new AdvancedSQLiteSession({ sessionId: p.sessionId, dbPath: p.store.path });
  await s.switchToBranch(p.branchId);
  print({ type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' });
  for (let i = 0; i < ${EVENTS}; i++) {
    print({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: String(wall()) + ' ' });
    await new Promise((r) => setTimeout(r, 5));
  }
  print({ type: 'TEXT_MESSAGE_END', messageId: 'm' });
  await s.addItems([{ role: 'user', content: 'bench' }, { role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }]);
  s.close();
  print({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
  console.error('bench.exit ' + wall());
  process.exit(0);
});
`;
}

export async function runAgentCommandBench(
  cacheDir: string,
  tmpDir: string,
  reps: number,
  progress: (m: string) => void,
): Promise<AgentCommandReport> {
  const storeJs = resolve(__dirname, 'store.js');
  if (!existsSync(storeJs)) throw new Error(`${storeJs} is missing: npm run bench builds it`);
  const spec: FileSpec = { sessions: [{ sessionId: 'long', turns: TURNS, branches: [] }], interleave: false };
  const cached = join(cacheDir, `command-v${GENERATOR_VERSION}-${TURNS}.db`);
  if (!existsSync(cached)) {
    mkdirSync(cacheDir, { recursive: true });
    progress(`writing a ${TURNS}-turn session`);
    writeScaleFile(`${cached}.partial`, spec);
    renameSync(`${cached}.partial`, cached);
  }
  const dir = mkdtempSync(join(tmpDir, 'command-'));
  const script = join(dir, 'agent.js');
  writeFileSync(script, childScript(storeJs));
  const lags: number[] = [];
  try {
    /** `reps` runs on a fresh copy of the file: continuing main, or retrying turn 9,000 (a fork first). */
    const measure = async (mode: 'continue' | 'retry'): Promise<ModeTimes> => {
      const db = join(dir, `${mode}.db`);
      copyFileSync(cached, db);
      const starts: number[] = [];
      const settles: number[] = [];
      for (let i = 0; i < reps; i++) {
        const marks: Record<string, number> = {};
        const called = wall();
        const outcome = await runCommandOnBranch({
          dbPath: db,
          sessionId: 'long',
          ...(mode === 'retry' ? { fork: { fromTurn: TURNS - 1000, name: `bench-${i}` } } : {}),
          agent: { kind: 'command', name: 'bench', command: `"${process.execPath}" "${script}"` },
          input: 'bench',
          onEvent: (e) => {
            if (e.kind === 'text/delta') lags.push(wall() - Number(e.delta));
          },
          log: (line) => {
            const m = /^\[bench\] (bench\.\w+) ([\d.]+)$/.exec(line);
            if (m) marks[m[1] as string] = Number(m[2]);
          },
        });
        const settled = wall();
        if (outcome.kind !== 'run/completed') throw new Error(`bench run failed: ${outcome.message}`);
        if (!marks['bench.start'] || !marks['bench.exit']) throw new Error('the bench command printed no timing marks');
        starts.push(marks['bench.start'] - called);
        settles.push(settled - marks['bench.exit']);
      }
      const times = {
        startMs: { median: round(median(starts)), max: round(Math.max(...starts)), runs: starts.map(round) },
        settleMs: { median: round(median(settles)), max: round(Math.max(...settles)), runs: settles.map(round) },
      };
      progress(`${mode}: start ${times.startMs.median} ms, settle ${times.settleMs.median} ms (medians of ${reps})`);
      return times;
    };
    const continueTimes = await measure('continue');
    const retryTimes = await measure('retry');
    const eventMs = { median: round(median(lags)), max: round(Math.max(...lags)) };
    progress(`events ${eventMs.median} ms (median of ${lags.length})`);
    return {
      turns: TURNS,
      runs: reps,
      continue: continueTimes,
      retry: retryTimes,
      eventMs,
      targets: {
        ...COMMAND_TARGETS,
        met: {
          start: continueTimes.startMs.median <= COMMAND_TARGETS.startMs,
          startWithFork: retryTimes.startMs.median <= COMMAND_TARGETS.startMs,
          events: eventMs.median <= COMMAND_TARGETS.eventMs,
          settle: Math.max(continueTimes.settleMs.median, retryTimes.settleMs.median) <= COMMAND_TARGETS.settleMs,
        },
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
