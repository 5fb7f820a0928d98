/**
 * *Export Dataset from Reviews…* (docs/datasets.md): a session's reviews as a fine-tuning or evaluation file. The
 * records are built and checked in the store worker into a temporary file first, so the user sees how many there are,
 * what was skipped and the first record before choosing where to save; nothing is written where they did not say.
 * Arguments let tests skip the dialogs: `{ format, csv, redact, uri, confirm }`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as vscode from 'vscode';
import type { DatasetFormat } from '../../store/datasets/datasetChecks';
import type { DatasetFileResult } from '../../store/datasets/datasetExport';
import { DEFAULT_REDACTIONS } from '../../store/datasets/datasetRecords';
import { copyToOutputFile } from '../../store/files/tempFile';
import { saveTarget } from '../core/filesInUse';
import { visibleText } from '../../shared/unicodeText';
import { plainIconText } from '../core/iconText';
import { safeFileName } from '../core/fileNames';
import { arg } from '../core/commandArgs';
import { command, type CommandsOf } from '../core/commandTable';
import { pickSession } from '../databases/pickers';
import type { Services } from '../services';
import { UserFacingError } from '../core/userError';
import { showInformationNotice, showWarningNotice, withNoticeProgress } from '../core/notices';

interface ExportArgs {
  format?: DatasetFormat;
  /** The filters (and context bound); asked for when `format` is not given either. */
  filters?: DatasetFilterChoice;
  csv?: boolean;
  redact?: boolean;
  uri?: vscode.Uri | string;
  /** Skip the confirmation (tests). */
  confirm?: boolean;
}

const FORMAT_CHOICES = (): { label: string; detail: string; format: DatasetFormat; csv: boolean }[] => [
  {
    label: vscode.l10n.t('Supervised fine-tuning (OpenAI chat JSONL)'),
    detail: vscode.l10n.t('Good turns with their context, and corrections in place of the answer'),
    format: 'sft',
    csv: false,
  },
  {
    label: vscode.l10n.t('Preference fine-tuning (OpenAI JSONL)'),
    detail: vscode.l10n.t('Pairwise verdicts and corrections: the better answer against the worse'),
    format: 'preference',
    csv: false,
  },
  {
    label: vscode.l10n.t('Evaluation set (JSONL)'),
    detail: vscode.l10n.t('Inputs with reference answers and tags'),
    format: 'eval',
    csv: false,
  },
  { label: vscode.l10n.t('Evaluation set (CSV)'), detail: vscode.l10n.t('The same, one row per input'), format: 'eval', csv: true },
];

/** What the filter step chose: the store's `DatasetFilters` for one session, and the context bound. */
export interface DatasetFilterChoice {
  verdict?: 'good' | 'bad';
  tags?: string[];
  branchId?: string;
  sinceMs?: number;
  contextTurns?: number;
  model?: string;
}

type FilterItem = vscode.QuickPickItem & { apply?: (f: DatasetFilterChoice) => void };

const DAY_MS = 86_400_000;

/**
 * One multi-select step for every filter (a verdict, tags, a branch, a time, the context): nothing picked exports every
 * review of the session, as before. Two picks of one kind that exclude each other (good and bad, two branches) are
 * refused with the reason rather than silently narrowed to one.
 */
