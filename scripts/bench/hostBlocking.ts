/**
 * The host-blocking benchmark (issue 24): what each user action costs the extension host's thread, before and after
 * the store worker. On each scale file (A: 100,000 turns, 5 branches; B: 2,000 sessions; C: 1,000,000 items;
 * scaleFiles.ts) each action's store calls run
 * - in this thread, as the extension ran them before: the host is blocked for the whole call (`inThreadMs`);
 * - through the store worker, as the extension runs them now (its connection keeps totals): the first answer's time
 *   (`firstMs`: the kept counts' first computation), then the answer's time once they are kept (`workerMs`, median of
 *   `reps`), and the most this thread's event loop was late meanwhile (`maxEventLoopDelayMs`: the event-loop
 *   histogram's 10 ms timer, less its period);
 * - on a copy, after another connection appended a turn (4 items and its usage, as a run writes): the answer's time
 *   while the kept counts catch up (`afterAppendMs`).
 * Then a branch write that waits on another connection's write lock (held `lockHoldMs`): the host's largest delay
 * while it waits. Run under a Node with node:sqlite and no better-sqlite3 build (the cache's Node 24) to measure
 * node:sqlite, as VS Code desktop runs it.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionReader } from '../../src/store';
import { StoreClient } from '../../src/store/worker/storeClient';
import { acquireGc, median, now, round, settle } from './measure';
import { ensureScaleFile, type ScaleFileName } from './scaleFiles';

/** The target: the host's event loop is never blocked longer than this during an action. */
export const HOST_BLOCKED_TARGET_MS = 20;
/** The target for an answer once its counts are kept. */
export const KEPT_ANSWER_TARGET_MS = 100;

/**
 * What the actions work on in each file: A's 100,000-turn session with 5 branches, one of B's 2,000 sessions (50 turns;
 * the session list is B's point), C's one session of 1,000,000 items. `forkTurn`: where the measured branch forks (its
 * copy of the turns before it is the write's work).
 */
const TARGETS: Record<ScaleFileName, { session: string; forkTurn: number; otherBranch: string }> = {
  A: { session: 'scale-a', forkTurn: 1_000, otherBranch: 'b1_late' },
  B: { session: 'scale-b-01000', forkTurn: 25, otherBranch: 'main' },
  C: { session: 'scale-c', forkTurn: 1_000, otherBranch: 'main' },
};

/** The session and fork turn of the file being measured (set per file by `runHostBlockingBench`). */
let SESSION = TARGETS.A.session;
let FORK_TURN = TARGETS.A.forkTurn;
/** The branch *switch branch* shows (files B and C have main only). */
let OTHER_BRANCH = TARGETS.A.otherBranch;

/** An action as the extension performs it: the reads one user step makes. */
interface Action {
  name: string;
  run(db: SessionReader): Promise<unknown>;
}

const ACTIONS: Action[] = [
  { name: 'list sessions', run: async (db) => db.listSessions() },
  { name: 'expand the session (branch tree)', run: async (db) => db.getBranchTree(SESSION) },
  { name: 'open the view (first turns)', run: async (db) => db.getTurnsPage(SESSION, 'main', { afterTurn: null, limit: 50 }) },
  { name: 'End (last turns)', run: async (db) => db.getTurnsPageBefore(SESSION, 'main', { limit: 50 }) },
  // The view switched to another branch: its tree (kept) and its last turns, as the view opens a branch at its end.
  {
    name: 'switch branch',
    run: async (db) => Promise.all([db.getBranchTree(SESSION), db.getTurnsPageBefore(SESSION, OTHER_BRANCH, { limit: 50 })]),
  },
  { name: 'Tools tab (branch)', run: async (db) => db.getToolTotals(SESSION, 'main') },
  { name: 'Tools tab (session)', run: async (db) => db.getToolTotals(SESSION, null) },
  // One read since the Tokens tab stopped reading the tool totals it does not show (they are the Tools tab's).
  {
    name: 'Tokens tab (branch)',
    run: async (db) => db.getUsageTab(SESSION, 'main', { sort: 'turn', descending: false, offset: 0, limit: 100 }, { limit: 50 }),
  },
  {
    name: 'Tokens tab (session)',
    run: async (db) => db.getUsageTab(SESSION, null, { sort: 'turn', descending: false, offset: 0, limit: 100 }, { limit: 50 }),
  },
];

