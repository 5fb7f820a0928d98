/**
 * Reviews and datasets (issue 26's targets, docs/reviews.md and docs/datasets.md), on scale file A (one session of
 * 100,000 turns, 400,000 items):
 *
 * - **a verdict stored**: as the extension stores one (src/extension/reviews/turnReviews.ts `setTurnReview`): the
 *   turn's user message read through the store worker for its content key, then `setTurnReview` on the worker's review
 *   store; 200 verdicts on turns spread over `main`, target ≤ 50 ms each;
 * - **a dataset of 100,000 reviewed turns**: a 'good' verdict on every turn of `main` written into a review store in
 *   one transaction (`importData`), then the `sft` and `eval` datasets with a bounded context (`contextTurns`, 2 by
 *   default: a whole-history context on 100,000 turns would be quadratic in size), against the JSONL export of the same
 *   branch: records per second and the ratio to the JSONL export's turns per second (target ≥ 0.5), and the memory
 *   while it runs (heap after a full collection at 10 % and 90 % of the records, peak RSS and heap) to show it is flat.
 *
 * Both exports run in this thread, from the files, as the CLI runs them; the JSONL export runs once untimed first, so
 * every timed run reads the file from the page cache.
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { exportDataset } from '../../src/store/datasets/datasetExport';
import type { DatasetFormat } from '../../src/store/datasets/datasetChecks';
import { exportSessionToFile } from '../../src/store/export';
import { openSessionDatabase } from '../../src/store/inspector/sessionDatabase';
import { contentKey } from '../../src/store/reviews/contentKey';
import { turnKeyOf } from '../../src/store/reviews/reviewMatching';
import { ReviewStore } from '../../src/store/reviews/reviewStore';
import type { ReviewData, TurnReview } from '../../src/store/reviews/reviewTypes';
import { StoreClient } from '../../src/store/worker/storeClient';
import { median, now, round } from './measure';
import { parseSearchQuery } from '../../src/store/search/searchQuery';
import { reviewTurnSet } from '../../src/store/search/reviewTurns';
import { startWorkerSearch } from '../../src/store/search/searchInWorker';
import { branchReviews } from '../../src/extension/reviews/turnReviews';
import { VIEW_TURN_PAGE } from '../../src/shared/pageSizes';
import { startAfterFor } from '../../webview/conversation/logic/conversationModel';
import { ensureScaleFile, turnContent } from './scaleFiles';

export const REVIEW_TARGETS = { verdictMs: 50, datasetSpeedRatio: 0.5, reviewNextMs: 100 };
const SESSION = 'scale-a';
const BRANCH = 'main';

export interface ReviewBenchConfig {
  cacheDir: string;
  tmpDir: string;
  /** Size factor of file A. */
  scale: number;
  /** The store worker's bundle, and what to start it with (tsx for the sources). */
  workerFile: string;
  workerExecArgv?: string[];
  /** The search worker's bundle (dist/searchWorker.js), for Review Next's queue. */
  searchWorkerFile?: string;
  verdicts?: number;
  contextTurns?: number;
}

interface MemoryPoint {
  /** Share of the records written. */
  at: number;
  /** heapUsed right after a full collection: what the export holds at that point. */
  heapAfterGcBytes: number;
  rssBytes: number;
}

export interface DatasetRun {
  format: DatasetFormat;
  contextTurns: number;
  records: number;
  skipped: number;
  ms: number;
  recordsPerSecond: number;
  /** recordsPerSecond / the JSONL export's turns per second. */
  ratioToJsonl: number;
  outputBytes: number;
  memory: {
    points: MemoryPoint[];
    /** heapAfterGc at 90 % minus at 10 %. */
    heapGrowthBytes: number;
    peakHeapUsedBytes: number;
    peakRssBytes: number;
    rssAtStartBytes: number;
  };
  /**
   * Judged on the records that hold what the JSONL export holds (contextTurns 0: each turn once); with context, each
   * record also repeats earlier turns, so the ratio is reported beside the bytes it writes, not judged.
   */
  target: { speedRatio: number; met: boolean; judged: boolean };
  /** outputBytes / the JSONL export's bytes. */
  bytesRatioToJsonl: number;
}

