/**
 * What a registry event means for the conversation view of one session (docs/webview-protocol.md#change-notices).
 * No vscode import, so it is unit-tested.
 */
import { ROW_CHANGES, type ChangeKind } from '../../shared/protocol/envelope';
import type { SessionRef } from '../../shared/protocol/sessionRef';
import type { DatabaseChange } from '../databases/databaseRegistry';

/** What a panel must know about its database to tell a reconnect or a new problem from a plain write. */
export interface DatabaseState {
  /** The connection object (a new one after a reconnect), or undefined when the file is not open or unreadable. */
  connection: object | undefined;
  readonly: boolean | undefined;
  problem: string | undefined;
}

export function sameDatabaseState(a: DatabaseState, b: DatabaseState): boolean {
  return a.connection === b.connection && a.readonly === b.readonly && a.problem === b.problem;
}

/**
 * The kinds a registry event means for the view of `ref`: a write to its file may have touched any rows; a state
 * change of its database (or a list change that reconnected it, `stateMoved`) may have changed everything; a
 * current-branch move of its session changes only that. Events about other databases or sessions mean nothing.
 */
export function noticeKinds(change: DatabaseChange, ref: SessionRef, stateMoved: boolean): readonly ChangeKind[] {
  switch (change.kind) {
    case 'list':
      return stateMoved ? ['database'] : [];
    case 'rows':
      if (change.path !== ref.dbPath) return [];
      return stateMoved ? ['database'] : ROW_CHANGES;
    case 'state':
      return change.path === ref.dbPath ? ['database'] : [];
    case 'current-branch':
      return change.path === ref.dbPath && change.sessionId === ref.sessionId ? ['current-branch'] : [];
  }
}
