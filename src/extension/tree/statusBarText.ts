/**
 * The Sessions status bar item's text: an icon for the file's state, then the file's name, the session and its current
 * branch. The names come from the files, and VS Code draws `$(name)` in a status bar item's text as an icon: they go
 * through `plainIconText`, and only the state's icon is drawn. Without VS Code, so it is unit-tested.
 */
import { basename } from 'node:path';
import { plainIconText } from '../core/iconText';

export interface StatusBarFacts {
  dbPath: string;
  problem?: boolean;
  readonly?: boolean;
  /** The session and its current branch, when a session is active. */
  session?: { sessionId: string; branchId: string };
}

export function sessionStatusText(f: StatusBarFacts): string {
  const parts = [basename(f.dbPath)];
  if (f.session) parts.push(f.session.sessionId, f.session.branchId);
  return `$(${f.problem ? 'error' : f.readonly ? 'lock' : 'database'}) ${plainIconText(parts.join(' › '))}`;
}
