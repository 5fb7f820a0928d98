/**
 * One agent command as a child process: started by the system shell in the workspace folder, given its input on
 * stdin, read line by line on stdout and stderr, stopped politely and then firmly. Knows nothing of AG-UI or
 * sessions: `commandRun.ts` gives it meaning.
 *
 * Stop always stops (docs/agent-command.md §5): the command runs in a process group of its own, and every stop
 * signal goes to the whole group whether or not the shell that started it is still there, ending with SIGKILL to
 * the group. The run ends at the latest shortly after that SIGKILL, even when a process that left the group still
 * holds stdout open; and when this process exits, every group still running is killed.
 */
import { AFTER_RUN_END_MS, MAX_EVENT_LINE_CHARS, MAX_OUTPUT_IN_FLIGHT_CHARS, MAX_STDERR_LINE_CHARS } from './commandLimits';
import { launch } from './launcher';
import { shellLine } from './shellLine';

/** How a command process ended. */
export interface ProcessEnd {
  /** The shell's exit code, or null when a signal ended it (or it never started). */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why we stopped it, when we did. */
  stoppedBy?: 'stop' | 'timeout';
  /** Set when the process could not be spawned at all (no shell, a bad folder). */
  spawnError?: string;
  /** Stdout lines longer than `maxLineChars`, discarded unread. */
  overlongLines: number;
  /** Still running `afterRunEndMs` after the run's end (`runEnded`), it was stopped (SIGTERM, then SIGKILL). */
  stoppedAfterRunEnd?: boolean;
}

export interface CommandProcessOptions {
  /** The command line, run by the system shell. */
  command: string;
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed. */
  stdin: string;
  /** Every stdout line, as it arrives (without its newline). */
  onLine: (line: string) => void;
  /** Every stderr line, as it arrives (without its newline; a line over `MAX_STDERR_LINE_CHARS` as a note that says so). */
  onStderr?: (line: string) => void;
  /** Aborting stops the process group (SIGINT, then SIGTERM, then SIGKILL). */
  signal?: AbortSignal;
  /** Stop the process after this long (ms); none when undefined or 0. */
  timeoutMs?: number;
  /** How long each signal gets before the next, firmer one (default 5000 ms). */
  graceMs?: number;
  /** The longest stdout line read (default `MAX_EVENT_LINE_CHARS`); a longer one is discarded. */
  maxLineChars?: number;
  /**
   * Aborted once the run's terminal event was read (RUN_FINISHED, RUN_ERROR): the command then gets `afterRunEndMs`
   * (default `AFTER_RUN_END_MS`) to exit on its own, then it is stopped, SIGTERM and `graceMs` later SIGKILL.
   */
  runEnded?: AbortSignal;
  afterRunEndMs?: number;
}

/** After the last SIGKILL, how long the pipes get to report their end before the run ends without it. */
const AFTER_KILL_MS = 200;

/** The process groups of the commands running now, so that none outlives this process (`stopAllCommandProcesses`). */
const running = new Set<RunningCommand>();

interface RunningCommand {
  /** SIGKILL to the command's whole group now; the run ends a moment later whatever still holds its pipes. */
  kill: () => void;
  /** Stops the command with `graceMs` between signals; resolves when it has ended. */
  stopWithin: (graceMs: number) => Promise<void>;
}

let exitHookInstalled = false;
/**
 * When this process exits (the CLI ends, the extension host shuts down) no timer runs any more: the groups still
 * running get SIGKILL at once, synchronously, so no agent outlives us with ppid 1.
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killAllCommandProcesses);
}

/**
 * Stops every command still running (the extension's deactivate): SIGINT, SIGTERM and SIGKILL to each group,
 * `graceMs` apart; resolves once all have ended.
 */
export async function stopAllCommandProcesses(graceMs: number): Promise<void> {
  await Promise.all([...running].map((c) => c.stopWithin(graceMs)));
}

/**
 * SIGKILL, now and synchronously, to the group of every command still running: for a process about to end without
 * running its timers (the CLI killed by SIGTERM or SIGHUP).
 */
export function killAllCommandProcesses(): void {
  for (const c of running) c.kill();
}

/** How many commands are running now (for tests and the deactivate). */
export function runningCommandCount(): number {
  return running.size;
}

