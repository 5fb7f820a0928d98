/**
 * The host-blocking benchmark (issues 24 and 43): what each user action costs the extension host's thread, on the
 * scale files (A: 100,000 turns, 5 branches of 200 own turns; B: 2,000 sessions; C: 1,000,000 items; L: 5 long-lived
 * branches of 1,000 own turns forked early; scaleFiles.ts) or on any session file (`--file PATH`).
 *
 * Each action is what the view's request makes the host do, with the view's real arguments, through the host's own
 * code (src/extension/conversation/conversationData.ts): `turns/get` pages of `VIEW_TURN_PAGE` turns (with their
 * summaries, shared-turn usage and turn 0), `tools/get` for a branch and for the session, `tables/get` for `main`, for
 * the measured branch (its shared turns and fork turns, as the panel passes them) and for the session, `USAGE_PAGE`
 * rows in turn order. Per run (`runs`, each with a new worker and connection):
 * - through the store worker (its connection keeps totals, as the extension opens it): the first answer (`firstMs`),
 *   then the median of `reps` answers once kept (`keptMs`); and this thread's event-loop lateness as the maximum over
 *   each whole window, from the request until `SETTLE_MS` after its answer, with a 1 ms timer (lateness.ts), next to
 *   an idle floor and a CPU-busy floor (a worker spinning) taken in the same run;
 * - the cold answers against their floors (coldFloor.ts, the cheapest SQL for the same figures, on the same driver).
 * Then, on a copy: `appendRuns` turns appended by another process (a Node process of its own, as an agent would), each
 * followed by every kept action in a rotated order (so each pays the catch-up first in some runs): how long until the
 * answer is caught up, as a distribution; a run's turn, a branch write, and a write waiting on another process's lock.
 * Last, after every watched window (its garbage is this thread's, which the extension's host never makes), the old
 * way: the actions (once per run) and the writes in this thread on a connection that keeps nothing, as the extension
 * ran them before the worker: the host is blocked for the whole call (`inThreadMs`).
 * Every figure is a range over runs, never a best run. Run under a Node with node:sqlite and no better-sqlite3 build
 * (the cache's Node 24) to measure node:sqlite, as VS Code desktop runs it.
 */
import { join } from 'node:path';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { AdvancedSQLiteSession, openSessionDatabase, type BranchNode, type SessionReader } from '../../src/store';
import { StoreClient } from '../../src/store/worker/storeClient';
import { sharedTurnRanges } from '../../src/shared/turnOrigin';
import { MISSING_USAGE_LISTED, USAGE_PAGE, VIEW_TURN_PAGE } from '../../src/shared/pageSizes';
import { tables, toolsView, turnPage } from '../../src/extension/conversation/conversationData';
import { median, now, round } from './measure';
import { ensureScaleFile, type ScaleFileName } from './scaleFiles';
import { busyFloor, idleFloor, range, rangeText, watchedWindow } from './lateness';
import { ColdFloor, floorBranchTokens, floorSessionTools } from './coldFloor';
import { runInOtherProcess, storeWorkerModule, type WorkerModule } from './benchModules';

/** The target: the host's event loop is never blocked longer than this during an action. */
export const HOST_BLOCKED_TARGET_MS = 20;
/** The target for an answer once its counts are kept, and for one caught up after another process's append. */
export const KEPT_ANSWER_TARGET_MS = 100;
/** The target for a cold answer: at most this times its floor. */
export const COLD_RATIO_TARGET = 1.5;
/** How long each floor window lasts. */
const FLOOR_WINDOW_MS = 250;

/** What the actions work on: a session, its `main`, another branch, and a turn of `main` to branch from. */
export interface Target {
  session: string;
  main: string;
  /** The branch *switch branch* and the branch-scoped tabs show besides `main` (A: forked late; L: long-lived). */
  other: string;
  forkTurn: number;
}

