/**
 * The history guard's layers in the conversation view (docs/history-guard.md "In VS Code"): a layer is a branch's
 * items as they were before a writer removed or replaced some, kept in the guard store (never the session file),
 * shown read-only beside its branch.
 */
import type { ItemView } from './conversationViews';

/** One layer of the shown session, as the branch list shows it. */
export interface HistoryLayerView {
  layerId: number;
  branchId: string;
  /** When the removal was noticed (our compaction: when it ran), ms since the epoch. */
  noticedMs: number;
  /** Who removed the items: our compaction, or another writer (a Python agent, `pop_item`, a rewrite). */
  cause: 'our-compaction' | 'another-writer';
  itemCount: number;
  removedCount: number;
  /** The layer was taken from the file that was at this path before it was replaced. */
  fromReplacedFile: boolean;
}

/** One item of a layer: as a branch's item is shown, its turn counted in the layer, and whether it is gone now. */
export interface LayerItemView {
  turn: number;
  removed: boolean;
  item: ItemView;
}

/** A layer's items (its first `GUARD_LIMITS.layerItemsShown`; `truncated` when it holds more). */
export interface LayerItemsView {
  layer: HistoryLayerView;
  items: LayerItemView[];
  truncated: boolean;
}
