/**
 * The V8 heap of a command that writes or reads hundreds of megabytes (show, export, usage, context, search): kept
 * near what the command holds (issue 43: every command's peak memory on file A within 100 MB). Such a command holds
 * 10–35 MB after each full collection, but V8 sizes a process that allocates this fast for speed: its young
 * generation grows to two semi-spaces of 16 MB (64 MB from Node 24), and the old one may grow to about four times what
 * the last full collection kept before it collects again, so the process peaked at 120–330 MB (docs/benchmarks.md,
 * "CLI memory").
 *
 * `node --max-semi-space-size` cannot be given to the user's `node`, and V8 reads it only when the heap is made. Two
 * flags it reads at every collection can be set after start (`v8.setFlagsFromString`, measured on Node 20, 22 and
 * 24): the old generation's growth over what the last full collection kept, and the factor by which the young
 * generation grows. The young generation is let grow to `YOUNG_CAP_BYTES` (smaller costs CPU: objects that live a page
 * are copied at every scavenge) and then held there. A flag V8 ignores only leaves the peak as it was (on Node 24 the
 * old generation's showed little effect in an isolated loop); nothing here decides what a command prints.
 */
import type * as V8 from 'node:v8';

// Loaded by the commands that hold their heap small, never at the CLI's start: `run`'s start stays as it is.
let v8: typeof V8 | undefined;

/**
 * The young generation's capacity (both semi-spaces, as `new_space` reports it) at which its growth stops: two
 * semi-spaces of 4 MB. Measured on the Markdown export of a 237 MB branch (Node 20): 92–94 MB for about 14 % more CPU
 * than V8's sizing (142–165 MB); a 16 MB cap costs about 3 % but peaks at 99–105 MB, 1 MB semi-spaces cost 20–40 %.
 */
export const YOUNG_CAP_BYTES = 8 * 1024 * 1024;

/**
 * How much the old generation may grow over what the last full collection kept, in percent (V8 picks 10–300 % by how
 * fast it collects, and a streaming command collects fast). A full collection of what these commands hold takes a few
 * milliseconds, so collecting more often costs little.
 */
export const OLD_GROWTH_PERCENT = 30;

/**
 * The flags, as `v8.setFlagsFromString` takes them. V8 prints "unrecognized flag" on stderr for a flag it does not
 * know: a test sets each under this Node and expects a silent stderr.
 */
export const HEAP_FLAGS = {
  oldGrowth: `--heap-growing-percent=${OLD_GROWTH_PERCENT}`,
  youngStopped: '--semi-space-growth-factor=1',
} as const;

/**
 * Milliseconds between two looks at the young generation's size (a look allocates a few objects; a command calls
 * `heapCheck` from once a page to once a turn, 100,000 times for file A's session). It grows by one step at most in
 * that time (each step needs as many bytes to survive scavenges as it holds).
 */
const LOOK_EVERY_MS = 10;

/** How many `heapCheck` calls look each time before they look once per `LOOK_EVERY_MS` (a look takes microseconds). */
const LOOK_ALWAYS_CALLS = 2000;

let capped = false;
let calls = 0;
let lastLook = 0;

/** Holds the heap of this process small from now on (idempotent). For the CLI's own process only, never a library. */
export async function holdHeapSmall(): Promise<void> {
  if (v8 !== undefined) return;
  // A require, not import(): the CLI's loader runs this bundle through V8's code cache (a vm.Script), where import()
  // of a built-in has no loader and throws; and node:v8 costs about 1.6 ms to load, so only the commands that hold
  // their heap small load it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  v8 = require('node:v8') as typeof V8;
  v8.setFlagsFromString(HEAP_FLAGS.oldGrowth);
  lookAtYoungGeneration();
}

/**
 * Called as a command's output goes out (each chunk, or each progress step): once the young generation reached
 * `YOUNG_CAP_BYTES`, stops its growth. A timer would not do: an export to a file never yields to the event loop.
 */
export function heapCheck(): void {
  if (v8 === undefined || capped) return;
  // The first calls all look (the young generation grows fastest at the start, while the page being read is most of
  // what survives); then one look per LOOK_EVERY_MS.
  if (++calls > LOOK_ALWAYS_CALLS) {
    const now = performance.now();
    if (now - lastLook < LOOK_EVERY_MS) return;
    lastLook = now;
  }
  lookAtYoungGeneration();
}

/**
 * Stops the young generation's growth now, whatever its size (for a command whose heavy part makes no calls to
 * `heapCheck`, such as loading the tokenizer's tables: there a larger young generation buys nothing).
 */
export function capYoungGenerationNow(): void {
  if (v8 === undefined || capped) return;
  capped = true;
  v8.setFlagsFromString(HEAP_FLAGS.youngStopped);
}

function lookAtYoungGeneration(): void {
  const young = v8!.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  if (young !== undefined && young.space_size >= YOUNG_CAP_BYTES) capYoungGenerationNow();
}
