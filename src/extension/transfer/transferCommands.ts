/**
 * *Export Branch…*, *Export Session…* and *Import Conversation…*: the store's export (Markdown, JSON, JSONL) to a file
 * the user picks, and the import of a JSON/JSONL file into a new session of a writable database, with progress and
 * cancel. Arguments let tests (and other extensions) skip the dialogs: `{ uri, format }` for exports, `{ file, dbPath,
 * sessionId, createTables }` for imports.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import * as vscode from 'vscode';
import type { ReviewData } from '../../store/reviews/reviewTypes';
import {
  TransferError,
  checkImportFile,
  exportFromReader,
  parseJsonExport,
  type ExportFormat,
  type ExportSummary,
  type ImportResult,
} from '../../store';
import { WorkerSessionDatabase } from '../../store/worker/storeClient';
import { checkOutputPath } from '../../store/files/outputGuard';
import { writeOutputFile } from '../../store/files/tempFile';
import { saveTarget } from '../core/filesInUse';
import { safeFileName } from '../core/fileNames';
import { arg, badArgument } from '../core/commandArgs';
import type { Services } from '../services';
import { pickSession } from '../databases/pickers';
import { fileItem, importBranchItems } from '../databases/pickItems';
import { plainPromptText } from '../core/iconText';
import type { DatabaseRegistry } from '../databases/databaseRegistry';
import { command, type CommandsOf } from '../core/commandTable';
import { asNode } from '../core/treeNodes';
import { UserFacingError } from '../core/userError';
import { announce, fileActions } from '../core/outcomes';
import { showInformationNotice, showWarningNotice, withNoticeProgress } from '../core/notices';

/** The largest Markdown export opened in an editor once written (bigger ones are offered, not opened). */
const OPEN_EXPORT_MAX_BYTES = 5 * 1024 * 1024;

const FORMATS: { format: ExportFormat; ext: string; label: string; detail: () => string }[] = [
  { format: 'md', ext: 'md', label: 'Markdown', detail: () => vscode.l10n.t('A readable transcript: messages, tool calls and outputs') },
  {
    format: 'json',
    ext: 'json',
    label: 'JSON',
    detail: () => vscode.l10n.t('The rows exactly as stored; can be imported again without loss'),
  },
  {
    format: 'jsonl',
    ext: 'jsonl',
    label: 'JSONL',
    detail: () => vscode.l10n.t('One @openai/agents input item per line: a run input or an eval set'),
  },
];

interface ExportArgs {
  uri?: vscode.Uri | string;
  format?: ExportFormat;
}

interface ImportArgs {
  file?: vscode.Uri | string;
  dbPath?: string;
  sessionId?: string;
  createTables?: boolean;
  /** A branch's export: its branch imported as `main` (asked when not given). */
  asMain?: boolean;
}

const asPath = (v: vscode.Uri | string | undefined): string | undefined => (v instanceof vscode.Uri ? v.fsPath : v || undefined);

/** Runs `fn` under a cancellable notification; cancelling aborts the signal. */
function withProgress<T>(
  title: string,
  fn: (signal: AbortSignal, report: (done: number, total: number) => void) => Promise<T>,
): Thenable<T> {
  return withNoticeProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort());
    let last = 0;
    return fn(controller.signal, (done, total) => {
      if (total <= 0) return;
      const pct = Math.min(100, (done / total) * 100);
      if (pct - last >= 1) {
        progress.report({ increment: pct - last, message: vscode.l10n.t('{0} of {1} items', done, total) });
        last = pct;
      }
    });
  });
}

/**
 * *Export Branch…* / *Export Session…* (tree, palette, the conversation view's … menu): `nodeArg` is the session or
 * branch node (else the user picks one). Resolves with the written file, undefined when cancelled.
 */
