/**
 * `doctor --fix`: a backup first (SQLite's `VACUUM INTO`, a consistent snapshot even of a live WAL database, never a
 * file copy), then every repair in one write transaction, then the checks again on a fresh connection. The write
 * lock is taken before the backup, so nothing can commit between the snapshot and the repair: the backup is exactly
 * the file the repairs started from. A repair never deletes a message some branch shows (only messages no structure
 * row references) and never touches a file whose integrity_check fails.
 */
import { existsSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { OutputFileError } from '../files/outputFileError';
import { defaultBackupPath } from './backupName';
import { checkOutputPath } from '../files/outputGuard';
import { classifyItem } from '../format/itemClassification';
import { pythonJsonDumps } from '../format/pythonJson';
import { SessionDatabaseError, describeDatabaseError, sqliteCodeOf } from '../errors';
import { CommitTarget } from '../sqlite/commitTarget';
import { immediateTransaction, type SqliteDatabase } from '../sqlite/sqliteDatabase';
import { canWrite } from '../sqlite/sessionConnection';
import { sessionFilter, type Finding, type QuotedTables } from './checkContext';
import { schemaDifferences } from './checks/alteredSchema';
import { findDanglingCalls, OUTPUT_TYPE_OF, type DanglingCall } from './checks/danglingToolCall';
import { walStateAt } from './checks/staleWal';
import {
  checkSessionFile,
  findingCount,
  openForDoctor,
  quotedTables,
  runChecks,
  type DoctorOptions,
  type DoctorReport,
} from './doctorReport';
import { ADDED_OUTPUT_TEXT, FINDING_KINDS, type FindingKind } from './findingKinds';

export interface RepairOptions extends DoctorOptions {
  /** Where the backup goes; default `<file>.doctor-backup-<timestamp>.db`. Must not exist, nor be the file. */
  backup?: string;
  /** Repair only the findings of this kind at this place (VS Code's Quick Fix on one finding); default all. */
  target?: RepairTarget;
}

/**
 * One finding's repair: its kind, and its place as the finding gives it. A place the kind's repair cannot narrow to
 * (orphan messages are found per session) repairs what the kind found there, which is the finding itself.
 */
export interface RepairTarget {
  kind: FindingKind;
  session?: string;
  branch?: string;
  turn?: number;
}

/** What each repair changed. */
export interface RepairCounts {
  usageRowsDeleted: number;
  messagesDeleted: number;
  outputsAdded: number;
  /** Missing indexes created with the SDKs' own statements (`altered-schema`). */
  indexesCreated: number;
  /** `-wal` frames a checkpoint copied into the main file (`stale-wal`); 0 when there was none to do. */
  walFramesCheckpointed: number;
  /** False when a checkpoint was due and another connection kept it from finishing (its frames stay in the -wal). */
  walCheckpointComplete: boolean;
}

export interface RepairOutcome {
  /**
   * True when the file had a hot rollback journal (a writer killed mid-transaction: the read-only check could not read
   * it, `SessionDatabaseError` `hot-journal`) and opening it for writing rolled that transaction back before the
   * checks. Not backed up: it drops only what was never committed, as any connection that can write the file would.
   */
  journalRolledBack: boolean;
  /** The report the repairs started from (made inside the write transaction). */
  before: DoctorReport;
  /** Null when nothing was repaired (nothing repairable, or integrity_check failed): no backup was made then. */
  backup: string | null;
  counts: RepairCounts;
  /** The checks run again after the commit. */
  after: DoctorReport;
}

/**
 * Repairs what can be repaired in the session file at `path`. Throws `OutputFileError` (the backup path exists or is
 * the file or its -wal/-shm, or SQLite cannot write the backup: then nothing was repaired), `SessionDatabaseError`: `read-only` (report only), `locked` (a writer held the lock past
 * the busy timeout), `disk-full` (nothing was repaired; the backup stays), `hot-journal` (a killed writer's -journal that cannot be rolled back here: the file or its folder
 * cannot be written), and what `checkSessionFile` throws. A hot -journal the read-only check cannot get past is rolled
 * back first, by opening the file for writing (`journalRolledBack`). A `session` the file does not hold repairs
 * nothing (`before.sessionFound` false).
 */
export function repairSessionFile(path: string, given: RepairOptions = {}): RepairOutcome {
  const target = given.target;
  // A finding lies in one session: the checks (and the re-check) need look at no other.
  const options = target?.session === undefined ? given : { ...given, session: target.session };
  const backup = options.backup ?? defaultBackupPath(path);
  try {
    checkOutputPath(backup, { inputs: [path] });
  } catch (err) {
    // The guard's own advice names --force, which a backup never takes: an existing file is never replaced.
    if (err instanceof OutputFileError && err.problem === 'exists')
      throw new OutputFileError(
        'exists',
        `The backup ${backup} already exists: choose another --backup path (a backup never replaces a file).`,
      );
    throw err;
  }
  // The file whose findings the repairs act on: the path must still name it under the write lock and before COMMIT.
  const checked = CommitTarget.at(path, {
    during: 'the repair ran',
    nothing: 'repaired',
    advice: {
      replaced: `Run the doctor again on the file now at ${path}.`,
      deleted: 'Put the file back, or run the doctor on it where it is now.',
    },
  });
  // A read-only look first: a damaged or clean file is never opened for writing, unless it cannot be read at all
  // until a writable connection rolls back a killed writer's transaction.
  let journalRolledBack = false;
  let first: DoctorReport;
  try {
    first = checkSessionFile(path, options);
  } catch (err) {
    if (!(err instanceof SessionDatabaseError && err.problem === 'hot-journal')) throw err;
    rollBackHotJournal(path, options);
    journalRolledBack = true;
    first = checkSessionFile(path, options);
  }
  const none: RepairCounts = {
    usageRowsDeleted: 0,
    messagesDeleted: 0,
    outputsAdded: 0,
    indexesCreated: 0,
    walFramesCheckpointed: 0,
    walCheckpointComplete: true,
  };
  // A session the file does not hold is a slip in its id: nothing is repaired for it, not even the file-wide -wal.
  if (!first.integrityOk || first.sessionFound === false || !hasRepairable(first, target))
    return { journalRolledBack, before: first, backup: null, counts: none, after: first };

  // Read again before the write connection opens (the -shm is read only while this process has no connection there).
  const wal = walStateAt(path);
  const db = openForDoctor(path, false, options);
  let before: DoctorReport;
  let counts: RepairCounts = none;
  let committed = false;
  try {
    before = immediateTransaction(db, () => {
      checked.checkLocked();
      // Checked again under the write lock: the file may have changed since the read-only look.
      const report = runChecks(db, path, options, wal);
      if (!report.integrityOk || report.sessionFound === false || !hasRepairable(report, target)) return report;
      backupTo(path, backup, options);
      const kept = `The backup ${backup}, made before the change was noticed, is kept.`;
      // Also before the first write: SQLite refuses to write a moved rollback-journal file, in words that blame its
      // permissions (SQLITE_READONLY_DBMOVED).
      checked.recheck(db, kept);
      counts = { ...none, ...applyRepairs(db, quotedTables(db, path), options.session ?? null, target) };
      // The last step before COMMIT: the smallest window in which the path can still change unseen.
      checked.recheck(db, kept);
      return report;
    });
    committed = true;
    // After the commit (SQLite checkpoints outside a transaction): the -wal's frames, the repairs' included, into the file.
    const walDue = before.findings.some((f) => f.kind === 'stale-wal' && (target === undefined || isTargeted(f, target)));
    if (before.integrityOk && before.sessionFound !== false && walDue) counts = { ...counts, ...checkpoint(db) };
  } catch (err) {
    const described = describeDatabaseError(err, path);
    if (!(described instanceof SessionDatabaseError && described.problem === 'disk-full')) throw described;
    const detail = err instanceof Error ? err.message : String(err);
    // Only the checkpoint runs after the commit: the repairs stay in the -wal, where every reader finds them.
    if (committed)
      throw new SessionDatabaseError(
        'disk-full',
        `${path} was repaired, but copying the repairs from ${path}-wal into it failed: its disk is full (${detail}). Every reader finds them in the -wal; once the disk has room, doctor --fix copies them (stale-wal).`,
        { cause: err },
      );
    // The backup path was free before the repair began, and a failed backup is removed: a file there is the complete
    // backup, the file as it still is. It may be what filled the disk (by default it sits beside the file).
    const kept = existsSync(backup)
      ? ` The backup made before it stays, complete: ${backup} (the file as it still is; remove it, or choose another --backup path, for the next --fix).`
      : '';
    throw new SessionDatabaseError(
      'disk-full',
      `${path} cannot be repaired: its disk is full (${detail}). SQLite rolled the repair back, so nothing was repaired.${kept} Free space on that disk, then run doctor --fix again.`,
      { cause: err },
    );
  } finally {
    db.close();
  }
  const repaired =
    counts.usageRowsDeleted + counts.messagesDeleted + counts.outputsAdded + counts.indexesCreated + counts.walFramesCheckpointed > 0 ||
    !counts.walCheckpointComplete;
  return { journalRolledBack, before, backup: repaired ? backup : null, counts, after: checkSessionFile(path, options) };
}

/**
 * Rolls back the transaction a killed writer left in a hot `-journal`: SQLite does it when a connection that can write
 * the file first reads it (under an exclusive lock, waiting for other connections up to the busy timeout), restoring
 * the pages the journal holds and deleting it. Nothing else is written; the journal mode is left as it is.
 */
function rollBackHotJournal(path: string, options: DoctorOptions): void {
  // The rollback writes the file and then deletes the -journal, so it needs both the file and its folder writable:
  // checked first, since SQLite would restore the pages and then fail on the delete with a bare "disk I/O error". Said
  // in these words, where the read-only error would advise opening it read-only (which fails) and the hot-journal one
  // would advise this very repair.
  const cannot = (cause?: unknown) =>
    new SessionDatabaseError(
      'hot-journal',
      `${path}-journal, the unfinished transaction a killed writer left, cannot be rolled back here: the file or its folder cannot be written. Copy the file and its -journal together to a writable folder and repair the copy.`,
      cause === undefined ? undefined : { cause },
    );
  if (!canWrite(path) || !canWrite(dirname(resolve(path)))) throw cannot();
  const orCannot = (err: unknown) =>
    err instanceof SessionDatabaseError && (err.problem === 'read-only' || err.problem === 'hot-journal') ? cannot(err) : err;
  let db: SqliteDatabase;
  try {
    db = openForDoctor(path, false, options);
  } catch (err) {
    throw orCannot(err);
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (err) {
    throw orCannot(describeDatabaseError(err, path));
  } finally {
    db.close();
  }
}

/**
 * Whether some finding (of the target) has a repair: its kind has one and the finding is not marked otherwise
 * (`repairable: false`, an altered-schema change other than a missing index). Findings past the listing bound count
 * as repairable when their kind has a repair: the repair itself finds what it can do.
 */
function hasRepairable(report: DoctorReport, target: RepairTarget | undefined): boolean {
  const repairable = (f: Finding) => FINDING_KINDS[f.kind].repair !== null && f.repairable !== false;
  if (target) return FINDING_KINDS[target.kind].repair !== null && report.findings.some((f) => isTargeted(f, target) && repairable(f));
  if (findingCount(report) === 0) return false;
  return Object.entries(report.totals).some(([kind, total]) => {
    const listed = report.findings.filter((f) => f.kind === kind);
    return FINDING_KINDS[kind as FindingKind].repair !== null && (listed.some(repairable) || (total ?? 0) > listed.length);
  });
}

/**
 * A FULL checkpoint (every frame into the main file, waiting for the writer lock and readers up to the busy timeout;
 * it says how many frames it copied), then TRUNCATE to empty the -wal (which reports 0 frames once it has). Busy when
 * another connection kept either from finishing: the frames then stay in the -wal, where every reader still finds them.
 */
function checkpoint(db: SqliteDatabase): Pick<RepairCounts, 'walFramesCheckpointed' | 'walCheckpointComplete'> {
  type Row = { busy: unknown; log: unknown; checkpointed: unknown };
  const full = db.prepare('PRAGMA wal_checkpoint(FULL)').get<Row>()!;
  const truncate = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get<Row>()!;
  return {
    walFramesCheckpointed: Math.max(0, Number(full.checkpointed)),
    walCheckpointComplete: Number(full.busy) === 0 && Number(truncate.busy) === 0,
  };
}

/** Whether a finding is (one of) the target's: its kind, and the same place wherever the target names one. */
export function isTargeted(f: { kind: FindingKind; session?: string; branch?: string; turn?: number }, target: RepairTarget): boolean {
  return (
    f.kind === target.kind &&
    (target.session === undefined || f.session === target.session) &&
    (target.branch === undefined || f.branch === target.branch) &&
    (target.turn === undefined || f.turn === target.turn)
  );
}

/** What `VACUUM INTO` fails with when it cannot create or fill the backup (a missing or read-only folder, a full disk). */
const BACKUP_WRITE_FAILURES = new Set(['SQLITE_CANTOPEN', 'SQLITE_PERM', 'SQLITE_READONLY', 'SQLITE_FULL', 'SQLITE_IOERR']);

/**
 * `VACUUM INTO` on a second, read-only connection: it reads the last commit, which the held write lock freezes. A
 * backup that cannot be written is an `OutputFileError` naming the backup: as SQLite's error it read as if the session
 * file could not be opened. Thrown inside the write transaction, it rolls back before any repair ran.
 */
function backupTo(path: string, backup: string, options: DoctorOptions): void {
  const reader = openForDoctor(path, true, options);
  try {
    // An absolute path: SQLite reads some names as no file at all (`:memory:`, a `file:` URI), and the copy would
    // "succeed" into memory, leaving the repair without its backup.
    reader.prepare('VACUUM INTO ?').run(resolve(backup));
  } catch (err) {
    const code = sqliteCodeOf(err);
    if (code === undefined || !BACKUP_WRITE_FAILURES.has(code)) throw err;
    // The path was checked free before the repair started, so what is there now is VACUUM INTO's partial copy.
    rmSync(backup, { force: true });
    throw new OutputFileError(
      'io',
      `The backup ${backup} cannot be written (${err instanceof Error ? err.message : String(err)}): check that its folder exists and can be written, or choose another --backup path. Nothing was repaired.`,
    );
  } finally {
    reader.close();
  }
}

function applyRepairs(
  db: SqliteDatabase,
  t: QuotedTables,
  session: string | null,
  target?: RepairTarget,
): Pick<RepairCounts, 'usageRowsDeleted' | 'messagesDeleted' | 'outputsAdded' | 'indexesCreated'> {
  const args = [session, session] as const;
  const wants = (kind: FindingKind) => target === undefined || target.kind === kind;
  let usageRowsDeleted = 0;
  let messagesDeleted = 0;
  // Only missing indexes: the SDKs' own CREATE INDEX IF NOT EXISTS, which reads rows and changes none.
  let indexesCreated = 0;
  if (wants('altered-schema')) {
    for (const d of schemaDifferences({ db, tables: t })) {
      if (d.repair === null) continue;
      db.exec(d.repair);
      indexesCreated++;
    }
  }
  if (t.structure && t.usage && (wants('turn-zero-usage') || wants('orphan-usage'))) {
    // Turn 0 is turn-zero-usage, any other turn orphan-usage (checks/usageWithoutTurn.ts); a target names one of them.
    const turns = target === undefined ? '' : target.kind === 'turn-zero-usage' ? 'AND user_turn_number = 0' : 'AND user_turn_number <> 0';
    const branch = target?.branch ?? null;
    const turn = target?.turn ?? null;
    // The condition of checks/usageWithoutTurn.ts: usage rows of turns their branch does not hold.
    usageRowsDeleted = db
      .prepare(
        `DELETE FROM turn_usage WHERE ${sessionFilter('session_id')} ${turns}
           AND (? IS NULL OR branch_id = ?) AND (? IS NULL OR user_turn_number = ?)
           AND NOT EXISTS (SELECT 1 FROM message_structure s WHERE s.session_id = turn_usage.session_id
                           AND s.branch_id = turn_usage.branch_id AND s.user_turn_number = turn_usage.user_turn_number)`,
      )
      .run(...args, branch, branch, turn, turn).changes;
  }
  if (t.structure && wants('orphan-messages')) {
    // The condition of checks/orphanMessages.ts: no structure row references the message, so no branch shows it.
    messagesDeleted = db
      .prepare(
        `DELETE FROM ${t.messages} WHERE ${sessionFilter('session_id')}
           AND id NOT IN (SELECT message_id FROM message_structure)
           AND session_id IN (SELECT session_id FROM message_structure)`,
      )
      .run(...args).changes;
  }
  // One per branch at most, so the list is bounded by the branches; written after the read finished.
  const calls: DanglingCall[] = [];
  if (wants('dangling-tool-call'))
    findDanglingCalls({ db, tables: t, session }, (c) => (target?.branch === undefined || c.branch === target.branch) && calls.push(c));
  for (const c of calls) addOutput(db, t, c);
  return { usageRowsDeleted, messagesDeleted, outputsAdded: calls.length, indexesCreated };
}

/** The output item the doctor adds after a dangling call (docs/doctor.md, "dangling-tool-call"). */
export function addedOutputItem(c: Pick<DanglingCall, 'callType' | 'callId'>): Record<string, string> {
  return { type: OUTPUT_TYPE_OF[c.callType]!, call_id: c.callId, output: ADDED_OUTPUT_TEXT };
}

/** Appends the output as `add_items` would: the message, then its structure row at the session's next sequence number. */
function addOutput(db: SqliteDatabase, t: QuotedTables, c: DanglingCall): void {
  const item = addedOutputItem(c);
  const { messageType, toolName } = classifyItem(item);
  const messageId = db
    .prepare(`INSERT INTO ${t.messages} (session_id, message_data) VALUES (?, ?)`)
    .run(c.session, pythonJsonDumps(item)).lastInsertRowid;
  db.prepare(
    `INSERT INTO message_structure
       (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number, branch_turn_number, tool_name)
     VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(sequence_number), 0) + 1 FROM message_structure WHERE session_id = ?), ?, ?, ?)`,
  ).run(c.session, messageId, c.branch, messageType, c.session, c.turn, c.branchTurn, toolName);
  if (t.sessions && t.sessionsUpdatedAt) {
    db.prepare(`UPDATE ${t.sessions} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = ?`).run(c.session);
  }
}