async function pickFilters(s: Services, target: { dbPath: string; sessionId: string }): Promise<DatasetFilterChoice | undefined> {
  const store = await s.reviews.storeFor(target.dbPath);
  const [tags, branches, pairwise] = await Promise.all([
    store.call('tagsInUse').catch(() => []),
    s.registry.require(target.dbPath).db?.getBranchTree(target.sessionId) ?? Promise.resolve([]),
    store.call('pairwiseReviews', target.sessionId).catch(() => []),
  ]);
  const models = [...new Set(pairwise.flatMap((p) => [p.leftModel, p.rightModel]).filter((m): m is string => !!m))].sort();
  const sep = (label: string): FilterItem => ({ label, kind: vscode.QuickPickItemKind.Separator });
  const items: FilterItem[] = [
    sep(vscode.l10n.t('Verdict')),
    { label: vscode.l10n.t('Good turns only'), apply: (f) => (f.verdict = f.verdict === 'bad' ? conflict() : 'good') },
    { label: vscode.l10n.t('Bad turns only'), apply: (f) => (f.verdict = f.verdict === 'good' ? conflict() : 'bad') },
    ...(tags.length > 0 ? [sep(vscode.l10n.t('Tags (any of)'))] : []),
    ...tags.map((t): FilterItem => ({
      label: plainIconText(`#${t.tag}`),
      description: String(t.count),
      apply: (f) => (f.tags = [...(f.tags ?? []), t.tag]),
    })),
    ...(branches.length > 1 ? [sep(vscode.l10n.t('Branch'))] : []),
    ...(branches.length > 1 ? branches : []).map((b): FilterItem => ({
      label: plainIconText(visibleText(b.branchId)),
      description: vscode.l10n.t('branch'),
      apply: (f) => (f.branchId = f.branchId !== undefined ? conflict() : b.branchId),
    })),
    ...(models.length > 0 ? [sep(vscode.l10n.t('Model (pairwise verdicts only)'))] : []),
    ...models.map((m): FilterItem => ({
      label: plainIconText(m),
      description: vscode.l10n.t('model'),
      apply: (f) => (f.model = f.model !== undefined ? conflict() : m),
    })),
    sep(vscode.l10n.t('Reviewed')),
    ...[1, 7, 30].map((days): FilterItem => ({
      label: days === 1 ? vscode.l10n.t('In the last day') : vscode.l10n.t('In the last {0} days', days),
      apply: (f) => (f.sinceMs = Math.max(f.sinceMs ?? 0, Date.now() - days * DAY_MS)),
    })),
    sep(vscode.l10n.t('Context')),
    ...[0, 3, 10].map((n): FilterItem => ({
      label: n === 0 ? vscode.l10n.t('No earlier turns as context') : vscode.l10n.t('Only the {0} turns before as context', n),
      detail: n === 0 ? undefined : vscode.l10n.t('Default: every earlier turn'),
      apply: (f) => (f.contextTurns = Math.min(f.contextTurns ?? n, n)),
    })),
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Dataset filters (none: every review of the session)'),
    canPickMany: true,
  });
  if (!picked) return undefined;
  const chosen: DatasetFilterChoice = {};
  for (const item of picked) item.apply?.(chosen);
  return chosen;
}

function conflict(): never {
  throw new UserFacingError(vscode.l10n.t('Pick at most one verdict, one branch and one model: a record cannot match two.'));
}

/** The report in the log, where *Show Report* opens it. */
function logReport(s: Services, sessionId: string, result: DatasetFileResult): void {
  s.log.info(`Dataset from session ${sessionId}: ${result.records} records, ${result.skipped.length} skipped.`);
  for (const k of result.skipped) s.log.info(`  skipped ${k.where}: ${k.reason}`);
  for (const [what, n] of Object.entries(result.leftOut)) s.log.info(`  left out of messages: ${what} ×${n}`);
}

