/**
 * The trace store: spans from every source (the extension's runs, agent commands, the OTLP receiver, imported files)
 * in one SQLite file of our own, linked to sessions, branches and turns. Every write is one transaction; reads of a
 * turn go through the `traces` table's indexes, so a turn's spans come back in milliseconds at a million spans.
 */
import type { OpenOptions } from '../drivers/openDatabase';
import { StatementCache, openOwnStore } from '../sqlite/ownStoreFile';
import { describeDatabaseError } from '../errors';
import { immediateTransaction, readTransaction, type SqliteDatabase, type SqliteStatement } from '../sqlite/sqliteDatabase';
import type { Attributes, OtlpEvent, OtlpStatusCode } from './otlpSpans';
import { LINK_RANKS, TRACE_STORE_FILE, ensureOtlpColumn, type LinkHow } from './traceSchema';
import { TraceStoreError } from './traceErrors';
import type { OtlpDetail, SpanKind, SpanRecord, SpanSource, TraceLink } from './spanRecord';
import { parseOtlpJson } from './otlpRequest';
import { parseOtlpProtobuf } from './otlpProtobuf';
import { spanRecordOf } from './spanConventions';

/** A span as read back: the record, its resource and when the store received its trace. */
export interface StoredSpan extends Omit<SpanRecord, 'link'> {
  id: number;
}

/** A trace and what links it. */
export interface TraceSummary {
  traceId: string;
  sessionId: string | null;
  branchId: string | null;
  turnNumber: number | null;
  linkedBy: LinkHow;
  startUs: number;
  endUs: number;
  spanCount: number;
  receivedMs: number;
}

/** A trace no session could be found for, and why. */
export interface UnlinkedTrace extends TraceSummary {
  reason: string;
}

/** Which turn a read is for; `window` is the turn's time span in the session file, for traces linked only by session. */
export interface TurnQuery {
  sessionId: string;
  branchId: string;
  turnNumber: number;
  /** From the turn's user message to the next turn's (null: the branch's last turn, open-ended). */
  window?: { startUs: number; endUs: number | null };
}

/** One turn of a latency query: the branch that ran it, its number, and its window (see `TurnQuery`). */
export interface LatencyTurn {
  branchId: string;
  turnNumber: number;
  window?: { startUs: number; endUs: number | null };
}

/**
 * Where one turn's time went, as its traces tell it (the turn list, the Tokens table, the compare view). `startUs` to
 * `endUs` runs from the first span of its traces to the last one's end: the turn's wall time, waits between its runs
 * included.
 */
export interface TurnLatency {
  branchId: string;
  turnNumber: number;
  startUs: number;
  endUs: number;
  traces: number;
  /** Model-request spans. */
  requests: number;
  /** The models that answered those requests, most requests first. */
  models: string[];
  /** Spans that ended in an error. */
  errors: number;
}

/** Retention (the `agentSessions.traces.*` settings; `agent-sessions otlp --max-spans/--max-age-days`). */
export interface TraceRetention {
  maxSpans?: number;
  maxAgeDays?: number;
}

export interface AddResult {
  spans: number;
  traces: number;
}

/** OTLP's two bodies. */
export type OtlpFormat = 'json' | 'protobuf';

/** What one OTLP body gave: the spans stored, those rejected and why, the services that sent them. */
export interface IngestResult extends AddResult {
  rejected: number;
  reasons: string[];
  services: string[];
}

const NO_SESSION_REASON =
  'none of its spans names a session (agent_sessions.session_id, gen_ai.conversation.id or session.id): link it by hand, or set one of those attributes where the agent runs';

interface SpanRow {
  id: number;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: string;
  span_kind: number;
  start_us: number;
  end_us: number;
  status: string;
  error: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  tool_name: string | null;
  agent_name: string | null;
  source: string;
  service: string | null;
  attributes: string;
  resource: string;
  events: string;
  truncated: number;
  otlp: string | null;
}

