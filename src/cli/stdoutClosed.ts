/**
 * A reader that leaves before the output ends (`agent-sessions show … | head`): the next write to its closed pipe fails
 * with EPIPE, which Node raises as an 'error' event on stdout that nothing handled, so the command died with a stack
 * trace and exit code 1, and until then a streaming command read on into a pipe no one reads. A Unix tool is stopped
 * by SIGPIPE there, at once and quietly; Node ignores SIGPIPE, so the CLI does the same by hand: it exits at once with
 * 141 (128 + SIGPIPE, what a shell reports for such a tool). Whatever it was writing to a store of ours is one
 * transaction, rolled back by SQLite when the process ends mid-way; an `-o` file is written under a temporary name
 * and renamed only when complete.
 */

/** `EXIT.pipeClosed` (exitCodes.ts), here so that the loader, a few kilobytes, does not bundle the error classes. */
export const PIPE_CLOSED_EXIT = 141;

/** For the program's entry only (the loader, or main.ts run as the program): it ends the process. */
export function exitWhenStdoutCloses(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(PIPE_CLOSED_EXIT);
    // Any other error of stdout stays what it was: uncaught.
    throw err;
  });
}
