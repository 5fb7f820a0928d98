/**
 * The export entry points: a session or a branch of a SQLite session file as Markdown, JSON or JSONL, streamed to a
 * sink or written to a file (through a temporary file put in place at the end, so a failed or cancelled export never
 * leaves half a file under the chosen name; never onto the session file or another input: the store package's
 * README, "Files it writes").
 */
import { TempFile } from '../files/tempFile';
import type { OutputOptions } from '../files/outputGuard';
import { openSessionDatabase } from '../inspector/sessionDatabase';
import type { SessionReader } from '../inspector/sessionReader';
import { discoverSessionTables } from '../inspector/tableDiscovery';
import { openSessionConnection } from '../sqlite/sessionConnection';
import { applyPageCache } from '../sqlite/pageCache';
import type { DriverName } from '../sqlite/sqliteDatabase';
import { writeJsonExport } from './jsonExport';
import { writeJsonlExport, writeMarkdownExport } from './readerExport';
import type { ExportFormat, ExportRequest, ExportSummary, TextSink } from './transferTypes';

export interface ExportFileOptions extends OutputOptions {
  driver?: DriverName | 'auto';
  busyTimeoutMs?: number;
  /** The page cache of the export's connections (`OpenSessionDatabaseOptions.pageCacheKiB`); default the driver's. */
  pageCacheKiB?: number;
}

/** Exports from any `SessionReader` (a SQLite file or a server store): Markdown or JSONL (JSON needs the raw rows). */
export async function exportFromReader(
  reader: SessionReader,
  format: 'md' | 'jsonl',
  request: ExportRequest,
  sink: TextSink,
): Promise<ExportSummary> {
  return format === 'md' ? writeMarkdownExport(reader, request, sink) : writeJsonlExport(reader, request, sink);
}

/** Exports from the SQLite file `dbPath` (opened read-only) to `sink`. */
export async function exportSession(
  dbPath: string,
  format: ExportFormat,
  request: ExportRequest,
  sink: TextSink,
  options: ExportFileOptions = {},
): Promise<ExportSummary> {
  // Opening through the inspector first gives the same errors as everywhere else (not SQLite, no session tables…).
  const reader = openSessionDatabase(dbPath, {
    readonly: true,
    driver: options.driver,
    busyTimeoutMs: options.busyTimeoutMs,
    pageCacheKiB: options.pageCacheKiB,
  });
  try {
    if (format !== 'json') return await exportFromReader(reader, format, request, sink);
    const db = openSessionConnection(dbPath, { readonly: true, driver: options.driver, busyTimeoutMs: options.busyTimeoutMs });
    try {
      applyPageCache(db, options.pageCacheKiB);
      return await writeJsonExport(db, discoverSessionTables(db, dbPath), request, sink);
    } finally {
      db.close();
    }
  } finally {
    reader.close();
  }
}

/**
 * Exports to `outPath`, replacing it only when the export completed. `outPath` may not be the session file (nor its
 * -wal/-shm, nor any of `options.inputs`), and an existing file is replaced only with `options.overwrite`
 * (`OutputFileError` otherwise, before anything is read or written).
 */
export async function exportSessionToFile(
  dbPath: string,
  outPath: string,
  format: ExportFormat,
  request: ExportRequest,
  options: ExportFileOptions = {},
): Promise<ExportSummary> {
  const temp = TempFile.create(outPath, { overwrite: options.overwrite, inputs: [dbPath, ...(options.inputs ?? [])] });
  try {
    const summary = await exportSession(dbPath, format, request, (chunk) => temp.write(chunk), options);
    temp.commit();
    return summary;
  } finally {
    temp.discard();
  }
}
