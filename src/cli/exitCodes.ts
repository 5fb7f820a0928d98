/**
 * The CLI's exit codes, so scripts can tell a missing session from a damaged file (documented in the store package's
 * README, "Command line").
 */
import { SessionDatabaseError, sqliteCodeOf } from '../store/errors';
import { TransferError } from '../store/export/exportErrors';
import { ExperimentStoreError } from '../store/experiments/experimentErrors';
import { OutputFileError } from '../store/files/outputFileError';
import { RemoteStoreError } from '../store/remote/remoteErrors';
import { ReviewStoreError } from '../store/reviews/reviewErrors';
import { TraceInputError, TraceStoreError } from '../store/traces/traceErrors';
import { PIPE_CLOSED_EXIT } from './stdoutClosed';

export const EXIT = {
  ok: 0,
  /** Anything else: an I/O error, a driver that cannot load, a bug. */
  error: 1,
  /** Wrong arguments: unknown command or option, a missing argument. */
  usage: 2,
  /** The file (or a server's database), session, branch or turn does not exist. */
  notFound: 3,
  /**
   * The file is not a usable session database or export: not SQLite, no session tables, damaged, malformed; or a
   * server store has no session tables; or a replaced file's -wal sits beside it (stale-wal); or a killed writer's hot
   * -journal does (hot-journal), which only a connection that can write the file rolls back.
   */
  badFile: 4,
  /** The database stayed locked by another connection past the busy timeout. */
  locked: 5,
  /**
   * The output cannot be written: the import's database is read-only, lacks tables (use --create-tables) or has the
   * session; an -o file is one the command reads (the session file, the review or trace store, their -wal/-shm, by any
   * path or link), already exists (without --force), or the folder refuses it; a store path is a symbolic link; the
   * disk is full (SQLite rolled the write back: nothing was written, `doctor --fix` repaired nothing).
   */
  cannotWrite: 6,
  /**
   * `run`: the agent paused the run, waiting for input (AG-UI's `interrupt` outcome: a tool approval, a value); its turn
   * is kept for the run that resumes it. No error: every other run completed.
   */
  paused: 7,
  /** Interrupted (Ctrl+C). */
  interrupted: 130,
  /** Stdout's reader closed it before the output ended (`| head`): stopped quietly, as SIGPIPE stops a Unix tool. */
  pipeClosed: PIPE_CLOSED_EXIT,
} as const;

/** A usage mistake: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {}

/** A missing session, branch or turn (exit code 3). */
export class NotFoundError extends Error {}

/** An input file the command cannot use as it is: past its size bound, say (exit code 4). */
export class BadInputError extends Error {}

/** The exit code for an error thrown by a command. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof OutputFileError) return EXIT.cannotWrite;
  if (err instanceof NotFoundError) return EXIT.notFound;
  if (err instanceof BadInputError) return EXIT.badFile;
  if (err instanceof TransferError) {
    switch (err.problem) {
      case 'malformed':
        return EXIT.badFile;
      case 'not-found':
        return EXIT.notFound;
      case 'session-exists':
      case 'missing-tables':
        return EXIT.cannotWrite;
      case 'cancelled':
        return EXIT.interrupted;
    }
  }
  if (err instanceof RemoteStoreError) {
    // Unreachable, refused credentials, a timeout or TLS: 1, with the store's message saying which.
    if (err.problem === 'missing-database') return EXIT.notFound;
    if (err.problem === 'missing-table') return EXIT.badFile;
    return EXIT.error;
  }
  if (err instanceof SessionDatabaseError) {
    switch (err.problem) {
      case 'not-found':
        return EXIT.notFound;
      // stale-wal: a replaced file's -wal sits beside it: the file at the path cannot be read as it is until the -wal
      // is moved. hot-journal: nor until a writable connection rolls the killed writer's transaction back; the file is
      // not what cannot be written (6), and waiting does not help (5).
      case 'not-sqlite':
      case 'not-session-database':
      case 'corrupt':
      case 'stale-wal':
      case 'hot-journal':
        return EXIT.badFile;
      case 'locked':
        return EXIT.locked;
      case 'read-only':
      case 'disk-full':
        return EXIT.cannotWrite;
      default:
        return EXIT.error;
    }
  }
  if (err instanceof ReviewStoreError) {
    // Not a review store (a session file, a file with our header and other columns), a newer format, a bad record.
    return err.problem === 'not-found' ? EXIT.notFound : EXIT.badFile;
  }
  if (err instanceof TraceStoreError) return err.problem === 'not-found' ? EXIT.notFound : EXIT.badFile;
  if (err instanceof ExperimentStoreError) {
    // `check --save` onto a name saved already (without --force) cannot be written; a bad name or report is a usage error.
    if (err.problem === 'exists') return EXIT.cannotWrite;
    if (err.problem === 'not-found') return EXIT.notFound;
    if (err.problem === 'invalid') return EXIT.usage;
    return EXIT.badFile;
  }
  if (err instanceof TraceInputError) return EXIT.badFile;
  // A full disk met by a store's write that passes SQLite's error on as it is (the review, replay and experiment
  // stores' transactions): the output cannot be written, as the described `disk-full` says.
  if (sqliteCodeOf(err) === 'SQLITE_FULL') return EXIT.cannotWrite;
  return EXIT.error;
}
