/**
 * `agent-sessions review` (a review store's data: list, export, import) and `agent-sessions dataset` (datasets from
 * reviews over a session store, and the format checker on any file). The review store is a file of its own (--store),
 * never a session file (docs/reviews.md, docs/datasets.md).
 */
import { existsSync } from 'node:fs';
import { writeOutputFile } from '../store/files/tempFile';
import { checkOutputPath } from '../store/files/outputGuard';
import { checkJsonl, toolsProblems, type DatasetFormat } from '../store/datasets/datasetChecks';
import { exportDataset } from '../store/datasets/datasetExport';
import { DEFAULT_REDACTIONS, type DatasetReport } from '../store/datasets/datasetRecords';
import { ReviewStore, checkReviewData } from '../store/reviews/reviewStore';
import type { ReviewData } from '../store/reviews/reviewTypes';
import { closeStore, isServerAddress, openStore, storeAddress } from './cliStore';
import { requireBranch, requireSession, type CommandContext } from './commands';
import { BadInputError, NotFoundError, UsageError } from './exitCodes';
import { readInputText } from './inputFiles';
import { counted } from '../shared/countNoun';

const FORMATS: readonly DatasetFormat[] = ['sft', 'preference', 'eval'];

/**
 * The review store at `path`; only `review import` creates it. Reading one that is not there is an error naming the
 * path (exit 3, as `check` and `export --reviews` say it), not SQLite's "unable to open" read as a folder problem.
 */
function openReviews(path: string | undefined, readonly: boolean): ReviewStore {
  if (!path) throw noStore();
  if (readonly && !existsSync(path)) throw new NotFoundError(`There is no review store ${path}.`);
  return ReviewStore.open(path, { readonly, fileMustExist: readonly });
}

const noStore = () => new UsageError('a review store is needed: --store <file> (a file of its own, never a session file)');

/**
 * `review import`'s file, read and checked whole before the store is opened: opening creates the store, and a refused
 * import must not leave an empty one behind.
 */
