/**
 * Starts agent processes, here or off this thread (why: launcherThread.ts). A process that starts many agents at once
 * (a check) or whose thread must stay responsive (VS Code's extension host) calls `useLauncherThread` once, early: the
 * thread takes tens of milliseconds to boot (26–56 ms to 'online' here with the test suite running beside it), beside
 * whatever this thread does meanwhile, and from then on every launch goes through it. One that starts one agent and waits for it (`agent-sessions run`) spawns it here, sooner than a thread
 * could boot. The thread is kept while any process it started is still watched (it does not keep this process alive
 * otherwise); if it fails, launches go back to this thread.
 *
 * The other thread holds the pipes; this side gets each chunk of stdout and stderr as text, in order, then the ends,
 * then how the process ended (`close` always last, once). Each chunk is acknowledged after its handler ran, which is
 * what lets the launcher pause a process that prints faster than we read (the pipe fills, the process waits).
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import type { Worker } from 'node:worker_threads';
import { LAUNCHER_SOURCE } from './launcherThread';

export interface LaunchRequest {
  /** Run by the system shell. */
  command: string;
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Written to the process's stdin, which is then closed. */
  stdin: string;
  /** A process group of its own (POSIX). */
  detached: boolean;
  /** Characters of output that may wait to be taken before the process's pipes are paused. */
  maxInFlight: number;
}

export interface LaunchHandlers {
  /** The process exists (its pid), before any of its output. */
  spawned(pid: number): void;
  stdout(text: string): void;
  stderr(text: string): void;
  stdoutEnd(): void;
  stderrEnd(): void;
  /** It could not be started (`spawned` false), or was lost after it was (its launcher thread stopped). */
  error(message: string, spawned: boolean): void;
  exit(code: number | null, signal: NodeJS.Signals | null): void;
  /** Its pipes are closed and it has exited (or it never started): nothing more comes. */
  close(code: number | null, signal: NodeJS.Signals | null): void;
}

export interface Launched {
  /**
   * The process's pid as soon as it exists, also before `spawned` is heard (the launcher thread stores it in memory
   * both threads share): what a process about to exit needs to kill it.
   */
  pid(): number | undefined;
  /**
   * For a process about to exit, whose messages will never be read: the pid of a spawn under way on the launcher
   * thread (waited for, up to a second), or undefined for one not begun, which is then never begun.
   */
  pidAtExit(): number | undefined;
  /** Asks the launcher to send `signal` to the process itself (where there are no process groups: Windows). */
  kill(signal: NodeJS.Signals): void;
  /** Closes our ends of its stdout and stderr; its `close` follows once it has exited. */
  release(): void;
}

type FromLauncher =
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'out' | 'err'; id: number; text: string }
  | { t: 'outEnd' | 'errEnd'; id: number }
  | { t: 'error'; id: number; message: string; spawned: boolean }
  | { t: 'exit' | 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

let thread: Worker | undefined;
let nextId = 1;
/** A launch's slot while its spawn is under way, and once this thread cancelled it (launcherThread.ts). */
const UNDER_WAY = -1;
const CANCELLED = -2;
const pidIn = (slot: number): number | undefined => (slot > 0 ? slot : undefined);
/** Slots for the pids the launcher thread stores (`Launched.pid`), reused round-robin by launch id. */
const PID_SLOTS = 4096;
const pids = new Int32Array(new SharedArrayBuffer(PID_SLOTS * Int32Array.BYTES_PER_ELEMENT));
/** Each watched process's handlers, and the characters taken from it since we last said so. */
const watched = new Map<number, { handlers: LaunchHandlers; untold: number; tellAt: number; slot: number }>();

/** The launcher thread, if one runs (for tests that stop it as a crash would). */
export function launcherThreadForTests(): Worker | undefined {
  return thread;
}

/** From now on, launch through the launcher thread (started now if it is not running). */
export function useLauncherThread(): void {
  launcherThread();
}

function launcherThread(): Worker {
  if (thread) return thread;
  // Loaded with the first thread: `agent-sessions run` spawns on its own thread, and the module and the ones it loads
  // were 0.75 ms of the CPU before its agent starts (docs/benchmarks.md, "The fourteenth round").
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Worker } = require('node:worker_threads') as typeof import('node:worker_threads');
  const worker = new Worker(LAUNCHER_SOURCE, { eval: true, name: 'agent-launcher', workerData: { pids: pids.buffer } });
  worker.on('message', (m: FromLauncher) => deliver(worker, m));
  // The thread failing is the end of every watched process's pipes: none of them can be heard from again. One that
  // was started is told as started (its pid is in the shared slots), so its run stops its group rather than leave it.
  const lost = (why: string) => {
    if (thread === worker) thread = undefined;
    for (const [id, { handlers: h, slot }] of [...watched]) {
      watched.delete(id);
      h.error(`the agent launcher stopped: ${why}`, pidIn(Atomics.load(pids, slot)) !== undefined);
      h.close(null, null);
    }
  };
  worker.on('error', (err) => lost(err.message));
  worker.on('exit', (code) => lost(`exit code ${code}`));
  worker.unref();
  thread = worker;
  return worker;
}

