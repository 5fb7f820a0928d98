/**
 * A history guard layer's items as the inspector's item entries (docs/history-guard.md "In VS Code"), so the
 * conversation view and the compare view show them like a branch's items. A layer keeps each item's stored text and
 * its place, not the structure rows' turn numbers, so the turns are numbered again as the SDKs number them: a `user`
 * item starts the next turn; what comes before the first one is turn 0.
 */
import { classifyItem } from '../format/itemClassification';
import { decodeMessageData } from '../inspector/rowDecoding';
import type { ItemEntry } from '../inspector/inspectorTypes';
import type { GuardLayerItem } from './guardStore';

/** One item of a layer as an entry: `sequenceNumber` is its place in the layer (from 1), `removed` as the layer says. */
export type LayerEntry = ItemEntry & { removed: boolean };

/** The entries of `items` (a layer's, in order), with turn numbers counted from its first item. */
export function layerEntries(items: readonly GuardLayerItem[]): LayerEntry[] {
  let turn = 0;
  return items.map((i) => {
    const decoded = decodeMessageData(i.messageData);
    const classified = decoded.ok ? classifyItem(decoded.value) : null;
    if (classified?.messageType === 'user') turn++;
    const meta = {
      structureId: null,
      messageId: 0,
      sequenceNumber: i.position + 1,
      type: classified?.messageType ?? null,
      toolName: classified?.toolName ?? null,
      userTurnNumber: turn,
      branchTurnNumber: turn,
      createdAt: null,
      removed: i.removed,
    };
    return decoded.ok
      ? { ...meta, corrupt: false as const, item: decoded.value }
      : { ...meta, corrupt: true as const, raw: decoded.raw, error: decoded.error };
  });
}