/** The scale files' targets: A's 100,000-turn session, one of B's sessions (B's point is the list), C's, L's. */
const TARGETS: Record<ScaleFileName, Target> = {
  A: { session: 'scale-a', main: 'main', other: 'b1_late', forkTurn: 1_000 },
  B: { session: 'scale-b-01000', main: 'main', other: 'main', forkTurn: 25 },
  C: { session: 'scale-c', main: 'main', other: 'main', forkTurn: 1_000 },
  L: { session: 'scale-l', main: 'main', other: 'l5_early', forkTurn: 1_000 },
};

/**
 * The target of any file (`--file`): the session with the most messages (or `session`), its root branch (`main` when
 * there is one), the other branch with the most rows, and the middle turn of the root branch.
 */
function targetOf(path: string, session?: string): Target {
  const db = openSessionDatabase(path, { readonly: true });
  try {
    const sessions = db.listSessions();
    const chosen = session ?? [...sessions].sort((a, b) => b.messageCount - a.messageCount)[0]?.sessionId;
    if (chosen === undefined || !sessions.some((s) => s.sessionId === chosen)) {
      throw new Error(session === undefined ? `${path} holds no session` : `${path} holds no session '${session}'`);
    }
    const tree = db.getBranchTree(chosen);
    const main = tree.find((b) => b.branchId === 'main') ?? tree.find((b) => b.parentBranchId === null) ?? tree[0];
    if (!main) throw new Error(`session '${chosen}' of ${path} has no branch`);
    const other = [...tree].filter((b) => b !== main).sort((a, b) => b.messageCount - a.messageCount)[0] ?? main;
    return { session: chosen, main: main.branchId, other: other.branchId, forkTurn: Math.max(1, Math.floor(main.userTurns / 2)) };
  } finally {
    db.close();
  }
}

/** An action as the extension performs it: the reads one view request makes the host do. */
interface Action {
  name: string;
  run(db: SessionReader): Promise<unknown>;
}

/**
 * The actions on `t`. The panel reads the branch tree once per change and shares it between the requests that need it
 * (`ConversationPanel.branches`): so do these, per connection; `changed()` forgets it, as a change does.
 */
function actionsFor(t: Target): { actions: Action[]; changed(): void } {
  let trees = new WeakMap<SessionReader, Promise<readonly BranchNode[]>>();
  const cachedTree = (db: SessionReader): Promise<readonly BranchNode[]> => {
    let tree = trees.get(db);
    if (!tree) trees.set(db, (tree = Promise.resolve(db.getBranchTree(t.session))));
    return tree;
  };
  const tree = (db: SessionReader): Promise<readonly BranchNode[]> => cachedTree(db);
  const usage = { sort: 'turn', descending: false, offset: 0, limit: USAGE_PAGE } as const;
  const actions: Action[] = [
    { name: 'list sessions', run: async (db) => db.listSessions() },
    // session/get reads the tree afresh (it is what fills the panel's copy).
    {
      name: 'session/get (branch tree)',
      run: async (db) => {
        trees.delete(db);
        return tree(db);
      },
    },
    {
      name: 'turns/get (first turns)',
      run: async (db) => turnPage(db, t.session, { branchId: t.main, afterTurn: null, limit: VIEW_TURN_PAGE }, await tree(db)),
    },
    {
      name: 'turns/get (End)',
      run: async (db) =>
        turnPage(db, t.session, { branchId: t.main, afterTurn: null, beforeTurn: null, limit: VIEW_TURN_PAGE }, await tree(db)),
    },
    {
      name: `switch branch (${t.other})`,
      run: async (db) =>
        turnPage(db, t.session, { branchId: t.other, afterTurn: null, beforeTurn: null, limit: VIEW_TURN_PAGE }, await tree(db)),
    },
    { name: `tools/get (${t.main})`, run: async (db) => toolsView(db, t.session, t.main) },
    { name: 'tools/get (session)', run: async (db) => toolsView(db, t.session, null) },
    { name: `tables/get (${t.main})`, run: async (db) => tables(db, t.session, t.main, await tree(db), usage) },
    { name: 'tables/get (session)', run: async (db) => tables(db, t.session, null, await tree(db), usage) },
  ];
  if (t.other !== t.main) {
    actions.push({ name: `tables/get (${t.other})`, run: async (db) => tables(db, t.session, t.other, await tree(db), usage) });
  }
  return { actions, changed: () => (trees = new WeakMap()) };
}

