/** Where a branch forked, as the tree and the conversation view both word it ('' for a root branch). */
export function forkLabel(b: { parentBranchId: string | null; forkTurn: number | null }): string {
  if (b.forkTurn === null) return '';
  return b.parentBranchId !== null ? `from ${b.parentBranchId} @ turn ${b.forkTurn}` : `forked @ turn ${b.forkTurn}`;
}
