/**
 * Which branch each branch was forked from, derived from the rows: the file does not record it. Branching from turn
 * N copies the source branch's structure rows with `branch_turn_number < N`, keeping their `message_id` (spec §8.3),
 * so a branch starts with the turns of its parent, message for message, and continues with messages of its own.
 *
 * Everything here is index seeks and covering-index counts, never a pass over the session's rows in JS: a year of an
 * agent's conversations (a million structure rows) must expand in well under 100 ms. Python's indexes are enough:
 * idx_structure_branch (session_id, branch_id) lists branches, finds a branch's first row and counts its rows;
 * idx_structure_turn (session_id, branch_id, user_turn_number) counts turns and finds a turn's first message.
 */
import type { ForkFacts } from '../../shared/turnOrigin';
import type { BranchNode } from './inspectorTypes';
import { readBranchIds } from './branchIds';
import { plainBranchNode } from './plainSessions';
import { isStructuredSession, type QueryContext } from './queryContext';
import { numberOrNull, textOrNull } from './rowDecoding';

interface BranchFacts {
  branchId: string;
  /** The branch's smallest structure row id: ids are AUTOINCREMENT, so this orders branches by creation exactly. */
  firstRowId: number;
  createdAt: string | null;
  messageCount: number;
  userTurns: number;
  /** The turn of the branch's first row (0 when it starts with items before any user message). */
  firstTurn: number | null;
  firstSequence: number;
  lastTurn: number | null;
}

function branchFacts(ctx: QueryContext, sessionId: string, branchId: string, keptCount: number | undefined): BranchFacts {
  const first = ctx
    .stmt(
      `SELECT id, created_at, user_turn_number AS turn, sequence_number AS seq FROM message_structure
       WHERE session_id = ? AND branch_id = ? ORDER BY id LIMIT 1`,
    )
    .get<{ id: number; created_at: unknown; turn: unknown; seq: number }>(sessionId, branchId);
  // The one pass over the branch, unless the count is kept (keptTotals.ts): counting entries of the narrowest covering
  // index.
  const items =
    keptCount !== undefined
      ? { n: keptCount }
      : ctx
          .stmt('SELECT COUNT(*) AS n FROM message_structure WHERE session_id = ? AND branch_id = ?')
          .get<{ n: number }>(sessionId, branchId);
  const last = ctx
    .stmt('SELECT MAX(user_turn_number) AS turn FROM message_structure WHERE session_id = ? AND branch_id = ?')
    .get<{ turn: unknown }>(sessionId, branchId);
  const lastTurn = numberOrNull(last?.turn);
  return {
    branchId,
    firstRowId: Number(first?.id ?? 0),
    // Rows of a branch are written in sequence, so its first row carries its earliest time.
    createdAt: textOrNull(first?.created_at),
    messageCount: Number(items?.n ?? 0),
    // The last turn's number, one seek: turns are numbered 1, 2, … on every branch (§7), so this is the count of user
    // turns, except after a compaction kept older turns' usage (§12 j), when it still says how many turns there were.
    userTurns: Math.max(0, lastTurn ?? 0),
    firstTurn: numberOrNull(first?.turn),
    firstSequence: Number(first?.seq ?? 0),
    lastTurn,
  };
}

/**
 * The message of a turn's first row on a branch (a turn's rows are few: one seek, then a tiny sort), each asked once
 * per tree: the searches against every earlier branch ask for the same turns of the same branches.
 */
class FirstMessages {
  private readonly seen = new Map<string, number | undefined>();

  constructor(
    private readonly ctx: QueryContext,
    private readonly sessionId: string,
  ) {}

  of(branchId: string, turn: number): number | undefined {
    const key = `${turn}\u0000${branchId}`;
    if (this.seen.has(key)) return this.seen.get(key);
    const row = this.ctx
      .stmt(
        // `+sequence_number`: without it SQLite walks idx_structure_branch_seq in order to skip the sort, i.e. the branch.
        `SELECT message_id FROM message_structure WHERE session_id = ? AND branch_id = ? AND user_turn_number = ?
         ORDER BY +sequence_number LIMIT 1`,
      )
      .get<{ message_id: number }>(this.sessionId, branchId, turn);
    const id = row === undefined ? undefined : Number(row.message_id);
    this.seen.set(key, id);
    return id;
  }
}

/**
 * The last turn `child` shares with `parent` (same first message), when it is past `above`; null when it shares no
 * more than that (or none). Shared turns are a prefix of the child (it was copied from the parent's first turns), so
 * one pair of seeks at `above + 1` rules a parent out, and otherwise a binary search finds the end in log₂(turns)
 * pairs. Asking only for more than the best parent so far found keeps a tree of many branches from searching every
 * pair in full: on the bench's file A, whose five branches share their first turns with each other, the tree takes
 * 220 statements, not 519.
 */