type Range = ReturnType<typeof range>;

export interface HostBlockingReport {
  file: { name: string; path: string; bytes: number; target: Target };
  driver: string;
  node: string;
  runs: number;
  reps: number;
  /** This thread's lateness with nothing to do, and beside a worker spinning, per run (same window as an action). */
  floors: { idleMs: Range; busyWorkerMs: Range; windowMs: number };
  actions: {
    action: string;
    inThreadMs: Range;
    firstMs: Range;
    keptMs: Range;
    maxLatenessMs: Range;
    /**
     * The longest pause of this thread's own collections in the action's windows (`watchedWindow`), per run and per
     * append, as `maxLatenessMs`.
     */
    maxGcMs: Range;
    /** The answer's time right after another process appended a turn, over `appendRuns`. */
    afterAppendMs: Range & { p90: number; overTarget: number };
  }[];
  /** The first answers against their floors, per run: each run's ratio, and the ranges. */
  cold: { answer: string; firstMs: Range; floorMs: Range; ratios: number[]; agree: boolean }[];
  appendRuns: number;
  runTurn: { inThreadMs: number; workerMs: number; maxLatenessMs: number; maxGcMs: number };
  branchWrite: { forkTurn: number; inThreadMs: number; workerMs: number; maxLatenessMs: number; maxGcMs: number };
  lockWait: { lockHoldMs: number; waitedMs: number; outcome: string; maxLatenessMs: number; maxGcMs: number };
  target: { maxLatenessMs: number; worstMs: number; met: boolean };
  answerTarget: { ms: number; worstKeptMs: number; worstAfterAppendMs: number; met: boolean };
  coldTarget: { ratio: number; worstRatio: number; met: boolean };
}

export interface HostBlockingConfig {
  cacheDir: string;
  /** A scale file, or any session file (`--file PATH`, optionally `--session ID`). */
  file: ScaleFileName | { path: string; session?: string };
  scale: number;
  reps: number;
  runs: number;
  appendRuns: number;
}

/** The checks of the prior window's code cache growth (ms after its worker's start; the product's are 30 s on). */
const PRIOR_WINDOW_GROW_CHECKS_MS = [2_000, 4_000, 8_000, 16_000, 32_000, 64_000];

/**
 * A window before the measured ones, as a user's last one was: its worker answers every action once and lives past
 * the next check of its code cache's growth (src/store/files/codeCache.ts, `CACHE_GROW_AFTER_MS`), so the measured
 * workers start with the code of what they answer in V8's cache, as a used VS Code's next window does. Before, what
 * the cache held was whatever the bench's first worker that lived 5 s had run by then (B's Tokens page not always).
 */
async function priorWindow(worker: WorkerModule, path: string, actions: readonly Action[]): Promise<void> {
  const started = now();
  const client = new StoreClient(worker.file, {
    execArgv: worker.execArgv,
    codeCacheDir: worker.codeCacheDir,
    codeCacheWriteAfterMs: 0,
    codeCacheGrowAfterMs: PRIOR_WINDOW_GROW_CHECKS_MS,
  });
  try {
    const db = await client.openDatabase(path, { keepTotals: true });
    for (const action of actions) await action.run(db);
    const done = now() - started;
    const check = PRIOR_WINDOW_GROW_CHECKS_MS.find((ms) => ms > done + 100);
    if (check !== undefined) await new Promise((r) => setTimeout(r, check + 300 - done));
    await db.close();
  } finally {
    await client.dispose();
  }
}

