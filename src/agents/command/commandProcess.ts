/**
 * One agent command as a child process: started by the system shell in the workspace folder, given its input on
 * stdin, read line by line on stdout, its stderr kept as a bounded tail, stopped politely and then firmly. Knows
 * nothing of AG-UI or sessions: `commandRun.ts` gives it meaning.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** How a command process ended. */
export interface ProcessEnd {
  /** The exit code, or null when a signal ended it (or it never started). */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why we stopped it, when we did. */
  stoppedBy?: 'stop' | 'timeout';
  /** Set when the process could not be spawned at all (no shell, a bad folder). */
  spawnError?: string;
  /** The last lines of stderr (at most `stderrTailLines`). */
  stderrTail: string[];
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
  /** Every stderr line, as it arrives. */
  onStderr?: (line: string) => void;
  /** Aborting stops the process (SIGINT, then SIGTERM, then SIGKILL). */
  signal?: AbortSignal;
  /** Stop the process after this long (ms); none when undefined or 0. */
  timeoutMs?: number;
  /** How long each signal gets before the next, firmer one (default 5000 ms). */
  graceMs?: number;
  /** How many stderr lines to keep (default 20). */
  stderrTailLines?: number;
}

/** Runs the command to its end; never rejects (a spawn failure is in the result). */
export function runCommandProcess(options: CommandProcessOptions): Promise<ProcessEnd> {
  const tailSize = options.stderrTailLines ?? 20;
  const grace = options.graceMs ?? 5000;
  const stderrTail: string[] = [];
  return new Promise<ProcessEnd>((resolve) => {
    let child: ChildProcess;
    try {
      // A process group of its own (POSIX), so a stop reaches the shell's children too: `python -m x` under `sh -c`
      // would otherwise keep running after the shell was signalled.
      child = spawn(options.command, {
        shell: true,
        cwd: options.cwd,
        env: options.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
        windowsHide: true,
      });
    } catch (err) {
      resolve({ code: null, signal: null, spawnError: err instanceof Error ? err.message : String(err), stderrTail });
      return;
    }
    let stoppedBy: ProcessEnd['stoppedBy'];
    const timers: NodeJS.Timeout[] = [];
    const send = (sig: NodeJS.Signals) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        if (process.platform !== 'win32' && child.pid !== undefined) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        // Already gone.
      }
    };
    const stop = (why: 'stop' | 'timeout') => {
      if (stoppedBy) return;
      stoppedBy = why;
      send('SIGINT');
      timers.push(setTimeout(() => send('SIGTERM'), grace));
      timers.push(setTimeout(() => send('SIGKILL'), 2 * grace));
    };
    const onAbort = () => stop('stop');
    if (options.signal?.aborted) queueMicrotask(onAbort);
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs && options.timeoutMs > 0) timers.push(setTimeout(() => stop('timeout'), options.timeoutMs));

    readLines(child.stdout!, options.onLine);
    readLines(child.stderr!, (line) => {
      stderrTail.push(line);
      if (stderrTail.length > tailSize) stderrTail.shift();
      options.onStderr?.(line);
    });
    // A command that never reads its input would make the write fail with EPIPE: that is its business, not an error.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(options.stdin);

    let spawnError: string | undefined;
    child.on('error', (err) => {
      spawnError = err.message;
    });
    child.on('close', (code, signal) => {
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        code,
        signal,
        ...(stoppedBy ? { stoppedBy } : {}),
        ...(spawnError !== undefined ? { spawnError } : {}),
        stderrTail,
      });
    });
  });
}

/** Calls `onLine` for every line of `stream` (the last one even without a newline), decoded as UTF-8. */
function readLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).replace(/\r$/, '');
      pending = pending.slice(nl + 1);
      safely(onLine, line);
    }
  });
  stream.on('end', () => {
    if (pending !== '') safely(onLine, pending.replace(/\r$/, ''));
    pending = '';
  });
}

function safely(fn: (line: string) => void, line: string): void {
  try {
    fn(line);
  } catch {
    // A consumer's failure must not stop the reading (the process would block on a full pipe).
  }
}