function lastSharedTurn(first: FirstMessages, child: BranchFacts, parent: BranchFacts, above: number | undefined): number | null {
  if (child.firstTurn === null || child.lastTurn === null || parent.lastTurn === null) return null;
  const shared = (turn: number): boolean => {
    const mine = first.of(child.branchId, turn);
    return mine !== undefined && mine === first.of(parent.branchId, turn);
  };
  let lo = above === undefined ? child.firstTurn : above + 1;
  // The parent has no turn past its last to share.
  let hi = Math.min(child.lastTurn, parent.lastTurn);
  if (lo > hi || !shared(lo)) return null;
  while (lo < hi) {
    const mid = lo + Math.ceil((hi - lo) / 2);
    if (shared(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The tree, in creation order:
 *
 * - `main`, and whichever branch was created first, have no parent and no fork turn.
 * - Any other branch B is compared with each branch created before it: the parent is the one B shares the most leading
 *   turns with (ties go to the earlier-created branch), and B's fork turn is the last shared turn + 1, the N of
 *   `createBranchFromTurn(N)`; `sharedItemCount` counts B's rows in the shared turns.
 * - A branch sharing no leading turn with an earlier branch has parent null and fork turn 1: it was branched from
 *   turn 1 with nothing before it to copy, so its origin cannot be told.
 *
 * Copies are indistinguishable from their source, so a branch forked from a copy whose turns all came from further up
 * (X forked from main at 3, Y from X at 2) is attributed to the earliest holder (main at 2): the same items, the same
 * fork point. When a parent was deleted, its own messages survive only in its children, so a child attaches to the
 * nearest surviving ancestor at the turn up to which they still share (or becomes a root).
 */
export function readBranchTree(ctx: QueryContext, sessionId: string, keptCounts?: ReadonlyMap<string, number>): BranchNode[] {
  if (!isStructuredSession(ctx, sessionId)) {
    const node = plainBranchNode(ctx, sessionId);
    return node ? [node] : [];
  }
  const branches = readBranchIds(ctx, sessionId)
    .map((id) => branchFacts(ctx, sessionId, id, keptCounts?.get(id)))
    .sort((a, b) => a.firstRowId - b.firstRowId);
  const first = new FirstMessages(ctx, sessionId);
  return branches.map((b, i) => {
    const node: BranchNode = {
      branchId: b.branchId,
      messageCount: b.messageCount,
      userTurns: b.userTurns,
      createdAt: b.createdAt,
      parentBranchId: null,
      forkTurn: null,
      sharedItemCount: 0,
    };
    if (i === 0 || b.branchId === 'main') return node;
    let best: { parent: BranchFacts; turn: number } | undefined;
    for (const candidate of branches.slice(0, i)) {
      // Strictly longer only, so ties go to the earlier-created branch.
      const turn = lastSharedTurn(first, b, candidate, best?.turn);
      if (turn !== null) best = { parent: candidate, turn };
    }
    if (best === undefined) return { ...node, forkTurn: 1 };
    // The shared turns were copied in one batch with consecutive sequence numbers (§8.3), so their rows are counted by
    // the span from the branch's first row to the last row of the last shared turn: two seeks instead of a count.
    const lastShared = ctx
      // `+ 0` keeps SQLite from answering MAX() by walking idx_structure_branch_seq backwards (the whole branch after the
      // fork); the turn's few rows come from idx_structure_turn instead.
      .stmt('SELECT MAX(sequence_number + 0) AS seq FROM message_structure WHERE session_id = ? AND branch_id = ? AND user_turn_number = ?')
      .get<{ seq: number | null }>(sessionId, b.branchId, best.turn);
    const sharedItemCount = lastShared?.seq == null ? 0 : Number(lastShared.seq) - b.firstSequence + 1;
    return { ...node, parentBranchId: best.parent.branchId, forkTurn: best.turn + 1, sharedItemCount };
  });
}

/** Stands in for kept counts: every branch counts 0 rows, so none is counted. */
const UNCOUNTED = { get: () => 0 } as unknown as ReadonlyMap<string, number>;

/**
 * The tree's shape alone (each branch's parent and fork turn), without counting each branch's rows: the search names
 * the branches sharing a turn with it, and its first hits must not wait for counts (0.8 s on a 100,000-turn session
 * with five long branches).
 */
export function readBranchForks(ctx: QueryContext, sessionId: string): ForkFacts[] {
  return readBranchTree(ctx, sessionId, UNCOUNTED).map(({ branchId, parentBranchId, forkTurn }) => ({
    branchId,
    parentBranchId,
    forkTurn,
  }));
}
