/** The session list: one grouped query per table, merged by session id. */
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import type { SessionSummary } from './inspectorTypes';
import { readBranchIds } from './branchIds';
import type { QueryContext } from './queryContext';
import { numberOrNull, textOrNull } from './rowDecoding';
import { quoteIdentifier } from './tableDiscovery';
import { displaySumSql } from './usageTables';

/** A session's `turn_usage` sums as SQL gives them (null: no row had a value) and its row count. */
export interface SessionUsageSums {
  requests: number | null;
  input: number | null;
  output: number | null;
  total: number | null;
  turns: number;
}

/**
 * What the list is made of, one part per table, so a kept list (keptTotals.ts) can re-read the cheap parts and bring
 * the costly ones (a pass over every message and usage row) up to date from the rows past a mark instead.
 */
export interface SessionListParts {
  /** The sessions table's rows: times by session. */
  rows: Map<string, { createdAt: string | null; updatedAt: string | null }>;
  /** Messages per session. */
  messages: Map<string, number>;
  /** Branches with structure rows per session. */
  branches: Map<string, number>;
  usage: Map<string, SessionUsageSums>;
}

/** Ids are selected through exactTextSql: node:sqlite would cut an id holding U+0000 and merge it with another. */
const SID = exactTextSql('session_id');

export function readSessionRows(ctx: QueryContext): SessionListParts['rows'] {
  const t = ctx.tables;
  const out: SessionListParts['rows'] = new Map();
  if (t.sessions === null) return out;
  const createdAt = t.sessionsHasCreatedAt ? 'created_at' : 'NULL';
  const updatedAt = t.sessionsHasUpdatedAt ? 'updated_at' : 'NULL';
  for (const r of ctx
    .stmt(`SELECT ${SID} AS session_id, ${createdAt} AS created_at, ${updatedAt} AS updated_at FROM ${quoteIdentifier(t.sessions)}`)
    .iterate<{ session_id: unknown; created_at: unknown; updated_at: unknown }>()) {
    if (r.session_id === null) continue;
    out.set(textFromSql(r.session_id), { createdAt: textOrNull(r.created_at), updatedAt: textOrNull(r.updated_at) });
  }
  return out;
}

/**
 * How the rows of one query are grouped by session: all rows through the session index, which hands them over in
 * session order (no sort); the rows past a mark (`afterId`) by their rowid range, grouped in a temporary b-tree of the
 * few rows read. `GROUP BY session_id` alone made SQLite pick the index for the range too, to skip that sort: a walk of
 * every entry (the messages' index; every usage row, with its table row for the sums) to find the few new ones, 15–40
 * ms on file A after each append, the most of the session list's catch-up. `+session_id` groups the same (a column
 * under unary + keeps its collation) but no index can answer it, so the rowid range is the plan.
 */
function groupedBySession(afterId: boolean): string {
  return afterId ? 'WHERE id > ? AND session_id IS NOT NULL GROUP BY +session_id' : 'WHERE session_id IS NOT NULL GROUP BY session_id';
}

/** The SQL of `countMessagesBySession` (exported for the plan test): one parameter, the mark, with `afterId`. */
export function messagesBySessionSql(messagesTable: string, afterId: boolean): string {
  return `SELECT ${SID} AS sid, COUNT(*) AS n FROM ${quoteIdentifier(messagesTable)} ${groupedBySession(afterId)}`;
}

/** The SQL of `sumUsageBySession` (exported for the plan test). */
export function usageBySessionSql(afterId: boolean): string {
  // Never raising on overflow, as the Tokens tab's totals (usageTables.ts, `displaySumSql`).
  const sum = (column: string) => displaySumSql(column);
  return `SELECT ${SID} AS sid, ${sum('requests')} AS requests, ${sum('input_tokens')} AS input, ${sum('output_tokens')} AS output,
         ${sum('total_tokens')} AS total, COUNT(*) AS turns FROM turn_usage ${groupedBySession(afterId)}`;
}

/** Messages per session: all of them, or (`afterId`) those with a larger id (a rowid range). */
export function countMessagesBySession(ctx: QueryContext, afterId?: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of ctx
    .stmt(messagesBySessionSql(ctx.tables.messages, afterId !== undefined))
    .iterate<{ sid: unknown; n: number }>(...(afterId === undefined ? [] : [afterId]))) {
    out.set(textFromSql(r.sid), Number(r.n));
  }
  return out;
}

