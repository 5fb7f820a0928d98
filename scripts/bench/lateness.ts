/**
 * How late this thread's event loop runs, as a user would feel it in the extension host: a 1 ms interval timer whose
 * every firing records how much later than its period it came, kept as the maximum over a whole window (from the start
 * of an action until its answer and a short settle after, so a stall at the very end is seen too). Nothing forces a
 * garbage collection inside a window: what the call's garbage costs this thread is part of the figure.
 *
 * Two floors taken in the same run say what the figure is worth on this machine: the lateness of a window in which
 * this thread does nothing (`idleFloor`), and of one in which a worker thread spins on a core (`busyFloor`: what a
 * worker doing pure CPU work costs this thread through the scheduler alone, with no message or copy). Beside the
 * lateness, the longest pause of this thread's own garbage collections that began in the window (`maxGcMs`, from
 * V8's `gc` performance entries): a late window with a pause of about its lateness was this thread's collector.
 */
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { now, round } from './measure';

/** The timer's period. */
export const TICK_MS = 1;
/** How long a window stays open after the answer: a stall that lands right after it is the action's too. */
export const SETTLE_MS = 20;

/** Watches this thread's event loop from `start()` to `stop()`. */
export class LatenessMonitor {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private maxLate = 0;
  private ticks = 0;
  private started = 0;
  private gcs: PerformanceEntry[] = [];
  private observer: PerformanceObserver | undefined;

  start(): void {
    this.last = now();
    this.started = performance.now();
    this.maxLate = 0;
    this.ticks = 0;
    this.gcs = [];
    this.observer = new PerformanceObserver((list) => this.gcs.push(...list.getEntries()));
    this.observer.observe({ entryTypes: ['gc'] });
    this.timer = setInterval(() => {
      const t = now();
      this.maxLate = Math.max(this.maxLate, t - this.last - TICK_MS);
      this.last = t;
      this.ticks++;
    }, TICK_MS);
  }

  /**
   * The largest lateness in ms, the gap from the last firing to now included (a stall the timer could not report), and
   * the longest of this thread's collections that began in the window (entries not yet delivered are taken too).
   */
  stop(): { maxLateMs: number; ticks: number; maxGcMs: number } {
    clearInterval(this.timer);
    this.timer = undefined;
    const tail = now() - this.last - TICK_MS;
    const end = performance.now();
    if (this.observer) {
      this.gcs.push(...this.observer.takeRecords());
      this.observer.disconnect();
      this.observer = undefined;
    }
    const inWindow = this.gcs.filter((e) => e.startTime >= this.started && e.startTime <= end);
    return { maxLateMs: Math.max(0, this.maxLate, tail), ticks: this.ticks, maxGcMs: Math.max(0, ...inWindow.map((e) => e.duration)) };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` inside a watched window: its answer's time, the event loop's largest lateness until `SETTLE_MS` after, and
 * the longest of this thread's collections in it.
 */
export async function watchedWindow<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; maxLateMs: number; maxGcMs: number }> {
  const monitor = new LatenessMonitor();
  monitor.start();
  const start = now();
  try {
    const value = await fn();
    const ms = now() - start;
    await sleep(SETTLE_MS);
    const watched = monitor.stop();
    return { value, ms, maxLateMs: round(watched.maxLateMs), maxGcMs: round(watched.maxGcMs) };
  } catch (err) {
    monitor.stop();
    throw err;
  }
}

/** The lateness of a window of `ms` in which this thread waits and does nothing else. */
export async function idleFloor(ms: number): Promise<number> {
  const monitor = new LatenessMonitor();
  monitor.start();
  await sleep(ms);
  return round(monitor.stop().maxLateMs);
}

/** The lateness of a window of `ms` while a worker thread spins (pure CPU, no messages) for all of it. */
export async function busyFloor(ms: number): Promise<number> {
  const spinner = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     parentPort.postMessage('spinning');
     const end = Date.now() + workerData.ms;
     let x = 0;
     while (Date.now() < end) x = (x + 1) | 0;
     parentPort.postMessage(x);`,
    { eval: true, workerData: { ms: ms + 2 * SETTLE_MS } },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      spinner.once('message', () => resolve());
      spinner.once('error', reject);
    });
    const monitor = new LatenessMonitor();
    monitor.start();
    await sleep(ms);
    return round(monitor.stop().maxLateMs);
  } finally {
    await spinner.terminate();
  }
}

/** min, median and max of a list, for ranges over runs. */
export function range(values: readonly number[]): { min: number; median: number; max: number; n: number } {
  const sorted = [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return { min: Number.NaN, median: Number.NaN, max: Number.NaN, n: 0 };
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: round(sorted[0]!), median: round(median), max: round(sorted[sorted.length - 1]!), n: sorted.length };
}

/** `a–b` (or one value when they are equal), for the tables. */
export function rangeText(r: { min: number; max: number }): string {
  if (!Number.isFinite(r.min)) return '';
  return r.min === r.max ? String(r.min) : `${r.min}–${r.max}`;
}
