/**
 * A read-only session file a command would write (`import`, `doctor --fix`): the store's advice names its option
 * (`readonly: true`), which the command line does not have, so the command says what to run instead. A file locked
 * past the busy timeout: the store's advice to read it read-only is no way to write it, so it is left out.
 */
import { LOCKED_READ_ONLY_ADVICE, SessionDatabaseError } from '../store/errors';
import { READ_ONLY_OPTION_ADVICE } from '../store/sqlite/sessionConnection';

/**
 * `err` with the store's advice replaced by `instead` when it is the store's refusal to open a read-only file for
 * writing, without its advice to read read-only when the file is locked; any other error unchanged.
 */
export function readOnlyInCliWords(err: unknown, instead: string): unknown {
  if (err instanceof SessionDatabaseError && err.problem === 'locked' && err.message.endsWith(LOCKED_READ_ONLY_ADVICE))
    return new SessionDatabaseError('locked', `${err.message.slice(0, -LOCKED_READ_ONLY_ADVICE.length)}.`, { cause: err });
  if (!(err instanceof SessionDatabaseError) || err.problem !== 'read-only' || !err.message.endsWith(READ_ONLY_OPTION_ADVICE)) return err;
  return new SessionDatabaseError('read-only', `${err.message.slice(0, -READ_ONLY_OPTION_ADVICE.length)}${instead}`, { cause: err });
}
