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
import type { SessionSummary } from './inspectorTypes';
import {
  addSessionUsageSums,
  countBranchesBySession,
  countMessagesBySession,
  readSessionListParts,
  readSessionRows,
  summariesOf,
  sumUsageBySession,
  type SessionListParts,
  type SessionUsageSums,
} from './sessionList';
import { TOOL_CALL_MESSAGE_TYPES } from '../format/itemClassification';
import { feedSessionToolCalls, feedToolCalls, readToolTotals, ToolTotalsAccumulator, type ToolCallRow, type ToolTotal } from './toolTotals';
import {
  addUsageSums,
  sumUsageWhere,
  sqlUsageRowsFrom,
  sqlUsageSums,
  type UsageRowsFrom,
  type UsageSums,
  type UsageSumsScope,
  type UsageSumsSource,
} from './usageTables';

/** How many sessions keep totals at once; the least recently asked-about one is forgotten first. */
export const KEPT_SESSIONS = 16;

/** What a long first computation reports, and how the asker stops it (`checkCancelled` throws to stop). */
export interface KeptProgress {
  /** Rows read so far; `total` 0: not known in advance. */
  onProgress?(done: number, total: number): void;
  /** Called every few thousand rows; throws to abandon the computation (nothing half-built is kept). */
  checkCancelled?(): void;
}

/** What is kept of a session's structure rows: counts per branch and the tool totals. */
interface StructurePart {
  /** `data_version` when this part was last brought up to date (in that read's snapshot). */
  checkedAt: number;
  /** The table's largest structure row id and message row id then: any row past them is newer (ids are AUTOINCREMENT). */
  structureMark: number;
  messageMark: number;
  /** The whole table's structure rows then (see `unchangedBelow`). */
  tableRows: number;
  /** Structure rows per branch (branches with rows only). */
  branchRows: Map<string, number>;
  /** Tool totals by scope: a branch id, or `SESSION_SCOPE` for the whole session. */
  tools: Map<string, ToolTotalsAccumulator>;
}

/** What is kept of a session's usage rows: sums per scope (see `usageKey`). */
interface UsagePart {
  checkedAt: number;
  /** The table's largest `turn_usage` id then, and the session's usage rows. */
  usageMark: number;
  usageRows: number;
  /** The whole table's usage rows then (see `unchangedBelow`). */
  tableRows: number;
  sums: Map<string, { scope: UsageSumsScope; sums: UsageSums }>;
  /**
   * A branch's usage rows from a turn on (`usageRowsFrom`), by `branch\0from`: counts only, so their first computation
   * is a count of the unique index's range (no row read), not the sums of the rows.
   */
  rowsFrom: Map<string, { branchId: string; from: number; count: number }>;
}

/** Each part is checked only when asked for: the Tokens tab never pays for the structure rows' check, nor the tree for usage. */
interface KeptSession {
  structure?: StructurePart;
  usage?: UsagePart;
}

/** The kept session list: its parts, and the marks and row counts its check compares. */
interface KeptList {
  checkedAt: number;
  parts: SessionListParts;
  messageMark: number;
  messageRows: number;
  usageMark: number;
  usageRows: number;
  /** The whole tables' rows then (see `unchangedBelow`). */
  messageTableRows: number;
  usageTableRows: number;
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
  /** `tableRows` by table, as of `data_version` `tableCountsAt` (nothing committed since: the same rows). */
  private readonly tableCounts = new Map<string, number>();
  private tableCountsAt = Number.NaN;
  /** Set by the caller around one request (the store worker: progress messages and Cancel). */
  progress: KeptProgress | undefined;
  /** What happened so far: parts started, brought up to date from new rows, and rebuilt after a removal. */
  readonly stats: KeptTotalsStats = { started: 0, caughtUp: 0, rebuilt: 0 };

  constructor(private readonly ctx: QueryContext) {}

  /**
   * Whether the tables' ids are AUTOINCREMENT, as Python's DDL makes them (spec §7): without it SQLite may hand a
   * deleted row's id out again, and a row past the mark would no longer be a new row. Such a file is answered afresh.
   */
  private keepable: boolean | undefined;
  private list: KeptList | undefined;