export interface ReviewBenchReport {
  file: { path: string; bytes: number; turns: number; items: number; generatedMs: number | null };
  verdict: {
    count: number;
    firstMs: number;
    medianMs: number;
    worstMs: number;
    /** The `setTurnReview` call alone (the key read excluded). */
    writeMedianMs: number;
    writeWorstMs: number;
    target: { ms: number; met: boolean };
  };
  /** *Review Next* on file A, with the verdicts above in the review store (absent without a search worker). */
  reviewNext?: {
    query: string;
    /** The queue: the search worker's scan for the query, to its first hit and to its end (up to `hits`). */
    firstHitMs: number;
    queueMs: number;
    hits: number;
    /** Each step: what the view reads to show the next queued turn (its page of turns, its items, the branch's reviews). */
    steps: number;
    medianMs: number;
    worstMs: number;
    target: { ms: number; met: boolean };
  };
  dataset: {
    reviews: number;
    /** The 100,000 verdicts written in one transaction. */
    writeReviewsMs: number;
    jsonl: { turns: number; items: number; ms: number; turnsPerSecond: number; outputBytes: number; peakRssBytes: number };
    runs: DatasetRun[];
    note: string;
  };
  targets: { verdictMs: number; datasetSpeedRatio: number; reviewNextMs: number; met: boolean };
}

/**
 * *Review Next* as the extension runs it: the queue is a search (here `reviewed:no` over file A, the review store
 * holding the verdicts written before) in the search worker; each step shows the next queued turn in the conversation
 * view, which asks the store worker for the turn's page of the turn list, the turn's items and the branch's reviews
 * (each checked against its turn's content). Measured: the scan to its first hit and to the end, and each step.
 */
async function reviewNext(
  config: ReviewBenchConfig,
  path: string,
  reviewsPath: string,
  progress: (m: string) => void,
): Promise<NonNullable<ReviewBenchReport['reviewNext']>> {
  const query = 'reviewed:no';
  const parsed = parseSearchQuery(query);
  const reviewsNow = ReviewStore.open(reviewsPath, { readonly: true, fileMustExist: true });
  const turnSet = reviewTurnSet(parsed.review!, reviewsNow.turnReviews(null));
  reviewsNow.close();
  progress(`reviews: Review Next's queue (${query}) in the search worker`);
  const hits: number[] = [];
  let firstHitMs = 0;
  const t0 = now();
  const search = startWorkerSearch(
    config.searchWorkerFile!,
    { paths: [path], query: parsed, maxHits: 10_000, turns: { [path]: turnSet } },
    {
      onHits: (_p, batch) => {
        if (hits.length === 0) firstHitMs = now() - t0;
        for (const h of batch) hits.push(h.turn);
      },
    },
    // A worker of its own, its start included (none kept from an earlier search), as in the rounds before.
    config.workerExecArgv ? { execArgv: config.workerExecArgv, keptMs: 0 } : { keptMs: 0 },
  );
  const end = await search.finished;
  const queueMs = now() - t0;
  if (end.error) throw new Error(`Review Next's search: ${end.error}`);
  const client = new StoreClient(config.workerFile, config.workerExecArgv ? { execArgv: config.workerExecArgv } : {});
  try {
    const db = await client.openDatabase(path, { keepTotals: true });
    const store = await client.openReviewStore(reviewsPath);
    const tree = await db.getBranchTree(SESSION);
    const steps = Math.min(200, hits.length);
    progress(`reviews: ${steps} Review Next steps through the store worker`);
    const times: number[] = [];
    for (let i = 0; i < steps; i++) {
      // Every 50th queued turn: a step lands on a turn the view has not shown yet.
      const turn = hits[Math.min(hits.length - 1, i * 50)]!;
      const t = now();
      await Promise.all([
        db.getTurnsPage(SESSION, BRANCH, { afterTurn: startAfterFor(turn), limit: VIEW_TURN_PAGE }),
        db.getTurnItems(SESSION, BRANCH, turn),
        branchReviews(db, store, SESSION, BRANCH, tree),
      ]);
      times.push(now() - t);
    }
    await store.close();
    await db.close();
    const warm = times.slice(1);
    const worst = Math.max(...warm);
    return {
      query,
      firstHitMs: round(firstHitMs),
      queueMs: round(queueMs),
      hits: hits.length,
      steps,
      medianMs: round(median(warm)),
      worstMs: round(worst),
      target: { ms: REVIEW_TARGETS.reviewNextMs, met: worst <= REVIEW_TARGETS.reviewNextMs },
    };
  } finally {
    await client.dispose();
  }
}

