/**
 * *Check Session Store…* (a file from the Sessions view, the Explorer or the palette; a server store or a session from
 * the Sessions view) and *Repair Finding…* (each repairable finding's Quick Fix): the doctor of docs/doctor.md in VS
 * Code. A file's check and repair run in the store worker; a server store's check is network I/O, awaited on the
 * host, and read-only. A repair says what will change and where the backup goes, and asks first; it is refused, with
 * why, on a server store, a file open read-only or that cannot be written, and a file that failed integrity_check; a
 * file another process keeps locked is waited for (with Cancel), then reported.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { SessionDatabaseError } from '../../store/errors';
import { canWrite } from '../../store/sqlite/sessionConnection';
import { defaultBackupPath } from '../../store/doctor/backupName';
import { StoreRequestCancelledError } from '../../store/worker/storeClient';
import { arg, badArgument } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import { announce, type OutcomeAction } from '../core/outcomes';
import { asNode } from '../core/treeNodes';
import { UserFacingError } from '../core/userError';
import { LockWaitNotice, VISIBLE_LOCK_WAIT_MS } from '../databases/lockWaitNotice';
import { fileItem } from '../databases/pickItems';
import type { Services } from '../services';
import { checkFile, checkServer } from './doctorCheck';
import { isRepairable, kindInfo, placeOf, rowLines, targetOf } from './doctorModel';
import { DoctorResults, type CheckedFile, type FindingRef } from './doctorResults';
import { doctorUri } from './doctorUris';
import { showWarningNotice, withNoticeProgress } from '../core/notices';

/** What a check answers (the in-host tests read it): the findings' count in all, and the document shown. */
export interface CheckOutcome {
  findings: number;
  document: string;
}

/** What a repair answers (the in-host tests read it); undefined when the user said no. */
export interface RepairResult {
  backup: string | null;
  left: number;
}