export async function runHostBlockingBench(config: HostBlockingConfig, progress: (m: string) => void): Promise<HostBlockingReport> {
  let name: string;
  let path: string;
  let target: Target;
  if (typeof config.file === 'string') {
    name = config.file;
    path = ensureScaleFile(config.cacheDir, config.file, config.scale, progress).path;
    target = TARGETS[config.file];
  } else {
    name = config.file.path;
    path = config.file.path;
    target = targetOf(path, config.file.session);
  }
  const { actions, changed } = actionsFor(target);
  const worker = await storeWorkerModule();
  progress(`host blocking ${name}: a window before the measured ones`);
  await priorWindow(worker, path, actions);
  const perAction = actions.map(() => ({
    inThread: [] as number[],
    first: [] as number[],
    kept: [] as number[],
    late: [] as number[],
    gc: [] as number[],
  }));
  const idle: number[] = [];
  const busy: number[] = [];
  const cold = new Map<string, { first: number[]; floor: number[]; ratios: number[]; agree: boolean }>();
  const coldEntry = (answer: string) => {
    let e = cold.get(answer);
    if (!e) cold.set(answer, (e = { first: [], floor: [], ratios: [], agree: true }));
    return e;
  };
  let driver = '';
  for (let run = 1; run <= config.runs; run++) {
    progress(`host blocking ${name}: run ${run}/${config.runs}: floors`);
    idle.push(await idleFloor(FLOOR_WINDOW_MS));
    busy.push(await busyFloor(FLOOR_WINDOW_MS));
    // The cold floors, before the worker's first answers in odd runs and after them in even ones.
    const floorFirst = run % 2 === 1;
    const floors = floorFirst ? coldFloors(path, target) : undefined;
    const client = new StoreClient(worker.file, { execArgv: worker.execArgv, codeCacheDir: worker.codeCacheDir });
    try {
      const db = await client.openDatabase(path, { keepTotals: true });
      driver = db.driver;
      const firstAnswers = new Map<string, unknown>();
      for (const [i, action] of actions.entries()) {
        progress(`host blocking ${name}: run ${run}: ${action.name}`);
        const first = await watchedWindow(() => action.run(db));
        firstAnswers.set(action.name, first.value);
        const times: number[] = [];
        let late = first.maxLateMs;
        let gc = first.maxGcMs;
        for (let r = 0; r < config.reps; r++) {
          const w = await watchedWindow(() => action.run(db));
          times.push(w.ms);
          late = Math.max(late, w.maxLateMs);
          gc = Math.max(gc, w.maxGcMs);
        }
        perAction[i]!.first.push(first.ms);
        perAction[i]!.kept.push(median(times));
        perAction[i]!.late.push(late);
        perAction[i]!.gc.push(gc);
      }
      await db.close();
      const f = floors ?? coldFloors(path, target);
      for (const c of f) {
        const idx = actions.findIndex((a) => a.name === c.answer);
        if (idx < 0) continue;
        const e = coldEntry(c.answer);
        const firstMs = perAction[idx]!.first.at(-1)!;
        e.first.push(firstMs);
        e.floor.push(c.ms);
        e.ratios.push(round(firstMs / c.ms));
        e.agree &&= c.agrees(firstAnswers.get(c.answer));
      }
    } finally {
      await client.dispose();
    }
  }

  // The writes go to a copy: the cached file stays as generated (a deleted branch's id stays reserved in it).
  const scratch = mkdtempSync(join(tmpdir(), 'asi-bench-host-'));
  const copy = join(scratch, 'a.db');
  const afterAppend = actions.map(() => [] as number[]);
  let branchWrite: HostBlockingReport['branchWrite'];
  let runTurn: HostBlockingReport['runTurn'];
  let lockWait: HostBlockingReport['lockWait'];
  const client = new StoreClient(worker.file, { execArgv: worker.execArgv, codeCacheDir: worker.codeCacheDir });
  try {
    progress(`host blocking ${name}: copying the file for the writes`);
    copyFileSync(path, copy);
    await timeAfterAppends(client, copy, target, actions, changed, config.appendRuns, afterAppend, perAction, progress);
    const runTurnWorker = await throughWorker(client, copy, target, RUN_TURN, 'host blocking: run a turn', progress);
    const branchWorker = await throughWorker(client, copy, target, branchAndDelete(target), 'host blocking: branch and delete', progress);
    lockWait = await timeLockWait(client, copy, target, progress);
    // The old way, in this thread, after every watched window: its garbage is this thread's, and a collection of it
    // inside a later window was counted as that window's lateness (52 ms in one run on A), where the extension's host
    // never does this work.
    runTurn = { inThreadMs: await inThread(copy, target, RUN_TURN), ...runTurnWorker };
    branchWrite = { forkTurn: target.forkTurn, inThreadMs: await inThread(copy, target, branchAndDelete(target)), ...branchWorker };
  } finally {
    await client.dispose();
    rmSync(scratch, { recursive: true, force: true });
  }
  // The old way for the reads too, once per run, in this thread on a connection that keeps nothing: what the host was
  // blocked for.
  for (let run = 1; run <= config.runs; run++) {
    const local = openSessionDatabase(path, { readonly: true });
    try {
      for (const [i, action] of actions.entries()) {
        const t0 = now();
        await action.run(local);
        perAction[i]!.inThread.push(now() - t0);
      }
    } finally {
      local.close();
    }
  }

  const report: HostBlockingReport['actions'] = actions.map((a, i) => {
    const p = perAction[i]!;
    const appended = afterAppend[i]!;
    const sorted = [...appended].sort((x, y) => x - y);
    return {
      action: a.name,
      inThreadMs: range(p.inThread),
      firstMs: range(p.first),
      keptMs: range(p.kept),
      maxLatenessMs: range(p.late),
      maxGcMs: range(p.gc),
      afterAppendMs: {
        ...range(appended),
        p90: round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)] ?? Number.NaN),
        overTarget: appended.filter((ms) => ms > KEPT_ANSWER_TARGET_MS).length,
      },
    };
  });
  const coldReport = [...cold].map(([answer, e]) => ({
    answer,
    firstMs: range(e.first),
    floorMs: range(e.floor),
    ratios: e.ratios,
    agree: e.agree,
  }));
  const worst = Math.max(
    ...report.map((a) => a.maxLatenessMs.max),
    runTurn.maxLatenessMs,
    branchWrite.maxLatenessMs,
    lockWait.maxLatenessMs,
  );
  const worstKept = Math.max(...report.map((a) => a.keptMs.max));
  const worstAfterAppend = Math.max(...report.map((a) => a.afterAppendMs.max));
  const worstRatio = Math.max(...coldReport.flatMap((c) => c.ratios));
  return {
    file: { name, path, bytes: statSync(path).size, target },
    driver,
    node: process.versions.node,
    runs: config.runs,
    reps: config.reps,
    floors: { idleMs: range(idle), busyWorkerMs: range(busy), windowMs: FLOOR_WINDOW_MS },
    actions: report,
    cold: coldReport,
    appendRuns: config.appendRuns,
    runTurn,
    branchWrite,
    lockWait,
    target: { maxLatenessMs: HOST_BLOCKED_TARGET_MS, worstMs: round(worst), met: worst <= HOST_BLOCKED_TARGET_MS },
    answerTarget: {
      ms: KEPT_ANSWER_TARGET_MS,
      worstKeptMs: round(worstKept),
      worstAfterAppendMs: round(worstAfterAppend),
      met: worstKept <= KEPT_ANSWER_TARGET_MS && worstAfterAppend <= KEPT_ANSWER_TARGET_MS,
    },
    coldTarget: { ratio: COLD_RATIO_TARGET, worstRatio: round(worstRatio), met: worstRatio <= COLD_RATIO_TARGET },
  };
}