export interface HostBlockingReport {
  file: { name: ScaleFileName; path: string; bytes: number; session: string };
  driver: string;
  node: string;
  actions: {
    action: string;
    inThreadMs: number;
    firstMs: number;
    workerMs: number;
    afterAppendMs: number;
    maxEventLoopDelayMs: number;
  }[];
  branchWrite: { forkTurn: number; inThreadMs: number; workerMs: number; maxEventLoopDelayMs: number };
  /** A run's writes through the SDK's session (4 items, then the usage), as an agent run makes them. */
  runTurn: { inThreadMs: number; workerMs: number; maxEventLoopDelayMs: number };
  lockWait: { lockHoldMs: number; waitedMs: number; outcome: string; maxEventLoopDelayMs: number };
  target: { maxEventLoopDelayMs: number; worstMs: number; met: boolean };
  /** Answers once kept, and right after another connection's append, against `KEPT_ANSWER_TARGET_MS`. */
  answerTarget: { ms: number; worstKeptMs: number; worstAfterAppendMs: number; met: boolean };
}

const GC = acquireGc().gc;

/** The event-loop histogram's period. */
const RESOLUTION_MS = 10;

/** Runs `fn` while the event-loop histogram watches this thread; the most its timer fired late, in ms. */
async function watched<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; maxDelayMs: number }> {
  // This thread's earlier garbage (an in-thread run's rows) collected now, not while the worker's call is watched.
  GC?.();
  await settle();
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  const start = now();
  try {
    const value = await fn();
    // The histogram records the time between two of its timer's firings, so the lateness is that minus the period;
    // with no sample (a call shorter than the period) nothing was late.
    const lateness = histogram.count > 0 ? Math.max(0, histogram.max / 1e6 - RESOLUTION_MS) : 0;
    return { value, ms: now() - start, maxDelayMs: lateness };
  } finally {
    histogram.disable();
  }
}

