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
 * are copied at every scavenge) and then held there. A flag V8 ignores only leaves the peak as it was; nothing here
 * decides what a command prints.
 *
 * The old generation's first limit is set when the heap is made, and V8 13 (Node 24) ignores the growth flag until
 * then: its first full collection came at 50–55 MB of heap where Node 22's came at 34, and `search A berlin` peaked
 * at 121–145 MB there. So `search` also gives the heap a ceiling of our own (`useHeapCeiling`): past
 * `HEAP_CEILING_BYTES`, a full collection is asked for (`gc`, which a context made after `--expose-gc` is set has),
 * and the next one when the heap holds half as much again as that collection kept. From V8 12 (Node 22) `show` and
 * `export` have it too, with every full collection marked in one pause (`useAtomicMarking`); on V8 11 a
 * collection asked for cost several times V8's own, which marks as the program runs, and a long export crossed the
 * ceiling every few dozen milliseconds (`export jsonl` of A's `main`: 160 collections, 30–45 % more CPU, for 6–18 MB
 * less), so there it is `search`'s alone.
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
  /** Full collections marked in one pause, not in steps while the program runs (`useAtomicMarking`, from V8 12). */
  atomicMarking: '--no-incremental-marking',
  /** For the ceiling's collections (`useHeapCeiling`): a context made after it is set has `gc`. */
  exposeGc: '--expose-gc',
  /** Maglev as the top tier (`holdHeapSmall`, from `MAGLEV_TOP_FROM_V8`). */
  noTurbofan: '--no-turbofan',
} as const;

/**
 * Each flag's value when V8 starts (`node --v8-options`, the same on V8 11, 12 and 13), which `releaseHeap` sets back.
 * V8 stamps a code cache with a hash of every flag not at its default and refuses a cache stamped otherwise: the CLI's
 * loader writes its cache as the process exits (src/cli/cliLoader.ts), so with these flags still set, every command
 * holding its heap wrote a cache its next run refused and deleted, and compiled again.
 */
export const HEAP_FLAG_DEFAULTS: Record<keyof typeof HEAP_FLAGS, string> = {
  oldGrowth: '--heap-growing-percent=0',
  youngStopped: '--semi-space-growth-factor=2',
  atomicMarking: '--incremental-marking',
  exposeGc: '--no-expose-gc',
  noTurbofan: '--turbofan',
};

/**
 * What the old generation may hold (every space but the young generation's) before `search` asks for a full
 * collection. A search keeps 10–15 MB after one, and each takes 3–6 ms (5 in `search A berlin`). Measured on file A,
 * the CLI as `npm run build` builds it, one run each (Node 24.15.0 with node:sqlite / 22.22.1 / 20.20.2 with
 * better-sqlite3): `search berlin` 95 / 88 / 82 MB at 16 MB, 97 / 89 / 84 at 20 MB, 116 / 92 / 88 at 24 MB, 121–145 /
 * 96–104 / 88–92 without.
 */
export const HEAP_CEILING_BYTES = 16 * 1024 * 1024;

/**
 * The first V8 on which the streaming commands mark full collections in one pause (V8 12, Node 22: `useAtomicMarking`,
 * `useHeapCeiling`). Marking in steps while the command runs keeps what the command dropped during the marking, and
 * V8 sets the next collection's limit from that: on Node 24 `export md -o` of file A collected at up to 34 MB of heap,
 * keeping 11–15 MB where a heap snapshot held 8, and the exports and `show` peaked at 97–147 MB resident
 * (`--trace-gc`, 2 runs each); marked in one pause, 89–100 (the bench's section: 89–97; docs/benchmarks.md, "The
 * streaming commands' heap"). A pause of a few milliseconds costs a command line nothing. On V8 11 (Node 20) the flag
 * set after start let `show` and `export md` grow to 299–329 MB: there V8 marks in steps as before.
 */
export const ATOMIC_MARKING_FROM_V8 = 12;

