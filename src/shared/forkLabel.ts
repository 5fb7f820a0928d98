/** Where a branch forked, as the tree and the conversation view both word it ('' for a root branch). */
export function forkLabel(b: { parentBranchId: string | null; forkTurn: number | null }): string {
  if (b.forkTurn === null) return '';
  return b.parentBranchId !== null ? `from ${b.parentBranchId} @ turn ${b.forkTurn}` : `forked @ turn ${b.forkTurn}`;
}

/** A branch's turn count as text: "1 turn", "12 turns", or "1,000+ turns" when only a lower bound is known. */
export function turnCountLabel(b: { userTurns: number; userTurnsAtLeast?: boolean }): string {
  const n = b.userTurns.toLocaleString('en-US');
  if (b.userTurnsAtLeast) return `${n}+ turns`;
  return `${n} turn${b.userTurns === 1 ? '' : 's'}`;
}