export function doctorCommands(s: Services): CommandsOf<'checkSessionStore' | 'repairFinding'> {
  const results = new DoctorResults();
  s.context.subscriptions.push(results);
  /** The scope each file was last checked with, so a repair's re-check shows what the check showed. */
  const scopes = new Map<string, string | null>();

  const check = async (dbPath: string, sessionId: string | null): Promise<CheckedFile> => {
    const remote = !!s.registry.get(dbPath)?.remote;
    const title = sessionId === null ? basename(dbPath) : `${sessionId} (${basename(dbPath)})`;
    const file = await withNoticeProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Checking {0}…', title), cancellable: true },
      (_p, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        return remote ? checkServer(s.registry, dbPath, sessionId) : checkFile(s.registry, dbPath, sessionId, controller.signal);
      },
    );
    scopes.set(dbPath, sessionId);
    results.show(file);
    return file;
  };

  return {
    checkSessionStore: command(vscode.l10n.t('Check Session Store…'), [arg.any], async (value): Promise<CheckOutcome | undefined> => {
      const target = await targetOfValue(s, value);
      if (!target) return undefined;
      const file = await check(target.dbPath, target.sessionId);
      const total = [...file.counts.values()].reduce((a, b) => a + b, 0);
      const shown =
        file.documents.find((d) => d.ref.sessionId === target.sessionId && (target.sessionId !== null || d.findings.length > 0)) ??
        file.documents.find((d) => d.findings.length > 0) ??
        file.documents[0]!;
      const uri = doctorUri(shown.ref);
      const name = target.sessionId === null ? basename(target.dbPath) : vscode.l10n.t('session {0}', target.sessionId);
      if (total === 0) {
        announce(vscode.l10n.t('No findings in {0}.', name));
        return { findings: 0, document: uri.toString() };
      }
      await vscode.window.showTextDocument(uri, { preview: true });
      const problems: OutcomeAction = {
        title: vscode.l10n.t('Show Problems'),
        run: () => vscode.commands.executeCommand('workbench.actions.view.problems'),
      };
      announce(
        total === 1
          ? vscode.l10n.t('1 finding in {0}: see the Problems panel (a Quick Fix repairs what can be repaired).', name)
          : vscode.l10n.t('{0} findings in {1}: see the Problems panel (a Quick Fix repairs what can be repaired).', total, name),
        [problems],
      );
      return { findings: total, document: uri.toString() };
    }),

    repairFinding: command(
      vscode.l10n.t('Repair Finding…'),
      [arg.any, arg.flag],
      async (value, confirmed): Promise<RepairResult | undefined> => {
        const ref = findingRefOf(value) ?? badArgument(vscode.l10n.t('Repair Finding…'), vscode.l10n.t('a finding of the doctor'));
        const found = results.finding(ref);
        if (!found)
          throw new UserFacingError(vscode.l10n.t('This finding is not in the last check any more. Run "Check Session Store…" again.'));
        const { file, finding } = found;
        const { dbPath } = file;
        const name = basename(dbPath);
        const info = kindInfo(finding.kind);
        if (file.remote)
          throw new UserFacingError(
            vscode.l10n.t('{0} is a server store: its report is read-only, and the doctor repairs nothing there.', dbPath),
          );
        if (!file.integrityOk)
          throw new UserFacingError(
            vscode.l10n.t('{0} failed integrity_check: the doctor repairs nothing in a damaged file. Restore a backup.', name),
          );
        if (info.repair === null || !isRepairable(finding, true))
          throw new UserFacingError(vscode.l10n.t('{0} is reported only: the doctor has no repair for it.', finding.kind));
        if (s.registry.get(dbPath)?.readonly)
          throw new UserFacingError(vscode.l10n.t('{0} is open read-only. Use "Toggle Read-Only" on the database to allow repairs.', name));
        if (!canWrite(dbPath))
          throw new UserFacingError(vscode.l10n.t('{0} cannot be written (a read-only file): the doctor only reports on it.', name));

        const backup = defaultBackupPath(dbPath);
        if (!confirmed) {
          const detail = [
            `${finding.kind}: ${info.title}`,
            placeOf(finding),
            finding.detail,
            '',
            vscode.l10n.t('What changes: {0}', info.repair),
            ...rowLines(finding),
            '',
            vscode.l10n.t('First a backup of the whole file (SQLite VACUUM INTO): {0}', backup),
            vscode.l10n.t('Then the repair in one transaction, and the file is checked again.'),
          ]
            .filter((l, i, all) => l !== '' || all[i - 1] !== '')
            .join('\n');
          const repair = vscode.l10n.t('Repair');
          const answer = await showWarningNotice(vscode.l10n.t('Repair {0} in {1}?', finding.kind, name), { modal: true, detail }, repair);
          if (answer !== repair) return undefined;
        }

        const notice = new LockWaitNotice(name);
        let outcome;
        try {
          outcome = await withNoticeProgress(
            { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Repairing {0}…', name) },
            () =>
              s.registry.store.repairSessionFile(
                dbPath,
                { backup, target: targetOf(finding) },
                { signal: notice.signal, onWaiting: notice.onWaiting, lockWaitMs: VISIBLE_LOCK_WAIT_MS },
              ),
          );
        } catch (err) {
          if (err instanceof StoreRequestCancelledError && notice.cancelled)
            throw new UserFacingError(vscode.l10n.t('Cancelled while {0} was locked by another process: nothing was written.', name));
          if (err instanceof SessionDatabaseError && err.problem === 'read-only')
            throw new UserFacingError(vscode.l10n.t('{0} cannot be written (a read-only file): the doctor only reports on it.', name));
          if (err instanceof SessionDatabaseError && err.problem === 'locked')
            throw new UserFacingError(
              vscode.l10n.t('{0} stayed locked by another process, so nothing was repaired: {1}', name, err.message),
            );
          throw err;
        } finally {
          notice.dispose();
        }
        if (s.registry.get(dbPath)) await s.registry.checkNow(dbPath);
        // Checked again as the user last saw it (the file or the session), so the Problems panel shows what is left.
        const again = await check(dbPath, scopes.get(dbPath) ?? finding.session ?? null);
        const left = [...again.counts.values()].reduce((a, b) => a + b, 0);
        const copy: OutcomeAction = {
          title: vscode.l10n.t('Copy Backup Path'),
          run: () => vscode.env.clipboard.writeText(outcome.backup ?? ''),
        };
        if (outcome.backup === null) {
          announce(
            vscode.l10n.t('Nothing was repaired: {0} changed since the check and this finding is gone. It was checked again.', name),
          );
        } else {
          announce(
            left === 0
              ? vscode.l10n.t('Repaired {0} in {1}; no findings left. Backup: {2}', finding.kind, name, outcome.backup)
              : vscode.l10n.t('Repaired {0} in {1}; {2} finding(s) left. Backup: {3}', finding.kind, name, left, outcome.backup),
            [copy],
          );
        }
        return { backup: outcome.backup, left };
      },
    ),
  };
}

function findingRefOf(value: unknown): FindingRef | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { uri, index } = value as { uri?: unknown; index?: unknown };
  return typeof uri === 'string' && typeof index === 'number' && Number.isInteger(index) && index >= 0 ? { uri, index } : undefined;
}

/** The file (and session) a check is run on: a tree node, an Explorer file, a path, or one the user picks. */
async function targetOfValue(s: Services, value: unknown): Promise<{ dbPath: string; sessionId: string | null } | undefined> {
  const title = vscode.l10n.t('Check Session Store…');
  if (value instanceof vscode.Uri) return { dbPath: value.fsPath, sessionId: null };
  if (typeof value === 'string' && value) return { dbPath: value, sessionId: null };
  if (value !== undefined && value !== null) {
    const node = asNode(value, 'database', 'session') ?? badArgument(title, vscode.l10n.t('a session file or a session'));
    return { dbPath: node.dbPath, sessionId: node.kind === 'session' ? node.sessionId : null };
  }
  const files = s.registry.list();
  if (files.length === 1) return { dbPath: files[0]!.path, sessionId: null };
  if (files.length > 1) {
    const pick = await vscode.window.showQuickPick(
      files.map((e) => ({ ...fileItem(e.path), path: e.path })),
      { title },
    );
    return pick && { dbPath: pick.path, sessionId: null };
  }
  const picked = await vscode.window.showOpenDialog({
    title,
    canSelectMany: false,
    filters: { [vscode.l10n.t('Session databases')]: ['db', 'sqlite', 'sqlite3'], [vscode.l10n.t('All files')]: ['*'] },
  });
  return picked?.[0] && { dbPath: picked[0].fsPath, sessionId: null };
}
