/**
 * *Restore as Branch* (docs/history-guard.md): a history guard layer's items written into a NEW ordinary branch of
 * the session file, through the session class (`AdvancedSQLiteSession.restoreBranch`: one transaction, rows numbered
 * as Python numbers them, each item's stored text exactly as the file held it, one Python cannot decode included:
 * Python skips it as it did on the branch), so the Python SDK reads the branch like any other. Existing rows are never
 * touched.
 */
import { AdvancedSQLiteSession } from '../session/advancedSqliteSession';
import type { TableNames } from '../format/schema';
import { HistoryGuardError } from './guardErrors';
import type { HistoryGuardStore } from './guardStore';

export interface RestoreOptions {
  /** The new branch's id (default `restored-layer-<layer id>`); refused when the session ever used it. */
  branchName?: string;
  /**
   * The session file to write. Default: the path the layer was taken from, and only while the same file is there
   * (a layer of a file since replaced at its path is restored into another file only when named here).
   */
  sessionPath?: string;
  tables?: Partial<TableNames>;
  busyTimeoutMs?: number;
}

/** What a restore wrote. */
export interface RestoredBranch {
  sessionPath: string;
  sessionId: string;
  branchId: string;
  items: number;
}

/** Writes layer `layerId` of `store` as a new branch; see the module comment. */
export async function restoreLayerAsBranch(
  store: HistoryGuardStore,
  layerId: number,
  options: RestoreOptions = {},
): Promise<RestoredBranch> {
  const layer = store.layer(layerId);
  if (layer.oldIdentity && options.sessionPath === undefined)
    throw new HistoryGuardError(
      'invalid',
      `Layer ${layerId} was taken from the file that was at ${layer.path} before it was replaced; the file there now is another one. Name the file to restore into.`,
    );
  const texts = store.layerItems(layerId).map((i) => i.messageData);
  const sessionPath = options.sessionPath ?? layer.path;
  const session = new AdvancedSQLiteSession({
    sessionId: layer.sessionId,
    dbPath: sessionPath,
    sessionsTable: options.tables?.sessions,
    messagesTable: options.tables?.messages,
    busyTimeoutMs: options.busyTimeoutMs,
  });
  try {
    // A layer holds what the file held: an item Python cannot decode is restored as it was (Python skips it, as it
    // did on the branch), never a reason to refuse the rest of the layer.
    const branchId = await session.restoreBranch(texts, options.branchName ?? `restored-layer-${layerId}`, { keepUndecodable: true });
    return { sessionPath, sessionId: layer.sessionId, branchId, items: texts.length };
  } finally {
    session.close();
  }
}
