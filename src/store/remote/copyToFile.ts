/**
 * Copies a session from a server store into a new `AdvancedSQLiteSession` file, where it can be branched, re-run
 * and compared without touching the server. Rows are read a batch at a time (memory follows the batch, not the
 * session) and written into a temporary file beside the target (a random name, created without following a link),
 * which is put in place only when everything was copied: the target is either the whole copy or untouched. An
 * existing target is refused unless the caller says to replace it, and so is any file the caller reads or serves.
 */
import type { AgentInputItem } from '@openai/agents';
import { AdvancedSQLiteSession } from '../session/advancedSqliteSession';
import { InvalidArgumentError } from '../errors';
import type { OutputOptions } from '../files/outputGuard';
import { TempFile } from '../files/tempFile';
import { decodeMessageData } from '../inspector/rowDecoding';
import type { RemoteStoreBrowser } from './remoteStore';

const COPY_BATCH = 1000;

/** What the copy writes through. */
export interface CopyTarget {
  addItems(items: AgentInputItem[]): Promise<void>;
  close(): void | Promise<void>;
}

export interface CopyResult {
  /** Items written. */
  copied: number;
  /** Rows that did not decode (the session API skips them too), with their positions. */
  skipped: number[];
}

export async function copyRemoteSessionToFile(
  browser: RemoteStoreBrowser,
  sessionId: string,
  targetPath: string,
  options: OutputOptions & {
    onProgress?: (copied: number, total: number) => void;
    isCancelled?: () => boolean;
    /**
     * Opens the session the copy writes into; default: the store's class in this thread. The extension passes its
     * store worker's, so the batches' writes never run on its host's thread.
     */
    openTarget?: (o: { sessionId: string; dbPath: string; createTables: true }) => Promise<CopyTarget>;
  } = {},
): Promise<CopyResult> {
  // Checked before the server is asked anything, so a refused target costs nothing (OutputFileError: is-input, exists).
  const temp = TempFile.create(targetPath, { overwrite: options.overwrite, inputs: options.inputs });
  try {
    const summary = await browser.getSession(sessionId);
    if (!summary) throw new InvalidArgumentError(`Session '${sessionId}' does not exist in ${browser.label}`);
    // SQLite opens the temporary file by its name: an empty regular file we created, never a link.
    temp.close();
    return await copyInto(browser, sessionId, summary.itemCount, temp, options);
  } catch (err) {
    throw temp.nameTarget(err);
  } finally {
    temp.discard();
  }
}

async function copyInto(
  browser: RemoteStoreBrowser,
  sessionId: string,
  total: number,
  temp: TempFile,
  options: Parameters<typeof copyRemoteSessionToFile>[3] & object,
): Promise<CopyResult> {
  const result: CopyResult = { copied: 0, skipped: [] };
  const open = options.openTarget ?? (async (o) => new AdvancedSQLiteSession(o));
  const session = await open({ sessionId, dbPath: temp.path, createTables: true });
  try {
    let after: { cursor: string; position: number } | null = null;
    for (;;) {
      if (options.isCancelled?.()) throw new CopyCancelledError();
      const rows = await browser.readRowsAfter(sessionId, after, COPY_BATCH);
      const last = rows[rows.length - 1];
      if (last) after = { cursor: last.cursor, position: last.position };
      const items: unknown[] = [];
      for (const r of rows) {
        const decoded = r.text === null ? null : decodeMessageData(r.text);
        if (decoded?.ok) items.push(decoded.value);
        else result.skipped.push(r.position);
      }
      // Stored items are already in the Responses shape, which addItems stores as given (itemShape.ts).
      if (items.length > 0) await session.addItems(items as AgentInputItem[]);
      result.copied += items.length;
      options.onProgress?.(result.copied + result.skipped.length, total);
      if (rows.length < COPY_BATCH) break;
    }
    await session.close();
    temp.commit();
    return result;
  } catch (err) {
    await session.close();
    throw err;
  }
}

export class CopyCancelledError extends Error {
  constructor() {
    super('The copy was cancelled; nothing was written.');
    this.name = 'CopyCancelledError';
  }
}