/** One cold answer's floor, timed on a fresh connection, with a check that it agrees with the store's answer. */
interface ColdFloorResult {
  answer: string;
  ms: number;
  agrees(storeAnswer: unknown): boolean;
}

/** The floors of the cold answers: the session's tool totals, and the Tokens page of `main` and of the other branch. */
function coldFloors(path: string, t: Target): ColdFloorResult[] {
  const out: ColdFloorResult[] = [];
  const tree = (() => {
    const db = openSessionDatabase(path, { readonly: true });
    try {
      return db.getBranchTree(t.session);
    } finally {
      db.close();
    }
  })();
  {
    const c = new ColdFloor(path);
    try {
      const t0 = now();
      const tools = floorSessionTools(c, t.session, 20);
      const ms = now() - t0;
      out.push({
        answer: 'tools/get (session)',
        ms,
        agrees: (s) => {
          const view = s as { tools: { toolName: string; calls: number; turnCount: number; turns: number[]; branchTurns?: unknown }[] };
          return (
            JSON.stringify(view.tools.map((x) => [x.toolName, x.calls, x.turnCount, x.turns, x.branchTurns])) ===
            JSON.stringify(tools.map((x) => [x.toolName, x.calls, x.turnCount, x.turns, x.branchTurns]))
          );
        },
      });
    } finally {
      c.close();
    }
  }
  for (const branchId of new Set([t.main, t.other])) {
    const c = new ColdFloor(path);
    try {
      const node = tree.find((b) => b.branchId === branchId);
      const shared = sharedTurnRanges(tree, branchId).filter((r) => r.fromTurn <= r.toTurn && r.originBranchId !== branchId);
      const fromTurn = node?.parentBranchId !== null && node?.forkTurn ? node.forkTurn : 1;
      const t0 = now();
      const page = floorBranchTokens(c, t.session, branchId, shared, fromTurn, USAGE_PAGE, MISSING_USAGE_LISTED);
      const ms = now() - t0;
      out.push({
        answer: `tables/get (${branchId})`,
        ms,
        agrees: (s) => {
          const view = s as {
            usage: { rowCount: number; totals: Record<string, unknown>; rows: { turn: number }[] };
            turnsWithoutUsageCount: number;
          };
          return (
            view.usage.rowCount === page.rowCount &&
            view.turnsWithoutUsageCount === page.missingCount &&
            JSON.stringify(view.usage.rows.map((r) => r.turn)) === JSON.stringify(page.rows.map((r) => r.turn)) &&
            Object.entries(page.totals).every(([k, v]) => view.usage.totals[k] === v)
          );
        },
      });
    } finally {
      c.close();
    }
  }
  return out;
}