export async function runHostBlockingBench(
  config: { cacheDir: string; file: ScaleFileName; scale: number; reps: number; workerFile: string },
  progress: (m: string) => void,
): Promise<HostBlockingReport> {
  SESSION = TARGETS[config.file].session;
  FORK_TURN = TARGETS[config.file].forkTurn;
  OTHER_BRANCH = TARGETS[config.file].otherBranch;
  const file = ensureScaleFile(config.cacheDir, config.file, config.scale, progress);
  const path = file.path;
  const client = new StoreClient(config.workerFile);
  const local = openSessionDatabase(path);
  try {
    // As the extension opens it (databaseRegistry.ts): counts and totals kept.
    const db = await client.openDatabase(path, { keepTotals: true });
    const actions: HostBlockingReport['actions'] = [];
    for (const action of ACTIONS) {
      progress(`host blocking: ${action.name}`);
      // The worker's runs first: the in-thread run's garbage would otherwise be collected on this thread while the
      // worker's are watched, and count as their delay.
      const first = await watched(() => action.run(db));
      const times: number[] = [];
      let maxDelay = first.maxDelayMs;
      for (let i = 0; i < config.reps; i++) {
        const r = await watched(() => action.run(db));
        times.push(r.ms);
        maxDelay = Math.max(maxDelay, r.maxDelayMs);
      }
      const t0 = now();
      await action.run(local);
      const inThreadMs = now() - t0;
      actions.push({
        action: action.name,
        inThreadMs: round(inThreadMs),
        firstMs: round(first.ms),
        workerMs: round(median(times)),
        afterAppendMs: Number.NaN,
        maxEventLoopDelayMs: round(maxDelay),
      });
    }
    await db.close();
    // The writes go to a copy: the cached file stays as generated (a deleted branch's id stays reserved in it).
    const scratch = mkdtempSync(join(tmpdir(), 'asi-bench-host-'));
    const copy = join(scratch, 'a.db');
    let branchWrite: HostBlockingReport['branchWrite'];
    let runTurn: HostBlockingReport['runTurn'];
    let lockWait: HostBlockingReport['lockWait'];
    try {
      progress(`host blocking: copying file ${config.file} for the writes`);
      copyFileSync(path, copy);
      await timeAfterAppend(client, copy, actions, progress);
      runTurn = await timeRunTurn(client, copy, progress);
      branchWrite = await timeBranchWrite(client, copy, progress);
      lockWait = await timeLockWait(client, copy, progress);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    const worst = Math.max(
      ...actions.map((a) => a.maxEventLoopDelayMs),
      runTurn.maxEventLoopDelayMs,
      branchWrite.maxEventLoopDelayMs,
      lockWait.maxEventLoopDelayMs,
    );
    const worstKept = Math.max(...actions.map((a) => a.workerMs));
    const worstAfterAppend = Math.max(...actions.map((a) => a.afterAppendMs));
    return {
      file: { name: config.file, path, bytes: statSync(path).size, session: SESSION },
      driver: db.driver,
      node: process.versions.node,
      actions,
      runTurn,
      branchWrite,
      lockWait,
      target: { maxEventLoopDelayMs: HOST_BLOCKED_TARGET_MS, worstMs: round(worst), met: worst <= HOST_BLOCKED_TARGET_MS },
      answerTarget: {
        ms: KEPT_ANSWER_TARGET_MS,
        worstKeptMs: round(worstKept),
        worstAfterAppendMs: round(worstAfterAppend),
        met: worstKept <= KEPT_ANSWER_TARGET_MS && worstAfterAppend <= KEPT_ANSWER_TARGET_MS,
      },
    };
  } finally {
    local.close();
    await client.dispose();
  }
}

/**
 * Every action once on a kept connection to the copy (so its counts are kept), then a run's turn appended by another
 * connection, then each action again: the answer's time while the kept counts catch up with the new rows. The first
 * action after the append pays the check (a count per branch and the new rows); the others find it done.
 */
async function timeAfterAppend(
  client: StoreClient,
  path: string,
  actions: HostBlockingReport['actions'],
  progress: (m: string) => void,
): Promise<void> {
  progress('host blocking: answers after another connection appends a turn');
  const db = await client.openDatabase(path, { keepTotals: true });
  try {
    for (const action of ACTIONS) await action.run(db);
    for (const [i, action] of ACTIONS.entries()) {
      const writer = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path });
      try {
        await writer.addItems([
          { role: 'user', content: `appended question ${i}` },
          { type: 'function_call', name: 'lookup', callId: `bench_append_${i}`, arguments: '{}' },
          { type: 'function_call_result', name: 'lookup', callId: `bench_append_${i}`, status: 'completed', output: 'ok' },
          { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `appended answer ${i}` }] },
        ]);
        await writer.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 2, totalTokens: 12 } } });
      } finally {
        writer.close();
      }
      const r = await watched(() => action.run(db));
      actions[i]!.afterAppendMs = round(r.ms);
      actions[i]!.maxEventLoopDelayMs = Math.max(actions[i]!.maxEventLoopDelayMs, round(r.maxDelayMs));
    }
  } finally {
    await db.close();
  }
}

/** The session calls the timed writes make, which the in-thread session and the worker's both have. */
type WriteSession = Pick<AdvancedSQLiteSession, 'addItems' | 'storeRunUsage' | 'createBranchFromTurn' | 'deleteBranch'>;

/**
 * `write` once in this thread (`tag` 'local') and once through the worker (`tag` 'worker'), each on a session of its
 * own: how long it blocked the host before, and its time and the host's largest delay now.
 */
async function inThreadThenWorker(
  client: StoreClient,
  path: string,
  write: (s: WriteSession, tag: string) => Promise<void>,
): Promise<{ inThreadMs: number; workerMs: number; maxEventLoopDelayMs: number }> {
  const local = new AdvancedSQLiteSession({ sessionId: SESSION, dbPath: path });
  const t0 = now();
  try {
    await write(local, 'local');
  } finally {
    local.close();
  }
  const inThreadMs = now() - t0;
  const r = await watched(async () => {
    const s = await client.openSession({ sessionId: SESSION, dbPath: path });
    try {
      await write(s, 'worker');
    } finally {
      await s.close();
    }
  });
  return { inThreadMs: round(inThreadMs), workerMs: round(r.ms), maxEventLoopDelayMs: round(r.maxDelayMs) };
}

/** A run's turn written through the SDK's session: in this thread, then through the worker (a `WorkerSession`). */
async function timeRunTurn(client: StoreClient, path: string, progress: (m: string) => void): Promise<HostBlockingReport['runTurn']> {
  progress('host blocking: run a turn');
  return inThreadThenWorker(client, path, async (s, tag) => {
    await s.addItems([
      { role: 'user', content: `run question ${tag}` },
      { type: 'function_call', name: 'lookup', callId: `bench_run_${tag}`, arguments: '{}' },
      { type: 'function_call_result', name: 'lookup', callId: `bench_run_${tag}`, status: 'completed', output: 'ok' },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `run answer ${tag}` }] },
    ]);
    await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 10, outputTokens: 2, totalTokens: 12 } } });
  });
}

