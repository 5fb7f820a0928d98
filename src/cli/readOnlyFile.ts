/**
 * A read-only session file a command would write (`import`, `doctor --fix`): the store's advice names its option
 * (`readonly: true`), which the command line does not have, so the command says what to run instead.
 */
import { SessionDatabaseError } from '../store/errors';
import { READ_ONLY_OPTION_ADVICE } from '../store/sqlite/sessionConnection';

/**
 * `err` with the store's advice replaced by `instead` when it is the store's refusal to open a read-only file for
 * writing; any other error unchanged.
 */
export function readOnlyInCliWords(err: unknown, instead: string): unknown {
  if (!(err instanceof SessionDatabaseError) || err.problem !== 'read-only' || !err.message.endsWith(READ_ONLY_OPTION_ADVICE)) return err;
  return new SessionDatabaseError('read-only', `${err.message.slice(0, -READ_ONLY_OPTION_ADVICE.length)}${instead}`, { cause: err });
}