/** Another process appends a turn (4 items and its usage, as a run writes) and prints `committed`; resolves then. */
async function appendInOtherProcess(path: string, session: string, branch: string, n: number): Promise<void> {
  let committed: () => void = () => undefined;
  const seen = new Promise<void>((resolve) => (committed = resolve));
  const done = runInOtherProcess(
    `const [path, session, branch, n] = process.argv.slice(-4);
     (async () => {
       const s = new STORE.AdvancedSQLiteSession({ sessionId: session, dbPath: path });
       await s.switchToBranch(branch);
       await s.addItems([
         { role: 'user', content: 'appended question ' + n },
         { type: 'function_call', name: 'lookup', callId: 'bench_append_' + n, arguments: '{}' },
         { type: 'function_call_result', name: 'lookup', callId: 'bench_append_' + n, status: 'completed', output: 'ok' },
         { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'appended answer ' + n }] },
       ]);
       await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 2, totalTokens: 12 } } });
       console.log('committed');
       s.close();
     })().catch((e) => { console.error(e); process.exit(1); });`,
    [path, session, branch, String(n)],
    (line) => {
      if (line === 'committed') committed();
    },
  );
  const ended = done.then((r) => {
    if (r.code !== 0) throw new Error(`the appending process failed (${r.code}): ${r.stderr.slice(0, 500)}`);
  });
  await Promise.race([seen, ended]);
}

