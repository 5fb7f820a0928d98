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
