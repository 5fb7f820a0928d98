/**
 * Commands for server-backed stores (PostgreSQL, Redis): open one by address, filter its sessions, copy a session
 * to a local file, and the write toggle and deletion, both confirmed, since these stores hold production data.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CopyCancelledError, RemoteSessionSource, copyRemoteSessionToFile, redactUrl, remoteKindOf } from '../../store';
import { command, type CommandsOf } from '../core/commandTable';
import { safeFileName } from '../core/fileNames';
import type { Services } from '../services';
import { openDatabase } from './databaseCommands';
import { splitPassword } from './remoteAddress';
import { UserFacingError } from '../core/userError';
import { saveTarget } from '../core/filesInUse';
import type { DatabaseRegistry } from './databaseRegistry';
import { arg, argOrInput, badArgument } from '../core/commandArgs';
import { showInformationNotice, showWarningNotice, withNoticeProgress } from '../core/notices';

function remoteSource(registry: DatabaseRegistry, dbPath: string, command: string): RemoteSessionSource {
  const entry = registry.require(dbPath);
  if (!entry.remote) badArgument(command, vscode.l10n.t('a PostgreSQL or Redis store'));
  if (!(entry.db instanceof RemoteSessionSource))
    throw new UserFacingError(entry.problem ?? vscode.l10n.t('{0} cannot be reached.', dbPath));
  return entry.db;
}

/** A file name from a session id: path separators and other unsafe characters become `_`. */
export function localFileName(sessionId: string): string {
  return `${safeFileName(sessionId)}.db`;
}

