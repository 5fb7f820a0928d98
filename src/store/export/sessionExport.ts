/**
 * The export entry points: a session or a branch of a SQLite session file as Markdown, JSON or JSONL, streamed to a
 * sink or written to a file (through a temporary file renamed at the end, so a failed or cancelled export never
 * leaves half a file under the chosen name).
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { openSessionDatabase } from '../inspector/sessionDatabase';
import type { SessionReader } from '../inspector/sessionReader';
import { discoverSessionTables } from '../inspector/tableDiscovery';
import { openSessionConnection } from '../sqlite/sessionConnection';
import type { DriverName } from '../sqlite/sqliteDatabase';
import { writeJsonExport } from './jsonExport';
import { writeJsonlExport, writeMarkdownExport } from './readerExport';
import type { ExportFormat, ExportRequest, ExportSummary, TextSink } from './transferTypes';

export interface ExportFileOptions {
  driver?: DriverName | 'auto';
  busyTimeoutMs?: number;
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
  const reader = openSessionDatabase(dbPath, { readonly: true, driver: options.driver, busyTimeoutMs: options.busyTimeoutMs });
  try {
    if (format !== 'json') return await exportFromReader(reader, format, request, sink);
    const db = openSessionConnection(dbPath, { readonly: true, driver: options.driver, busyTimeoutMs: options.busyTimeoutMs });
    try {
      return await writeJsonExport(db, discoverSessionTables(db, dbPath), request, sink);
    } finally {
      db.close();
    }
  } finally {
    reader.close();
  }
}

/** A sink that appends to a file descriptor in 1 MiB batches. */
function fileSink(fd: number): { sink: TextSink; flush: () => void } {
  let buffer: string[] = [];
  let size = 0;
  const flush = () => {
    if (buffer.length > 0) writeSync(fd, buffer.join(''));
    buffer = [];
    size = 0;
  };
  return {
    sink: (chunk) => {
      buffer.push(chunk);
      size += chunk.length;
      if (size >= 1 << 20) flush();
    },
    flush,
  };
}

/** Exports to `outPath`, replacing it only when the export completed. */
export async function exportSessionToFile(
  dbPath: string,
  outPath: string,
  format: ExportFormat,
  request: ExportRequest,
  options: ExportFileOptions = {},
): Promise<ExportSummary> {
  const temp = `${outPath}.${process.pid}.partial`;
  const fd = openSync(temp, 'w');
  let ok = false;
  try {
    const out = fileSink(fd);
    const summary = await exportSession(dbPath, format, request, out.sink, options);
    out.flush();
    closeSync(fd);
    renameSync(temp, outPath);
    ok = true;
    return summary;
  } finally {
    if (!ok) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      rmSync(temp, { force: true });
    }
  }
}