/** The content key of turn `turn`'s user message on file A's `main`, from the generator (the file holds the same). */
const turnKeyOfA = (turn: number): string => contentKey(turnContent(0, BRANCH, turn).items[0]);

async function verdicts(
  config: ReviewBenchConfig,
  path: string,
  turns: number,
  progress: (m: string) => void,
): Promise<ReviewBenchReport['verdict']> {
  const count = Math.min(config.verdicts ?? 200, turns);
  const client = new StoreClient(config.workerFile, config.workerExecArgv ? { execArgv: config.workerExecArgv } : {});
  const storePath = join(config.tmpDir, 'verdicts.reviews.db');
  try {
    // As the extension opens them: the session file with its totals kept, the review store writable.
    const db = await client.openDatabase(path, { keepTotals: true });
    const store = await client.openReviewStore(storePath);
    progress(`reviews: ${count} verdicts through the store worker`);
    const total: number[] = [];
    const write: number[] = [];
    for (let i = 0; i < count; i++) {
      // Turns spread over the branch, in an order that jumps about as a reviewer does.
      const turn = 1 + ((i * 7919) % turns);
      const t0 = now();
      const items = await db.getTurnItems(SESSION, BRANCH, turn);
      const user = items.find((e) => !e.corrupt && (e.item as { role?: unknown }).role === 'user');
      if (!user || user.corrupt) throw new Error(`turn ${turn} has no user message`);
      const ref = { sessionId: SESSION, branchId: BRANCH, turn, turnKey: turnKeyOf(user.item) };
      const t1 = now();
      await store.call(
        'setTurnReview',
        ref,
        { verdict: i % 3 === 0 ? 'bad' : 'good', addTags: i % 5 === 0 ? ['too-slow'] : [] },
        {
          source: 'bench',
        },
      );
      const t2 = now();
      total.push(t2 - t0);
      write.push(t2 - t1);
    }
    const counts = await store.call('counts');
    if (counts.turnReviews !== count) throw new Error(`${count} verdicts written, ${counts.turnReviews} stored`);
    await store.close();
    await db.close();
    // The first opens the statements of both stores; the others are what a reviewer waits for.
    const warm = total.slice(1);
    const worst = Math.max(...warm);
    return {
      count,
      firstMs: round(total[0]!),
      medianMs: round(median(warm)),
      worstMs: round(worst),
      writeMedianMs: round(median(write.slice(1))),
      writeWorstMs: round(Math.max(...write.slice(1))),
      target: { ms: REVIEW_TARGETS.verdictMs, met: worst <= REVIEW_TARGETS.verdictMs },
    };
  } finally {
    // The store stays for Review Next's measure; runReviewBench removes it.
    await client.dispose();
  }
}

/** A 'good' verdict on every turn of `main`, in one transaction. */
function writeGoodVerdicts(path: string, turns: number): number {
  const turnReviews: TurnReview[] = [];
  for (let turn = 1; turn <= turns; turn++)
    turnReviews.push({
      sessionId: SESSION,
      branchId: BRANCH,
      turn,
      turnKey: turnKeyOfA(turn),
      verdict: 'good',
      tags: [],
      note: '',
      createdMs: 1,
      updatedMs: 1,
    });
  const data: ReviewData = { format: 'agent-session-inspector/reviews', version: 1, turnReviews, pairwise: [], corrections: [] };
  const store = ReviewStore.open(path);
  try {
    const t0 = now();
    const result = store.importData(data);
    const ms = now() - t0;
    if (result.added !== turns) throw new Error(`${turns} verdicts imported, ${result.added} added`);
    return ms;
  } finally {
    store.close();
  }
}