  /** At the start of every read, in its snapshot: notes whether anything was committed since the last read. */
  beginRead(schemaChanged: boolean): void {
    if (schemaChanged || this.keepable === undefined) {
      this.clear();
      this.keepable = this.autoincrementIds();
    }
    this.dataVersion = Number(this.ctx.stmt('SELECT data_version AS v FROM pragma_data_version').get<{ v: number }>()?.v ?? 0);
  }

  /** Tool totals of a branch, or (null) of the whole session, kept from the first time they are asked for. */
  toolTotals(sessionId: string, branchId: string | null): ToolTotal[] {
    if (!this.keepable) return readToolTotals(this.ctx, sessionId, branchId);
    const kept = this.structure(sessionId);
    const key = branchId ?? SESSION_SCOPE;
    let acc = kept.tools.get(key);
    if (!acc) {
      const built = new ToolTotalsAccumulator(branchId === null);
      if (branchId === null) feedSessionToolCalls(this.ctx, built, sessionId, this.rowCounter());
      else feedToolCalls(this.ctx, built, sessionId, branchId, this.rowCounter());
      kept.tools.set(key, (acc = built));
    }
    return acc.result();
  }

  /** Usage sums of a scope, kept (see `UsageSumsSource`). */
  readonly usageSums: UsageSumsSource = (ctx, sessionId, scope) => {
    if (!this.keepable) return sqlUsageSums(ctx, sessionId, scope);
    const kept = this.usage(sessionId);
    const key = usageKey(scope);
    let entry = kept.sums.get(key);
    if (!entry) kept.sums.set(key, (entry = { scope, sums: sqlUsageSums(ctx, sessionId, scope) }));
    return entry.sums;
  };

  /** A branch's usage rows from a turn on, kept (see `UsagePart.rowsFrom`). */
  readonly usageRowsFrom: UsageRowsFrom = (ctx, sessionId, branchId, from) => {
    if (!this.keepable) return sqlUsageRowsFrom(ctx, sessionId, branchId, from);
    const kept = this.usage(sessionId);
    const key = `${branchId}\u0000${from}`;
    let entry = kept.rowsFrom.get(key);
    if (!entry) kept.rowsFrom.set(key, (entry = { branchId, from, count: sqlUsageRowsFrom(ctx, sessionId, branchId, from) }));
    return entry.count;
  };

  /** Structure rows per branch, kept (undefined: not keepable, count them). */
  branchRowCounts(sessionId: string): ReadonlyMap<string, number> | undefined {
    return this.keepable ? this.structure(sessionId).branchRows : undefined;
  }

  /**
   * The session list. Its counts are a pass over every message and usage row of the file, so they are kept: while
   * nothing was committed the list is answered again; after a commit, the rows past the marks are counted and summed
   * by session (a rowid range) and one count of each table proves nothing was removed (else the list is read afresh).
   * The sessions table's rows and the branches (one index seek each) are re-read every time.
   */
  sessionList(): SessionSummary[] {
    const list = this.list;
    if (list?.checkedAt !== this.dataVersion) {
      const caughtUp = list && this.keepable ? this.catchUpList(list) : undefined;
      this.list = caughtUp ?? this.startList();
    }
    return summariesOf(this.list!.parts);
  }

  private startList(): KeptList {
    const parts = readSessionListParts(this.ctx);
    return {
      checkedAt: this.dataVersion,
      parts,
      messageMark: this.maxId(this.ctx.tables.messages),
      messageRows: sum(parts.messages.values()),
      usageMark: this.maxId('turn_usage'),
      usageRows: sum([...parts.usage.values()].map((u) => u.turns)),
      messageTableRows: this.tableRows(this.ctx.tables.messages),
      usageTableRows: this.tableRows('turn_usage'),
    };
  }