/**
 * The first V8 on which the commands holding their heap run without TurboFan, Maglev (on by default from V8 13, Node
 * 24; off in Node 20's and 22's) their top tier. TurboFan's compiles, on threads of their own, were 4–14 MB of each
 * one's peak on file A (Node 24, 2 runs each): its compile zones, the malloc arenas of its threads, the pages of
 * `node`'s code it runs (`export json -o`: 97.6–100.4 MB with it, 84.2–85.7 without; `--no-concurrent-recompilation` or
 * `MALLOC_ARENA_MAX=1` took 5–6 MB, but only given at start). CPU within a few percent, but `usage` 10–22 % more.
 * Without Maglev the next tier down is the baseline compiler: on Node 22 `show` and the exports took 5–22 % more CPU,
 * `usage` 34–52 %, so there TurboFan stays (and Maglev stays off: Node 22 turned it off for its V8's code generation
 * bugs, nodejs/node#54384).
 */
export const MAGLEV_TOP_FROM_V8 = 13;

const v8MajorVersion = (): number => Number(process.versions.v8.split('.')[0]);

/** After a collection the ceiling asked for, the next one comes when the heap holds this many times what it kept. */
export const CEILING_GROWTH = 1.5;

/**
 * Milliseconds between two looks at the young generation's size (a look allocates a few objects; a command calls
 * `heapCheck` from once a page to once a turn, 100,000 times for file A's session). It grows by one step at most in
 * that time (each step needs as many bytes to survive scavenges as it holds).
 */
const LOOK_EVERY_MS = 10;

/** How many `heapCheck` calls look each time before they look once per `LOOK_EVERY_MS` (a look takes microseconds). */
const LOOK_ALWAYS_CALLS = 2000;

/** Between `holdHeapSmall` and `releaseHeap`. */
let held = false;
/** The flags set since `holdHeapSmall`, to be set back by `releaseHeap`. */
const flagsSet = new Set<keyof typeof HEAP_FLAGS>();
let capped = false;
let calls = 0;
let lastLook = 0;
let ceiling = false;
let nextCollectionAt = HEAP_CEILING_BYTES;
/** V8's `gc` once asked for; null where this Node gives none. */
let collect: (() => void) | null | undefined;

/** Holds the heap of this process small from now on (idempotent). For the CLI's own process only, never a library. */
export async function holdHeapSmall(): Promise<void> {
  if (held) return;
  held = true;
  // A require, not import(): the CLI's loader runs this bundle through V8's code cache (a vm.Script), where import()
  // of a built-in has no loader and throws; and node:v8 costs about 1.6 ms to load, so only the commands that hold
  // their heap small load it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  v8 ??= require('node:v8') as typeof V8;
  setFlag('oldGrowth');
  if (v8MajorVersion() >= MAGLEV_TOP_FROM_V8) setFlag('noTurbofan');
  lookAtYoungGeneration();
}

/**
 * Sets back every flag `holdHeapSmall` and the functions after it set (`HEAP_FLAG_DEFAULTS`) and forgets the hold:
 * called when a command is done, before the process exits and the code cache is written. A flag the process was
 * started with (`node --expose-gc …`) is left as it is: V8's default is not what it had then.
 */
export function releaseHeap(): void {
  if (!held) return;
  for (const flag of flagsSet) if (!startedWith(HEAP_FLAGS[flag])) v8!.setFlagsFromString(HEAP_FLAG_DEFAULTS[flag]);
  flagsSet.clear();
  held = false;
  capped = false;
  ceiling = false;
  calls = 0;
  lastLook = 0;
  nextCollectionAt = HEAP_CEILING_BYTES;
}

function setFlag(flag: keyof typeof HEAP_FLAGS): void {
  v8!.setFlagsFromString(HEAP_FLAGS[flag]);
  flagsSet.add(flag);
}

/** Whether the process's command line or NODE_OPTIONS names `flag`'s V8 option (V8 reads `_` as `-`). */
function startedWith(flag: string): boolean {
  const name = flag.replace(/^--(no-)?/, '').replace(/=.*/, '');
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return given.some(
    (arg) =>
      arg
        .replace(/_/g, '-')
        .replace(/^--(no-)?/, '')
        .replace(/=.*/, '') === name,
  );
}

