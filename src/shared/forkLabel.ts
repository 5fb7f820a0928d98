import * as l10n from '@vscode/l10n';

/** Where a branch forked, as the tree and the conversation view both word it ('' for a root branch). */
export function forkLabel(b: { parentBranchId: string | null; forkTurn: number | null }): string {
  if (b.forkTurn === null) return '';
  return b.parentBranchId !== null ? l10n.t('from {0} @ turn {1}', b.parentBranchId, b.forkTurn) : l10n.t('forked @ turn {0}', b.forkTurn);
}

/** A branch's turn count as text: "1 turn", "12 turns", or "1,000+ turns" when only a lower bound is known. */
export function turnCountLabel(b: { userTurns: number; userTurnsAtLeast?: boolean }): string {
  const n = b.userTurns.toLocaleString('en-US');
  if (b.userTurnsAtLeast) return l10n.t('{0}+ turns', n);
  return b.userTurns === 1 ? l10n.t('{0} turn', n) : l10n.t('{0} turns', n);
}
