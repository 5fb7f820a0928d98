/**
 * A review filter's search (`is:bad` over reviewed turns) as VS Code runs it and as the search floors bench runs it
 * (issue 43, the `is:bad` floor): the bundled search worker started from this process as the extension starts it
 * (`startWorkerSearch`), the worker ended between the two configurations, with its connections closed after each
 * search (`keepOpen` off: a new connection each time, as before the twelfth round and as the CLI's searches) and kept
 * for the next (`keepOpen`, as the extension runs since), each timed from the start to `finished`; then in this
 * process on one connection (`searchDatabase`, the floors bench's side), and the floor's statement on a raw
 * better-sqlite3 connection: the user messages of those turns by the (session, branch, turn) index, decoded.
 * The reviewed turns: with `--session` or a file of one session, every 1,000th turn of the session's longest branch,
 * from turn 500 (file A: 100 turns of `main`); in a file of several sessions, the middle turn of the longest branch of
 * 100 sessions spread over the file (file B: every 20th of its 2,000 sessions).
 *
 *   npx tsx scripts/bench/reviewSearch.ts A|B|C|L [--runs=50] [--session=ID]   (or --file=PATH)
 *
 * Prints JSON: ms per search after 10 unmeasured ones per configuration (ranges, medians), the hits (the same in every
 * configuration, or it fails).
 */
import Database from 'better-sqlite3';
import { openSessionDatabase, parseSearchQuery, searchDatabase } from '../../src/store';
import { turnSetKey, type TurnSet } from '../../src/store/search/reviewTurns';
import { endKeptSearchWorker, startWorkerSearch } from '../../src/store/search/searchInWorker';
import { searchWorkerModule } from './benchModules';
import { median, round } from './measure';
import { runStandaloneBench } from './scaleFiles';

const WARM_UP = 10;

interface Figures {
  ms: { min: number; median: number; max: number };
  hits: number;
}

const figures = (ms: number[], hits: number): Figures => ({
  ms: { min: round(Math.min(...ms)), median: round(median(ms)), max: round(Math.max(...ms)) },
  hits,
});

async function timed(runs: number, once: () => Promise<number>): Promise<Figures> {
  const ms: number[] = [];
  let hits = 0;
  for (let i = 0; i < WARM_UP + runs; i++) {
    const t0 = performance.now();
    hits = await once();
    if (i >= WARM_UP) ms.push(performance.now() - t0);
  }
  return figures(ms, hits);
}

export async function runReviewSearchBench(path: string, runs: number, sessionOpt: string | undefined) {
  const db = openSessionDatabase(path);
  const sessions = sessionOpt !== undefined ? [sessionOpt] : db.listSessions().map((s) => s.sessionId);
  if (sessions.length === 0) throw new Error(`${path} holds no session`);
  const longestOf = (sessionId: string) => db.getBranchTree(sessionId).reduce((a, b) => (b.userTurns > a.userTurns ? b : a));
  // [session, branch, turn] of each reviewed turn.
  const reviewed: [string, string, number][] = [];
  if (sessions.length === 1) {
    const longest = longestOf(sessions[0]!);
    for (let t = 500; t <= longest.userTurns; t += 1000) reviewed.push([sessions[0]!, longest.branchId, t]);
  } else {
    const step = Math.max(1, Math.floor(sessions.length / 100));
    for (let i = 0; i < sessions.length && reviewed.length < 100; i += step) {
      const longest = longestOf(sessions[i]!);
      if (longest.userTurns > 0) reviewed.push([sessions[i]!, longest.branchId, Math.ceil(longest.userTurns / 2)]);
    }
  }
  const turns: TurnSet = { mode: 'only', keys: reviewed.map(([s, b, t]) => turnSetKey(s, b, t)) };
  const query = parseSearchQuery('is:bad');
  const worker = await searchWorkerModule();

  const inWorker = async (keepOpen: boolean): Promise<Figures> => {
    await endKeptSearchWorker();
    const r = await timed(runs, async () => {
      let hits = 0;
      const search = startWorkerSearch(
        worker.file,
        { paths: [path], query, turns: { [path]: turns }, keepOpen, maxHits: Number.MAX_SAFE_INTEGER },
        { onHits: (_p, h) => (hits += h.length), onError: (_p, message) => console.error(message) },
        { execArgv: worker.execArgv, codeCacheDir: worker.codeCacheDir },
      );
      await search.finished;
      await search.exited;
      return hits;
    });
    await endKeptSearchWorker();
    return r;
  };
  const newConnection = await inWorker(false);
  const keptConnection = await inWorker(true);
  const oneConnection = await timed(runs, async () => {
    let hits = 0;
    await searchDatabase(db, query, { maxHits: Number.MAX_SAFE_INTEGER, onHits: (h) => (hits += h.length), turns });
    return hits;
  });
  db.close();
  const raw = new Database(path, { readonly: true });
  // The turns of one branch by their numbers (the statement of the rounds before), else every (session, branch, turn)
  // as one JSON array: the fastest each way.
  const oneBranch = reviewed.every((r) => r[0] === reviewed[0]![0] && r[1] === reviewed[0]![1]);
  const floorSql = oneBranch
    ? raw.prepare(
        `SELECT m.id, m.message_data FROM message_structure s JOIN agent_messages m ON m.id = s.message_id
         WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = 'user' AND s.user_turn_number IN (SELECT value FROM json_each(?))`,
      )
    : raw.prepare(
        `SELECT m.id, m.message_data FROM json_each(?) j
           JOIN message_structure s ON s.session_id = json_extract(j.value, '$[0]') AND s.branch_id = json_extract(j.value, '$[1]')
             AND s.user_turn_number = json_extract(j.value, '$[2]')
           JOIN agent_messages m ON m.id = s.message_id
         WHERE s.message_type = 'user'`,
      );
  const floorArgs = oneBranch ? [reviewed[0]![0], reviewed[0]![1], JSON.stringify(reviewed.map((r) => r[2]))] : [JSON.stringify(reviewed)];
  const floor = await timed(runs, () => {
    const rows = floorSql.all(...floorArgs) as { message_data: string }[];
    for (const r of rows) JSON.parse(r.message_data);
    return Promise.resolve(rows.length);
  });
  raw.close();
  // Every configuration does the same work: each user message of the reviewed turns, once.
  const counts = [newConnection, keptConnection, oneConnection, floor].map((f) => f.hits);
  if (new Set(counts).size !== 1) throw new Error(`the configurations found different hits: ${counts.join(', ')}`);
  return {
    file: path,
    sessions: new Set(reviewed.map((r) => r[0])).size,
    reviewedTurns: reviewed.length,
    runs,
    node: process.version,
    worker: { newConnection, keptConnection },
    inProcess: { oneConnection, floor },
  };
}

runStandaloneBench(/reviewSearch\.ts$/, 50, ({ path, runs, opt }) => runReviewSearchBench(path, runs, opt('session')));
