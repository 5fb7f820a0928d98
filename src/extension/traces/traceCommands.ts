/**
 * The trace commands: start and stop the OTLP receiver, import OTLP JSON files, clear a session's traces
 * (docs/traces.md). Arguments let tests skip the dialogs: a list of paths for the import, `true` to confirm a clear.
 */
import * as vscode from 'vscode';
import { arg } from '../core/commandArgs';
import { safeFileName } from '../core/fileNames';
import { command, type CommandsOf } from '../core/commandTable';
import { pickSession } from '../databases/pickers';
import type { Services } from '../services';
import { UserFacingError } from '../core/userError';
import { OtlpReceiverError } from '../../store/traces/otlpReceiver';
import { writeOutputFile } from '../../store/files/tempFile';
import { saveTarget } from '../core/filesInUse';
import { showInformationNotice, showWarningNotice } from '../core/notices';

async function startReceiver(s: Services, options: unknown): Promise<string> {
  // `{ port }` from a caller (a test asks for a free port with 0); the settings' port otherwise.
  const port = typeof (options as { port?: unknown } | undefined)?.port === 'number' ? (options as { port: number }).port : undefined;
  try {
    const url = await s.traces.startReceiver({ port });
    void showInformationNotice(
      vscode.l10n.t("Receiving OTLP traces at {0}. Point your agent's exporter there (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).", url),
    );
    return url;
  } catch (err) {
    if (err instanceof OtlpReceiverError) throw new UserFacingError(err.message);
    throw err;
  }
}

/** The session a command is for: a tree node (or anything with a session id), else the one the user picks. */
async function sessionOf(s: Services, node: unknown): Promise<{ sessionId: string } | undefined> {
  const id = node && typeof node === 'object' ? (node as { sessionId?: unknown }).sessionId : undefined;
  return typeof id === 'string' ? { sessionId: id } : await pickSession(s.registry);
}

async function importTraces(s: Services, given: unknown): Promise<number> {
  let paths = Array.isArray(given) && given.every((p) => typeof p === 'string') ? (given as string[]) : undefined;
  if (!paths) {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: true,
      title: vscode.l10n.t('Import OTLP Traces'),
      filters: { [vscode.l10n.t('OTLP JSON')]: ['json'] },
    });
    if (!picked) return 0;
    paths = picked.map((u) => u.fsPath);
  }
  const results = await s.traces.importFiles(paths);
  const spans = results.reduce((n, r) => n + r.spans, 0);
  const rejected = results.reduce((n, r) => n + r.rejected, 0);
  void showInformationNotice(
    rejected > 0
      ? vscode.l10n.t('Imported {0} spans; {1} were rejected: {2}', spans, rejected, results.flatMap((r) => r.reasons).join('; '))
      : vscode.l10n.t('Imported {0} spans.', spans),
  );
  return spans;
}

async function clearSessionTraces(s: Services, node: unknown, confirmed: boolean): Promise<number | undefined> {
  const target = await sessionOf(s, node);
  if (!target) return undefined;
  if (!confirmed) {
    const clear = vscode.l10n.t('Clear Traces');
    const answer = await showWarningNotice(
      vscode.l10n.t('Remove every trace recorded for session {0}? The session itself is not touched.', target.sessionId),
      { modal: true },
      clear,
    );
    if (answer !== clear) return undefined;
  }
  const removed = await s.traces.clearSession(target.sessionId);
  void showInformationNotice(vscode.l10n.t('Removed {0} spans of session {1}.', removed, target.sessionId));
  return removed;
}

/** A session's traces to an OTLP JSON file (any tracing backend takes it; *Import OTLP Traces…* too). */
async function exportSessionTraces(s: Services, node: unknown, options: unknown): Promise<string | undefined> {
  const target = await sessionOf(s, node);
  if (!target) return undefined;
  const { otlp, traces, spans } = await s.traces.exportSession(target.sessionId);
  if (traces === 0) throw new UserFacingError(vscode.l10n.t('Session {0} has no traces to export.', target.sessionId));
  const given = (options as { uri?: unknown } | undefined)?.uri;
  const uri =
    given instanceof vscode.Uri
      ? given
      : typeof given === 'string'
        ? vscode.Uri.file(given)
        : await vscode.window.showSaveDialog({
            title: vscode.l10n.t('Export Session Traces'),
            filters: { [vscode.l10n.t('OTLP JSON')]: ['json'] },
            defaultUri: vscode.Uri.file(`${safeFileName(target.sessionId)}.otlp.json`),
          });
  if (!uri) return undefined;
  // Through the store's writer: never onto the trace store or another file in use, never through a link.
  writeOutputFile(uri.fsPath, JSON.stringify(otlp), saveTarget(s, given === undefined));
  void showInformationNotice(vscode.l10n.t('Exported {0} spans of {1} traces to {2}.', spans, traces, uri.fsPath));
  return uri.fsPath;
}

export function traceCommands(
  s: Services,
): CommandsOf<'startTraceReceiver' | 'stopTraceReceiver' | 'importTraces' | 'clearSessionTraces' | 'exportSessionTraces'> {
  return {
    startTraceReceiver: command(vscode.l10n.t('Start OTLP Trace Receiver'), [arg.any], (options) => startReceiver(s, options)),
    stopTraceReceiver: command(vscode.l10n.t('Stop OTLP Trace Receiver'), [], () => s.traces.stopReceiver()),
    importTraces: command(vscode.l10n.t('Import OTLP Traces'), [arg.any], (paths) => importTraces(s, paths)),
    exportSessionTraces: command(vscode.l10n.t('Export Session Traces'), [arg.any, arg.any], (node, options) =>
      exportSessionTraces(s, node, options),
    ),
    clearSessionTraces: command(vscode.l10n.t('Clear Traces of Session'), [arg.any, arg.flag], (node, confirmed) =>
      clearSessionTraces(s, node, confirmed),
    ),
  };
}
