/**
 * Counts and totals a long-lived `SessionDatabase` keeps instead of recomputing (issue: SQLite keeps no counts, so the
 * Tools tab, the Tokens tab's totals and the branch tree's message counts each re-read a session's rows, up to seconds
 * on a year-long session). Kept in memory for the connection's life, per session, and **never written into the
 * session file**: the format stays Python's.
 *
 * How they stay right. Row ids of `message_structure`, the messages table and `turn_usage` are AUTOINCREMENT (spec
 * §7): an id is never handed out twice, so every row past a session's high-water mark is new. When `PRAGMA
 * data_version` says another connection committed (this connection only reads), the next kept answer first checks
 * the session in the same read snapshot:
 * - the rows past the mark are read (a rowid range: as many rows as were written), and the session's rows are counted
 *   (one covering-index count, the cost of this check);
 * - a session that does not hold its old rows plus the new ones lost rows (a pop, a deleted or cleared branch, a
 *   compaction, a history rewrite): its kept state is dropped and rebuilt on demand;
 * - a new message row that no new structure row points to means a structure row was re-pointed in place (the JS
 *   store's `applyHistoryMutations`): dropped the same way;
 * - `turn_usage` likewise: `INSERT OR REPLACE` deletes the old row, so a replaced turn shows as a count short.
 * Otherwise the new rows are folded into whatever was kept. A schema change drops everything.
 */
import { quoteIdentifier } from './tableDiscovery';
import { exactTextSql, textFromSql } from '../sqlite/exactText';
import { readBranchIds } from './branchIds';
import type { QueryContext } from './queryContext';
import { TOOL_CALL_MESSAGE_TYPES } from '../format/itemClassification';
import { feedToolCalls, ToolTotalsAccumulator, type ToolCallRow, type ToolTotal } from './toolTotals';
import { addUsageSums, sumUsageWhere, sqlUsageSums, type UsageSums, type UsageSumsScope, type UsageSumsSource } from './usageTables';

/** How many sessions keep totals at once; the least recently asked-about one is forgotten first. */
export const KEPT_SESSIONS = 16;

/** What a long first computation reports, and how the asker stops it (`checkCancelled` throws to stop). */
export interface KeptProgress {
  /** Rows read so far; `total` 0: not known in advance. */
  onProgress?(done: number, total: number): void;
  /** Called every few thousand rows; throws to abandon the computation (nothing half-built is kept). */
  checkCancelled?(): void;
}

interface KeptSession {
  /** `data_version` when the state below was last brought up to date (in that read's snapshot). */
  checkedAt: number;
  /** The largest structure row id of the session seen, and of its message rows. */
  structureMark: number;
  messageMark: number;
  /** Structure rows per branch (branches with rows only). */
  branchRows: Map<string, number>;
  usageMark: number;
  usageRows: number;
  /** Tool totals by scope: a branch id, or `SESSION_SCOPE` for the whole session. */
  tools: Map<string, ToolTotalsAccumulator>;
  /** Usage sums by `usageKey`. */
  usage: Map<string, { scope: UsageSumsScope; sums: UsageSums }>;
}

/** Counters of what `KeptTotals` did (for tests and the benchmark). */
export interface KeptTotalsStats {
  started: number;
  caughtUp: number;
  rebuilt: number;
}

const SESSION_SCOPE = '\u0000session';

function usageKey(scope: UsageSumsScope): string {
  if (scope.branchId === null) return SESSION_SCOPE;
  return scope.turns ? `${scope.branchId}\u0000${scope.turns.from}\u0000${scope.turns.to}` : scope.branchId;
}

const TOOL_TYPES: ReadonlySet<string> = new Set(TOOL_CALL_MESSAGE_TYPES);

export class KeptTotals {
  private readonly sessions = new Map<string, KeptSession>();
  private dataVersion = Number.NaN;
  /** Set by the caller around one request (the store worker: progress messages and Cancel). */
  progress: KeptProgress | undefined;

  constructor(private readonly ctx: QueryContext) {}

  /** At the start of every read, in its snapshot: notes whether anything was committed since the last read. */
  beginRead(schemaChanged: boolean): void {
    if (schemaChanged) this.sessions.clear();
    this.dataVersion = Number(this.ctx.stmt('SELECT data_version AS v FROM pragma_data_version').get<{ v: number }>()?.v ?? 0);
  }

