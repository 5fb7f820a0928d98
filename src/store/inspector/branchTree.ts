/**
 * Which branch each branch was forked from, derived from the rows: the file does not record it. Branching from turn
 * N copies the source branch's structure rows with `branch_turn_number < N`, keeping their `message_id` (spec §8.3),
 * so a branch starts with rows whose messages its parent also holds, and continues with messages of its own.
 */
import { exactTextSql, textFromSql } from '../exactText';
import type { BranchNode } from './inspectorTypes';
import { plainBranchNode } from './plainSessions';
import { isStructuredSession, type QueryContext } from './queryContext';
import { numberOrNull, textOrNull } from './rowDecoding';

/** One branch's rows in sequence order, as the derivation needs them. */
export interface BranchRows {
  branchId: string;
  /**
   * The smallest `message_structure.id` on the branch. Ids are AUTOINCREMENT and a branch's copied rows are written
   * when it is created, so this orders branches by creation exactly, where `created_at` (1 s) often ties.
   */
  firstRowId: number;
  createdAt: string | null;
  rows: ReadonlyArray<{ messageId: number; branchTurnNumber: number | null; isUser: boolean }>;
}

/**
 * Derives the tree from each branch's rows. Heuristic, in creation order:
 *
 * - `main`, and whichever branch was created first, have no parent and no fork turn.
 * - For any other branch B, the *shared prefix* is B's longest leading run of rows whose messages all belong to one
 *   branch created before B; the parent is the earliest-created branch holding that whole run. B's fork turn is
 *   (the largest `branch_turn_number` in the prefix) + 1, the N of `createBranchFromTurn(N)`.
 * - A branch sharing no leading row with an earlier branch has parent null and fork turn 1: it was branched from
 *   turn 1 with nothing before it to copy, so its origin cannot be told.
 *
 * Copies are indistinguishable from their source, so a branch forked from a copy whose rows all came from further
 * up (X forked from main at 3, Y from X at 2) is attributed to the earliest holder (main at 2): the same items, the
 * same fork point. When a parent was deleted, its own messages survive only in its children, so a child attaches to
 * the nearest surviving ancestor at the turn up to which they still share rows (or becomes a root).
 */
export function deriveBranchTree(branches: readonly BranchRows[]): BranchNode[] {
  const ordered = [...branches].sort((a, b) => a.firstRowId - b.firstRowId);
  const messageSets = ordered.map((b) => new Set(b.rows.map((r) => r.messageId)));
  return ordered.map((b, i) => {
    const node: BranchNode = {
      branchId: b.branchId,
      messageCount: b.rows.length,
      userTurns: b.rows.filter((r) => r.isUser).length,
      createdAt: b.createdAt,
      parentBranchId: null,
      forkTurn: null,
      sharedItemCount: 0,
    };
    if (i === 0 || b.branchId === 'main') return node;
    let bestIndex = -1;
    let bestRun = 0;
    for (let j = 0; j < i; j++) {
      const held = messageSets[j] as Set<number>;
      let run = 0;
      while (run < b.rows.length && held.has((b.rows[run] as { messageId: number }).messageId)) run++;
      // Strictly longer only, so ties go to the earlier-created branch.
      if (run > bestRun) {
        bestRun = run;
        bestIndex = j;
      }
    }
    if (bestIndex < 0) return { ...node, forkTurn: 1 };
    let maxTurn = 0;
    for (const r of b.rows.slice(0, bestRun)) if (r.branchTurnNumber !== null && r.branchTurnNumber > maxTurn) maxTurn = r.branchTurnNumber;
    return {
      ...node,
      parentBranchId: (ordered[bestIndex] as BranchRows).branchId,
      forkTurn: maxTurn + 1,
      sharedItemCount: bestRun,
    };
  });
}

interface TreeRecord {
  id: number;
  branch: unknown;
  message_id: number;
  message_type: unknown;
  branch_turn_number: unknown;
  created_at: unknown;
}

/**
 * Reads every structure row of the session (ids and turn numbers only, never message text), in branch then
 * sequence order, which idx_structure_branch_seq delivers without sorting.
 */
export function loadBranchRows(ctx: QueryContext, sessionId: string): BranchRows[] {
  const rows = ctx
    .stmt(
      `SELECT id, ${exactTextSql('branch_id')} AS branch, message_id, message_type, branch_turn_number, created_at
       FROM message_structure WHERE session_id = ? ORDER BY branch_id, sequence_number`,
    )
    .iterate<TreeRecord>(sessionId);
  const out: BranchRows[] = [];
  let current: { branchId: string; firstRowId: number; createdAt: string | null; rows: BranchRows['rows'][number][] } | undefined;
  for (const r of rows) {
    const branchId = textFromSql(r.branch);
    if (!current || current.branchId !== branchId) {
      current = { branchId, firstRowId: Number(r.id), createdAt: null, rows: [] };
      out.push(current);
    }
    current.firstRowId = Math.min(current.firstRowId, Number(r.id));
    const createdAt = textOrNull(r.created_at);
    if (createdAt !== null && (current.createdAt === null || createdAt < current.createdAt)) current.createdAt = createdAt;
    current.rows.push({
      messageId: Number(r.message_id),
      branchTurnNumber: numberOrNull(r.branch_turn_number),
      isUser: r.message_type === 'user',
    });
  }
  return out;
}

/** See `SessionDatabase.getBranchTree`. */
export function readBranchTree(ctx: QueryContext, sessionId: string): BranchNode[] {
  if (!isStructuredSession(ctx, sessionId)) {
    const node = plainBranchNode(ctx, sessionId);
    return node ? [node] : [];
  }
  return deriveBranchTree(loadBranchRows(ctx, sessionId));
}
