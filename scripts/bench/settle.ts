/**
 * Settling an agent command's run on a file's longest branch (issue 43: "settling costs what the run wrote, not what
 * the branch holds", at most 20 ms on file A's longest branch). The agent-command section (agentCommand.ts) measures
 * settling on its own 10,000-turn file; this measures it on any session file, next to a floor taken in the same
 * process: the same run on a 2-turn file, alternating, so the load of the machine hits both alike.
 *
 * Per run: `runCommandOnBranch` continues the branch with a Node agent that writes one turn (2 items) through the
 * store and exits, as `agent-sessions run FILE SESSION --command …` does. **Settle** is the wall time from the agent's
 * last act (its clock, printed on stderr) to the run's outcome (process exit, what it wrote, its items, the outcome);
 * **CPU** is this process's user + system time over the whole run (spawn and events included, the same on both
 * files), so the difference between the two files is what the branch's length costs. The runs write to copies in a
 * temporary folder (`--tmp`, default the OS's); the session file itself is only read (copied).
 *
 *   npx tsx scripts/bench/settle.ts A|B|C|L|--file=PATH [--session=ID] [--branch=ID] [--runs=9] [--tmp=DIR]
 *
 * The driver is the automatic choice: better-sqlite3 under Node 20; under a Node with node:sqlite and no
 * better-sqlite3 build (the tools' cache's Node 24, `--import tsx`) node:sqlite, in this process and in the agent.
 * JSON on stdout; progress on stderr.
 */
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openSessionDatabase, resolveDriver } from '../../src/store';
import { runCommandOnBranch } from '../../src/agents/command/commandRun';
import { storeLibraryModule } from './benchModules';
import { median, round } from './measure';
import { standaloneBenchArgs } from './scaleFiles';

/** The issue's target for settling on file A's longest branch. */
export const SETTLE_TARGET_MS = 20;

/** Wall-clock milliseconds comparable across processes on one machine. */
const wall = (): number => performance.timeOrigin + performance.now();

/** The agent: continues the branch with one turn through the store, then prints its last act's time and exits. */
function agentScript(store: string): string {
  return `let text = '';
process.stdin.on('data', (c) => (text += c));
process.stdin.on('end', async () => {
  const input = JSON.parse(text);
  const p = input.forwardedProps.agentSessions;
  const { AdvancedSQLiteSession } = require(${JSON.stringify(store)});
  const s = new AdvancedSQLiteSession({ sessionId: p.sessionId, dbPath: p.store.path });
  await s.switchToBranch(p.branchId);
  await s.addItems([{ role: 'user', content: 'bench' }, { role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }]);
  s.close();
  process.stdout.write(JSON.stringify({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId }) + '\\n');
  console.error('bench.exit ' + (performance.timeOrigin + performance.now()));
  process.exit(0);
});
`;
}

/** The longest branch (most structure rows) of the session with the most messages, or the ones named. */
function longestBranch(path: string, session?: string, branch?: string): { session: string; branch: string; items: number } {
  const db = openSessionDatabase(path, { readonly: true });
  try {
    const sessions = db.listSessions();
    const chosen = session ?? [...sessions].sort((a, b) => b.messageCount - a.messageCount)[0]?.sessionId;
    if (chosen === undefined) throw new Error(`${path} holds no session`);
    const tree = db.getBranchTree(chosen);
    const node =
      branch !== undefined ? tree.find((b) => b.branchId === branch) : [...tree].sort((a, b) => b.messageCount - a.messageCount)[0];
    if (!node) throw new Error(`session '${chosen}' of ${path} has no branch${branch !== undefined ? ` '${branch}'` : ''}`);
    return { session: chosen, branch: node.branchId, items: node.messageCount };
  } finally {
    db.close();
  }
}

interface Side {
  settleMs: number[];
  cpuMs: number[];
}