  /** Tool totals of a branch, or (null) of the whole session, kept from the first time they are asked for. */
  toolTotals(sessionId: string, branchId: string | null): ToolTotal[] {
    const kept = this.session(sessionId);
    const key = branchId ?? SESSION_SCOPE;
    let acc = kept.tools.get(key);
    if (!acc) {
      const built = new ToolTotalsAccumulator(branchId === null);
      feedToolCalls(this.ctx, built, sessionId, branchId, this.rowCounter());
      kept.tools.set(key, (acc = built));
    }
    return acc.result();
  }

  /** Usage sums of a scope, kept (see `UsageSumsSource`). */
  readonly usageSums: UsageSumsSource = (ctx, sessionId, scope) => {
    const kept = this.session(sessionId);
    const key = usageKey(scope);
    let entry = kept.usage.get(key);
    if (!entry) kept.usage.set(key, (entry = { scope, sums: sqlUsageSums(ctx, sessionId, scope) }));
    return entry.sums;
  };

  /** Structure rows per branch, kept. */
  branchRowCounts(sessionId: string): ReadonlyMap<string, number> {
    return this.session(sessionId).branchRows;
  }

  /** What happened so far: sessions started, brought up to date from new rows, and rebuilt after a removal. */
  readonly stats: KeptTotalsStats = { started: 0, caughtUp: 0, rebuilt: 0 };

  /** Forgets everything (the connection closes). */
  clear(): void {
    this.sessions.clear();
  }

  /** Counts tool-call rows read (how many there are is unknown until the pass ends, so the total is 0). */
  private rowCounter(): (() => void) | undefined {
    const progress = this.progress;
    if (!progress) return undefined;
    let done = 0;
    return () => {
      done++;
      if ((done & 4095) !== 0) return;
      progress.checkCancelled?.();
      progress.onProgress?.(done, 0);
    };
  }

  /** The session's kept state, brought up to date with this read's snapshot. */
  private session(sessionId: string): KeptSession {
    let kept = this.sessions.get(sessionId);
    if (kept && kept.checkedAt !== this.dataVersion) {
      if (this.catchUp(sessionId, kept)) this.stats.caughtUp++;
      else {
        this.stats.rebuilt++;
        kept = undefined;
      }
    }
    if (!kept) {
      kept = this.start(sessionId);
      this.stats.started++;
    } else kept.checkedAt = this.dataVersion;
    // Most recently asked-about last, so the first key is the one to forget.
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, kept);
    while (this.sessions.size > KEPT_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    return kept;
  }

  private start(sessionId: string): KeptSession {
    const branchRows = this.countBranchRows(sessionId);
    return {
      checkedAt: this.dataVersion,
      structureMark: this.maxStructureId(sessionId, branchRows.keys()),
      messageMark: this.maxMessageId(sessionId),
      branchRows,
      ...this.usageCount(sessionId),
      tools: new Map(),
      usage: new Map(),
    };
  }

  /**
   * Folds the rows written since the session was last checked into its kept state; false when rows were removed or
   * changed in place, so it must be rebuilt.
   */
  private catchUp(sessionId: string, kept: KeptSession): boolean {
    const ctx = this.ctx;
    const addedByBranch = new Map<string, number>();
    const newMessages = new Set<number>();
    const toolRows: ToolCallRow[] = [];
    let structureMark = kept.structureMark;
    if (ctx.tables.messageStructure) {
      // `+session_id`: read the rowid range past the mark, not the session's index (which would visit every row).
      const rows = ctx
        .stmt(
          `SELECT id, ${exactTextSql('branch_id')} AS branch, message_id, message_type AS type, COALESCE(tool_name, '') AS tool,
             user_turn_number AS turn FROM message_structure WHERE id > ? AND +session_id = ? ORDER BY sequence_number`,
        )
        .iterate<{ id: number; branch: unknown; message_id: number; type: unknown; tool: string; turn: number | null }>(
          kept.structureMark,
          sessionId,
        );
      for (const r of rows) {
        const branchId = textFromSql(r.branch);
        addedByBranch.set(branchId, (addedByBranch.get(branchId) ?? 0) + 1);
        newMessages.add(Number(r.message_id));
        structureMark = Math.max(structureMark, Number(r.id));
        if (typeof r.type === 'string' && TOOL_TYPES.has(r.type)) {
          toolRows.push({ tool: r.tool, turn: r.turn, messageId: Number(r.message_id), branchId });
        }
      }
    }
    // No row was removed exactly when the session holds its old rows plus the new ones (ids past the mark are new).
    let added = 0;
    for (const n of addedByBranch.values()) added += n;
    if (this.countSessionRows(sessionId) !== sum(kept.branchRows.values()) + added) return false;
    const messages = ctx.tables.messages;
    let messageMark = kept.messageMark;
    for (const r of ctx
      .stmt(`SELECT id FROM ${quoteIdentifier(messages)} WHERE session_id = ? AND id > ?`)
      .iterate<{ id: number }>(sessionId, kept.messageMark)) {
      if (!newMessages.has(Number(r.id))) return false;
      messageMark = Math.max(messageMark, Number(r.id));
    }
    // Appends only: fold them in.
    for (const [key, acc] of kept.tools) {
      for (const row of toolRows) if (key === SESSION_SCOPE || row.branchId === key) acc.add(row);
    }
    for (const [branch, n] of addedByBranch) kept.branchRows.set(branch, (kept.branchRows.get(branch) ?? 0) + n);
    kept.structureMark = structureMark;
    kept.messageMark = messageMark;
    this.catchUpUsage(sessionId, kept);
    return true;
  }