/**
 * Every action once on a kept connection to the copy (so its counts are kept); then `runs` times: another process
 * appends a turn to the measured branch, and every action is asked again, starting with a different one each run (the
 * first after the append pays the check of the new rows): the answer's time while the kept counts catch up.
 */
async function timeAfterAppends(
  client: StoreClient,
  path: string,
  t: Target,
  actions: Action[],
  changed: () => void,
  runs: number,
  out: number[][],
  perAction: { late: number[]; gc: number[] }[],
  progress: (m: string) => void,
): Promise<void> {
  const db = await client.openDatabase(path, { keepTotals: true });
  try {
    for (const action of actions) await action.run(db);
    for (let run = 0; run < runs; run++) {
      progress(`host blocking: append ${run + 1}/${runs} from another process`);
      await appendInOtherProcess(path, t.session, run % 2 === 0 ? t.main : t.other, run);
      changed();
      for (let k = 0; k < actions.length; k++) {
        const i = (run + k) % actions.length;
        const w = await watchedWindow(() => actions[i]!.run(db));
        out[i]!.push(round(w.ms));
        perAction[i]!.late.push(w.maxLateMs);
        perAction[i]!.gc.push(w.maxGcMs);
      }
    }
  } finally {
    await db.close();
  }
}

/** The session calls the timed writes make, which the in-thread session and the worker's both have. */
type WriteSession = Pick<AdvancedSQLiteSession, 'addItems' | 'storeRunUsage' | 'createBranchFromTurn' | 'deleteBranch'>;

/** A timed write: the same calls in this thread and through the worker, each on a session of its own. */
type TimedWrite = (s: WriteSession, tag: string) => Promise<void>;

/** `write` through the worker, in a watched window. */
async function throughWorker(
  client: StoreClient,
  path: string,
  t: Target,
  write: TimedWrite,
  what: string,
  progress: (m: string) => void,
): Promise<{ workerMs: number; maxLatenessMs: number; maxGcMs: number }> {
  progress(what);
  const r = await watchedWindow(async () => {
    const s = await client.openSession({ sessionId: t.session, dbPath: path });
    try {
      await write(s, 'worker');
    } finally {
      await s.close();
    }
  });
  return { workerMs: round(r.ms), maxLatenessMs: r.maxLateMs, maxGcMs: r.maxGcMs };
}

/** `write` in this thread, the old way: the ms it held the thread. */
async function inThread(path: string, t: Target, write: TimedWrite): Promise<number> {
  const local = new AdvancedSQLiteSession({ sessionId: t.session, dbPath: path });
  const t0 = now();
  try {
    await write(local, 'local');
  } finally {
    local.close();
  }
  return round(now() - t0);
}

/** A turn as a run writes it: four items and the usage. */
const RUN_TURN: TimedWrite = async (s, tag) => {
  await s.addItems([
    { role: 'user', content: `run question ${tag}` },
    { type: 'function_call', name: 'lookup', callId: `bench_run_${tag}`, arguments: '{}' },
    { type: 'function_call_result', name: 'lookup', callId: `bench_run_${tag}`, status: 'completed', output: 'ok' },
    { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `run answer ${tag}` }] },
  ]);
  await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 2, totalTokens: 12 } } });
};

/** A branch from turn `forkTurn` and its deletion (the file ends as it began). */
const branchAndDelete =
  (t: Target): TimedWrite =>
  async (s, tag) => {
    await s.createBranchFromTurn(t.forkTurn, `bench_${tag}`);
    await s.deleteBranch(`bench_${tag}`, true);
  };

/**
 * Another process holds the write lock for `lockHoldMs` while the worker's branch write waits for it: the host must
 * stay responsive the whole time.
 */