  private catchUpList(old: KeptList): KeptList | undefined {
    const ctx = this.ctx;
    const messageMark = this.maxId(ctx.tables.messages);
    const newMessages = messageMark > old.messageMark ? countMessagesBySession(ctx, old.messageMark) : new Map<string, number>();
    // No old row removed anywhere (a count of the table's pages, see `unchangedBelow`): the sessions hold their old
    // rows plus the new ones. Else count the rows that belong to a session (every entry of the index).
    const messageTableRows = this.tableRows(ctx.tables.messages);
    const messageRows = this.unchangedBelow(ctx.tables.messages, old.messageMark, old.messageTableRows, messageTableRows)
      ? old.messageRows + sum(newMessages.values())
      : Number(
          ctx.stmt(`SELECT COUNT(*) AS n FROM ${quoteIdentifier(ctx.tables.messages)} WHERE session_id IS NOT NULL`).get<{ n: number }>()
            ?.n ?? 0,
        );
    if (messageRows !== old.messageRows + sum(newMessages.values())) return undefined;
    const usageMark = this.maxId('turn_usage');
    const newUsage = usageMark > old.usageMark ? sumUsageBySession(ctx, old.usageMark) : new Map<string, SessionUsageSums>();
    const usageTableRows = this.tableRows('turn_usage');
    const usageRows = !ctx.tables.turnUsage
      ? 0
      : this.unchangedBelow('turn_usage', old.usageMark, old.usageTableRows, usageTableRows)
        ? old.usageRows + sum([...newUsage.values()].map((u) => u.turns))
        : Number(ctx.stmt('SELECT COUNT(*) AS n FROM turn_usage WHERE session_id IS NOT NULL').get<{ n: number }>()?.n ?? 0);
    if (usageRows !== old.usageRows + sum([...newUsage.values()].map((u) => u.turns))) return undefined;
    const messages = new Map(old.parts.messages);
    for (const [id, n] of newMessages) messages.set(id, (messages.get(id) ?? 0) + n);
    const usage = new Map(old.parts.usage);
    for (const [id, u] of newUsage) {
      const before = usage.get(id);
      usage.set(id, before ? addSessionUsageSums(before, u) : u);
    }
    const parts = { rows: readSessionRows(ctx), messages, branches: countBranchesBySession(ctx), usage };
    return { checkedAt: this.dataVersion, parts, messageMark, messageRows, usageMark, usageRows, messageTableRows, usageTableRows };
  }

