/**
 * The typed error of every file we write (exports, datasets, review and trace exports, copies, our own stores): the
 * path is one the writer reads, a file is already there, a symbolic link sits where we would create a file, or the
 * file system refused. In every case the file at the path, and every input, is as it was.
 */
import { SessionError } from '../errors';

/** What went wrong, for callers that act on it (the CLI's exit codes, the extension's messages). */
export type OutputFileProblem =
  /** The output is (or resolves to, or is a hard link of) a store the writer reads or serves, or its -wal/-shm/-journal. */
  | 'is-input'
  /** A file is already at the path and the caller did not say to replace it (the CLI's --force). */
  | 'exists'
  /** A symbolic link (or a dangling one) sits where a store of ours would be created or opened for writing. */
  | 'symlink'
  /** The path is a folder or another non-file. */
  | 'not-a-file'
  /** The file system refused (permissions, a full disk, a missing folder); the message names the output, not a temporary file. */
  | 'io';

export class OutputFileError extends SessionError {
  constructor(
    readonly problem: OutputFileProblem,
    message: string,
  ) {
    super(message);
  }
}