function reviewImportData(args: string[], store: string | undefined): ReviewData {
  if (!store) throw noStore();
  if (args.length !== 1) throw new UsageError('review import takes one file (a review export)');
  const text = readInputText(args[0]!, 'reviews');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    // A bad input file (exit 4), as a review file of the wrong shape is: the arguments were right.
    throw new BadInputError(`${args[0]} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return checkReviewData(data);
}

export interface ReviewCommandOptions {
  store?: string;
  session?: string;
  output?: string;
  /** Replace an existing -o file (never the store itself). */
  force?: boolean;
}

/** `review ls`, `review export`, `review import <file>`. */
export function reviewCommand(ctx: CommandContext, action: string | undefined, args: string[], options: ReviewCommandOptions): string {
  const imported = action === 'import' ? reviewImportData(args, options.store) : undefined;
  const store = openReviews(options.store, action !== 'import');
  try {
    switch (action) {
      case 'ls': {
        if (args.length > 0) throw new UsageError('review ls takes no arguments (--session)');
        const data = store.exportData(options.session);
        if (ctx.json) return `${JSON.stringify(data.turnReviews)}\n`;
        const lines = data.turnReviews.map(
          (r) =>
            `${r.sessionId}  ${r.branchId}  turn ${r.turn}  ${r.verdict ?? '-'}${r.tags.length ? `  [${r.tags.join(', ')}]` : ''}${r.note ? `  ${r.note.replace(/\s+/g, ' ').slice(0, 80)}` : ''}`,
        );
        const counts = `${counted(data.turnReviews.length, 'turn review')}, ${counted(data.pairwise.length, 'pairwise verdict')}, ${counted(data.corrections.length, 'correction')}`;
        return `${[...lines, counts].join('\n')}\n`;
      }
      case 'export': {
        if (args.length > 0) throw new UsageError('review export takes no arguments (--session, --output)');
        const text = `${JSON.stringify(store.exportData(options.session), null, 2)}\n`;
        if (!options.output) return text;
        writeOutputFile(options.output, text, { overwrite: options.force, inputs: [options.store!] });
        return ctx.json ? `${JSON.stringify({ output: options.output })}\n` : `wrote ${options.output}\n`;
      }
      case 'import': {
        const result = store.importData(imported);
        return ctx.json
          ? `${JSON.stringify(result)}\n`
          : `${result.added} added, ${result.updated} updated, ${result.kept} kept (newer or the same here)\n`;
      }
      default:
        throw new UsageError(`review takes ls, export or import, got '${action ?? ''}'`);
    }
  } finally {
    store.close();
  }
}

export interface DatasetCommandOptions {
  store?: string;
  session?: string;
  branch?: string;
  output?: string;
  tag?: string[];
  verdict?: string;
  since?: string;
  redact?: boolean;
  tools?: string;
  csv?: boolean;
  /** How many records to show before writing (`--preview N`); 3 when not given. */
  preview?: number;
  /** How many turns before each record's turn go into its context (`--context-turns N`); all when not given. */
  contextTurns?: number;
  /** Pairwise verdicts where a side ran on this model (`--model`). */
  model?: string;
  /** Replace an existing -o file (never the session file or the review store). */
  force?: boolean;
}

/** `preview`: the first records as written to the file (JSON lines, or CSV rows with --csv). */
function reportText(report: DatasetReport, output: string, preview: string[]): string {
  const lines = [`wrote ${counted(report.records, 'record')} to ${output}`];
  // A CSV field may hold a line break: its next lines are indented as the record's.
  if (preview.length > 0) lines.push('first records:', ...preview.map((r) => `  ${r.slice(0, 300).replace(/\r?\n/g, '\n  ')}`));
  if (report.skipped.length > 0) lines.push(`skipped ${report.skipped.length}:`, ...report.skipped.map((s) => `  ${s.where}: ${s.reason}`));
  const leftOut = Object.entries(report.leftOut);
  if (leftOut.length > 0) lines.push('left out of messages (no chat form):', ...leftOut.map(([what, n]) => `  ${what} ×${n}`));
  return `${lines.join('\n')}\n`;
}

/** `dataset <sft|preference|eval> <db>` and `dataset check <format> <file>`. */
export async function datasetCommand(
  ctx: CommandContext,
  args: string[],
  db: string | undefined,
  options: DatasetCommandOptions,
): Promise<{ text: string; ok: boolean }> {
  const [first, ...rest] = args;
  if (first === 'check') {
    const [format, file, ...more] = rest;
    if (!FORMATS.includes(format as DatasetFormat) || !file || more.length > 0)
      throw new UsageError('dataset check takes a format (sft, preference, eval) and a JSONL file');
    const result = checkJsonl(format as DatasetFormat, readInputText(file, 'dataset'));
    const ok = result.problems.length === 0;
    if (ctx.json) return { text: `${JSON.stringify(result)}\n`, ok };
    const lines = [`${counted(result.records, 'record')}, ${result.records - result.problems.length} valid`];
    for (const p of result.problems) lines.push(`  line ${p.line}: ${p.problems.join('; ')}`);
    return { text: `${lines.join('\n')}\n`, ok };
  }
  if (!FORMATS.includes(first as DatasetFormat))
    throw new UsageError(`dataset takes a format (sft, preference, eval) or check, got '${first ?? ''}'`);
  const format = first as DatasetFormat;
  const target = rest[0] ?? db;
  if (rest.length > 1) throw new UsageError('dataset takes one session store');
  if (!options.output) throw new UsageError('dataset needs --output <file>');
  // `export -o -` is standard output; a dataset is written whole, then put in place, so `-` would be a file named so.
  if (options.output === '-') throw new UsageError('dataset writes a file: give --output a file name (- is no file here)');
  if (options.csv && format !== 'eval') throw new UsageError('--csv is for the evaluation set (dataset eval)');
  if (options.verdict !== undefined && options.verdict !== 'good' && options.verdict !== 'bad')
    throw new UsageError(`--verdict takes good or bad, got '${options.verdict}'`);
  const sinceMs = options.since === undefined ? undefined : Date.parse(options.since);
  if (sinceMs !== undefined && !Number.isFinite(sinceMs))
    throw new UsageError(`--since takes a date (2026-12-01 or an ISO time), got '${options.since}'`);
  let tools: unknown[] | undefined;
  if (options.tools) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readInputText(options.tools, 'tools'));
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      throw new BadInputError(`${options.tools} is not JSON (${err.message}): --tools takes a JSON list of tool definitions.`);
    }
    if (!Array.isArray(parsed)) throw new UsageError(`${options.tools} must hold a JSON list of tool definitions`);
    // Checked here, once: found wrong in each record instead, every record was left out and the command exited 0.
    const wrong = toolsProblems(parsed).problems;
    if (wrong.length > 0) throw new UsageError(`${options.tools}: ${wrong[0]}${wrong.length > 1 ? ` (and ${wrong.length - 1} more)` : ''}`);
    tools = parsed;
  }
  // Before anything is opened or read: -o must be neither store this command reads, and replaces a file only with --force.
  const address = storeAddress(target);
  const inputs = [options.store, options.tools, isServerAddress(address) ? undefined : address].filter((p): p is string => p !== undefined);
  checkOutputPath(options.output, { overwrite: options.force, inputs });
  const reviews = openReviews(options.store, true);
  let data;
  try {
    data = reviews.exportData(options.session);
  } finally {
    reviews.close();
  }
  const store = await openStore(target, ctx.store);
  const preview: string[] = [];
  const previewCount = options.preview ?? 3;
  try {
    // An unknown session or branch is a mistake to say (exit 3, as export and show do), not an empty dataset.
    if (options.session !== undefined) {
      const tree = await requireSession(store, options.session);
      if (options.branch !== undefined) requireBranch(tree, options.session, options.branch);
    }
    const report = await exportDataset(store.reader, data, options.output, {
      format,
      encoding: options.csv ? 'csv' : 'jsonl',
      sessionId: options.session,
      branchId: options.branch,
      tags: options.tag,
      verdict: options.verdict as 'good' | 'bad' | undefined,
      sinceMs,
      tools,
      redact: options.redact ? [...DEFAULT_REDACTIONS] : undefined,
      contextTurns: options.contextTurns,
      ...(options.model !== undefined ? { model: options.model } : {}),
      signal: ctx.signal,
      overwrite: options.force,
      inputs,
      onRecord: (_r, i, written) => void (i < previewCount && preview.push(written)),
    });
    if (ctx.json) return { text: `${JSON.stringify({ output: options.output, ...report })}\n`, ok: true };
    return { text: reportText(report, options.output, preview), ok: true };
  } finally {
    await closeStore(store);
  }
}
