/**
 * Which branch ran a turn. Branching from turn N copies the parent's turns 1…N-1 (spec §8.3), so on a branch with
 * fork turn f the turns before f are the parent's, and the parent's own turns before its fork turn are its parent's,
 * and so on up the tree: a turn shared by a nested fork may have been run by a grandparent.
 */

/** The fields of a branch the walk needs (`BranchView` and the store's `BranchNode` both have them). */
export interface ForkFacts {
  branchId: string;
  parentBranchId: string | null;
  forkTurn: number | null;
}

/**
 * The branch that ran `turn` as seen from `branchId`: the branch itself for its own turns (from its fork turn on),
 * otherwise the ancestor whose own turns include it. A parent that is not in `branches` (deleted, or the list is
 * partial) ends the walk at the last branch known: the view cannot show or read a branch it does not have, so it does
 * not claim the turn for one. Unknown `branchId` → itself.
 */
export function turnOrigin(branches: readonly ForkFacts[], branchId: string, turn: number): string {
  const byId = new Map(branches.map((b) => [b.branchId, b]));
  let current = branchId;
  // The tree the store derives has no cycles, but the list comes over a message: never loop on a bad one.
  const seen = new Set<string>();
  for (;;) {
    seen.add(current);
    const b = byId.get(current);
    if (!b || b.parentBranchId === null || b.forkTurn === null || turn >= b.forkTurn) return current;
    if (!byId.has(b.parentBranchId) || seen.has(b.parentBranchId)) return current;
    current = b.parentBranchId;
  }
}

/**
 * The turns of `branchId` that are shared, grouped by the branch that ran them: for each ancestor, the range of turns
 * it ran, nearest ancestor first. Turns from a range's `fromTurn` to its `toTurn` (inclusive); `fromTurn` is 1 for the
 * root of the chain. Empty for a root branch. This is what a query over shared turns needs: one (branch, turn range)
 * pair per ancestor, not a lookup per turn.
 */
export function sharedTurnRanges(
  branches: readonly ForkFacts[],
  branchId: string,
): { originBranchId: string; fromTurn: number; toTurn: number }[] {
  const byId = new Map(branches.map((b) => [b.branchId, b]));
  const out: { originBranchId: string; fromTurn: number; toTurn: number }[] = [];
  let current = byId.get(branchId);
  // Turns below `limit` are not the current branch's own: they belong further up.
  let limit = current?.forkTurn ?? null;
  const seen = new Set<string>([branchId]);
  while (current && current.parentBranchId !== null && limit !== null && limit > 1) {
    const parent = byId.get(current.parentBranchId);
    if (!parent || seen.has(parent.branchId)) break;
    seen.add(parent.branchId);
    const parentFork = parent.parentBranchId !== null && byId.has(parent.parentBranchId) ? (parent.forkTurn ?? 1) : 1;
    const fromTurn = Math.min(Math.max(1, parentFork), limit);
    if (fromTurn <= limit - 1) out.push({ originBranchId: parent.branchId, fromTurn, toTurn: limit - 1 });
    limit = Math.min(limit, fromTurn);
    current = parent;
  }
  return out;
}
