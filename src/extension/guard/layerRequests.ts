/**
 * The history guard's layers in the conversation view (docs/history-guard.md "In VS Code"): the shown session's
 * layers, a layer's items read-only from the guard store, *Compare with Branch Now* (the compare view reads the layer
 * from the guard store: nothing is restored first) and *Restore as Branch*.
 */
import * as vscode from 'vscode';
import type { RequestsOf } from '../core/viewRequests';
import { UserFacingError } from '../core/userError';
import type { Services } from '../services';
import { itemView } from '../conversation/conversationData';
import type { GuardLayer } from '../../store/guard/guardStore';
import type { HistoryLayerView } from '../../shared/protocol/layerViews';
import { restoreLayer } from './guardCommands';

function layerView(l: GuardLayer): HistoryLayerView {
  return {
    layerId: l.layerId,
    branchId: l.branchId,
    noticedMs: l.noticedMs,
    cause: l.cause,
    itemCount: l.itemCount,
    removedCount: l.removedCount,
    fromReplacedFile: l.oldIdentity,
  };
}

/** Layer `layerId`, refused unless it is of the shown session (a view asks only for its own session's layers). */
async function shownLayer(s: Services, layerId: number, dbPath: string, sessionId: string): Promise<GuardLayer> {
  const layers = await s.guard.layers(dbPath, sessionId);
  const layer = layers.find((l) => l.layerId === layerId);
  if (!layer) throw new UserFacingError(vscode.l10n.t('Session {0} has no layer {1}.', sessionId, String(layerId)));
  return layer;
}

export function layerRequests(s: Services): RequestsOf<'layers/get' | 'layer/items' | 'layer/compare' | 'layer/restore'> {
  return {
    'layers/get': async (_p, view) => {
      // The guard follows session files; a server store has no layers.
      if (s.registry.get(view.target.dbPath)?.remote) return [];
      return (await s.guard.layers(view.target.dbPath, view.target.sessionId)).map(layerView);
    },
    'layer/items': async (p, view) => {
      const layer = await shownLayer(s, p.layerId, view.target.dbPath, view.target.sessionId);
      const { entries, truncated } = await s.guard.layerEntries(layer);
      return {
        layer: layerView(layer),
        items: entries.map((e) => ({ turn: e.userTurnNumber ?? 0, removed: e.removed, item: itemView(e) })),
        truncated,
      };
    },
    'layer/compare': async (p, view) => {
      const { dbPath, sessionId } = view.target;
      const layer = await shownLayer(s, p.layerId, dbPath, sessionId);
      const label =
        layer.cause === 'our-compaction'
          ? vscode.l10n.t('{0} before compaction at {1}', layer.branchId, new Date(layer.noticedMs).toLocaleString())
          : vscode.l10n.t('{0} before items were removed at {1}', layer.branchId, new Date(layer.noticedMs).toLocaleString());
      s.compare.open([
        { dbPath, sessionId, branchId: layer.branchId, layerId: layer.layerId, label },
        { dbPath, sessionId, branchId: layer.branchId },
      ]);
      return { opened: true };
    },
    'layer/restore': async (p, view) => {
      const layer = await shownLayer(s, p.layerId, view.target.dbPath, view.target.sessionId);
      const branchId = await restoreLayer(s, view.target.dbPath, layer, p.name);
      return { branchId: branchId ?? null };
    },
  };
}
