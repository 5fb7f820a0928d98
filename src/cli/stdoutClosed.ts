/**
 * A reader that leaves before the output ends (`agent-sessions show … | head`): the next write to its closed pipe fails
 * with EPIPE, which Node raises as an 'error' event on stdout that nothing handled, so the command died with a stack
 * trace and exit code 1, and until then a streaming command read on into a pipe no one reads. A Unix tool is stopped
 * by SIGPIPE there, at once and quietly; Node ignores SIGPIPE, so the CLI does the same by hand: it exits at once with
 * 141 (128 + SIGPIPE, what a shell reports for such a tool). Whatever it was writing to a store of ours is one
 * transaction, rolled back by SQLite when the process ends mid-way; an `-o` file is written under a temporary name
 * and renamed only when complete.
 *
 * A command with work that must not be cut off (`check`: the reports it writes to files, its scratch folder) asks to
 * be told instead (`tellWhenStdoutCloses`): it stops as it would on Ctrl+C, finishes that work, and exits with 141
 * itself.
 */

/** `EXIT.pipeClosed` (exitCodes.ts), here so that the loader, a few kilobytes, does not bundle the error classes. */
export const PIPE_CLOSED_EXIT = 141;

/**
 * The state of stdout's watch, one per process: dist/cli.js (the loader, which installs the watch) and
 * dist/cliMain.js (the commands, which register) are two bundles, each with its own copy of this module.
 */
interface StdoutWatch {
  /** Told instead of exiting, while they are registered. */
  listeners: Set<() => void>;
  /** Stdout's reader has left: every later write fails too, and is ignored. */
  closed: boolean;
}
const KEY = Symbol.for('agent-sessions.stdoutClosed');
const watch: StdoutWatch = ((globalThis as Record<symbol, StdoutWatch | undefined>)[KEY] ??= { listeners: new Set(), closed: false });
const listeners = watch.listeners;

/** For the program's entry only (the loader, or main.ts run as the program): it ends the process. */
export function exitWhenStdoutCloses(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    // After EPIPE the stream is destroyed, and a later write fails with another code: the same closed pipe.
    if (err.code === 'EPIPE' || watch.closed) {
      const first = !watch.closed;
      watch.closed = true;
      if (listeners.size === 0) process.exit(PIPE_CLOSED_EXIT);
      if (first) for (const l of [...listeners]) l();
      return;
    }
    // Any other error of stdout stays what it was: uncaught.
    throw err;
  });
}

/**
 * Until the returned function is called, a closed stdout calls `onClosed` (once) instead of exiting; that function
 * says whether stdout closed meanwhile (the command then exits with `PIPE_CLOSED_EXIT` itself).
 */
export function tellWhenStdoutCloses(onClosed: () => void): () => boolean {
  let told = false;
  const listener = () => {
    if (told) return;
    told = true;
    onClosed();
  };
  listeners.add(listener);
  if (watch.closed) queueMicrotask(listener);
  return () => {
    listeners.delete(listener);
    return watch.closed;
  };
}
