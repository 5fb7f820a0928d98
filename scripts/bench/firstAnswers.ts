/**
 * A new window's first answers from the store worker (issue 43, cold answers), with the code cache the window before
 * it left (src/store/files/codeCache.ts): each measured start is a new worker (`dist/storeWorker.js` as the extension
 * starts it) that lists the file's sessions, then asks what opening a conversation asks (the branch tree and the
 * first page of turns), the Tokens tab of `main` and the session's Tools tab, timing each from the request to its
 * answer. Two cache folders, alternately, each filled first by one worker as a window would fill it:
 * - *first seconds*: that worker lists the sessions and lives past the cache's first write (5 s) only, so the cache
 *   holds what a window's first seconds ran;
 * - *grown*: that worker also opens the conversation and its tabs after the first write, and lives past a growth check
 *   (`codeCacheGrowAfterMs`, here 8 s instead of 30 s), as a window does that was used for a minute.
 * Next to them, the Tokens tab's floor (coldFloor.ts: the cheapest SQL for the same figures) on a fresh connection in
 * this process, whose code has run before.
 *
 *   npx tsx scripts/bench/firstAnswers.ts B [--runs=9] [--session=ID]   (or --file=PATH; B by default is one of its sessions)
 *
 * Prints JSON: ms per answer (ranges over runs), the floor, the ratio of medians, the cache files' sizes.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreClient } from '../../src/store/worker/storeClient';
import { tables, toolsView, turnPage } from '../../src/extension/conversation/conversationData';
import { MISSING_USAGE_LISTED, USAGE_PAGE, VIEW_TURN_PAGE } from '../../src/shared/pageSizes';
import { openSessionDatabase } from '../../src/store';
import { storeWorkerModule } from './benchModules';
import { ColdFloor, floorBranchTokens } from './coldFloor';
import { median, round } from './measure';
import { runStandaloneBench } from './scaleFiles';

const usage = { sort: 'turn', descending: false, offset: 0, limit: USAGE_PAGE } as const;
const now = () => performance.now();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answers {
  list: number;
  conversation: number;
  tokens: number;
  tools: number;
}

/** One new worker's first answers; `then` runs before it ends (the filling worker's wait). */
async function window(
  worker: string,
  path: string,
  session: string,
  options: { codeCacheDir: string; codeCacheGrowAfterMs?: number[] },
  plan: 'list' | 'all',
  then?: (db: Awaited<ReturnType<StoreClient['openDatabase']>>) => Promise<void>,
): Promise<Answers | undefined> {
  const client = new StoreClient(worker, options);
  try {
    const t0 = now();
    const db = await client.openDatabase(path, { keepTotals: true });
    await db.listSessions();
    const list = now() - t0;
    let out: Answers | undefined;
    if (plan === 'all') out = { list, ...(await conversation(db, session)) };
    await then?.(db);
    await db.close();
    return out;
  } finally {
    await client.dispose();
  }
}

async function conversation(db: Awaited<ReturnType<StoreClient['openDatabase']>>, session: string) {
  const t1 = now();
  const tree = await db.getBranchTree(session);
  await turnPage(db as never, session, { branchId: 'main', afterTurn: null, limit: VIEW_TURN_PAGE }, tree);
  const conversationMs = now() - t1;
  const t2 = now();
  await tables(db as never, session, 'main', tree, usage);
  const tokens = now() - t2;
  const t3 = now();
  await toolsView(db as never, session, null);
  return { conversation: conversationMs, tokens, tools: now() - t3 };
}

function tokensFloor(path: string, session: string): number {
  const c = new ColdFloor(path);
  try {
    const t0 = now();
    floorBranchTokens(c, session, 'main', [], 1, USAGE_PAGE, MISSING_USAGE_LISTED);
    return now() - t0;
  } finally {
    c.close();
  }
}

const range = (xs: number[]) => ({ min: round(Math.min(...xs)), median: round(median(xs)), max: round(Math.max(...xs)) });

export async function runFirstAnswersBench(path: string, runs: number, session?: string) {
  const loadStart = loadavg()[0]!;
  const worker = (await storeWorkerModule()).file;
  const sessions = (() => {
    const db = openSessionDatabase(path, { readonly: true });
    try {
      return db.listSessions().map((s) => s.sessionId);
    } finally {
      db.close();
    }
  })();
  // A different session each start (another conversation opened), none of them the filling workers'.
  const pick = (i: number) => session ?? sessions[(i * 7 + 1) % sessions.length]!;
  const [fillA, fillB, floorWarm] = [runs + 1, runs + 2, runs + 3];
  const firstSeconds = mkdtempSync(join(tmpdir(), 'asi-first-answers-'));
  const grown = mkdtempSync(join(tmpdir(), 'asi-first-answers-'));
  try {
    // Past the first write (5 s) with the sessions listed only.
    await window(worker, path, pick(fillA), { codeCacheDir: firstSeconds }, 'list', async () => {
      await wait(5_500);
    });
    // Past the first write, then the conversation and its tabs, then past a growth check.
    await window(worker, path, pick(fillB), { codeCacheDir: grown, codeCacheGrowAfterMs: [8_000] }, 'list', async (db) => {
      await wait(5_500);
      await conversation(db, pick(fillB));
      await wait(3_000);
    });
    const out = { firstSeconds: [] as Answers[], grown: [] as Answers[], floor: [] as number[] };
    tokensFloor(path, pick(floorWarm)); // the floor's code runs once before it is timed
    for (let i = 0; i < runs; i++) {
      const order = i % 2 === 0 ? (['firstSeconds', 'grown'] as const) : (['grown', 'firstSeconds'] as const);
      for (const which of order) {
        const dir = which === 'grown' ? grown : firstSeconds;
        out[which].push((await window(worker, path, pick(i), { codeCacheDir: dir }, 'all'))!);
      }
      out.floor.push(tokensFloor(path, pick(i)));
    }
    const report = (xs: Answers[]) => ({
      listMs: range(xs.map((x) => x.list)),
      conversationMs: range(xs.map((x) => x.conversation)),
      tokensMs: range(xs.map((x) => x.tokens)),
      toolsMs: range(xs.map((x) => x.tools)),
      tokensRatio: round(median(xs.map((x) => x.tokens)) / median(out.floor)),
    });
    const sizes = (dir: string) => readdirSync(dir).map((f) => statSync(join(dir, f)).size);
    return {
      file: path,
      node: process.version,
      runs,
      load: { start: round(loadStart), end: round(loadavg()[0]!) },
      cacheBytes: { firstSeconds: sizes(firstSeconds), grown: sizes(grown) },
      firstSeconds: report(out.firstSeconds),
      grown: report(out.grown),
      tokensFloorMs: range(out.floor),
    };
  } finally {
    rmSync(firstSeconds, { recursive: true, force: true });
    rmSync(grown, { recursive: true, force: true });
  }
}

runStandaloneBench(/firstAnswers\.ts$/, 9, ({ path, runs, opt }) => runFirstAnswersBench(path, runs, opt('session')));