export async function exportConversation(
  registry: DatabaseRegistry,
  scope: 'branch' | 'session',
  nodeArg: unknown,
  options: unknown,
  /** The session's review data, shown in a Markdown transcript and carried by a JSON export. */
  reviewData?: (dbPath: string, sessionId: string) => Promise<ReviewData>,
): Promise<string | undefined> {
  const title = scope === 'branch' ? vscode.l10n.t('Export Branch') : vscode.l10n.t('Export Session');
  const node =
    asNode(nodeArg, 'session', 'branch') ??
    (nodeArg === undefined || nodeArg === null ? undefined : badArgument(title, vscode.l10n.t('a session or branch')));
  const target = node ?? (await pickSession(registry));
  if (!target) return undefined;
  const { dbPath, sessionId } = target;
  const branchId =
    scope === 'session' ? null : node?.kind === 'branch' ? node.branchId : registry.currentBranch(target.dbPath, target.sessionId);
  const args = (typeof options === 'object' && options !== null ? options : {}) as ExportArgs;
  const entry = registry.require(dbPath);
  if (!entry.db) throw new UserFacingError(entry.problem ?? vscode.l10n.t('{0} is not open.', basename(dbPath)));
  const local = entry.db instanceof WorkerSessionDatabase;
  const choices = FORMATS.filter((f) => local || f.format !== 'json');
  let format = args.format;
  if (format === undefined) {
    const picked = await vscode.window.showQuickPick(
      choices.map((f) => ({ label: f.label, detail: f.detail(), f })),
      { title, placeHolder: vscode.l10n.t('Format') },
    );
    if (!picked) return undefined;
    format = picked.f.format;
  }
  const spec = FORMATS.find((f) => f.format === format);
  if (!spec) throw new UserFacingError(vscode.l10n.t('Unknown export format {0}: use md, json or jsonl.', String(format)));
  if (!local && format === 'json')
    throw new UserFacingError(vscode.l10n.t('JSON export reads the rows of a SQLite file; copy the session to a local file first.'));
  let out = asPath(args.uri);
  const fromDialog = !out;
  if (!out) {
    const name = `${safeFileName(sessionId)}${branchId !== null ? `-${safeFileName(branchId)}` : ''}.${spec.ext}`;
    const base = local ? dirname(dbPath) : (vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? dirname(dbPath));
    const uri = await vscode.window.showSaveDialog({
      title,
      defaultUri: vscode.Uri.file(join(base, name)),
      filters: { [spec.label]: [spec.ext] },
    });
    if (!uri) return undefined;
    out = uri.fsPath;
  }
  const outPath = out;
  // Checked here too, before the export starts: never onto a file in use, an existing file only when the dialog asked.
  const output = saveTarget({ registry }, fromDialog, ...(local ? [dbPath] : []));
  checkOutputPath(outPath, output);
  // Review data goes with what people read (Markdown) and what copies the session whole (JSON), not with a run's
  // input (JSONL). A review store that cannot be read leaves it out rather than failing the export.
  const reviews = format === 'jsonl' || !reviewData ? undefined : await reviewData(dbPath, sessionId).catch(() => undefined);
  const request = { sessionId, branchId, ...(reviews ? { reviews } : {}) };
  const summary: ExportSummary = await withProgress(vscode.l10n.t('Exporting {0}…', sessionId), async (signal, report) => {
    if (entry.db instanceof WorkerSessionDatabase) {
      // In the store worker: a large session's pages are read off the host's thread.
      return registry.store.exportSessionToFile(entry.db.path, outPath, format, request, { signal, onProgress: report }, output);
    }
    // A server store: Markdown or JSONL through its reader, written at the end (its pages arrive over the network).
    const chunks: string[] = [];
    const result = await exportFromReader(entry.db!, format as 'md' | 'jsonl', { ...request, signal, onProgress: report }, (c) => {
      chunks.push(c);
    });
    // Through the store's writer, not workspace.fs: a temporary file put in place, never through a link, never onto an input.
    writeOutputFile(outPath, chunks.join(''), output);
    return result;
  });
  announce(
    summary.skipped > 0
      ? vscode.l10n.t('Exported {0} items to {1} ({2} unreadable items left out).', summary.items, basename(outPath), summary.skipped)
      : vscode.l10n.t('Exported {0} items to {1}.', summary.items, basename(outPath)),
    fileActions(outPath),
  );
  // A Markdown export is for reading: open it beside what the user was looking at (unless it is too big to read).
  if (format === 'md' && statSync(outPath).size <= OPEN_EXPORT_MAX_BYTES)
    await vscode.window.showTextDocument(vscode.Uri.file(outPath), { preview: true, viewColumn: vscode.ViewColumn.Beside });
  return outPath;
}