  /** Forgets everything (the connection closes). */
  clear(): void {
    this.sessions.clear();
    this.tableCounts.clear();
    this.list = undefined;
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

  /** The session's entry, most recently asked-about last (so the first key is the one to forget). */
  private entry(sessionId: string): KeptSession {
    const kept = this.sessions.get(sessionId) ?? {};
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, kept);
    while (this.sessions.size > KEPT_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    return kept;
  }

  /** The session's structure part, brought up to date with this read's snapshot. */
  private structure(sessionId: string): StructurePart {
    return this.part(
      sessionId,
      'structure',
      (p) => this.catchUpStructure(sessionId, p),
      () => ({
        checkedAt: this.dataVersion,
        structureMark: this.maxId('message_structure'),
        messageMark: this.maxId(this.ctx.tables.messages),
        tableRows: this.tableRows('message_structure'),
        branchRows: this.countBranchRows(sessionId),
        tools: new Map(),
      }),
    );
  }

  /** The session's usage part, brought up to date with this read's snapshot. */
  private usage(sessionId: string): UsagePart {
    return this.part(
      sessionId,
      'usage',
      (p) => this.catchUpUsage(sessionId, p),
      () => ({
        checkedAt: this.dataVersion,
        usageMark: this.maxId('turn_usage'),
        usageRows: this.countUsageRows(sessionId),
        tableRows: this.tableRows('turn_usage'),
        sums: new Map(),
        rowsFrom: new Map(),
      }),
    );
  }

  /**
   * One part of a session's kept state as of this read's snapshot: as kept when nothing was committed since its last
   * check, caught up from the new rows, or (first use, or rows were removed) started afresh.
   */
  private part<K extends keyof KeptSession>(
    sessionId: string,
    key: K,
    catchUp: (part: NonNullable<KeptSession[K]>) => boolean,
    start: () => NonNullable<KeptSession[K]>,
  ): NonNullable<KeptSession[K]> {
    const kept = this.entry(sessionId);
    let part = kept[key] as NonNullable<KeptSession[K]> | undefined;
    if (part && part.checkedAt !== this.dataVersion) {
      if (catchUp(part)) this.stats.caughtUp++;
      else {
        this.stats.rebuilt++;
        part = undefined;
      }
    }
    if (!part) {
      part = start();
      this.stats.started++;
    }
    part.checkedAt = this.dataVersion;
    kept[key] = part;
    return part;
  }

  /**
   * Folds the structure rows written since the part was last checked into it; false when rows were removed or changed
   * in place, so it must be rebuilt.
   */
  private catchUpStructure(sessionId: string, kept: StructurePart): boolean {
    const ctx = this.ctx;
    const addedByBranch = new Map<string, number>();
    const newMessages = new Set<number>();
    const toolRows: ToolCallRow[] = [];
    const structureMark = this.maxId('message_structure');
    const messageMark = this.maxId(ctx.tables.messages);
    if (ctx.tables.messageStructure && structureMark > kept.structureMark) {
      // `+session_id`: read the rowid range past the mark, not the session's index (which would visit every row).
      const rows = ctx
        .stmt(
          `SELECT ${exactTextSql('branch_id')} AS branch, message_id, message_type AS type, COALESCE(tool_name, '') AS tool,
             user_turn_number AS turn FROM message_structure WHERE id > ? AND +session_id = ? ORDER BY sequence_number`,
        )
        .iterate<{ branch: unknown; message_id: number; type: unknown; tool: string; turn: number | null }>(kept.structureMark, sessionId);
      for (const r of rows) {
        const branchId = textFromSql(r.branch);
        addedByBranch.set(branchId, (addedByBranch.get(branchId) ?? 0) + 1);
        newMessages.add(Number(r.message_id));
        if (typeof r.type === 'string' && TOOL_TYPES.has(r.type)) {
          toolRows.push({ tool: r.tool, turn: r.turn, messageId: Number(r.message_id), branchId });
        }
      }
    }
    // No row was removed exactly when the session holds its old rows plus the new ones (ids past the mark are new).
    let added = 0;
    for (const n of addedByBranch.values()) added += n;
    const tableRows = this.tableRows('message_structure');
    if (
      !this.unchangedBelow('message_structure', kept.structureMark, kept.tableRows, tableRows) &&
      this.countSessionRows(sessionId) !== sum(kept.branchRows.values()) + added
    )
      return false;
    if (messageMark > kept.messageMark) {
      for (const r of ctx
        .stmt(`SELECT id FROM ${quoteIdentifier(ctx.tables.messages)} WHERE session_id = ? AND id > ?`)
        .iterate<{ id: number }>(sessionId, kept.messageMark)) {
        if (!newMessages.has(Number(r.id))) return false;
      }
    }
    // Appends only: fold them in.
    for (const [key, acc] of kept.tools) {
      for (const row of toolRows) if (key === SESSION_SCOPE || row.branchId === key) acc.add(row);
    }
    for (const [branch, n] of addedByBranch) kept.branchRows.set(branch, (kept.branchRows.get(branch) ?? 0) + n);
    kept.structureMark = structureMark;
    kept.messageMark = messageMark;
    kept.tableRows = tableRows;
    return true;
  }

  /** Folds the usage rows written since into the kept sums; false when a row was replaced or removed. */
  private catchUpUsage(sessionId: string, kept: UsagePart): boolean {
    if (!this.ctx.tables.turnUsage) return true;
    const usageMark = this.maxId('turn_usage');
    const tableRows = this.tableRows('turn_usage');
    const added =
      usageMark > kept.usageMark
        ? Number(
            this.ctx
              .stmt('SELECT COUNT(*) AS n FROM turn_usage WHERE id > ? AND +session_id = ?')
              .get<{ n: number }>(kept.usageMark, sessionId)?.n ?? 0,
          )
        : 0;
    // `INSERT OR REPLACE` deletes the replaced row: a row short.
    const rows = this.unchangedBelow('turn_usage', kept.usageMark, kept.tableRows, tableRows)
      ? kept.usageRows + added
      : this.countUsageRows(sessionId);
    if (rows !== kept.usageRows + added) return false;
    if (added > 0) {
      for (const entry of kept.sums.values()) {
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
      const countFrom = this.ctx.stmt(
        'SELECT COUNT(*) AS n FROM turn_usage WHERE id > ? AND +session_id = ? AND +branch_id = ? AND user_turn_number >= ?',
      );
      for (const entry of kept.rowsFrom.values()) {
        entry.count += Number(countFrom.get<{ n: number }>(kept.usageMark, sessionId, entry.branchId, entry.from)?.n ?? 0);
      }
    }
    kept.usageMark = usageMark;
    kept.usageRows = rows;
    kept.tableRows = tableRows;
    return true;
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

  /** One count of the session's index entries: the structure check's cost, about 60 ms per million rows. */
  private countSessionRows(sessionId: string): number {
    if (!this.ctx.tables.messageStructure) return 0;
    return Number(this.ctx.stmt('SELECT COUNT(*) AS n FROM message_structure WHERE session_id = ?').get<{ n: number }>(sessionId)?.n ?? 0);
  }

  /** The session's usage rows: a count of the unique index's entries (about 12 ms for 250,000 rows). */
  private countUsageRows(sessionId: string): number {
    if (!this.ctx.tables.turnUsage) return 0;
    return Number(this.ctx.stmt('SELECT COUNT(*) AS n FROM turn_usage WHERE session_id = ?').get<{ n: number }>(sessionId)?.n ?? 0);
  }

  private autoincrementIds(): boolean {
    const t = this.ctx.tables;
    const tables = [t.messages, ...(t.messageStructure ? ['message_structure'] : []), ...(t.turnUsage ? ['turn_usage'] : [])];
    const ddl = this.ctx.stmt("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?");
    return tables.every((name) => /\bAUTOINCREMENT\b/i.test(String(ddl.get<{ sql: unknown }>(name)?.sql ?? '')));
  }

  /**
   * The whole table's rows, once per snapshot: `COUNT(*)` with no WHERE, which SQLite answers from the cell counts of
   * its smallest index's pages without visiting an entry (12 ms for A's 1.4 M structure rows, where counting one
   * session's entries steps through each: 50–130 ms, the tail of every catch-up after an append).
   */
  private tableRows(table: string): number {
    const t = this.ctx.tables;
    if ((table === 'message_structure' && !t.messageStructure) || (table === 'turn_usage' && !t.turnUsage)) return 0;
    if (this.tableCountsAt !== this.dataVersion) {
      this.tableCounts.clear();
      this.tableCountsAt = this.dataVersion;
    }
    const cached = this.tableCounts.get(table);
    if (cached !== undefined) return cached;
    const n = Number(this.ctx.stmt(`SELECT COUNT(*) AS n FROM ${quoteIdentifier(table)}`).get<{ n: number }>()?.n ?? 0);
    this.tableCounts.set(table, n);
    return n;
  }

  /**
   * Whether no row of `table` at or below `mark` was removed since the table held `before` rows (with `mark` its
   * largest id): the table now holds them plus exactly the rows past the mark (a rowid range). Ids are never handed
   * out again (AUTOINCREMENT), so rows past the mark are new, and a removed old row leaves the table a row short
   * whatever session it was in. When it does not hold, the caller counts the session's own rows to know whether the
   * removal was its.
   */
  private unchangedBelow(table: string, mark: number, before: number, now: number): boolean {
    const past = Number(this.ctx.stmt(`SELECT COUNT(*) AS n FROM ${quoteIdentifier(table)} WHERE id > ?`).get<{ n: number }>(mark)?.n ?? 0);
    return now === before + past;
  }

  /** A table's largest row id: one seek to the end of its rowid tree (0 when empty or absent). */
  private maxId(table: string): number {
    const t = this.ctx.tables;
    if ((table === 'message_structure' && !t.messageStructure) || (table === 'turn_usage' && !t.turnUsage)) return 0;
    return Number(this.ctx.stmt(`SELECT MAX(id) AS m FROM ${quoteIdentifier(table)}`).get<{ m: number | null }>()?.m ?? 0);
  }
}

function sum(values: Iterable<number>): number {
  let s = 0;
  for (const v of values) s += v;
  return s;
}
