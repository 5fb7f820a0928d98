/**
 * The newest compaction item older than the history a turn's answer reads (docs/context.md, "Reconstructed"): the
 * runner sends the history from the last compaction item on, however far back it is, so a turn deep in a long session
 * needs it even when its item is older than the newest `HISTORY_READ_ITEMS` read. Found by the structure rows'
 * `message_type` (the item's `type`, as Python's `AdvancedSQLiteSession` and ours classify it), never by reading the
 * items.
 */
import type { QueryContext } from '../inspector/queryContext';

export interface OlderCompaction {
  /** The compaction item's sequence number. */
  sequence: number;
  /** Items of the branch after it and before the history read. */
  between: number;
  /** Where the `listed` items before it start (the sequence number of the oldest), null when it has none before it. */
  listFrom: number | null;
}

/**
 * A reader that can be asked: `SessionDatabase` (the CLI's and the tools' store) and the store worker's database (the
 * extension's view), which answers with this module's query in the worker. Server stores hold no structure rows.
 */
interface CompactionReader {
  olderCompaction(
    sessionId: string,
    branchId: string,
    beforeSequence: number,
    listed: number,
  ): OlderCompaction | null | undefined | Promise<OlderCompaction | null | undefined>;
}

const canAsk = (reader: unknown): reader is CompactionReader =>
  typeof reader === 'object' && reader !== null && typeof (reader as Partial<CompactionReader>).olderCompaction === 'function';

/**
 * The newest compaction item of the branch before `beforeSequence`, or null when it has none there; undefined when
 * the reader cannot be asked (a server store, or no structure rows: a plain session is read whole anyway).
 */
export async function olderCompaction(
  reader: unknown,
  sessionId: string,
  branchId: string,
  beforeSequence: number,
  listed: number,
): Promise<OlderCompaction | null | undefined> {
  return canAsk(reader) ? reader.olderCompaction(sessionId, branchId, beforeSequence, listed) : undefined;
}

/**
 * The query, run inside the reader's read snapshot (`SessionDatabase.olderCompaction`): one backward walk of
 * idx_structure_branch_seq over the structure rows (no item is decoded), two index range counts.
 */
export function findOlderCompaction(
  ctx: QueryContext,
  sessionId: string,
  branchId: string,
  beforeSequence: number,
  listed: number,
): OlderCompaction | null | undefined {
  if (!ctx.tables.messageStructure) return undefined;
  const found = ctx
    .stmt(
      `SELECT sequence_number AS seq FROM message_structure
       WHERE session_id = ? AND branch_id = ? AND sequence_number < ? AND message_type IN ('compaction', 'compaction_summary')
       ORDER BY sequence_number DESC LIMIT 1`,
    )
    .get<{ seq: number }>(sessionId, branchId, beforeSequence);
  if (!found) return null;
  const between =
    ctx
      .stmt(
        `SELECT COUNT(*) AS n FROM message_structure
         WHERE session_id = ? AND branch_id = ? AND sequence_number > ? AND sequence_number < ?`,
      )
      .get<{ n: number }>(sessionId, branchId, found.seq, beforeSequence)?.n ?? 0;
  const first =
    listed > 0
      ? ctx
          .stmt(
            `SELECT MIN(seq) AS seq FROM (SELECT sequence_number AS seq FROM message_structure
             WHERE session_id = ? AND branch_id = ? AND sequence_number < ? ORDER BY sequence_number DESC LIMIT ?)`,
          )
          .get<{ seq: number | null }>(sessionId, branchId, found.seq, listed)?.seq
      : null;
  return { sequence: found.seq, between, listFrom: first ?? null };
}
