/**
 * Numbering of new structure rows (spec §7, §12 j, §12 l): the next sequence number and the turn maxima of a branch,
 * with the counters an instance keeps after its own insert so that adding to a long branch does not scan it.
 */
import type { SessionContext } from './sessionContext';

/** Turn maxima of a branch after an instance's last insert, valid while no other connection has written. */
export interface TurnCounters {
  branch: string;
  dataVersion: number;
  maxUserTurn: number;
  maxBranchTurn: number;
}

export interface TurnMaxima {
  maxUserTurn: number;
  maxBranchTurn: number;
}

/** The session's largest sequence number (0 without rows). */
export function maxSequence(ctx: SessionContext): number {
  return (
    ctx
      .stmt('maxSeq', 'SELECT MAX(sequence_number) AS seq FROM message_structure WHERE session_id = ?')
      .get<{ seq: number | null }>(ctx.sessionId)?.seq ?? 0
  );
}

/** `PRAGMA data_version`: changes when another connection commits. */
export function dataVersion(ctx: SessionContext): number {
  return ctx.stmt('dataVersion', 'PRAGMA data_version').get<{ data_version: number }>()?.data_version ?? 0;
}

/**
 * The largest turn numbers on `branch`. MAX(user_turn_number) is one index seek; MAX(branch_turn_number) has no
 * index and would scan the branch on every add (what makes the Python session slow), so it comes from `counters`
 * (what the instance's last insert left), which are valid while no other connection has committed (data_version) and
 * the user-turn maximum still agrees. Otherwise it is computed exactly.
 */
export function turnMaxima(ctx: SessionContext, branch: string, counters: TurnCounters | undefined): TurnMaxima {
  const found = structureTurnMaxima(ctx, branch, counters);
  // A branch whose history was cleared or compacted keeps its usage rows (the tokens were spent); numbering goes on
  // after them so the next turn's usage never lands on an old turn's row. Python's histories never have usage past
  // their last structure row, so for them this changes nothing.
  const usageTurn =
    ctx
      .stmt('maxUsageTurn', 'SELECT MAX(user_turn_number) AS turn FROM turn_usage WHERE session_id = ? AND branch_id = ?')
      .get<{ turn: number | null }>(ctx.sessionId, branch)?.turn ?? 0;
  const lift = Math.max(0, usageTurn - found.maxUserTurn);
  return { maxUserTurn: found.maxUserTurn + lift, maxBranchTurn: found.maxBranchTurn + lift };
}

function structureTurnMaxima(ctx: SessionContext, branch: string, counters: TurnCounters | undefined): TurnMaxima {
  const maxUserTurn =
    ctx
      .stmt('maxUserTurn', 'SELECT MAX(user_turn_number) AS turn FROM message_structure WHERE session_id = ? AND branch_id = ?')
      .get<{ turn: number | null }>(ctx.sessionId, branch)?.turn ?? 0;
  const c = counters;
  if (c && c.branch === branch && c.maxUserTurn === maxUserTurn && c.dataVersion === dataVersion(ctx)) {
    return { maxUserTurn, maxBranchTurn: c.maxBranchTurn };
  }
  const maxBranchTurn =
    ctx
      .stmt('maxBranchTurn', 'SELECT MAX(branch_turn_number) AS turn FROM message_structure WHERE session_id = ? AND branch_id = ?')
      .get<{ turn: number | null }>(ctx.sessionId, branch)?.turn ?? 0;
  return { maxUserTurn, maxBranchTurn };
}
