/**
 * The branch-tree derivation the inspector used before it moved to index seeks (issue 13): every structure row of
 * the session read in JS, the parent found by the longest leading run of shared message ids. Kept as the oracle the
 * SQL version is checked against, on the fixtures and on generated files.
 */
import type { BranchNode, SqliteDatabase } from '../../src/store';

/** One branch's rows in sequence order, as the derivation needs them. */
interface BranchRows {
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

/** Reads every structure row of the session, in branch then sequence order, and derives the tree from them. */
export function branchTreeByRows(db: SqliteDatabase, sessionId: string): BranchNode[] {
  const rows = db
    .prepare(
      `SELECT id, branch_id AS branch, message_id, message_type, branch_turn_number, created_at
       FROM message_structure WHERE session_id = ? ORDER BY branch_id, sequence_number`,
    )
    .all<{
      id: number;
      branch: string;
      message_id: number;
      message_type: string;
      branch_turn_number: number | null;
      created_at: string | null;
    }>(sessionId);
  const out: BranchRows[] = [];
  let current: { branchId: string; firstRowId: number; createdAt: string | null; rows: BranchRows['rows'][number][] } | undefined;
  for (const r of rows) {
    if (!current || current.branchId !== r.branch) {
      current = { branchId: r.branch, firstRowId: Number(r.id), createdAt: null, rows: [] };
      out.push(current);
    }
    current.firstRowId = Math.min(current.firstRowId, Number(r.id));
    if (r.created_at !== null && (current.createdAt === null || r.created_at < current.createdAt)) current.createdAt = r.created_at;
    current.rows.push({ messageId: Number(r.message_id), branchTurnNumber: r.branch_turn_number, isUser: r.message_type === 'user' });
  }
  return deriveBranchTree(out);
}