async function importCommand(deps: Services, arg: unknown, options: unknown): Promise<ImportResult | undefined> {
  const { registry, treeView } = deps;
  const title = vscode.l10n.t('Import Conversation');
  const node = asNode(arg, 'database') ?? (arg === undefined || arg === null ? undefined : badArgument(title, vscode.l10n.t('a database')));
  const args = (typeof options === 'object' && options !== null ? options : {}) as ImportArgs;

  let file = asPath(args.file);
  if (!file) {
    const picked = await vscode.window.showOpenDialog({
      title,
      canSelectMany: false,
      filters: { [vscode.l10n.t('Session exports')]: ['json', 'jsonl', 'ndjson'], [vscode.l10n.t('All files')]: ['*'] },
    });
    file = picked?.[0]?.fsPath;
    if (!file) return undefined;
  }
  // The file is checked now, so a wrong one (a Markdown export, not JSON at all) fails before any question is asked; a
  // JSON export is read whole, and offers its session id.
  const format = checkImportFile(file);
  const doc = format === 'json' ? parseJsonExport(readFileSync(file, 'utf8')) : undefined;

  let dbPath = args.dbPath ?? node?.dbPath;
  let newFile = false;
  if (!dbPath) {
    const writable = registry.list().filter((e) => !e.remote && !e.readonly && e.db instanceof WorkerSessionDatabase);
    const NEW = vscode.l10n.t('New Database File…');
    const picked = await vscode.window.showQuickPick(
      [
        ...writable.map((e) => ({ ...fileItem(e.path), path: e.path as string | undefined })),
        { label: `$(new-file) ${NEW}`, description: '', path: undefined },
      ],
      { title, placeHolder: vscode.l10n.t('Import into which database? (only writable databases are listed)') },
    );
    if (!picked) return undefined;
    dbPath = picked.path;
    if (!dbPath) {
      const uri = await vscode.window.showSaveDialog({
        title,
        defaultUri: vscode.Uri.file(join(dirname(file), `${basename(file, extname(file))}.db`)),
        filters: { [vscode.l10n.t('Session databases')]: ['db', 'sqlite', 'sqlite3'] },
      });
      if (!uri) return undefined;
      dbPath = uri.fsPath;
      newFile = true;
    }
  } else {
    const entry = registry.get(dbPath);
    if (entry && (entry.remote || entry.readonly)) {
      throw new UserFacingError(
        vscode.l10n.t('{0} is read-only: turn writing on for it first, or import into another database.', basename(dbPath)),
      );
    }
  }
  const target = dbPath;

  const taken = new Set<string>();
  const entry = registry.get(target);
  if (entry?.db) for (const s of await entry.db.listSessions()) taken.add(s.sessionId);
  let sessionId = args.sessionId;
  if (sessionId === undefined) {
    const offered = doc?.session?.session_id ?? basename(file, extname(file));
    sessionId = await vscode.window.showInputBox({
      title,
      prompt: plainPromptText(vscode.l10n.t('The new session id in {0}', basename(target))),
      value: taken.has(offered) ? `${offered}-imported` : offered,
      validateInput: (v) =>
        v.trim() === ''
          ? vscode.l10n.t('Give the session an id.')
          : taken.has(v)
            ? plainPromptText(vscode.l10n.t('{0} already has a session {1}.', basename(target), v))
            : undefined,
    });
    if (sessionId === undefined) return undefined;
  }
  if (taken.has(sessionId)) throw new UserFacingError(vscode.l10n.t('{0} already has a session {1}.', basename(target), sessionId));

  // A branch's export keeps its name, and a session without `main` looks empty to an agent that opens it (it starts on
  // main): which the user wants is asked, naming both.
  let asMain = args.asMain;
  const branch = doc?.scope === 'branch' && doc.structured && doc.branch !== null && doc.branch !== 'main' ? doc.branch : null;
  if (branch !== null && asMain === undefined) {
    const picked = await vscode.window.showQuickPick(importBranchItems(branch), {
      title,
      placeHolder: vscode.l10n.t('The file holds one branch of a session'),
    });
    if (!picked) return undefined;
    asMain = picked.asMain;
  }
  let createTables = args.createTables ?? (newFile ? undefined : false);
  if (createTables === undefined) {
    const yes = vscode.l10n.t('Create Tables');
    const answer = await showInformationNotice(
      vscode.l10n.t('Create the session tables in {0}?', basename(target)),
      { modal: true, detail: vscode.l10n.t('The file gets the tables the Agents SDK sessions use (Python and JavaScript).') },
      yes,
    );
    if (answer !== yes) return undefined;
    createTables = true;
  }
  const run = (create: boolean) =>
    withProgress(vscode.l10n.t('Importing {0}…', basename(file)), (signal, report) =>
      // In the store worker: the whole import is one write transaction, which must not run on the host's thread.
      registry.store.importSessionFile(
        target,
        file,
        { sessionId, createTables: create, ...(branch !== null && asMain ? { asMain: true } : {}) },
        { signal, onProgress: report },
      ),
    );
  let result: ImportResult;
  try {
    result = await run(createTables);
  } catch (err) {
    // An open database may lack the branch tables (a plain SQLiteSession file): ask, then try again.
    if (!(err instanceof TransferError && err.problem === 'missing-tables') || args.createTables === false || createTables) throw err;
    const yes = vscode.l10n.t('Create Tables');
    const answer = await showWarningNotice(err.message, { modal: true }, yes);
    if (answer !== yes) return undefined;
    result = await run(true);
  }
  // An open database notices the write through its watcher; a new file is opened.
  if (!registry.get(target)) await registry.open(target);
  deps.tree.refresh();
  try {
    await treeView.reveal({ kind: 'session', dbPath: target, sessionId: result.sessionId }, { select: true, focus: false, expand: true });
  } catch {
    /* the view is not visible */
  }
  announce(vscode.l10n.t('Imported {0} items into session {1} of {2}.', result.items, result.sessionId, basename(target)));
  return result;
}

/** A session's review data from its review store (per `agentSessions.reviews.location`). */
export function reviewDataOf(s: Pick<Services, 'reviews'>): (dbPath: string, sessionId: string) => Promise<ReviewData> {
  return async (dbPath, sessionId) => (await s.reviews.storeFor(dbPath)).call('exportData', sessionId);
}

export function transferCommands(s: Services): CommandsOf<'exportBranch' | 'exportSession' | 'importConversation'> {
  return {
    exportBranch: command(vscode.l10n.t('Export Branch'), [arg.any, arg.any], (node, options) =>
      exportConversation(s.registry, 'branch', node, options, reviewDataOf(s)),
    ),
    exportSession: command(vscode.l10n.t('Export Session'), [arg.any, arg.any], (node, options) =>
      exportConversation(s.registry, 'session', node, options, reviewDataOf(s)),
    ),
    importConversation: command(vscode.l10n.t('Import Conversation'), [arg.any, arg.any], (file, options) =>
      importCommand(s, file, options),
    ),
  };
}