async function exportDatasetCommand(s: Services, node: unknown, given: unknown): Promise<string | undefined> {
  const a = (given ?? {}) as ExportArgs;
  const fromNode = node && typeof node === 'object' ? (node as { dbPath?: unknown; sessionId?: unknown }) : undefined;
  const target =
    typeof fromNode?.dbPath === 'string' && typeof fromNode.sessionId === 'string'
      ? { dbPath: fromNode.dbPath, sessionId: fromNode.sessionId }
      : await pickSession(s.registry);
  if (!target) return undefined;
  const entry = s.registry.require(target.dbPath);
  if (entry.remote)
    throw new UserFacingError(
      vscode.l10n.t(
        'Datasets are exported here from session files. For a server store, use: agent-sessions dataset <format> <address> --store <reviews.db>',
      ),
    );
  let choice = a.format ? { format: a.format, csv: a.csv === true } : undefined;
  if (!choice) {
    const picked = await vscode.window.showQuickPick(FORMAT_CHOICES(), { title: vscode.l10n.t('Dataset format') });
    if (!picked) return undefined;
    choice = picked;
  }
  const filters = a.format !== undefined ? (a.filters ?? {}) : await pickFilters(s, target);
  if (!filters) return undefined;
  let redact = a.redact;
  if (redact === undefined) {
    const yes = vscode.l10n.t('Hide API keys and e-mail addresses');
    const no = vscode.l10n.t('Keep the text as it is');
    const picked = await vscode.window.showQuickPick([yes, no], { title: vscode.l10n.t('Redaction') });
    if (!picked) return undefined;
    redact = picked === yes;
  }
  const reviewsPath = s.reviews.pathFor(target.dbPath, false);
  const dir = mkdtempSync(join(tmpdir(), 'asi-dataset-'));
  const ext = choice.csv ? 'csv' : 'jsonl';
  const temp = join(dir, `dataset.${ext}`);
  try {
    const result = await withNoticeProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Building the dataset…'), cancellable: true },
      async (_progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return s.registry.store.exportDatasetToFile(
          target.dbPath,
          reviewsPath,
          temp,
          {
            format: choice.format,
            encoding: choice.csv ? 'csv' : 'jsonl',
            sessionId: target.sessionId,
            ...filters,
            ...(redact ? { redact: [...DEFAULT_REDACTIONS] } : {}),
            previewCount: 1,
          },
          abort.signal,
        );
      },
    );
    logReport(s, target.sessionId, result);
    if (result.records === 0) {
      const show = vscode.l10n.t('Show Report');
      void showWarningNotice(
        vscode.l10n.t(
          'Nothing to export from session {0}: no review gives a record of this format ({1} skipped).',
          target.sessionId,
          result.skipped.length,
        ),
        show,
      ).then((b) => b === show && s.log.show());
      return undefined;
    }
    if (a.confirm !== true) {
      const save = vscode.l10n.t('Save…');
      const first = JSON.stringify(result.preview[0] ?? {});
      const answer = await showInformationNotice(
        vscode.l10n.t('{0} records from session {1}; {2} skipped (see the log).', result.records, target.sessionId, result.skipped.length),
        { modal: true, detail: vscode.l10n.t('First record: {0}', first.length > 600 ? `${first.slice(0, 600)}…` : first) },
        save,
      );
      if (answer !== save) return undefined;
    }
    const fromDialog = a.uri === undefined;
    const uri =
      a.uri instanceof vscode.Uri
        ? a.uri
        : typeof a.uri === 'string'
          ? vscode.Uri.file(a.uri)
          : await vscode.window.showSaveDialog({
              title: vscode.l10n.t('Save Dataset'),
              defaultUri: vscode.Uri.file(join(target.dbPath, '..', `${safeFileName(target.sessionId)}-${choice.format}.${ext}`)),
              filters: { [choice.csv ? 'CSV' : 'JSONL']: [ext] },
            });
    if (!uri) return undefined;
    // Never onto the session file, its review store or another file in use, even when the dialog confirmed replacing it.
    copyToOutputFile(temp, uri.fsPath, saveTarget(s, fromDialog, target.dbPath, reviewsPath));
    void showInformationNotice(
      vscode.l10n.t('Wrote {0} records to {1}; {2} skipped.', result.records, basename(uri.fsPath), result.skipped.length),
    );
    return uri.fsPath;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function datasetCommands(s: Services): CommandsOf<'exportDataset'> {
  return {
    exportDataset: command(vscode.l10n.t('Export Dataset from Reviews…'), [arg.any, arg.any], (node, options) =>
      exportDatasetCommand(s, node, options),
    ),
  };
}
