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

/** A reader that runs SQL of its own: `SessionDatabase` (the CLI's and the tools' store); not the store worker's. */
interface SqlReader {
  readWith<T>(fn: (ctx: QueryContext) => T): T;
}

const hasSql = (reader: unknown): reader is SqlReader =>
  typeof reader === 'object' && reader !== null && typeof (reader as Partial<SqlReader>).readWith === 'function';

/**
 * The newest compaction item of the branch before `beforeSequence`, or null when it has none there; undefined when
 * the reader cannot be asked (no SQL of its own, or no structure rows: a plain session is read whole anyway).
 * One backward walk of idx_structure_branch_seq over the structure rows (no item is decoded), two index range counts.
 */
export function olderCompaction(
  reader: unknown,
  sessionId: string,
  branchId: string,
  beforeSequence: number,
  listed: number,
): OlderCompaction | null | undefined {
  if (!hasSql(reader)) return undefined;
  return reader.readWith((ctx) => {
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
  });
}
