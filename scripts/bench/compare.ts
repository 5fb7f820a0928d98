/**
 * The compare view's benchmark (issue 14): from *Compare with…* to the first rows, on a pair of 10,000-turn branches
 * of one session (`main`, and `retry` forked at turn 2 with 9,999 turns of its own). What is timed is what the host
 * does before the view can draw: open the file, build the comparison (branch trees, shared turns) and read the first
 * page of rows (each a turn's items per column, word and argument diffs, usage rows). The columns' totals (usage and
 * tools of whole branches) come after the first rows and are timed apart. The webview's own drawing is measured by
 * the UI suite (data-first-rows-ms). Target: 500 ms.
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CompareData } from '../../src/extension/compare/compareData';
import { BUILT_IN_PRICES, priceOf } from '../../src/shared/pricing';
import { openSessionDatabase, type SessionDatabase } from '../../src/store';
import { median, now, round } from './measure';
import { GENERATOR_VERSION, writeScaleFile, type FileSpec } from './scaleFiles';

export const COMPARE_TARGET_MS = 500;
const FIRST_PAGE = 20;

export interface CompareReport {
  file: { path: string; bytes: number; generatedMs: number | null; turnsPerBranch: number };
  /** First call on a fresh process's first open, then the median of warm runs (each opens the file anew). */
  firstRowsMs: { first: number; median: number; runs: number[] };
  /** The same, split: building the comparison, then the first page of rows. */
  viewMs: number;
  rowsMs: number;
  /** The columns' totals (whole-branch usage and tools), read after the first rows are drawn. */
  summaryMs: number;
  rows: number;
  target: { ms: number; met: boolean };
}

function compareSpec(turns: number): FileSpec {
  return {
    sessions: [{ sessionId: 'compare', turns, branches: [{ name: 'retry', from: 'main', atTurn: 2, ownTurns: turns - 1 }] }],
    interleave: false,
  };
}

async function firstRows(path: string): Promise<{ total: number; view: number; rows: number; count: number; summary: number }> {
  const start = now();
  const db: SessionDatabase = openSessionDatabase(path);
  try {
    const data = new CompareData(
      [
        { dbPath: path, sessionId: 'compare', branchId: 'main' },
        { dbPath: path, sessionId: 'compare', branchId: 'retry' },
      ],
      () => ({ reader: db, dbName: 'compare.db', pricing: { model: 'gpt-4o', price: priceOf(BUILT_IN_PRICES, 'gpt-4o') } }),
    );
    const view = await data.view();
    const afterView = now();
    const { rows } = await data.rows(0, FIRST_PAGE);
    const end = now();
    // The columns' totals, which the view asks for once the first rows are drawn.
    await data.summary();
    const summary = now() - end;
    if (view.sharedTurns !== 1 || rows.length !== FIRST_PAGE)
      throw new Error(`unexpected comparison: ${view.sharedTurns} shared, ${rows.length} rows`);
    return { total: end - start, view: afterView - start, rows: end - afterView, count: rows.length, summary };
  } finally {
    db.close();
  }
}

export async function runCompareBench(
  cacheDir: string,
  reps: number,
  progress: (m: string) => void,
  turns = 10_000,
): Promise<CompareReport> {
  const path = join(cacheDir, `compare-v${GENERATOR_VERSION}-${turns}.db`);
  let generatedMs: number | null = null;
  if (!existsSync(path)) {
    mkdirSync(cacheDir, { recursive: true });
    const tmp = `${path}.partial`;
    for (const suffix of ['', '-wal', '-shm']) rmSync(tmp + suffix, { force: true });
    progress(`writing two ${turns}-turn branches`);
    generatedMs = writeScaleFile(tmp, compareSpec(turns)).ms;
    renameSync(tmp, path);
  }
  const first = await firstRows(path);
  const runs: number[] = [];
  let last = first;
  for (let i = 0; i < reps; i++) {
    last = await firstRows(path);
    runs.push(last.total);
  }
  const med = median(runs);
  progress(`first rows: first ${round(first.total)} ms, median ${round(med)} ms`);
  return {
    file: { path, bytes: statSync(path).size, generatedMs, turnsPerBranch: turns },
    firstRowsMs: { first: round(first.total), median: round(med), runs: runs.map(round) },
    viewMs: round(last.view),
    rowsMs: round(last.rows),
    summaryMs: round(last.summary),
    rows: last.count,
    target: { ms: COMPARE_TARGET_MS, met: Math.max(first.total, med) < COMPARE_TARGET_MS },
  };
}