/** Branches per session, by skipping through the indexes (one seek each), never reading every structure row. */
export function countBranchesBySession(ctx: QueryContext): Map<string, number> {
  const out = new Map<string, number>();
  if (!ctx.tables.messageStructure) return out;
  const first = ctx.stmt(`SELECT ${exactTextSql('s')} AS sid FROM (SELECT MIN(session_id) AS s FROM message_structure)`);
  const next = ctx.stmt(
    `SELECT ${exactTextSql('s')} AS sid FROM (SELECT MIN(session_id) AS s FROM message_structure WHERE session_id > ?)`,
  );
  for (let r = first.get<{ sid: unknown }>(); r !== undefined && r.sid !== null; r = next.get<{ sid: unknown }>(textFromSql(r.sid))) {
    const id = textFromSql(r.sid);
    out.set(id, readBranchIds(ctx, id).length);
  }
  return out;
}

/** `turn_usage` sums per session: all rows, or (`afterId`) those with a larger id. */
export function sumUsageBySession(ctx: QueryContext, afterId?: number): Map<string, SessionUsageSums> {
  const out = new Map<string, SessionUsageSums>();
  if (!ctx.tables.turnUsage) return out;
  for (const r of ctx
    .stmt(usageBySessionSql(afterId !== undefined))
    .iterate<{ sid: unknown; requests: unknown; input: unknown; output: unknown; total: unknown; turns: number }>(
      ...(afterId === undefined ? [] : [afterId]),
    )) {
    out.set(textFromSql(r.sid), {
      requests: numberOrNull(r.requests),
      input: numberOrNull(r.input),
      output: numberOrNull(r.output),
      total: numberOrNull(r.total),
      turns: Number(r.turns),
    });
  }
  return out;
}

/** `a` + `b` as SQL would sum the union of their rows. */
export function addSessionUsageSums(a: SessionUsageSums, b: SessionUsageSums): SessionUsageSums {
  const add = (x: number | null, y: number | null): number | null => (x === null ? y : y === null ? x : x + y);
  return {
    requests: add(a.requests, b.requests),
    input: add(a.input, b.input),
    output: add(a.output, b.output),
    total: add(a.total, b.total),
    turns: a.turns + b.turns,
  };
}

export function readSessionListParts(ctx: QueryContext): SessionListParts {
  return {
    rows: readSessionRows(ctx),
    messages: countMessagesBySession(ctx),
    branches: countBranchesBySession(ctx),
    usage: sumUsageBySession(ctx),
  };
}

/**
 * Every session the file knows of: rows in the sessions table, and also sessions known only from messages,
 * structure or usage rows (Python writes usage rows without a sessions row, spec §12 e 18; a crashed or foreign
 * writer may leave others). Including them is cheap: the counts scan the same covering indexes anyway
 * (idx_<messages>_session_id, idx_structure_branch, the turn_usage UNIQUE index), so the cost is one pass over those
 * indexes, never over message text.
 *
 * Order: most recently updated first (sessions without a sessions row last), then by id.
 */
export function readSessionSummaries(ctx: QueryContext): SessionSummary[] {
  return summariesOf(readSessionListParts(ctx));
}

export function summariesOf(parts: SessionListParts): SessionSummary[] {
  const ids = new Set([...parts.rows.keys(), ...parts.messages.keys(), ...parts.branches.keys(), ...parts.usage.keys()]);
  const out: SessionSummary[] = [...ids].map((sessionId) => {
    const row = parts.rows.get(sessionId);
    const messageCount = parts.messages.get(sessionId) ?? 0;
    const branches = parts.branches.get(sessionId) ?? 0;
    const u = parts.usage.get(sessionId);
    return {
      sessionId,
      createdAt: row?.createdAt ?? null,
      updatedAt: row?.updatedAt ?? null,
      messageCount,
      // A plain session shows as one branch (main) when it has messages, as getBranchTree lists it.
      branchCount: branches > 0 ? branches : messageCount > 0 ? 1 : 0,
      structured: branches > 0,
      // The sums getSessionUsage() computes, with its rule: null when SUM(requests) is NULL, other NULL sums → 0.
      usage:
        u === undefined || u.requests === null
          ? null
          : {
              requests: u.requests,
              inputTokens: u.input ?? 0,
              outputTokens: u.output ?? 0,
              totalTokens: u.total ?? 0,
              totalTurns: u.turns,
            },
    };
  });
  return out.sort((a, b) => {
    if (a.updatedAt !== b.updatedAt) {
      if (a.updatedAt === null) return 1;
      if (b.updatedAt === null) return -1;
      return a.updatedAt < b.updatedAt ? 1 : -1;
    }
    return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
  });
}