async function datasetRun(
  dbPath: string,
  reviewsPath: string,
  outPath: string,
  format: DatasetFormat,
  contextTurns: number,
  expected: number,
  gc: (() => void) | null,
): Promise<Omit<DatasetRun, 'ratioToJsonl' | 'target' | 'bytesRatioToJsonl'>> {
  gc?.();
  const rssAtStart = process.memoryUsage().rss;
  let peakHeap = 0;
  let peakRss = rssAtStart;
  const points: MemoryPoint[] = [];
  // RSS and heap every 1 % of the records; a full collection at 10 % and 90 % (two, so they cost nothing that shows).
  const step = Math.max(1, Math.floor(expected / 100));
  const gcAt = new Set([Math.floor(expected * 0.1), Math.floor(expected * 0.9)]);
  const t0 = now();
  // What `exportDatasetToFile` (the worker's job) and the CLI do: the review data read, the file opened, the records.
  const reviews = ReviewStore.open(reviewsPath, { readonly: true, fileMustExist: true });
  let data: ReviewData;
  try {
    data = reviews.exportData(SESSION);
  } finally {
    reviews.close();
  }
  const db = openSessionDatabase(dbPath, { readonly: true });
  let report;
  try {
    report = await exportDataset(db, data, outPath, {
      format,
      contextTurns,
      onRecord: (_r, i) => {
        if (i % step !== 0 && !gcAt.has(i)) return;
        const m = process.memoryUsage();
        peakHeap = Math.max(peakHeap, m.heapUsed);
        peakRss = Math.max(peakRss, m.rss);
        if (gcAt.has(i)) {
          gc?.();
          const after = process.memoryUsage();
          points.push({ at: round(i / expected), heapAfterGcBytes: after.heapUsed, rssBytes: after.rss });
        }
      },
    });
  } finally {
    db.close();
  }
  const ms = now() - t0;
  if (report.records !== expected || report.skipped.length > 0)
    throw new Error(`${format}: ${report.records} records of ${expected}, skipped ${JSON.stringify(report.skipped.slice(0, 3))}`);
  const outputBytes = statSync(outPath).size;
  rmSync(outPath, { force: true });
  const growth = points.length === 2 ? points[1]!.heapAfterGcBytes - points[0]!.heapAfterGcBytes : Number.NaN;
  return {
    format,
    contextTurns,
    records: report.records,
    skipped: report.skipped.length,
    ms: round(ms),
    recordsPerSecond: round((report.records / ms) * 1000),
    outputBytes,
    memory: { points, heapGrowthBytes: growth, peakHeapUsedBytes: peakHeap, peakRssBytes: peakRss, rssAtStartBytes: rssAtStart },
  };
}