async function oneRun(dbPath: string, sessionId: string, branchId: string, agent: string): Promise<{ settleMs: number; cpuMs: number }> {
  let exitMark = NaN;
  const cpu0 = process.cpuUsage();
  const outcome = await runCommandOnBranch({
    dbPath,
    sessionId,
    branchId,
    agent: { kind: 'command', name: 'bench', command: `"${process.execPath}" ${storeNeedsTsx() ? '--require tsx/cjs ' : ''}"${agent}"` },
    input: 'bench',
    log: (line) => {
      const m = /^\[bench\] bench\.exit ([\d.]+)$/.exec(line);
      if (m) exitMark = Number(m[1]);
    },
  });
  const settled = wall();
  const cpu = process.cpuUsage(cpu0);
  if (outcome.kind !== 'run/completed') throw new Error(`the bench run did not complete: ${outcome.kind}: ${outcome.message}`);
  if (!Number.isFinite(exitMark)) throw new Error('the bench agent printed no exit mark');
  return { settleMs: settled - exitMark, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** From source the store library is TypeScript, which the agent's Node loads through tsx. */
const storeNeedsTsx = (): boolean => storeLibraryModule().endsWith('.ts');

export interface SettleReport {
  file: { path: string; bytes: number; session: string; branch: string; branchItems: number };
  driver: string;
  node: string;
  runs: number;
  load: { start: number[]; end: number[] };
  /** On the file's branch, and on the 2-turn floor file; each a list over runs, and medians. */
  branch: Side & { medianSettleMs: number; maxSettleMs: number; medianCpuMs: number };
  floor: Side & { medianSettleMs: number; maxSettleMs: number; medianCpuMs: number };
  /** Medians' ratios, branch / floor. */
  ratioSettle: number;
  ratioCpu: number;
  target: { settleMs: number; met: boolean };
}

export async function runSettleBench(
  options: { path: string; session?: string; branch?: string; runs: number; tmp: string },
  progress: (m: string) => void,
): Promise<SettleReport> {
  const start = loadavg().map(round);
  const target = longestBranch(options.path, options.session, options.branch);
  const dir = mkdtempSync(join(options.tmp, 'asi-bench-settle-'));
  try {
    const agent = join(dir, 'agent.js');
    writeFileSync(agent, agentScript(storeLibraryModule()));
    progress(`settle: copying ${options.path} (${target.session} / ${target.branch}, ${target.items} items)`);
    const copy = join(dir, 'file.db');
    copyFileSync(options.path, copy);
    const small = join(dir, 'small.db');
    const s = new AdvancedSQLiteSession({ sessionId: 'small', dbPath: small, createTables: true });
    for (let t = 1; t <= 2; t++) {
      await s.addItems([
        { role: 'user', content: `turn ${t}` },
        { role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
      ] as never);
    }
    s.close();
    const branch: Side = { settleMs: [], cpuMs: [] };
    const floor: Side = { settleMs: [], cpuMs: [] };
    // One unmeasured run on each first: the first run loads the command path's modules.
    await oneRun(small, 'small', 'main', agent);
    await oneRun(copy, target.session, target.branch, agent);
    for (let r = 0; r < options.runs; r++) {
      const order: [string, Side][] = [
        [copy, branch],
        [small, floor],
      ];
      if (r % 2 === 1) order.reverse();
      for (const [file, side] of order) {
        const x = file === copy ? await oneRun(copy, target.session, target.branch, agent) : await oneRun(small, 'small', 'main', agent);
        side.settleMs.push(round(x.settleMs));
        side.cpuMs.push(round(x.cpuMs));
      }
      progress(`settle: run ${r + 1}/${options.runs}: branch ${branch.settleMs.at(-1)} ms, floor ${floor.settleMs.at(-1)} ms`);
    }
    const summary = (x: Side) => ({
      ...x,
      medianSettleMs: round(median(x.settleMs)),
      maxSettleMs: round(Math.max(...x.settleMs)),
      medianCpuMs: round(median(x.cpuMs)),
    });
    const b = summary(branch);
    const f = summary(floor);
    return {
      file: {
        path: options.path,
        bytes: statSync(options.path).size,
        session: target.session,
        branch: target.branch,
        branchItems: target.items,
      },
      driver: resolveDriver(),
      node: process.versions.node,
      runs: options.runs,
      load: { start, end: loadavg().map(round) },
      branch: b,
      floor: f,
      ratioSettle: round(b.medianSettleMs / f.medianSettleMs),
      ratioCpu: round(b.medianCpuMs / f.medianCpuMs),
      target: { settleMs: SETTLE_TARGET_MS, met: b.maxSettleMs <= SETTLE_TARGET_MS },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Alone only (not part of dist/bench.js): `__filename` is this source file.
if (/[\\/]settle\.ts$/.test(__filename) && process.argv[1] && /[\\/]settle\.ts$/.test(process.argv[1])) {
  void (async () => {
    const { path, runs, opt } = await standaloneBenchArgs(process.argv.slice(2), 9);
    const report = await runSettleBench({ path, runs, tmp: opt('tmp') ?? tmpdir(), session: opt('session'), branch: opt('branch') }, (m) =>
      process.stderr.write(`${m}\n`),
    );
    process.stderr.write(
      `settle on ${report.file.branch} (${report.file.branchItems} items, ${report.driver}): median ${report.branch.medianSettleMs} ms, ` +
        `max ${report.branch.maxSettleMs} ms; floor (2 turns) median ${report.floor.medianSettleMs} ms; CPU ${report.branch.medianCpuMs} / ` +
        `${report.floor.medianCpuMs} ms = ${report.ratioCpu}×; target ≤ ${SETTLE_TARGET_MS} ms: ${report.target.met ? 'met' : 'not met'}\n`,
    );
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  })().catch((err: unknown) => {
    process.stderr.write(`settle bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
