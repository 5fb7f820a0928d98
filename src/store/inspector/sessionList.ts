/** The session list: one grouped query per table, merged by session id. */
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import type { SessionUsage } from '../types';
import type { SessionSummary } from './inspectorTypes';
import { readBranchIds } from './branchIds';
import type { QueryContext } from './queryContext';
import { numberOrNull, textOrNull } from './rowDecoding';
import { quoteIdentifier } from './tableDiscovery';

interface Accumulator {
  createdAt: string | null;
  updatedAt: string | null;
  messageCount: number;
  structureBranches: number;
  usage: SessionUsage | null;
}

/**
 * Every session the file knows of: rows in the sessions table, and also sessions known only from messages,
 * structure or usage rows (Python writes usage rows without a sessions row, spec §12 e 18; a crashed or foreign
 * writer may leave others). Including them is cheap: the counts below scan the same covering indexes anyway
 * (idx_<messages>_session_id, idx_structure_branch, the turn_usage UNIQUE index), so the cost is one pass over those
 * indexes, never over message text.
 *
 * Order: most recently updated first (sessions without a sessions row last), then by id.
 */
export function readSessionSummaries(ctx: QueryContext): SessionSummary[] {
  const t = ctx.tables;
  const all = new Map<string, Accumulator>();
  // Ids are selected through exactTextSql: node:sqlite would cut an id holding U+0000 and merge it with another.
  const sid = exactTextSql('session_id');
  const entry = (id: unknown): Accumulator => {
    const key = textFromSql(id);
    let acc = all.get(key);
    if (!acc) all.set(key, (acc = { createdAt: null, updatedAt: null, messageCount: 0, structureBranches: 0, usage: null }));
    return acc;
  };

  if (t.sessions !== null) {
    const createdAt = t.sessionsHasCreatedAt ? 'created_at' : 'NULL';
    const updatedAt = t.sessionsHasUpdatedAt ? 'updated_at' : 'NULL';
    for (const r of ctx
      .stmt(`SELECT ${sid} AS session_id, ${createdAt} AS created_at, ${updatedAt} AS updated_at FROM ${quoteIdentifier(t.sessions)}`)
      .iterate<{ session_id: unknown; created_at: unknown; updated_at: unknown }>()) {
      if (r.session_id === null) continue;
      const acc = entry(r.session_id);
      acc.createdAt = textOrNull(r.created_at);
      acc.updatedAt = textOrNull(r.updated_at);
    }
  }

  for (const r of ctx
    .stmt(`SELECT ${sid} AS sid, COUNT(*) AS n FROM ${quoteIdentifier(t.messages)} WHERE session_id IS NOT NULL GROUP BY session_id`)
    .iterate<{ sid: unknown; n: number }>()) {
    entry(r.sid).messageCount = Number(r.n);
  }

  if (t.messageStructure) {
    // Sessions, then each one's branches, by skipping through the indexes (one seek each) instead of reading every
    // structure row as COUNT(DISTINCT branch_id) did.
    const first = ctx.stmt(`SELECT ${exactTextSql('s')} AS sid FROM (SELECT MIN(session_id) AS s FROM message_structure)`);
    const next = ctx.stmt(
      `SELECT ${exactTextSql('s')} AS sid FROM (SELECT MIN(session_id) AS s FROM message_structure WHERE session_id > ?)`,
    );
    for (let r = first.get<{ sid: unknown }>(); r !== undefined && r.sid !== null; r = next.get<{ sid: unknown }>(textFromSql(r.sid))) {
      entry(r.sid).structureBranches = readBranchIds(ctx, textFromSql(r.sid)).length;
    }
  }

  if (t.turnUsage) {
    // The sums getSessionUsage() computes, with its rule: null when SUM(requests) is NULL, other NULL sums → 0.
    for (const r of ctx
      .stmt(
        `SELECT ${sid} AS sid, SUM(requests) AS requests, SUM(input_tokens) AS input, SUM(output_tokens) AS output,
           SUM(total_tokens) AS total, COUNT(*) AS turns FROM turn_usage WHERE session_id IS NOT NULL GROUP BY session_id`,
      )
      .iterate<{ sid: unknown; requests: unknown; input: unknown; output: unknown; total: unknown; turns: number }>()) {
      const requests = numberOrNull(r.requests);
      entry(r.sid).usage =
        requests === null
          ? null
          : {
              requests,
              inputTokens: numberOrNull(r.input) ?? 0,
              outputTokens: numberOrNull(r.output) ?? 0,
              totalTokens: numberOrNull(r.total) ?? 0,
              totalTurns: Number(r.turns),
            };
    }
  }

  const out: SessionSummary[] = [...all].map(([sessionId, a]) => ({
    sessionId,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    messageCount: a.messageCount,
    // A plain session shows as one branch (main) when it has messages, as getBranchTree lists it.
    branchCount: a.structureBranches > 0 ? a.structureBranches : a.messageCount > 0 ? 1 : 0,
    structured: a.structureBranches > 0,
    usage: a.usage,
  }));
  return out.sort((a, b) => {
    if (a.updatedAt !== b.updatedAt) {
      if (a.updatedAt === null) return 1;
      if (b.updatedAt === null) return -1;
      return a.updatedAt < b.updatedAt ? 1 : -1;
    }
    return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
  });
}