async function timeLockWait(
  client: StoreClient,
  path: string,
  t: Target,
  progress: (m: string) => void,
): Promise<HostBlockingReport['lockWait']> {
  progress('host blocking: a write waiting on another process’s lock');
  // The case: the agent's process holds the lock for 8 s (the write waits past the 5 s busy timeout).
  const lockHoldMs = 8000;
  let locked: () => void = () => undefined;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = runInOtherProcess(
    `const [path, ms] = process.argv.slice(-2);
     const db = STORE.openDatabase(path);
     db.exec('BEGIN IMMEDIATE');
     console.log('locked');
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(ms));
     db.exec('COMMIT');
     db.close();`,
    [path, String(lockHoldMs)],
    (line) => {
      if (line === 'locked') locked();
    },
  );
  await Promise.race([isLocked, holder.then((r) => Promise.reject(new Error(`the lock holder ended first: ${r.stderr}`)))]);
  const r = await watchedWindow(async () => {
    // As the extension's branch actions wait (VISIBLE_LOCK_WAIT_MS, with the notice and Cancel): up to a minute.
    const s = await client.openSession({ sessionId: t.session, dbPath: path }, { lockWaitMs: 60_000 });
    try {
      await s.createBranchFromTurn(t.forkTurn, 'bench_locked');
      await s.deleteBranch('bench_locked', true);
      return 'written after the lock was released';
    } catch (err) {
      return `failed: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      await s.close();
    }
  });
  await holder;
  return { lockHoldMs, waitedMs: round(r.ms), outcome: r.value, maxLatenessMs: r.maxLateMs, maxGcMs: r.maxGcMs };
}

/** A timed write's row of the table: in this thread, through the worker, and the host's lateness and GC meanwhile. */
function writeRow(
  label: string,
  inThreadMs: number | undefined,
  w: { workerMs: number; maxLatenessMs: number; maxGcMs: number },
): string[] {
  return [
    label,
    inThreadMs === undefined ? '' : String(inThreadMs),
    '',
    String(w.workerMs),
    '',
    String(w.maxLatenessMs),
    String(w.maxGcMs),
  ];
}

/** The section as a table for stderr: ranges over runs (min–max). */
export function hostBlockingTable(r: HostBlockingReport): string {
  const rows = [
    ['action', 'in thread ms', 'first answer ms', 'kept answer ms', 'after an append ms (max, >100)', 'host max lateness ms', 'its GC ms'],
    ...r.actions.map((a) => [
      a.action,
      rangeText(a.inThreadMs),
      rangeText(a.firstMs),
      rangeText(a.keptMs),
      `${rangeText(a.afterAppendMs)} (med ${a.afterAppendMs.median}, ${a.afterAppendMs.overTarget}/${a.afterAppendMs.n})`,
      rangeText(a.maxLatenessMs),
      rangeText(a.maxGcMs),
    ]),
    writeRow('run a turn (4 items + usage)', r.runTurn.inThreadMs, r.runTurn),
    writeRow(`branch at turn ${r.branchWrite.forkTurn} + delete`, r.branchWrite.inThreadMs, r.branchWrite),
    writeRow(`write behind a ${r.lockWait.lockHoldMs} ms lock`, undefined, { ...r.lockWait, workerMs: r.lockWait.waitedMs }),
    ['floor: idle', '', '', '', '', rangeText(r.floors.idleMs), ''],
    ['floor: beside a spinning worker', '', '', '', '', rangeText(r.floors.busyWorkerMs), ''],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  const coldLines = r.cold.map(
    (c) =>
      `cold ${c.answer}: first ${rangeText(c.firstMs)} ms, floor ${rangeText(c.floorMs)} ms, ratio per run ${c.ratios.join(' · ')}${c.agree ? '' : ' (DISAGREES with the floor)'}`,
  );
  return [
    `host blocking on ${r.file.name}, session ${r.file.target.session} (${r.driver}, Node ${r.node}, ${r.runs} runs × ${r.reps} reps, ${r.appendRuns} appends); targets: lateness <= ${r.target.maxLatenessMs} ms, kept and caught-up answers <= ${r.answerTarget.ms} ms, cold <= ${r.coldTarget.ratio}× floor`,
    ...lines,
    ...coldLines,
  ].join('\n');
}