/**
 * Called as a command's output goes out (each chunk, or each progress step): once the young generation reached
 * `YOUNG_CAP_BYTES`, stops its growth, and past the heap's ceiling (when used) asks for a full collection. A timer
 * would not do: an export to a file never yields to the event loop.
 */
export function heapCheck(): void {
  if (!held) return;
  // The first calls all look (the young generation grows fastest at the start, while the page being read is most of
  // what survives); then one look per LOOK_EVERY_MS.
  if (++calls > LOOK_ALWAYS_CALLS) {
    const now = performance.now();
    if (now - lastLook < LOOK_EVERY_MS) return;
    lastLook = now;
  }
  if (!capped) lookAtYoungGeneration();
  if (ceiling) collectAtCeiling();
}

/**
 * From now on, `heapCheck` also keeps the old generation under the ceiling (`HEAP_CEILING_BYTES`), on every V8, and
 * from V8 12 full collections are marked in one pause (`search`).
 */
export function useHeapCeiling(): void {
  if (!held) return;
  ceiling = true;
  if (v8MajorVersion() >= ATOMIC_MARKING_FROM_V8) setFlag('atomicMarking');
}

/**
 * From V8 12: full collections marked in one pause, the ceiling starting them (`ATOMIC_MARKING_FROM_V8`); before, V8's
 * own sizing stays (the ceiling on every export cost 30–45 % more CPU there). Only for a command that calls
 * `heapCheck` as its output goes out (show, export): without marking in steps, what the young generation
 * promotes never starts a full collection (V8 looks at its limit when the program itself allocates in the old
 * generation), so only the ceiling's collections bound the heap (a test's pages: 685 MB of old generation without).
 */
export function useAtomicMarking(): void {
  if (!held || v8MajorVersion() < ATOMIC_MARKING_FROM_V8) return;
  useHeapCeiling();
}

/** A full collection when the old generation passed `nextCollectionAt`, which then moves to what it kept × 1.5. */
function collectAtCeiling(): void {
  if (oldGenerationBytes() < nextCollectionAt) return;
  collect ??= exposedGc() ?? null;
  // A Node that gives no `gc` keeps V8's own collections: nothing a command prints depends on this.
  if (collect === null) {
    ceiling = false;
    return;
  }
  collect();
  nextCollectionAt = Math.max(HEAP_CEILING_BYTES, oldGenerationBytes() * CEILING_GROWTH);
}

/**
 * V8's `gc`: a context made once `--expose-gc` is set has it; this process's own context, made before, never will.
 * node:vm is loaded already (the CLI's loader runs the bundle as a vm.Script).
 */
function exposedGc(): (() => void) | undefined {
  setFlag('exposeGc');
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const gc: unknown = (require('node:vm') as typeof import('node:vm')).runInNewContext('typeof gc === "function" ? gc : undefined');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the old generation holds (every space but the young generation's, which is capped on its own). Not
 * `getHeapStatistics().used_heap_size`: on V8 13 (Node 24) that counts the young generation at several times what it
 * holds (23 MB used in one search, where `--trace-gc` showed 4 MB committed), so the ceiling was passed at once.
 */
function oldGenerationBytes(): number {
  let bytes = 0;
  for (const s of v8!.getHeapSpaceStatistics()) if (!s.space_name.startsWith('new_')) bytes += s.space_used_size;
  return bytes;
}

/**
 * Stops the young generation's growth now, whatever its size (for a command whose heavy part makes no calls to
 * `heapCheck`, such as loading the tokenizer's tables: there a larger young generation buys nothing).
 */
export function capYoungGenerationNow(): void {
  if (!held || capped) return;
  capped = true;
  setFlag('youngStopped');
}

function lookAtYoungGeneration(): void {
  const young = v8!.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  if (young !== undefined && young.space_size >= YOUNG_CAP_BYTES) capYoungGenerationNow();
}
