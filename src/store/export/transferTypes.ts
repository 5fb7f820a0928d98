/** Options shared by the exports and imports. */
import type { ReviewData } from '../reviews/reviewTypes';

export type ExportFormat = 'md' | 'json' | 'jsonl';

/** Receives the export's text in order; awaited, so a file or pipe can apply back-pressure. */
export type TextSink = (chunk: string) => void | Promise<void>;

export interface ProgressOptions {
  /** Called now and then with items done and the total (0 when unknown). */
  onProgress?: (done: number, total: number) => void;
  /** Cancels between pages: the call throws `TransferError('cancelled')`. */
  signal?: AbortSignal;
}

export interface ExportRequest extends ProgressOptions {
  sessionId: string;
  /** One branch; omitted or null = the whole session (JSONL: the `main` branch, or the first one). */
  branchId?: string | null;
  /** Items read per page (default 500): memory stays bounded whatever the session's size. */
  pageSize?: number;
  /**
   * The session's review data, shown in a Markdown transcript under each turn and carried by a JSON export as its
   * `reviews` field (reviewsInExport.ts); JSONL, a run's input, never has it. Plain data: it crosses to the worker.
   */
  reviews?: ReviewData;
}

/** What an export wrote. */
export interface ExportSummary {
  items: number;
  branches: number;
  /** Items left out because they do not decode (JSONL and Markdown show what they can; JSON keeps everything). */
  skipped: number;
}