interface TraceRow {
  trace_id: string;
  session_id: string | null;
  branch_id: string | null;
  turn_number: number | null;
  link_rank: number;
  start_us: number;
  end_us: number;
  span_count: number;
  received_ms: number;
}

/** The columns a span is read from; a store opened read-only from before `spans.otlp` reads it as null. */
const spanColumns = (hasOtlp: boolean): string => `s.id, s.trace_id, s.span_id, s.parent_span_id, s.name, s.kind, s.span_kind, s.start_us,
  s.end_us, s.status, s.error, s.model, s.input_tokens, s.output_tokens, s.cached_tokens, s.reasoning_tokens, s.tool_name,
  s.agent_name, s.source, s.service, s.attributes, r.json AS resource, s.events, s.truncated, ${hasOtlp ? 's.otlp' : 'NULL AS otlp'}`;

const HOW_BY_RANK = Object.fromEntries(Object.entries(LINK_RANKS).map(([how, rank]) => [rank, how])) as Record<number, LinkHow>;

function summaryOf(row: TraceRow): TraceSummary {
  return {
    traceId: row.trace_id,
    sessionId: row.session_id,
    branchId: row.branch_id,
    turnNumber: row.turn_number,
    linkedBy: HOW_BY_RANK[row.link_rank] ?? 'none',
    startUs: Number(row.start_us),
    endUs: Number(row.end_us),
    spanCount: Number(row.span_count),
    receivedMs: Number(row.received_ms),
  };
}

function spanOf(row: SpanRow): StoredSpan {
  const num = (v: number | null): number | null => (v === null ? null : Number(v));
  return {
    id: Number(row.id),
    traceId: row.trace_id,
    spanId: row.span_id,
    parentSpanId: row.parent_span_id,
    name: row.name,
    kind: row.kind as SpanKind,
    spanKind: Number(row.span_kind),
    startUs: Number(row.start_us),
    endUs: Number(row.end_us),
    status: row.status as OtlpStatusCode,
    error: row.error,
    model: row.model,
    inputTokens: num(row.input_tokens),
    outputTokens: num(row.output_tokens),
    cachedTokens: num(row.cached_tokens),
    reasoningTokens: num(row.reasoning_tokens),
    toolName: row.tool_name,
    agentName: row.agent_name,
    source: row.source as SpanSource,
    service: row.service,
    attributes: JSON.parse(row.attributes) as Attributes,
    resource: JSON.parse(row.resource) as Attributes,
    events: JSON.parse(row.events) as OtlpEvent[],
    truncated: row.truncated !== 0,
    // Left out rather than undefined where there is none (spans of our own runs, rows from before the column).
    ...(row.otlp ? { otlp: JSON.parse(row.otlp) as OtlpDetail } : {}),
  };
}

function rankOf(link: TraceLink | null): number {
  if (!link) return LINK_RANKS.none;
  return link.branchId && link.turnNumber !== null && link.turnNumber !== undefined ? LINK_RANKS.run : LINK_RANKS.attribute;
}

export class TraceStore {
  private readonly statements: StatementCache;
  /** Resource JSON → id, for the resources this connection has written or read. */
  private readonly resourceIds = new Map<string, number>();

  private readonly spanColumns: string;

  private constructor(
    readonly db: SqliteDatabase,
    readonly path: string,
    hasOtlpColumn: boolean,
  ) {
    this.statements = new StatementCache(db);
    this.spanColumns = spanColumns(hasOtlpColumn);
  }