export function remoteCommands(s: Services): CommandsOf<'openStore' | 'filterSessions' | 'copySessionToLocal' | 'deleteRemoteSession'> {
  const { registry, treeView } = s;
  const aStore = () => vscode.l10n.t('a PostgreSQL or Redis store');
  const aStoreSession = () => vscode.l10n.t('a session of a PostgreSQL or Redis store');
  return {
    openStore: command(vscode.l10n.t('Open Session Store'), [arg.any, arg.any], async (urlArg, passwordArg) => {
      let input = typeof urlArg === 'string' ? urlArg : undefined;
      if (input === undefined) {
        input = await vscode.window.showInputBox({
          title: vscode.l10n.t('Open Session Store'),
          prompt: vscode.l10n.t(
            'A PostgreSQL or Redis address (postgres://user@host:5432/db, redis://host:6379/0), or leave empty to pick a SQLite file.',
          ),
          placeHolder: 'postgres://user@host:5432/agents',
          ignoreFocusOut: true,
          validateInput: (v) =>
            v.trim() === '' || remoteKindOf(v) ? undefined : vscode.l10n.t('Expected postgres://, postgresql://, redis:// or rediss://'),
        });
        if (input === undefined) return undefined;
      }
      if (input.trim() === '') return openDatabase(s, undefined);
      if (!remoteKindOf(input)) {
        if (existsSync(input)) return openDatabase(s, input);
        throw new UserFacingError(vscode.l10n.t('Not a PostgreSQL or Redis address, nor a file: {0}', redactUrl(input)));
      }
      const { address, password: inUrl } = splitPassword(input);
      let password = typeof passwordArg === 'string' ? passwordArg : inUrl;
      if (password === undefined && typeof urlArg !== 'string') {
        password = await vscode.window.showInputBox({
          title: vscode.l10n.t('Password for {0}', address),
          prompt: vscode.l10n.t('Kept in VS Code secret storage, never in settings or logs. Leave empty if the server needs none.'),
          password: true,
          ignoreFocusOut: true,
        });
        if (password === undefined) return undefined;
        if (password === '') password = undefined;
      }
      const entry = await registry.openRemote(address, { password });
      try {
        await treeView.reveal({ kind: 'database', dbPath: entry.path }, { select: true, expand: true });
      } catch {
        /* the view is not visible */
      }
      return entry.path;
    }),

    filterSessions: command(vscode.l10n.t('Filter Sessions'), [arg.node(aStore, 'database'), arg.text], async (node, prefixArg) => {
      remoteSource(registry, node.dbPath, vscode.l10n.t('Filter Sessions'));
      const prefix = await argOrInput(prefixArg, {
        title: vscode.l10n.t('Filter Sessions'),
        prompt: vscode.l10n.t('Show sessions whose id starts with… (empty shows all)'),
        value: registry.sessionFilter(node.dbPath) ?? '',
      });
      if (prefix === undefined) return undefined;
      registry.setSessionFilter(node.dbPath, prefix.trim() || undefined);
      return prefix.trim();
    }),

    copySessionToLocal: command(
      vscode.l10n.t('Copy Session to Local File'),
      [arg.node(aStoreSession, 'session'), arg.text],
      async (node, targetArg) => {
        const source = remoteSource(registry, node.dbPath, vscode.l10n.t('Copy Session to Local File'));
        let target = targetArg;
        if (!target) {
          const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
          const picked = await vscode.window.showSaveDialog({
            title: vscode.l10n.t('Copy {0} to a local session file', node.sessionId),
            defaultUri: folder
              ? vscode.Uri.joinPath(folder, localFileName(node.sessionId))
              : vscode.Uri.file(join(process.cwd(), localFileName(node.sessionId))),
            filters: { [vscode.l10n.t('Session databases')]: ['db'] },
          });
          if (!picked) return undefined;
          target = picked.fsPath;
        }
        if (existsSync(target))
          throw new UserFacingError(vscode.l10n.t('{0} already exists. Choose a new file: the copy never overwrites.', target));
        const result = await withNoticeProgress(
          { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Copying {0}', node.sessionId), cancellable: true },
          async (progress, token) => {
            let reported = 0;
            try {
              return await copyRemoteSessionToFile(source.browser, node.sessionId, target, {
                // The copy never overwrites (checked above); nor may it land on a file the extension has open.
                ...saveTarget(s, false),
                isCancelled: () => token.isCancellationRequested,
                openTarget: (o) => s.registry.store.openSession(o),
                onProgress: (done, total) => {
                  const pct = total > 0 ? (done / total) * 100 : 100;
                  progress.report({ increment: pct - reported, message: vscode.l10n.t('{0} of {1} items', done, total) });
                  reported = pct;
                },
              });
            } catch (err) {
              if (err instanceof CopyCancelledError) throw new UserFacingError(err.message);
              throw err;
            }
          },
        );
        const entry = await registry.open(target, { readonlyChoice: false });
        registry.setCurrentBranch(entry.path, node.sessionId, 'main');
        try {
          await treeView.reveal({ kind: 'session', dbPath: entry.path, sessionId: node.sessionId }, { select: true, expand: true });
        } catch {
          /* the view is not visible */
        }
        const skipped = result.skipped.length ? ` ${vscode.l10n.t('{0} unreadable row(s) were skipped.', result.skipped.length)}` : '';
        void showInformationNotice(
          vscode.l10n.t('Copied {0} items of {1} to {2}. Branch, re-run and compare there.', result.copied, node.sessionId, target) +
            skipped,
        );
        return { path: target, ...result };
      },
    ),

    deleteRemoteSession: command(
      vscode.l10n.t('Delete Session'),
      [arg.node(aStoreSession, 'session'), arg.flag],
      async (node, confirmed) => {
        const source = remoteSource(registry, node.dbPath, vscode.l10n.t('Delete Session'));
        const entry = registry.require(node.dbPath);
        if (entry.readonly)
          throw new UserFacingError(
            vscode.l10n.t('{0} is open read-only. Turn writing on for this store first ("Toggle Read-Only").', node.dbPath),
          );
        if (!confirmed) {
          const deleteLabel = vscode.l10n.t('Delete');
          const answer = await showWarningNotice(
            vscode.l10n.t('Delete session {0} from {1}?', node.sessionId, source.label),
            { modal: true, detail: vscode.l10n.t('Every item of the session is deleted from the server. This cannot be undone.') },
            deleteLabel,
          );
          if (answer !== deleteLabel) return false;
        }
        await registry.batch(() => registry.withRemoteSession(node.dbPath, node.sessionId, (s) => s.clearSession()));
        return true;
      },
    ),
  };
}
