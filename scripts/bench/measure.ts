/** Timing and heap measurement helpers for the benchmark. */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Milliseconds since an arbitrary origin, sub-microsecond resolution. */
export const now = (): number => performance.now();

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Rounds for the report: 4 significant digits below 1000, whole numbers above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (Math.abs(value) >= 1000) return Math.round(value);
  return Number(value.toPrecision(4));
}

export function ratio(store: number, floor: number): number | null {
  return floor > 0 && Number.isFinite(store) ? round(store / floor) : null;
}

/**
 * A full garbage collection, available with or without `--expose-gc`: without the flag, it is enabled at run time
 * and the function fetched from a fresh context (the flag only affects contexts created after it is set).
 */
export function acquireGc(): { gc: (() => void) | null; how: string } {
  const global = globalThis as { gc?: () => void };
  if (typeof global.gc === 'function') return { gc: global.gc, how: '--expose-gc' };
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    if (typeof gc === 'function') return { gc: gc as () => void, how: 'v8.setFlagsFromString' };
  } catch {
    // fall through: heap figures are then approximate
  }
  return { gc: null, how: 'unavailable' };
}

/** Yields to the event loop, so pending timers and I/O callbacks do not land inside a timed region. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Times one call of `fn` in ms. */
export async function timeOnce(fn: () => unknown): Promise<number> {
  const t0 = now();
  await fn();
  return now() - t0;
}

/**
 * Times `fn` per call, averaged over a batch of `batch` back-to-back calls, so calls of a few microseconds are not
 * lost in timer resolution.
 */
export async function timeBatch(fn: () => unknown, batch: number): Promise<number> {
  const t0 = now();
  for (let i = 0; i < batch; i++) await fn();
  return (now() - t0) / batch;
}

/** How many calls make a batch of about `targetMs`, from one call's time (1 … `max`). */
export function batchSize(oneCallMs: number, targetMs = 2, max = 500): number {
  if (!(oneCallMs > 0)) return max;
  return Math.max(1, Math.min(max, Math.round(targetMs / oneCallMs)));
}

export interface HeapSample {
  /** heapUsed growth across the call, without a collection in between: what the call allocated (garbage included). */
  allocatedBytes: number;
  /** heapUsed growth after a full collection while the result is still referenced: what the result keeps alive. */
  retainedBytes: number | null;
  /** The result's length when it is an array (read after the collection, which keeps the result reachable). */
  resultLength: number | null;
}

/** Heap growth of one call of `fn`, measured from a collected heap. */
export async function heapOf(fn: () => unknown, gc: (() => void) | null): Promise<HeapSample> {
  gc?.();
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const result = await fn();
  const after = process.memoryUsage().heapUsed;
  let retained: number | null = null;
  if (gc) {
    gc();
    retained = process.memoryUsage().heapUsed - before;
  }
  return { allocatedBytes: after - before, retainedBytes: retained, resultLength: Array.isArray(result) ? result.length : null };
}