/** Runs the command to its end; never rejects (a spawn failure is in the result). */
export function runCommandProcess(options: CommandProcessOptions): Promise<ProcessEnd> {
  const grace = options.graceMs ?? 5000;
  const maxLine = options.maxLineChars ?? MAX_EVENT_LINE_CHARS;
  const posix = process.platform !== 'win32';
  return new Promise<ProcessEnd>((resolve) => {
    let stoppedBy: ProcessEnd['stoppedBy'];
    let shellEnd: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let ended = false;
    let spawnError: string | undefined;
    let stoppedAfterRunEnd = false;
    const timers: NodeJS.Timeout[] = [];
    const waiters: (() => void)[] = [];
    /** The shell's pid, once the launcher has started it; a signal asked for before then is sent on its start. */
    let pid: number | undefined;
    let pendingSignal: NodeJS.Signals | undefined;

    /**
     * To the whole group, by its id (the shell's pid): the group lives on after the shell exits as long as any of
     * its processes does, and its id cannot be given to another process meanwhile, so this never hits a stranger.
     */
    const send = (sig: NodeJS.Signals) => {
      // The pid may exist before its message came (a launcher thread's spawn): an exiting process cannot wait.
      pid ??= child.pid();
      if (pid === undefined) {
        pendingSignal = sig;
        return;
      }
      try {
        if (posix) process.kill(-pid, sig);
        else if (shellEnd === undefined) child.kill(sig);
      } catch {
        // ESRCH: the group is gone.
      }
    };
    const groupAlive = (): boolean => {
      if (pid === undefined) return false;
      if (!posix) return shellEnd === undefined;
      try {
        process.kill(-pid, 0);
        return true;
      } catch {
        return false;
      }
    };

    /** SIGINT now, SIGTERM after `g`, SIGKILL after 2`g`, then the end even if a pipe is still held open. */
    let escalating = false;
    const escalate = (g: number, first: NodeJS.Signals = 'SIGINT') => {
      if (escalating) return;
      escalating = true;
      send(first);
      if (first === 'SIGINT') timers.push(setTimeout(() => send('SIGTERM'), g));
      timers.push(
        setTimeout(
          () => {
            send('SIGKILL');
            timers.push(setTimeout(finish, AFTER_KILL_MS));
          },
          first === 'SIGINT' ? 2 * g : g,
        ),
      );
    };
    const stop = (why: 'stop' | 'timeout') => {
      if (stoppedBy || ended) return;
      stoppedBy = why;
      escalate(grace);
    };
    const self: RunningCommand = {
      kill: () => {
        if (ended) return;
        stoppedBy ??= 'stop';
        // Called as this process exits: a spawn still under way is waited for, one not begun never begins.
        pid ??= child.pidAtExit();
        send('SIGKILL');
        // Its processes may linger as zombies (a PID 1 that never reaps them): the group test cannot tell, so the
        // run ends on a timer rather than on the group's end.
        timers.push(setTimeout(finish, AFTER_KILL_MS));
      },
      stopWithin: (g) =>
        new Promise<void>((done) => {
          if (ended) return done();
          waiters.push(done);
          stoppedBy ??= 'stop';
          if (!escalating) return escalate(g);
          // Already stopping on a longer grace: the caller's deadline wins.
          timers.push(
            setTimeout(() => {
              send('SIGKILL');
              timers.push(setTimeout(finish, AFTER_KILL_MS));
            }, 2 * g),
          );
        }),
    };

    let overlongLines = 0;
    const stdout = lineSplitter(maxLine, options.onLine, () => overlongLines++);
    const stderr = lineSplitter(
      MAX_STDERR_LINE_CHARS,
      (line) => options.onStderr?.(line),
      () => options.onStderr?.(`[a line longer than ${MAX_STDERR_LINE_CHARS.toLocaleString('en-US')} characters was left out]`),
    );

    function finish(): void {
      if (ended) return;
      ended = true;
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener('abort', onAbort);
      options.runEnded?.removeEventListener('abort', onRunEnded);
      running.delete(self);
      // What a process outside the group still holds open is not ours to wait for.
      stdout.flush();
      stderr.flush();
      child.release();
      resolve({
        code: shellEnd?.code ?? null,
        signal: shellEnd?.signal ?? null,
        ...(stoppedBy ? { stoppedBy } : {}),
        ...(spawnError !== undefined ? { spawnError } : {}),
        overlongLines,
        ...(stoppedAfterRunEnd ? { stoppedAfterRunEnd } : {}),
      });
      for (const w of waiters.splice(0)) w();
    }

    // A process group of its own (POSIX), so a stop reaches the shell's children too: `python -m x` under `sh -c`
    // would otherwise keep running after the shell was signalled.
    // One simple command is exec'd by the shell rather than forked (shellLine.ts). Started off this thread
    // (launcher.ts): the fork and the wait for the child's exec would otherwise stall it.
    const child = launch(
      {
        command: shellLine(options.command),
        cwd: options.cwd,
        env: options.env,
        stdin: options.stdin,
        detached: posix,
        maxInFlight: MAX_OUTPUT_IN_FLIGHT_CHARS,
      },
      {
        spawned: (p) => {
          pid = p;
          // Also after the run ended (a kill at exit, its timer): what was asked to die must not outlive it.
          if (pendingSignal) send(pendingSignal);
        },
        stdout: (text) => stdout.take(text),
        stderr: (text) => stderr.take(text),
        stdoutEnd: () => stdout.flush(),
        stderrEnd: () => stderr.flush(),
        error: (message, spawned) => {
          spawnError = message;
          if (!spawned) finish();
        },
        exit: (code, signal) => {
          shellEnd = { code, signal };
          if (ended) return;
          // The shell is gone but what it started may hold stdout open (a background job, a grandchild): it gets
          // `grace` to finish on its own, then the group is stopped (SIGTERM, SIGKILL) and the run ends regardless.
          if (!escalating) timers.push(setTimeout(() => escalate(grace, 'SIGTERM'), grace));
        },
        close: (code, signal) => {
          shellEnd ??= { code, signal };
          if (ended) return;
          // The pipes closed, but a process of the group that closed them may still run (a daemon it left): that,
          // too, must not outlive the run.
          if (groupAlive()) {
            if (!escalating) escalate(Math.min(grace, 1000), 'SIGTERM');
            return;
          }
          finish();
        },
      },
    );
    running.add(self);
    installExitHook();

    const onAbort = () => stop('stop');
    if (options.signal?.aborted) queueMicrotask(onAbort);
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    // The run ended (RUN_FINISHED, RUN_ERROR) but the command goes on (a non-daemon thread, an exporter's flush, a
    // server loop): it gets a moment to exit, then is stopped as a shell's leftovers are, and the run ends with it.
    const onRunEnded = () => {
      timers.push(
        setTimeout(() => {
          if (ended || escalating) return;
          stoppedAfterRunEnd = true;
          escalate(grace, 'SIGTERM');
        }, options.afterRunEndMs ?? AFTER_RUN_END_MS),
      );
    };
    if (options.runEnded?.aborted) queueMicrotask(onRunEnded);
    else options.runEnded?.addEventListener('abort', onRunEnded, { once: true });
    if (options.timeoutMs && options.timeoutMs > 0) timers.push(setTimeout(() => stop('timeout'), options.timeoutMs));
  });
}