export async function runReviewBench(
  config: ReviewBenchConfig,
  gc: (() => void) | null,
  progress: (m: string) => void,
): Promise<ReviewBenchReport> {
  const file = ensureScaleFile(config.cacheDir, 'A', config.scale, progress);
  const turns = file.spec.sessions[0]!.turns;
  const contexts = config.contextTurns !== undefined ? [config.contextTurns] : [0, 2];
  const verdictStore = join(config.tmpDir, 'verdicts.reviews.db');
  let verdict: ReviewBenchReport['verdict'];
  let next: ReviewBenchReport['reviewNext'];
  try {
    verdict = await verdicts(config, file.path, turns, progress);
    if (config.searchWorkerFile) next = await reviewNext(config, file.path, verdictStore, progress);
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(verdictStore + suffix, { force: true });
  }

  const reviewsPath = join(config.tmpDir, 'dataset.reviews.db');
  const out = (name: string): string => join(config.tmpDir, name);
  try {
    progress(`reviews: ${turns} 'good' verdicts in one transaction`);
    const writeReviewsMs = writeGoodVerdicts(reviewsPath, turns);

    progress('reviews: the JSONL export of main (once to warm the page cache, once timed)');
    const jsonl = async (): Promise<{ ms: number; items: number; bytes: number; peakRss: number }> => {
      gc?.();
      let peakRss = process.memoryUsage().rss;
      const t0 = now();
      const summary = await exportSessionToFile(file.path, out('main.jsonl'), 'jsonl', {
        sessionId: SESSION,
        branchId: BRANCH,
        onProgress: () => void (peakRss = Math.max(peakRss, process.memoryUsage().rss)),
      });
      const ms = now() - t0;
      const bytes = statSync(out('main.jsonl')).size;
      rmSync(out('main.jsonl'), { force: true });
      return { ms, items: summary.items, bytes, peakRss };
    };
    await jsonl();
    const j = await jsonl();
    const turnsPerSecond = (turns / j.ms) * 1000;

    const runs: DatasetRun[] = [];
    for (const contextTurns of contexts)
      for (const format of ['sft', 'eval'] as const) {
        progress(`reviews: the ${format} dataset of ${turns} turns, contextTurns ${contextTurns}`);
        const r = await datasetRun(file.path, reviewsPath, out(`${format}.jsonl`), format, contextTurns, turns, gc);
        const ratio = r.recordsPerSecond / turnsPerSecond;
        runs.push({
          ...r,
          ratioToJsonl: round(ratio),
          bytesRatioToJsonl: round(r.outputBytes / j.bytes),
          target: {
            speedRatio: REVIEW_TARGETS.datasetSpeedRatio,
            met: ratio >= REVIEW_TARGETS.datasetSpeedRatio,
            judged: contextTurns === 0,
          },
        });
      }
    const met = verdict.target.met && (next?.target.met ?? true) && runs.every((r) => r.target.met || !r.target.judged);
    return {
      file: { path: file.path, bytes: file.bytes, turns, items: turns * 4, generatedMs: file.generationMs },
      verdict,
      ...(next ? { reviewNext: next } : {}),
      dataset: {
        reviews: turns,
        writeReviewsMs: round(writeReviewsMs),
        jsonl: {
          turns,
          items: j.items,
          ms: round(j.ms),
          turnsPerSecond: round(turnsPerSecond),
          outputBytes: j.bytes,
          peakRssBytes: j.peakRss,
        },
        runs,
        note:
          `Datasets with contextTurns ${contexts.join(' and ')}: each record's context is that many turns before it ` +
          '(a whole-history context on this branch would be quadratic in size). Both exports run in this thread from the files; ' +
          'the speed ratio compares records per second with the JSONL export’s turns per second, and is judged against the target ' +
          'for contextTurns 0, where a record holds its turn only, as the JSONL export does.',
      },
      targets: { ...REVIEW_TARGETS, met },
    };
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(reviewsPath + suffix, { force: true });
  }
}

/** The stderr summary: one line per measure, with its target. */
export function reviewTable(r: ReviewBenchReport): string {
  const mb = (b: number): string => `${(b / 1048576).toFixed(1)} MB`;
  const yes = (met: boolean): string => (met ? 'met' : 'NOT MET');
  const lines = [
    `reviews on file A (${r.file.turns} turns)`,
    `  verdict stored (key read + setTurnReview via the worker): median ${r.verdict.medianMs} ms, worst ${r.verdict.worstMs} ms of ${r.verdict.count} (target ≤ ${r.verdict.target.ms} ms: ${yes(r.verdict.target.met)})`,
    ...(r.reviewNext
      ? [
          `  Review Next (${r.reviewNext.query}): queue of ${r.reviewNext.hits} turns, first hit ${r.reviewNext.firstHitMs} ms, scan ${r.reviewNext.queueMs} ms; each next turn shown (page, items, reviews): median ${r.reviewNext.medianMs} ms, worst ${r.reviewNext.worstMs} ms of ${r.reviewNext.steps} (target ≤ ${r.reviewNext.target.ms} ms: ${yes(r.reviewNext.target.met)})`,
        ]
      : []),
    `  ${r.dataset.reviews} verdicts in one transaction: ${r.dataset.writeReviewsMs} ms`,
    `  JSONL export of main: ${r.dataset.jsonl.ms} ms, ${r.dataset.jsonl.turnsPerSecond} turns/s`,
  ];
  for (const d of r.dataset.runs)
    lines.push(
      `  ${d.format} (contextTurns ${d.contextTurns}): ${d.ms} ms, ${d.recordsPerSecond} records/s, ${d.ratioToJsonl}× the JSONL export ${d.target.judged ? `(target ≥ ${d.target.speedRatio}: ${yes(d.target.met)})` : `(not judged: ${d.bytesRatioToJsonl}× its bytes)`}; heap after GC at 10 % ${mb(d.memory.points[0]?.heapAfterGcBytes ?? NaN)}, at 90 % ${mb(d.memory.points[1]?.heapAfterGcBytes ?? NaN)}; peak RSS ${mb(d.memory.peakRssBytes)}`,
    );
  return lines.join('\n');
}
