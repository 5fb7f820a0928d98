/**
 * What every check is handed: the read connection, the session tables (quoted), the session filter, and the sink
 * that keeps at most `maxPerKind` findings of each kind and counts the rest (a damaged file can hold millions of
 * bad rows: the report stays bounded, the count stays exact).
 */
import type { SqliteDatabase } from '../sqlite/sqliteDatabase';
import type { FindingKind } from './findingKinds';

/** Where a finding is: enough to find the rows with a query. */
export interface FindingPlace {
  session?: string;
  branch?: string;
  turn?: number;
  /** Row ids per table (the table as named in the file). */
  rows?: Record<string, number[]>;
}

export interface Finding extends FindingPlace {
  kind: FindingKind;
  /** What was seen, for people. */
  detail: string;
  /**
   * False when this finding has no repair although its kind has one (an `altered-schema` change other than a missing
   * index): `--fix` leaves it and says why in `detail`. Absent means the kind decides.
   */
  repairable?: boolean;
}

/** The quoted names of the tables the checks read. */
export interface QuotedTables {
  messages: string;
  sessions: string | null;
  /** Whether the sessions table has `updated_at` (a write touches it, as Python's `add_items` does). */
  sessionsUpdatedAt: boolean;
  /** The names as stored in the file (for row ids). */
  messagesName: string;
  structure: boolean;
  usage: boolean;
}

export interface CheckContext {
  db: SqliteDatabase;
  tables: QuotedTables;
  /** Only this session, or every session. */
  session: string | null;
  add(finding: Finding): void;
}

/** The default bound on findings listed per kind. */
export const DEFAULT_MAX_PER_KIND = 20;

/** Findings kept per kind, and how many each kind had in all. */
export class FindingSink {
  readonly findings: Finding[] = [];
  readonly totals = new Map<FindingKind, number>();
  constructor(private readonly maxPerKind: number) {}

  add(finding: Finding): void {
    const n = (this.totals.get(finding.kind) ?? 0) + 1;
    this.totals.set(finding.kind, n);
    if (n <= this.maxPerKind) this.findings.push(finding);
  }
}

/** An SQL condition on a session column that keeps every session or the one asked for: bind `sessionArgs()`. */
export function sessionFilter(column: string): string {
  return `(? IS NULL OR ${column} = ?)`;
}

/** The two parameters of `sessionFilter`. */
export function sessionArgs(ctx: Pick<CheckContext, 'session'>): [string | null, string | null] {
  return [ctx.session, ctx.session];
}

/** A number column as a JS number (ids and turns fit easily; the drivers may hand back bigint). */
export function num(v: unknown): number {
  return typeof v === 'bigint' ? Number(v) : (v as number);
}

/** Row ids listed per finding (all of them are counted): a delete_branch can leave thousands. */
export const MAX_LISTED_IDS = 50;

/** A run of rows with the same key: its first row, ids listed up to `MAX_LISTED_IDS`, all counted, and its tags. */
export interface IdGroup<R> {
  first: R;
  ids: number[];
  count: number;
  /** The distinct `tagOf` values of its rows (e.g. branches), when asked for. */
  tags: Set<string>;
  /** `" (ids listed: the first N)"` when not all ids are listed, else `""`: for a finding's detail. */
  more: string;
}

/**
 * Rows ordered by `keyOf` → one group per run of equal keys, handed to `emit` as each run ends (rows whose key is
 * null are skipped): one finding per session (and per other table), whatever the number of rows.
 */
export function forEachIdGroup<R extends { id: unknown }>(
  rows: Iterable<R>,
  keyOf: (r: R) => string | null,
  emit: (group: IdGroup<R>) => void,
  tagOf?: (r: R) => string,
): void {
  let current: (IdGroup<R> & { key: string }) | undefined;
  const flush = () => {
    if (!current) return;
    current.more = current.count > current.ids.length ? ` (ids listed: the first ${current.ids.length})` : '';
    emit(current);
  };
  for (const r of rows) {
    const key = keyOf(r);
    if (key === null) continue;
    if (current?.key !== key) {
      flush();
      current = { key, first: r, ids: [], count: 0, tags: new Set(), more: '' };
    }
    current.count++;
    if (tagOf) current.tags.add(tagOf(r));
    if (current.ids.length < MAX_LISTED_IDS) current.ids.push(num(r.id));
  }
  flush();
}
