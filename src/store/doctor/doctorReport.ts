/**
 * The doctor's read side: one read-only connection, one read transaction (every check sees one snapshot while a
 * writer carries on), `integrity_check` first, then each kind's check. Nothing is written, not even a pragma.
 */
import { describeDatabaseError } from '../errors';
import { discoverSessionTables, quoteIdentifier } from '../inspector/tableDiscovery';
import { openSessionConnection } from '../sqlite/sessionConnection';
import { readTransaction, type DriverName, type SqliteDatabase } from '../sqlite/sqliteDatabase';
import { DEFAULT_MAX_PER_KIND, FindingSink, type CheckContext, type Finding, type QuotedTables } from './checkContext';
import { checkAlteredSchema } from './checks/alteredSchema';
import { checkBlankBranchIds } from './checks/blankBranchId';
import { checkDanglingToolCalls } from './checks/danglingToolCall';
import { checkEmptyMain } from './checks/emptyMain';
import { checkIntegrity } from './checks/integrityCheck';
import { checkMalformedItems } from './checks/malformedItem';
import { checkOrphanMessages } from './checks/orphanMessages';
import { checkSharedMessageStructure } from './checks/sharedMessageStructure';
import { staleWalFinding, walStateAt, type WalState } from './checks/staleWal';
import { checkUsageWithoutTurn } from './checks/usageWithoutTurn';
import { KIND_ORDER, type FindingKind } from './findingKinds';

export interface DoctorOptions {
  /** Check only this session. */
  session?: string;
  /** Findings listed per kind (the rest are counted). Default 20. */
  maxPerKind?: number;
  driver?: DriverName | 'auto';
  /** How long to wait for a writer's lock (a rollback-journal file being written). */
  busyTimeoutMs?: number;
}

export interface DoctorReport {
  path: string;
  session: string | null;
  /** Findings in kind order, at most `maxPerKind` of each. */
  findings: Finding[];
  /** How many findings each kind had in all (listed or not). */
  totals: Partial<Record<FindingKind, number>>;
  /** False when integrity_check failed: the other checks were not run and no repair is offered. */
  integrityOk: boolean;
  /**
   * With `session`: whether the file holds it (a row in any session table: messages, sessions, structure, usage), seen
   * in the checks' snapshot; on a server store, a row of either table or either Redis key). False means "no findings"
   * says nothing: the id is likely a slip. Absent without `session`, and when integrity_check failed (no table was read).
   */
  sessionFound?: boolean;
}

/** Every finding's count. */
export function findingCount(report: DoctorReport): number {
  return Object.values(report.totals).reduce((a, b) => a + (b ?? 0), 0);
}

/** The session tables of an open file, quoted for SQL. Throws `not-session-database` for any other file. */
export function quotedTables(db: SqliteDatabase, path: string): QuotedTables {
  const t = discoverSessionTables(db, path);
  return {
    messages: quoteIdentifier(t.messages),
    messagesName: t.messages,
    sessions: t.sessions === null ? null : quoteIdentifier(t.sessions),
    sessionsUpdatedAt: t.sessionsHasUpdatedAt,
    structure: t.messageStructure,
    usage: t.turnUsage,
  };
}

/**
 * Runs the checks on an open connection, inside one read transaction (or the caller's transaction). `wal` is what
 * the `-wal` held before the connection opened (`walStateAt`: read before SQLite opens the path, since this process
 * must not read the `-shm` while it has a connection there).
 */
export function runChecks(db: SqliteDatabase, path: string, options: DoctorOptions = {}, wal?: WalState): DoctorReport {
  const sink = new FindingSink(options.maxPerKind ?? DEFAULT_MAX_PER_KIND);
  const session = options.session ?? null;
  // About the whole file, whatever the session filter: the -wal holds every session's last transactions.
  if (wal) sink.add(staleWalFinding(path, wal));
  let sessionFound: boolean | undefined;
  const integrityOk = readTransaction(db, () => {
    if (!checkIntegrity(db, sink)) return false;
    const ctx: CheckContext = { db, tables: quotedTables(db, path), session, add: (f) => sink.add(f) };
    if (session !== null) sessionFound = holdsSession(ctx, session);
    checkAlteredSchema(ctx);
    checkUsageWithoutTurn(ctx);
    checkOrphanMessages(ctx);
    checkSharedMessageStructure(ctx);
    checkDanglingToolCalls(ctx);
    checkEmptyMain(ctx);
    checkBlankBranchIds(ctx);
    checkMalformedItems(ctx);
    return true;
  });
  const rank = (k: FindingKind) => KIND_ORDER.indexOf(k);
  // Stable: within a kind, the order the check found them in.
  const findings = sink.findings.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f.kind) - rank(b.f.kind) || a.i - b.i);
  return {
    path,
    session,
    findings: findings.map((x) => x.f),
    totals: Object.fromEntries(sink.totals),
    integrityOk,
    ...(sessionFound === undefined ? {} : { sessionFound }),
  };
}

/** Whether any session table has a row of `session`: usage rows alone (a deleted branch's) are still something to check. */
function holdsSession({ db, tables }: CheckContext, session: string): boolean {
  const has = (table: string) => db.prepare(`SELECT 1 FROM ${table} WHERE session_id = ? LIMIT 1`).get(session) !== undefined;
  return (
    has(tables.messages) ||
    (tables.sessions !== null && has(tables.sessions)) ||
    (tables.structure && has('message_structure')) ||
    (tables.usage && has('turn_usage'))
  );
}

/**
 * Checks the session file at `path`, read-only. Throws `SessionDatabaseError`: `not-found`, `not-sqlite`,
 * `not-session-database`, `locked` (a writer held the file past the busy timeout), `stale-wal` (a replaced file's
 * -wal beside it: opening would show the old file's content, so nothing is read), `hot-journal` (a killed writer's
 * -journal: only a connection that can write the file rolls it back, as `repairSessionFile` does).
 */
export function checkSessionFile(path: string, options: DoctorOptions = {}): DoctorReport {
  // Before the open: the -shm is read only while this process holds no connection at the path.
  const wal = walStateAt(path);
  const db = openForDoctor(path, true, options);
  try {
    return runChecks(db, path, options, wal);
  } catch (err) {
    throw describeDatabaseError(err, path, { readonly: true });
  } finally {
    db.close();
  }
}

/**
 * Opens the file (never creating it) with the store's connection settings: a stale -wal refused, the schema not
 * trusted (a file from anywhere must not run functions from its views or triggers), and, to write, the file's
 * journal mode left as it is (the doctor repairs; it does not convert).
 */
export function openForDoctor(path: string, readonly: boolean, options: DoctorOptions): SqliteDatabase {
  return openSessionConnection(path, {
    readonly,
    fileMustExist: true,
    deferWal: true,
    driver: options.driver ?? 'auto',
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });
}
