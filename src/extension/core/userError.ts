import { SessionDatabaseError, SessionError } from '../../store';
import { errorMessage } from '../../shared/errorMessage';
import * as l10n from '@vscode/l10n';

/**
 * An error whose message is meant for the user as is (a reason and, where there is one, a remedy). Commands throw
 * it for bad arguments and refused actions; the command wrapper shows it as a notification.
 */
export class UserFacingError extends Error {
  /** A command that fixes it (the notification offers it as a button), e.g. *Set API Key* for a missing key. */
  readonly remedy?: { title: string; command: string };

  constructor(message: string, remedy?: { title: string; command: string }) {
    super(message);
    if (remedy) this.remedy = remedy;
  }
}

/** The text to show for any error a command met: our own and the store's messages as they are, others with context. */
export function describeError(err: unknown): string {
  if (err instanceof UserFacingError || err instanceof SessionDatabaseError || err instanceof SessionError) return err.message;
  const code = (err as { code?: unknown } | null)?.code;
  const message = errorMessage(err);
  return typeof code === 'string' && code.startsWith('SQLITE_') ? l10n.t('SQLite error ({0}): {1}', code, message) : message;
}
