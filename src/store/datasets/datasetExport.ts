/**
 * Writing a dataset (docs/datasets.md): records from `datasetRecords` streamed to a file as JSONL (or, for the
 * evaluation set, CSV too). The builder checks each against its format's rules as it makes it, so a file never holds a
 * record the checker refuses (one that would is reported as skipped, under its reviewed turn, with the rule it breaks).
 * Written under a temporary name and put in place when complete: a failed or cancelled export leaves no partial file,
 * and the output is never one of the stores it reads (the store package's README, "Files it writes").
 */
import { TempFile } from '../files/tempFile';
import type { OutputOptions } from '../files/outputGuard';
import type { SessionReader } from '../inspector/sessionReader';
import type { ReviewData } from '../reviews/reviewTypes';
import { ReviewStore } from '../reviews/reviewStore';
import { openSessionDatabase } from '../inspector/sessionDatabase';
import { datasetRecords, type DatasetOptions, type DatasetReport } from './datasetRecords';

/** The evaluation set as CSV: the last user message, its reference, tags, where it came from. */
export const EVAL_CSV_COLUMNS = ['input', 'reference', 'tags', 'kind', 'session_id', 'branch_id', 'turn'] as const;

/**
 * The characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a cell as a formula when it starts
 * with one (OWASP, "CSV Injection"): `=`, `+`, `-`, `@`, a tab, a carriage return.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A signed decimal number and nothing else (`-2`, `+1.5`, `-3e4`): a spreadsheet reads it as that number, never a formula. */
const SIGNED_NUMBER = /^[+-](?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled. A field that
 * starts as a formula would (`FORMULA_START`) gets a `'` before it, inside the quotes, so a spreadsheet shows it as
 * text and never evaluates it: the fields are session text (a message, an answer, an id), anyone's to write, and
 * `=HYPERLINK("https://…?"&B2)` would send the row elsewhere when clicked. A field that is only a signed number (an
 * answer `-2`) is a number to a spreadsheet, no formula, and is written as it is.
 */
export function csvField(value: string): string {
  const text = FORMULA_START.test(value) && !SIGNED_NUMBER.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvRow(record: object): string {
  const r = record as {
    input: { role: string; content: unknown }[];
    reference: string;
    tags: string[];
    kind: string;
    source: { sessionId: string; branchId: string; turn: number };
  };
  const user = [...r.input].reverse().find((m) => m.role === 'user');
  const fields = [
    String(user?.content ?? ''),
    r.reference,
    r.tags.join(' '),
    r.kind,
    r.source.sessionId,
    r.source.branchId,
    String(r.source.turn),
  ];
  return fields.map(csvField).join(',');
}

export interface DatasetExportOptions extends DatasetOptions, OutputOptions {
  /** `csv`: the evaluation set as CSV (format `eval` only). */
  encoding?: 'jsonl' | 'csv';
  /**
   * Called with each record written and its text in the file, without the line end (the first few make the preview):
   * a JSON line, or for CSV the row, which a preview of the records as JSON would misrepresent.
   */
  onRecord?: (record: object, index: number, written: string) => void;
  signal?: AbortSignal;
}

/** Writes the dataset to `outPath`; resolves with what was written and what was skipped, and why. */
export async function exportDataset(
  reader: Pick<SessionReader, 'getItemsPage'>,
  reviews: ReviewData,
  outPath: string,
  options: DatasetExportOptions,
): Promise<DatasetReport> {
  const csv = options.encoding === 'csv';
  if (csv && options.format !== 'eval') throw new TypeError('CSV is for the evaluation set only (format eval).');
  const report: DatasetReport = { records: 0, skipped: [], leftOut: {} };
  // `inputs`: the session file and the review store the caller read; refused as the output before anything is written.
  const temp = TempFile.create(outPath, { overwrite: options.overwrite, inputs: options.inputs });
  try {
    if (csv) temp.write(`${EVAL_CSV_COLUMNS.join(',')}\r\n`);
    let index = 0;
    for await (const record of datasetRecords(reader, reviews, options, report)) {
      options.signal?.throwIfAborted();
      const written = csv ? csvRow(record) : JSON.stringify(record);
      options.onRecord?.(record, index++, written);
      // Gathered and written a batch at a time (TempFile), synchronously, as the session export writes its files: a
      // write per record of a few KB, and a wait for the file system's thread after each, cost more than the record.
      temp.write(csv ? `${written}\r\n` : `${written}\n`);
    }
    temp.commit();
    return report;
  } finally {
    temp.discard();
  }
}

/** What `exportDatasetToFile` answers: the report and the first records written (the preview). */
export interface DatasetFileResult extends DatasetReport {
  preview: object[];
}

/**
 * The whole export from files: the session file at `dbPath` and the review store at `reviewsPath` (both read-only),
 * into `outPath`. What the store worker runs (a job), so building and writing records never runs on the host's thread.
 */
export async function exportDatasetToFile(
  dbPath: string,
  reviewsPath: string,
  outPath: string,
  options: Omit<DatasetExportOptions, 'onRecord'> & { previewCount?: number },
): Promise<DatasetFileResult> {
  const reviews = ReviewStore.open(reviewsPath, { readonly: true, fileMustExist: true });
  let data;
  try {
    data = reviews.exportData(options.sessionId);
  } finally {
    reviews.close();
  }
  const db = openSessionDatabase(dbPath, { readonly: true });
  const preview: object[] = [];
  try {
    const report = await exportDataset(db, data, outPath, {
      ...options,
      inputs: [dbPath, reviewsPath, ...(options.inputs ?? [])],
      onRecord: (r, i) => void (i < (options.previewCount ?? 3) && preview.push(r)),
    });
    return { ...report, preview };
  } finally {
    db.close();
  }
}