  /** Opens (creating when missing and writable) the trace store at `path`; WAL: the receiver writes while the extension reads. */
  static open(path: string, options: Partial<OpenOptions> = {}): TraceStore {
    const db = openOwnStore(path, options, TRACE_STORE_FILE);
    try {
      return new TraceStore(db, path, ensureOtlpColumn(db));
    } catch (err) {
      db.close();
      throw describeDatabaseError(err, path, { readonly: options.readonly });
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  private stmt(sql: string): SqliteStatement {
    return this.statements.get(sql);
  }

  private resourceId(resource: Attributes): number {
    const json = JSON.stringify(resource);
    const known = this.resourceIds.get(json);
    if (known !== undefined) return known;
    this.stmt('INSERT INTO resources (json) VALUES (?) ON CONFLICT (json) DO NOTHING').run(json);
    const id = Number(this.stmt('SELECT id FROM resources WHERE json = ?').get<{ id: number }>(json)!.id);
    if (this.resourceIds.size > 1000) this.resourceIds.clear();
    this.resourceIds.set(json, id);
    return id;
  }

  /**
   * Adds spans in one transaction. A span sent again (an exporter's retry) replaces the earlier copy, and each trace's
   * first start and last end are read again from its spans, so a copy with other times moves them both ways. Each
   * trace's link is the strongest any of its spans gives, and never weaker than the one it had.
   */
  addSpans(records: readonly SpanRecord[], nowMs = Date.now()): AddResult {
    if (records.length === 0) return { spans: 0, traces: 0 };
    try {
      return immediateTransaction(this.db, () => {
        const insert = this.stmt(
          `INSERT INTO spans (trace_id, span_id, parent_span_id, name, kind, span_kind, start_us, end_us, status, error, model, input_tokens,
             output_tokens, cached_tokens, reasoning_tokens, tool_name, agent_name, source, service, attributes, resource_id, events, truncated, otlp)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (trace_id, span_id) DO UPDATE SET parent_span_id = excluded.parent_span_id, name = excluded.name,
             kind = excluded.kind, span_kind = excluded.span_kind, start_us = excluded.start_us, end_us = excluded.end_us, status = excluded.status,
             error = excluded.error, model = excluded.model, input_tokens = excluded.input_tokens,
             output_tokens = excluded.output_tokens, cached_tokens = excluded.cached_tokens,
             reasoning_tokens = excluded.reasoning_tokens, tool_name = excluded.tool_name, agent_name = excluded.agent_name,
             source = excluded.source, service = excluded.service, attributes = excluded.attributes,
             resource_id = excluded.resource_id, events = excluded.events, truncated = excluded.truncated, otlp = excluded.otlp`,
        );
        const traces = new Map<string, { link: TraceLink | null; rank: number }>();
        for (const r of records) {
          insert.run(
            r.traceId,
            r.spanId,
            r.parentSpanId,
            r.name,
            r.kind,
            r.spanKind,
            r.startUs,
            r.endUs,
            r.status,
            r.error,
            r.model,
            r.inputTokens,
            r.outputTokens,
            r.cachedTokens,
            r.reasoningTokens,
            r.toolName,
            r.agentName,
            r.source,
            r.service,
            JSON.stringify(r.attributes),
            this.resourceId(r.resource),
            JSON.stringify(r.events),
            r.truncated ? 1 : 0,
            r.otlp ? JSON.stringify(r.otlp) : null,
          );
          const t = traces.get(r.traceId);
          const rank = rankOf(r.link);
          if (!t) traces.set(r.traceId, { link: r.link, rank });
          else if (rank > t.rank) Object.assign(t, { link: r.link, rank });
        }
        // Times and count from the trace's spans as they now are: a replaced span's old times are gone with it.
        const upsert = this.stmt(
          `INSERT INTO traces (trace_id, session_id, branch_id, turn_number, link_rank, start_us, end_us, span_count, received_ms)
           SELECT ?, ?, ?, ?, ?, min(start_us), max(end_us), count(*), ? FROM spans WHERE trace_id = ?
           ON CONFLICT (trace_id) DO UPDATE SET
             start_us = excluded.start_us, end_us = excluded.end_us,
             span_count = excluded.span_count, received_ms = excluded.received_ms,
             session_id = CASE WHEN excluded.link_rank > link_rank THEN excluded.session_id ELSE session_id END,
             branch_id = CASE WHEN excluded.link_rank > link_rank THEN excluded.branch_id ELSE branch_id END,
             turn_number = CASE WHEN excluded.link_rank > link_rank THEN excluded.turn_number ELSE turn_number END,
             link_rank = max(link_rank, excluded.link_rank)`,
        );
        for (const [traceId, t] of traces) {
          upsert.run(
            traceId,
            t.link?.sessionId ?? null,
            t.rank >= LINK_RANKS.run ? (t.link?.branchId ?? null) : null,
            t.rank >= LINK_RANKS.run ? (t.link?.turnNumber ?? null) : null,
            t.rank,
            nowMs,
            traceId,
          );
        }
        return { spans: records.length, traces: traces.size };
      });
    } catch (err) {
      throw describeDatabaseError(err, this.path);
    }
  }

  /**
   * An OTLP body (a request to the receiver, a file) decoded, read by the conventions and stored in one transaction.
   * A body that is not OTLP is a `TraceInputError` and stores nothing.
   */
  ingestOtlp(body: Uint8Array, format: OtlpFormat, source: SpanSource = 'otlp', nowMs = Date.now()): IngestResult {
    const batch =
      format === 'protobuf'
        ? parseOtlpProtobuf(body)
        : parseOtlpJson(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
    const records = batch.spans.map((s) => spanRecordOf(s, source));
    const added = this.addSpans(records, nowMs);
    return {
      ...added,
      rejected: batch.rejected.count,
      reasons: batch.rejected.reasons,
      services: [...new Set(records.map((r) => r.service).filter((x): x is string => x !== null))],
    };
  }

  /** Every span of a trace, by start time (parents before children when they start together). */
  spansOfTrace(traceId: string): StoredSpan[] {
    return this.stmt(
      `SELECT ${this.spanColumns} FROM spans s JOIN resources r ON r.id = s.resource_id WHERE s.trace_id = ? ORDER BY s.start_us, s.parent_span_id IS NOT NULL, s.id`,
    )
      .all<SpanRow>(traceId)
      .map(spanOf);
  }

  trace(traceId: string): TraceSummary | undefined {
    const row = this.stmt('SELECT * FROM traces WHERE trace_id = ?').get<TraceRow>(traceId);
    return row ? summaryOf(row) : undefined;
  }

  /**
   * The traces of one turn: those its run linked to it, and those linked only to the session whose first span starts
   * within the turn's window (from its user message to the next turn's), in time order.
   */
  tracesOfTurn(q: TurnQuery): TraceSummary[] {
    return readTransaction(this.db, () => {
      const exact = this.stmt(
        'SELECT * FROM traces WHERE session_id = ? AND branch_id = ? AND turn_number = ? ORDER BY start_us',
      ).all<TraceRow>(q.sessionId, q.branchId, q.turnNumber);
      const byTime = q.window
        ? this.stmt(
            'SELECT * FROM traces WHERE session_id = ? AND start_us >= ? AND start_us < ? AND turn_number IS NULL ORDER BY start_us',
          ).all<TraceRow>(q.sessionId, q.window.startUs, q.window.endUs ?? Number.MAX_SAFE_INTEGER)
        : [];
      return [...exact, ...byTime].map(summaryOf).sort((a, b) => a.startUs - b.startUs);
    });
  }

  /** The spans of one turn's traces, by start time. */
  spansOfTurn(q: TurnQuery): StoredSpan[] {
    return readTransaction(this.db, () => this.tracesOfTurn(q).flatMap((t) => this.spansOfTrace(t.traceId)));
  }

  /**
   * The latency of many turns of one session in one read: each turn's traces as `tracesOfTurn` finds them (its run's,
   * then session-only traces by window), summed. Turns with no trace are left out. A session-only trace whose start
   * falls in two windows (two branches' turns ran at the same time) counts for the first of them in `turns`' order.
   */
  turnLatencies(sessionId: string, turns: readonly LatencyTurn[]): TurnLatency[] {
    return readTransaction(this.db, () => {
      const key = (branchId: string, turn: number): string => `${turn}\u0000${branchId}`;
      const wanted = new Map(turns.map((t) => [key(t.branchId, t.turnNumber), t]));
      const byTurn = new Map<string, TraceRow[]>();
      const add = (k: string, row: TraceRow): void => {
        const list = byTurn.get(k);
        if (list) list.push(row);
        else byTurn.set(k, [row]);
      };
      for (const row of this.stmt(
        'SELECT * FROM traces WHERE session_id = ? AND branch_id IS NOT NULL AND turn_number IS NOT NULL',
      ).all<TraceRow>(sessionId)) {
        const k = key(row.branch_id as string, Number(row.turn_number));
        if (wanted.has(k)) add(k, row);
      }
      // Session-only traces by window: the windows by start, each trace to the last window starting at or before it.
      const windows = turns
        .filter((t) => t.window)
        .map((t) => ({ k: key(t.branchId, t.turnNumber), start: t.window!.startUs, end: t.window!.endUs ?? Number.MAX_SAFE_INTEGER }))
        .sort((a, b) => a.start - b.start);
      if (windows.length > 0) {
        for (const row of this.stmt('SELECT * FROM traces WHERE session_id = ? AND turn_number IS NULL AND start_us >= ?').all<TraceRow>(
          sessionId,
          windows[0]!.start,
        )) {
          const start = Number(row.start_us);
          let lo = 0;
          let hi = windows.length - 1;
          while (lo < hi) {
            const mid = (lo + hi + 1) >> 1;
            if (windows[mid]!.start <= start) lo = mid;
            else hi = mid - 1;
          }
          // Windows of one branch do not overlap; of two, the earlier-starting one that still holds the trace wins.
          const w = windows.slice(0, lo + 1).find((x) => x.start <= start && start < x.end);
          if (w) add(w.k, row);
        }
      }
      const perTrace = this.stmt(
        `SELECT kind, model, status, count(*) AS n FROM spans WHERE trace_id = ? AND (kind = 'model' OR status = 'error') GROUP BY kind, model, status`,
      );
      const out: TurnLatency[] = [];
      for (const t of turns) {
        const rows = byTurn.get(key(t.branchId, t.turnNumber));
        if (!rows) continue;
        const models = new Map<string, number>();
        let requests = 0;
        let errors = 0;
        for (const row of rows) {
          for (const g of perTrace.all<{ kind: string; model: string | null; status: string; n: number }>(row.trace_id)) {
            const n = Number(g.n);
            if (g.status === 'error') errors += n;
            if (g.kind !== 'model') continue;
            requests += n;
            if (g.model) models.set(g.model, (models.get(g.model) ?? 0) + n);
          }
        }
        out.push({
          branchId: t.branchId,
          turnNumber: t.turnNumber,
          startUs: Math.min(...rows.map((r) => Number(r.start_us))),
          endUs: Math.max(...rows.map((r) => Number(r.end_us))),
          traces: rows.length,
          requests,
          models: [...models].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([m]) => m),
          errors,
        });
      }
      return out;
    });
  }

  /**
   * The traces linked to a session, newest first: all of them, or those linked to one branch (`branchId`), or with
   * `branchId: null` those linked to the session alone. A session-only trace belongs to whichever turn's window it
   * starts in (docs/traces.md), which only the session file can tell: it is no branch's here.
   */
  tracesOfSession(sessionId: string, options: { branchId?: string | null; limit?: number } = {}): TraceSummary[] {
    const limit = options.limit ?? 10_000;
    const rows =
      options.branchId === undefined
        ? this.stmt('SELECT * FROM traces WHERE session_id = ? ORDER BY start_us DESC LIMIT ?').all<TraceRow>(sessionId, limit)
        : options.branchId === null
          ? this.stmt('SELECT * FROM traces WHERE session_id = ? AND branch_id IS NULL ORDER BY start_us DESC LIMIT ?').all<TraceRow>(
              sessionId,
              limit,
            )
          : this.stmt('SELECT * FROM traces WHERE session_id = ? AND branch_id = ? ORDER BY start_us DESC LIMIT ?').all<TraceRow>(
              sessionId,
              options.branchId,
              limit,
            );
    return rows.map(summaryOf);
  }

  /** Traces no session could be found for, newest first, with the reason. */
  unlinkedTraces(limit = 100): UnlinkedTrace[] {
    return this.stmt('SELECT * FROM traces WHERE session_id IS NULL ORDER BY received_ms DESC, start_us DESC LIMIT ?')
      .all<TraceRow>(limit)
      .map((row) => ({ ...summaryOf(row), reason: NO_SESSION_REASON }));
  }

  /** Links a trace by hand: the strongest link, which no later span of the trace overrides. */
  linkTrace(traceId: string, link: TraceLink): void {
    const changes = immediateTransaction(
      this.db,
      () =>
        this.stmt('UPDATE traces SET session_id = ?, branch_id = ?, turn_number = ?, link_rank = ? WHERE trace_id = ?').run(
          link.sessionId,
          link.branchId ?? null,
          link.turnNumber ?? null,
          LINK_RANKS.manual,
          traceId,
        ).changes,
    );
    if (changes === 0) throw new TraceStoreError('not-found', `There is no trace ${traceId} in ${this.path}.`);
  }

  /** Removes a session's traces and their spans; returns how many spans went. */
  clearSession(sessionId: string): number {
    return immediateTransaction(this.db, () => {
      const spans = this.stmt('DELETE FROM spans WHERE trace_id IN (SELECT trace_id FROM traces WHERE session_id = ?)').run(
        sessionId,
      ).changes;
      this.stmt('DELETE FROM traces WHERE session_id = ?').run(sessionId);
      return spans;
    });
  }

  /** How many traces and spans the store holds. */
  counts(): { traces: number; spans: number } {
    const row = this.stmt('SELECT count(*) AS traces, coalesce(sum(span_count), 0) AS spans FROM traces').get<{
      traces: number;
      spans: number;
    }>()!;
    return { traces: Number(row.traces), spans: Number(row.spans) };
  }

  /**
   * Applies the retention limits: traces received longer ago than `maxAgeDays` go, then the oldest traces until at
   * most `maxSpans` spans are left. One transaction; returns how many spans went.
   */
  prune(retention: TraceRetention, nowMs = Date.now()): number {
    return immediateTransaction(this.db, () => {
      let removed = 0;
      const dropOlderThan = (ms: number): void => {
        removed += this.stmt('DELETE FROM spans WHERE trace_id IN (SELECT trace_id FROM traces WHERE received_ms < ?)').run(ms).changes;
        this.stmt('DELETE FROM traces WHERE received_ms < ?').run(ms);
      };
      if (retention.maxAgeDays !== undefined && retention.maxAgeDays > 0) dropOlderThan(nowMs - retention.maxAgeDays * 86_400_000);
      const max = retention.maxSpans;
      if (max !== undefined && max >= 0) {
        let total = this.counts().spans;
        while (total > max) {
          // The oldest traces that hold the excess (at least one): delete them by received time, then start time.
          const victims = this.stmt('SELECT trace_id, span_count FROM traces ORDER BY received_ms, start_us LIMIT 500').all<{
            trace_id: string;
            span_count: number;
          }>();
          if (victims.length === 0) break;
          const del = this.stmt('DELETE FROM spans WHERE trace_id = ?');
          const delTrace = this.stmt('DELETE FROM traces WHERE trace_id = ?');
          for (const v of victims) {
            if (total <= max) break;
            const n = del.run(v.trace_id).changes;
            delTrace.run(v.trace_id);
            removed += n;
            total -= n;
          }
        }
      }
      this.stmt('DELETE FROM resources WHERE id NOT IN (SELECT DISTINCT resource_id FROM spans)').run();
      this.resourceIds.clear();
      return removed;
    });
  }
}
