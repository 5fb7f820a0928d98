/** The branch ids a session can no longer give to a new branch. */
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import { readBranchIds } from './branchIds';
import type { QueryContext } from './queryContext';

/**
 * Every branch id the session ever used: its reservations (spec §8.1; kept after `deleteBranch` and
 * `clearSession`), the ids that have rows but were never reserved (`addItems` does not reserve; the next branch
 * creation's backfill would), and `main`, which can never name a new branch (spec §12 e 4). Sorted by code unit.
 * Branch creation rejects each of these with "has already been used", so a name prompt can refuse them up front.
 */
export function readUsedBranchIds(ctx: QueryContext, sessionId: string): string[] {
  const ids = new Set<string>(['main']);
  for (const id of readBranchIds(ctx, sessionId)) ids.add(id);
  if (ctx.tables.branchReservations) {
    for (const r of ctx
      .stmt(`SELECT ${exactTextSql('branch_id')} AS branch_id FROM branch_reservations WHERE session_id = ?`)
      .iterate<{ branch_id: unknown }>(sessionId)) {
      if (r.branch_id !== null) ids.add(textFromSql(r.branch_id));
    }
  }
  return [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