  private catchUpUsage(sessionId: string, kept: KeptSession): void {
    const now = this.usageCount(sessionId);
    if (now.usageMark === kept.usageMark && now.usageRows === kept.usageRows) return;
    const added = this.ctx.tables.turnUsage
      ? Number(
          this.ctx
            .stmt('SELECT COUNT(*) AS n FROM turn_usage WHERE id > ? AND +session_id = ?')
            .get<{ n: number }>(kept.usageMark, sessionId)?.n ?? 0,
        )
      : 0;
    if (now.usageRows !== kept.usageRows + added) {
      // A row replaced or removed: sums are recomputed as they are asked for again.
      kept.usage.clear();
    } else {
      for (const entry of kept.usage.values()) {
        const { scope } = entry;
        const where = ['id > ?', '+session_id = ?'];
        const params: (string | number)[] = [kept.usageMark, sessionId];
        if (scope.branchId !== null) {
          where.push('+branch_id = ?');
          params.push(scope.branchId);
        }
        if (scope.turns) {
          where.push('user_turn_number BETWEEN ? AND ?');
          params.push(scope.turns.from, scope.turns.to);
        }
        entry.sums = addUsageSums(entry.sums, sumUsageWhere(this.ctx, where.join(' AND '), params));
      }
    }
    kept.usageMark = now.usageMark;
    kept.usageRows = now.usageRows;
  }

  private countBranchRows(sessionId: string): Map<string, number> {
    const counts = new Map<string, number>();
    if (!this.ctx.tables.messageStructure) return counts;
    const count = this.ctx.stmt('SELECT COUNT(*) AS n FROM message_structure WHERE session_id = ? AND branch_id = ?');
    for (const branch of readBranchIds(this.ctx, sessionId)) {
      counts.set(branch, Number(count.get<{ n: number }>(sessionId, branch)?.n ?? 0));
    }
    return counts;
  }

  /** One count of the session's index entries: the check's cost, about 50 ms per million rows. */
  private countSessionRows(sessionId: string): number {
    if (!this.ctx.tables.messageStructure) return 0;
    return Number(this.ctx.stmt('SELECT COUNT(*) AS n FROM message_structure WHERE session_id = ?').get<{ n: number }>(sessionId)?.n ?? 0);
  }

  private maxStructureId(sessionId: string, branches: Iterable<string>): number {
    let max = 0;
    // One seek per branch on idx_structure_branch (session_id, branch_id, rowid).
    const stmt = this.ctx.stmt('SELECT MAX(id) AS m FROM message_structure WHERE session_id = ? AND branch_id = ?');
    for (const branch of branches) max = Math.max(max, Number(stmt.get<{ m: number | null }>(sessionId, branch)?.m ?? 0));
    return max;
  }

  private maxMessageId(sessionId: string): number {
    const table = quoteIdentifier(this.ctx.tables.messages);
    return Number(this.ctx.stmt(`SELECT MAX(id) AS m FROM ${table} WHERE session_id = ?`).get<{ m: number | null }>(sessionId)?.m ?? 0);
  }

  private usageCount(sessionId: string): { usageMark: number; usageRows: number } {
    if (!this.ctx.tables.turnUsage) return { usageMark: 0, usageRows: 0 };
    const r = this.ctx
      .stmt('SELECT COUNT(*) AS n, MAX(id) AS m FROM turn_usage WHERE session_id = ?')
      .get<{ n: number; m: number | null }>(sessionId);
    return { usageMark: Number(r?.m ?? 0), usageRows: Number(r?.n ?? 0) };
  }
}

function sum(values: Iterable<number>): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}