/** Lines out of a stream's text, given chunk by chunk; `flush` once the stream ended or was abandoned. */
interface LineSplitter {
  take: (chunk: string) => void;
  /** Delivers the last line (without a newline), if any; nothing is taken after it. */
  flush: () => void;
}

/**
 * Calls `onLine` for every line of the chunks taken (the last one even without a newline). A line longer than
 * `maxChars` is never gathered: its chunks are dropped as they come until its newline, and `onOverlong` is called
 * once for it, so one endless line costs no more memory than `maxChars`.
 */
function lineSplitter(maxChars: number, onLine: (line: string) => void, onOverlong: () => void): LineSplitter {
  let parts: string[] = [];
  let size = 0;
  let discarding = false;
  let done = false;
  const deliver = () => {
    const line = parts.join('');
    parts = [];
    size = 0;
    safely(onLine, line.endsWith('\r') ? line.slice(0, -1) : line);
  };
  const add = (text: string) => {
    if (discarding) return;
    if (size + text.length > maxChars) {
      parts = [];
      size = 0;
      discarding = true;
      safely(onOverlong, '');
      return;
    }
    parts.push(text);
    size += text.length;
  };
  return {
    take: (chunk) => {
      if (done) return;
      let start = 0;
      let nl: number;
      // Only the new chunk is searched for newlines: a long line costs its length once, not once per chunk.
      while ((nl = chunk.indexOf('\n', start)) >= 0) {
        add(chunk.slice(start, nl));
        if (discarding) discarding = false;
        else deliver();
        start = nl + 1;
      }
      if (start < chunk.length) add(chunk.slice(start));
    },
    flush: () => {
      if (done) return;
      done = true;
      if (!discarding && size > 0) deliver();
    },
  };
}

function safely(fn: (line: string) => void, line: string): void {
  try {
    fn(line);
  } catch {
    // A consumer's failure must not stop the reading (the process would block on a full pipe).
  }
}
