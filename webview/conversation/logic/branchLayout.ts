/**
 * Lays branches out as a tree of lanes: each branch under the branch it forked from, children by fork turn.
 * Branches whose parent is unknown are roots, in creation order.
 */
import type { BranchView } from '../../../src/shared/protocol/conversationViews';

export interface BranchLane {
  branch: BranchView;
  depth: number;
  /** Children of this lane's branch, by fork turn. */
  children: string[];
}

export function branchLanes(branches: BranchView[]): BranchLane[] {
  const ids = new Set(branches.map((b) => b.branchId));
  const children = new Map<string, BranchView[]>();
  const roots: BranchView[] = [];
  for (const b of branches) {
    if (b.parentBranchId !== null && ids.has(b.parentBranchId) && b.parentBranchId !== b.branchId) {
      const list = children.get(b.parentBranchId) ?? [];
      list.push(b);
      children.set(b.parentBranchId, list);
    } else roots.push(b);
  }
  const out: BranchLane[] = [];
  const seen = new Set<string>();
  const visit = (b: BranchView, depth: number): void => {
    if (seen.has(b.branchId)) return;
    seen.add(b.branchId);
    const kids = (children.get(b.branchId) ?? []).slice().sort((x, y) => (x.forkTurn ?? 0) - (y.forkTurn ?? 0));
    out.push({ branch: b, depth, children: kids.map((k) => k.branchId) });
    for (const k of kids) visit(k, depth + 1);
  };
  for (const r of roots) visit(r, 0);
  return out;
}

/**
 * Left/right at a fork: the branch to move to from `branchId` at `turn`. Right goes to the first child that forked
 * at or before this turn's position (a branch whose fork turn is turn + 1 diverges right after it); left goes back
 * to the parent.
 */
export function branchAtFork(branches: BranchView[], branchId: string, turn: number, direction: 'left' | 'right'): string | undefined {
  const current = branches.find((b) => b.branchId === branchId);
  if (!current) return undefined;
  if (direction === 'left') return current.parentBranchId ?? undefined;
  const forks = branches
    .filter((b) => b.parentBranchId === branchId && b.forkTurn !== null && b.forkTurn <= turn + 1)
    .sort((x, y) => (y.forkTurn ?? 0) - (x.forkTurn ?? 0));
  return forks[0]?.branchId;
}
