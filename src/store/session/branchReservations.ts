/**
 * Branch-id reservations (spec §8.1, §8.2): every id a session ever used stays in `branch_reservations`, so no id is
 * given out twice. Called inside the session's write transactions.
 */
import { BranchError } from '../errors';
import { BRANCH_RESERVATIONS_DDL } from '../format/schema';
import { tablePresent, type SessionContext } from './sessionContext';

function ensureReservationsTable(ctx: SessionContext): void {
  if (!tablePresent(ctx, 'branch_reservations')) ctx.db.exec(BRANCH_RESERVATIONS_DDL);
}

/**
 * Reserves every branch id that has structure rows but no reservation (spec §8.1), in ascending binary order, in
 * one statement. The recursive query hops along idx_structure_branch (one seek per distinct id), so the cost follows
 * the number of branches, not of rows; and the ids never leave SQLite, so an id that does not read back whole
 * (node:sqlite cuts TEXT at U+0000, spec §12 f) cannot make the walk repeat itself. Each step is strictly greater
 * than the last, so it ends.
 */
export function backfillReservations(ctx: SessionContext): void {
  ensureReservationsTable(ctx);
  ctx
    .stmt(
      'backfill',
      `WITH RECURSIVE ids(id) AS (
         SELECT (SELECT MIN(branch_id) FROM message_structure WHERE session_id = ?)
         UNION ALL
         SELECT (SELECT MIN(s.branch_id) FROM message_structure s WHERE s.session_id = ? AND s.branch_id > ids.id)
         FROM ids WHERE ids.id IS NOT NULL
       )
       INSERT OR IGNORE INTO branch_reservations (session_id, branch_id) SELECT ?, id FROM ids WHERE id IS NOT NULL`,
    )
    .run(ctx.sessionId, ctx.sessionId, ctx.sessionId);
}

/**
 * Whether a new branch could not be called `branchId`: `main` (spec §12 e 4), an id with rows, or one reserved (§8.1,
 * kept after the branch was deleted). `reserveBranchId` refuses each of these; a caller that leaves the branch's
 * creation to another writer (an agent command's fork at turn 1) asks first. Inside the caller's transaction.
 */
export function branchIdUsed(ctx: SessionContext, branchId: string): boolean {
  if (branchId === 'main') return true;
  const hasRows = ctx.stmt('branchIdHasRows', 'SELECT 1 AS one FROM message_structure WHERE session_id = ? AND branch_id = ? LIMIT 1');
  if (hasRows.get(ctx.sessionId, branchId) !== undefined) return true;
  if (!tablePresent(ctx, 'branch_reservations')) return false;
  const reserved = ctx.stmt('branchIdReserved', 'SELECT 1 AS one FROM branch_reservations WHERE session_id = ? AND branch_id = ?');
  return reserved.get(ctx.sessionId, branchId) !== undefined;
}

/**
 * Reserves `name`, or the first free auto id for `turn` (`branch_from_turn_<turn>_<clock()>`, then `_2`, `_3`, …;
 * `clock` is read only then); throws when a given name was ever used.
 */
export function reserveBranchId(ctx: SessionContext, turn: number, name: string | null, clock: () => number): string {
  const reserve = ctx.stmt('reserveNew', 'INSERT OR IGNORE INTO branch_reservations (session_id, branch_id) VALUES (?, ?)');
  if (name !== null) {
    if (reserve.run(ctx.sessionId, name).changes !== 1) {
      throw new BranchError(`Branch ID '${name}' has already been used. Choose a new branch ID.`);
    }
    return name;
  }
  const base = `branch_from_turn_${turn}_${Math.floor(clock())}`;
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}_${n}`;
    if (reserve.run(ctx.sessionId, candidate).changes === 1) return candidate;
  }
}
