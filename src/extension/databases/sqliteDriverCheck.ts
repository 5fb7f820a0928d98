import * as vscode from 'vscode';
import { NODE_SQLITE_MIN_NODE, SessionDatabaseError, describeDriverChoice, nodeAtLeast } from '../../store';

/** The first VS Code whose extension host runs a Node with node:sqlite (1.101: Electron 35, Node 22.15.1). */
export const MIN_VSCODE_WITH_NODE_SQLITE = '1.101';

/**
 * The SQLite driver the extension host uses, checked once (on the first database the user opens, not at
 * activation) and written to the output channel with the reason the other driver was skipped. VS Code desktop never
 * loads a better-sqlite3 addon built for plain Node (its Electron has another ABI), so skipping it is the normal case
 * there and is logged, not shown. When no driver loads the error names the VS Code version that fixes it.
 */
export class SqliteDriverCheck {
  private checked: SessionDatabaseError | null | undefined;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /** Throws a `SessionDatabaseError('driver-unavailable')` that says what to update when no driver loads. */
  ensure(): void {
    if (this.checked === undefined) this.checked = this.check();
    if (this.checked) throw this.checked;
  }

  private check(): SessionDatabaseError | null {
    const host = `VS Code ${vscode.version}, ${vscode.env.remoteName ? `remote '${vscode.env.remoteName}', ` : ''}Node ${process.versions.node} (ABI ${process.versions.modules}) on ${process.platform}-${process.arch}`;
    try {
      const choice = describeDriverChoice();
      this.log.info(`SQLite driver: ${choice.driver} (${host}).`);
      for (const s of choice.skipped) this.log.info(`SQLite driver ${s.driver} skipped: ${s.reason}`);
      return null;
    } catch (err) {
      if (!(err instanceof SessionDatabaseError)) throw err;
      this.log.error(`No SQLite driver (${host}): ${err.message}`);
      return missingDriverError(err, { node: process.versions.node, remoteName: vscode.env.remoteName });
    }
  }
}

/**
 * The error to show when no driver loads. On a Node without node:sqlite (VS Code 1.100 and older, or an old remote
 * server) only a newer VS Code helps, so that is what it says; otherwise the store's own reasons stand.
 */
export function missingDriverError(
  err: SessionDatabaseError,
  host: { node: string; remoteName?: string | undefined },
): SessionDatabaseError {
  if (nodeAtLeast(NODE_SQLITE_MIN_NODE, host.node)) return err;
  const args = [MIN_VSCODE_WITH_NODE_SQLITE, host.node, NODE_SQLITE_MIN_NODE.replace(/\.0$/, ''), err.message];
  return new SessionDatabaseError(
    'driver-unavailable',
    host.remoteName
      ? vscode.l10n.t(
          'Agent Session Inspector needs VS Code {0} or later: this remote extension host runs extensions on Node.js {1}, which has no built-in SQLite (node:sqlite needs Node.js {2}). Update VS Code and its server on the remote. Details: {3}',
          ...args,
        )
      : vscode.l10n.t(
          'Agent Session Inspector needs VS Code {0} or later: this VS Code runs extensions on Node.js {1}, which has no built-in SQLite (node:sqlite needs Node.js {2}). Update VS Code. Details: {3}',
          ...args,
        ),
  );
}