/** A branch from turn `FORK_TURN` and its deletion: in this thread, then through the worker (the file ends as it began). */
async function timeBranchWrite(
  client: StoreClient,
  path: string,
  progress: (m: string) => void,
): Promise<HostBlockingReport['branchWrite']> {
  progress('host blocking: branch and delete');
  const timed = await inThreadThenWorker(client, path, async (s, tag) => {
    await s.createBranchFromTurn(FORK_TURN, `bench_${tag}`);
    await s.deleteBranch(`bench_${tag}`, true);
  });
  return { forkTurn: FORK_TURN, ...timed };
}

/**
 * Another connection holds the write lock for `lockHoldMs` (in a worker of its own, as another process would) while
 * the worker's branch write waits for it: the host must stay responsive the whole time.
 */
async function timeLockWait(client: StoreClient, path: string, progress: (m: string) => void): Promise<HostBlockingReport['lockWait']> {
  progress('host blocking: a write waiting on another connection’s lock');
  // The case: the agent's process holds the lock for 8 s (the write waits past the 5 s busy timeout).
  const lockHoldMs = 8000;
  const { Worker } = await import('node:worker_threads');
  // The holder: BEGIN IMMEDIATE, sleep, COMMIT, on a thread of its own.
  const holder = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const { openDatabase } = require(workerData.store);
     const db = openDatabase(workerData.path);
     db.exec('BEGIN IMMEDIATE');
     parentPort.postMessage('locked');
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.ms);
     db.exec('COMMIT');
     db.close();`,
    { eval: true, workerData: { store: join(__dirname, 'store.js'), path, ms: lockHoldMs } },
  );
  const exited = new Promise((resolve) => holder.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    holder.once('message', () => resolve());
    holder.once('error', reject);
  });
  const r = await watched(async () => {
    // As the extension's branch actions wait (VISIBLE_LOCK_WAIT_MS, with the notice and Cancel): up to a minute.
    const s = await client.openSession({ sessionId: SESSION, dbPath: path }, { lockWaitMs: 60_000 });
    try {
      await s.createBranchFromTurn(FORK_TURN, 'bench_locked');
      await s.deleteBranch('bench_locked', true);
      return 'written after the lock was released';
    } catch (err) {
      return `failed: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      await s.close();
    }
  });
  await exited;
  return { lockHoldMs, waitedMs: round(r.ms), outcome: r.value, maxEventLoopDelayMs: round(r.maxDelayMs) };
}

/** The section as a table for stderr. */
export function hostBlockingTable(r: HostBlockingReport): string {
  const rows = [
    ['action', 'in thread (host blocked) ms', 'first answer ms', 'kept answer ms', 'after an append ms', 'host max delay ms'],
    ...r.actions.map((a) => [
      a.action,
      String(a.inThreadMs),
      String(a.firstMs),
      String(a.workerMs),
      String(a.afterAppendMs),
      String(a.maxEventLoopDelayMs),
    ]),
    [
      'run a turn (4 items + usage)',
      String(r.runTurn.inThreadMs),
      '',
      String(r.runTurn.workerMs),
      '',
      String(r.runTurn.maxEventLoopDelayMs),
    ],
    [
      `branch at turn ${r.branchWrite.forkTurn} + delete`,
      String(r.branchWrite.inThreadMs),
      '',
      String(r.branchWrite.workerMs),
      '',
      String(r.branchWrite.maxEventLoopDelayMs),
    ],
    [
      `write behind a ${r.lockWait.lockHoldMs} ms lock`,
      '(up to the busy timeout)',
      '',
      String(r.lockWait.waitedMs),
      '',
      String(r.lockWait.maxEventLoopDelayMs),
    ],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  return [
    `host blocking on file ${r.file.name}, session ${r.file.session} (${r.driver}, Node ${r.node}); targets: host delay <= ${r.target.maxEventLoopDelayMs} ms, kept answer <= ${r.answerTarget.ms} ms`,
    ...lines,
  ].join('\n');
}
