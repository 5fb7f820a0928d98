/**
 * The geometry of the branch map drawn as a git graph: one row per branch (in tree order: a branch, then the branches
 * forked from it by fork turn, each followed by its own forks), one lane (column) per level of forking, a vertical line
 * per branch from its node down to where its last fork leaves it, and a fork line from the parent's lane into each
 * child's node.
 *
 * Why a lane per depth: in tree order, the lines still open at a child's row are exactly its ancestors' (an earlier
 * sibling's subtree has ended above it), and every ancestor sits in a lane left of the parent's. So the child's lane,
 * one right of its parent's, is always free, and no fork line ever crosses another branch's line; a session of 50
 * branches forked from main takes two lanes, not fifty. Rows keep a fixed height and grow downwards, so a long list
 * scrolls instead of shrinking. Pure: the component (webview/components/branchMap.ts) draws what this computes.
 */
import type { BranchView } from '../../../src/shared/protocol/conversationViews';
import { branchLanes } from './branchLayout';

/** Sizes in CSS pixels (the stylesheet gives the rows the same height). */
export interface GraphMetrics {
  rowHeight: number;
  laneWidth: number;
  /** Space left of the first lane and right of the last. */
  padding: number;
}

export const GRAPH_METRICS: GraphMetrics = { rowHeight: 40, laneWidth: 14, padding: 8 };

/** One branch's row: where its node is and what its label says. */
export interface GraphRow {
  branch: BranchView;
  row: number;
  lane: number;
  /** Node centre. */
  x: number;
  y: number;
  /** The row of the branch it forked from, or null for a root (main, or a branch whose parent is unknown). */
  parentRow: number | null;
  /** Rows of the branches forked from this one, by fork turn. */
  childRows: number[];
}

/** A branch's vertical line, from its node down to where its last fork leaves (a short stub without forks). */
export interface LaneLine {
  branchId: string;
  x: number;
  y1: number;
  y2: number;
}

/** A fork: from the parent's lane, half a row above the child's node, curving into the child's node. */
export interface ForkLine {
  parentId: string;
  childId: string;
  forkTurn: number | null;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** SVG path data of the curve. */
  path: string;
}

export interface BranchGraph {
  rows: GraphRow[];
  lines: LaneLine[];
  forks: ForkLine[];
  laneCount: number;
  /** The drawing's size: lanes and padding wide, one row per branch high. */
  width: number;
  height: number;
}

/** Lays the branches out; see the file comment. Branches whose parent is unknown are roots in lane 0. */
export function branchGraph(branches: readonly BranchView[], metrics: GraphMetrics = GRAPH_METRICS): BranchGraph {
  const { rowHeight, laneWidth, padding } = metrics;
  const lanes = branchLanes([...branches]);
  const rowOf = new Map(lanes.map((l, i) => [l.branch.branchId, i]));
  const xOf = (lane: number): number => padding + lane * laneWidth + laneWidth / 2;
  const yOf = (row: number): number => row * rowHeight + rowHeight / 2;
  const rows: GraphRow[] = lanes.map((l, row) => {
    const parentId = l.branch.parentBranchId;
    // branchLanes nested this branch under its parent only when the parent is in the list (a root otherwise).
    const parentRow = l.depth > 0 && parentId !== null ? (rowOf.get(parentId) ?? null) : null;
    return {
      branch: l.branch,
      row,
      lane: l.depth,
      x: xOf(l.depth),
      y: yOf(row),
      parentRow,
      childRows: l.children.map((id) => rowOf.get(id)).filter((r): r is number => r !== undefined),
    };
  });
  const forks: ForkLine[] = [];
  const lines: LaneLine[] = [];
  for (const r of rows) {
    const parent = r.parentRow === null ? undefined : rows[r.parentRow];
    if (parent) {
      const x1 = parent.x;
      const y1 = r.y - rowHeight / 2;
      const bend = (r.y - y1) * 0.6;
      forks.push({
        parentId: parent.branch.branchId,
        childId: r.branch.branchId,
        forkTurn: r.branch.forkTurn,
        x1,
        y1,
        x2: r.x,
        y2: r.y,
        path: `M ${x1} ${y1} C ${x1} ${y1 + bend} ${r.x} ${r.y - bend} ${r.x} ${r.y}`,
      });
    }
    const lastChild = r.childRows.length > 0 ? rows[Math.max(...r.childRows)] : undefined;
    // Down to the start of the last fork line; a branch nothing forked from gets a stub for its own turns.
    const y2 = lastChild ? lastChild.y - rowHeight / 2 : r.y + rowHeight * 0.3;
    lines.push({ branchId: r.branch.branchId, x: r.x, y1: r.y, y2 });
  }
  const laneCount = rows.reduce((n, r) => Math.max(n, r.lane + 1), 0);
  return { rows, lines, forks, laneCount, width: laneCount * laneWidth + 2 * padding, height: rows.length * rowHeight };
}

/**
 * Where keyboard focus goes from a row: Up/Down to the row above/below, Home/End to the first/last, Left to the branch
 * it forked from, Right to the first branch forked from it. Undefined: the key does not move (or is not a move).
 */
export function graphKeyTarget(graph: BranchGraph, row: number, key: string): number | undefined {
  const r = graph.rows[row];
  if (!r) return undefined;
  const last = graph.rows.length - 1;
  switch (key) {
    case 'ArrowDown':
      return row < last ? row + 1 : undefined;
    case 'ArrowUp':
      return row > 0 ? row - 1 : undefined;
    case 'Home':
      return 0;
    case 'End':
      return last;
    case 'ArrowLeft':
      return r.parentRow ?? undefined;
    case 'ArrowRight':
      return r.childRows[0];
    default:
      return undefined;
  }
}
