/** Export and import of sessions (Markdown, JSON, JSONL); the formats and guarantees are in scripts/store-package/README.md. */
export { TransferError, type TransferProblem } from './exportErrors';
export { turnToMarkdown, itemToMarkdown, type TurnMarkdownOptions } from './markdown';
export { exportFromReader, exportSession, exportSessionToFile, type ExportFileOptions } from './sessionExport';
export { JSON_EXPORT_FORMAT, JSON_EXPORT_VERSION, type SessionExport } from './jsonExport';
export { parseJsonExport } from './jsonParse';
export {
  checkImportFile,
  detectImportFormat,
  importJsonExport,
  importJsonFile,
  importJsonlFile,
  importSessionFile,
  type ImportFormat,
  type ImportOptions,
  type ImportResult,
} from './importSession';
export type { ExportFormat, ExportRequest, ExportSummary, ProgressOptions, TextSink } from './transferTypes';