function deliver(worker: Worker, m: FromLauncher): void {
  const w = watched.get(m.id);
  if (!w) return;
  const h = w.handlers;
  switch (m.t) {
    case 'spawned':
      return h.spawned(m.pid);
    case 'out':
    case 'err':
      try {
        if (m.t === 'out') h.stdout(m.text);
        else h.stderr(m.text);
      } finally {
        // Told in batches of a quarter of the bound (a message per chunk would cost more than the chunk): the
        // launcher resumes a paused process once half of the bound has been taken.
        w.untold += m.text.length;
        if (w.untold >= w.tellAt) {
          worker.postMessage({ t: 'taken', id: m.id, n: w.untold });
          w.untold = 0;
        }
      }
      return;
    case 'outEnd':
      return h.stdoutEnd();
    case 'errEnd':
      return h.stderrEnd();
    case 'error':
      return h.error(m.message, m.spawned);
    case 'exit':
      return h.exit(m.code, m.signal);
    case 'close':
      watched.delete(m.id);
      if (watched.size === 0) worker.unref();
      return h.close(m.code, m.signal);
  }
}

/**
 * Starts `request.command` (on the launcher thread once `useLauncherThread` was called); `handlers` hear of it until
 * `close`, never before this returns except `spawned`.
 */
export function launch(request: LaunchRequest, handlers: LaunchHandlers): Launched {
  return thread ? launchOffThread(thread, request, handlers) : launchHere(request, handlers);
}

function launchOffThread(worker: Worker, request: LaunchRequest, handlers: LaunchHandlers): Launched {
  const id = nextId++;
  // A slot is in use from this launch until its pid is read: 4,096 launches later at the earliest.
  const slot = id % PID_SLOTS;
  Atomics.store(pids, slot, 0);
  watched.set(id, { handlers, untold: 0, tellAt: Math.max(1, Math.floor(request.maxInFlight / 4)), slot });
  // Watching a process keeps this one alive, as a child process's pipes would.
  worker.ref();
  worker.postMessage({
    t: 'spawn',
    id,
    slot,
    command: request.command,
    options: spawnOptions(request),
    stdin: request.stdin,
    maxInFlight: request.maxInFlight,
  });
  let known: number | undefined;
  return {
    pid: () => (known ??= pidIn(Atomics.load(pids, slot))),
    pidAtExit: () => {
      if (known !== undefined) return known;
      if (Atomics.compareExchange(pids, slot, 0, CANCELLED) === 0) return undefined;
      Atomics.wait(pids, slot, UNDER_WAY, 1000);
      return (known = pidIn(Atomics.load(pids, slot)));
    },
    kill: (signal) => worker.postMessage({ t: 'kill', id, signal }),
    release: () => worker.postMessage({ t: 'release', id }),
  };
}

/** How a command is spawned, here or on the launcher thread (a plain object: it crosses to the thread as is). */
function spawnOptions(request: LaunchRequest): SpawnOptions {
  return {
    shell: true,
    cwd: request.cwd,
    env: request.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: request.detached,
    windowsHide: true,
  };
}

/**
 * The same, on this thread: what LAUNCHER_SOURCE does, with the handlers called directly (its pipes are read only as
 * fast as the handlers take them, so no bound on output in flight is needed).
 */
function launchHere(request: LaunchRequest, h: LaunchHandlers): Launched {
  let child: ChildProcess;
  try {
    child = spawn(request.command, spawnOptions(request));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    queueMicrotask(() => {
      h.error(message, false);
      h.close(null, null);
    });
    return { pid: () => undefined, pidAtExit: () => undefined, kill: () => undefined, release: () => undefined };
  }
  if (child.pid !== undefined) h.spawned(child.pid);
  const relay = (stream: NodeJS.ReadableStream, take: (text: string) => void, end: () => void) => {
    stream.setEncoding('utf8');
    stream.on('data', take);
    stream.on('end', end);
    // A pipe destroyed on release reports an error: its end as far as the handlers care.
    stream.on('error', end);
  };
  relay(child.stdout!, h.stdout, h.stdoutEnd);
  relay(child.stderr!, h.stderr, h.stderrEnd);
  // A command that never reads its input makes the write fail with EPIPE: its business, not an error.
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(request.stdin);
  child.on('error', (err) => {
    h.error(err.message, child.pid !== undefined);
    // A spawn that failed emits no 'close' when its pipes were never opened.
    if (child.pid === undefined) h.close(null, null);
  });
  child.on('exit', h.exit);
  child.on('close', h.close);
  return {
    pid: () => child.pid,
    pidAtExit: () => child.pid,
    kill: (signal) => {
      try {
        child.kill(signal);
      } catch {
        // Gone already.
      }
    },
    release: () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    },
  };
}
