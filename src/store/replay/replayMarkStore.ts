/**
 * The replay marks store (docs/replay.md, "Where the marks live"): what each run of ours did with its tool calls —
 * replayed from the recording, run live, or unmatched — kept in a SQLite file of our own (replaySchema.ts), never in
 * the session file, whose format is the SDKs'. A run and its marks are written in one transaction; reads take one
 * branch's marks and runs. Marks are keyed by the session store (`storeKey`: the session file's absolute path),
 * session, branch and the call's id, so the tool cards of a branch find theirs by the ids they show.
 */
import type { OpenOptions } from '../drivers/openDatabase';
import { immediateTransaction, readTransaction, type SqliteDatabase, type SqliteStatement } from '../sqlite/sqliteDatabase';
import { StatementCache, openOwnStore } from '../sqlite/ownStoreFile';
import { ReplayStoreError } from './replayErrors';
import { REPLAY_STORE_FILE } from './replaySchema';
import {
  TOOLS_MODES,
  type ReplayMark,
  type ReplayOutcome,
  type ReplayRunView,
  type ReplaySummary,
  type StoredReplayMark,
} from '../../shared/protocol/replay';

/** The bounds on what the store takes and hands back: ids come from models and agent commands. */
export const REPLAY_LIMITS = {
  /** Characters of a store key, session, branch, run or call id. */
  idChars: 4096,
  /** Marks of one run (a run that made more tool calls than this is refused whole, not cut). */
  marksPerRun: 10_000,
  /** Runs `runsOfBranch` returns: the newest, oldest first. */
  runsRead: 500,
  /** Marks `marksOfBranch` returns: those of the newest runs first. */
  marksRead: 20_000,
} as const;

const OUTCOMES: readonly ReplayOutcome[] = ['replayed', 'live', 'unmatched'];
const REPORTED: readonly string[] = [...OUTCOMES, 'missing'];

interface RunRow {
  run_id: string;
  turn: number | null;
  summary_json: string;
}

interface MarkRow {
  call_id: string;
  run_id: string;
  tool_name: string;
  arguments: string;
  outcome: string;
  recorded_call_id: string | null;
  recorded_branch_id: string | null;
  recorded_turn: number | null;
  reported: string | null;
}

const invalid = (message: string): ReplayStoreError => new ReplayStoreError('invalid', message);

function checkId(value: unknown, what: string): asserts value is string {
  if (typeof value !== 'string' || value === '') throw invalid(`A replay mark needs ${what}.`);
  if (value.length > REPLAY_LIMITS.idChars)
    throw invalid(
      `The ${what} is ${value.length.toLocaleString('en-US')} characters; at most ${REPLAY_LIMITS.idChars.toLocaleString('en-US')}.`,
    );
}

function checkMark(mark: ReplayMark, index: number): void {
  checkId(mark.callId, `a call id (mark ${index + 1})`);
  if (typeof mark.name !== 'string') throw invalid(`Mark ${index + 1} has no tool name.`);
  if (typeof mark.arguments !== 'string') throw invalid(`Mark ${index + 1}'s arguments are not text.`);
  if (!OUTCOMES.includes(mark.outcome))
    throw invalid(`Mark ${index + 1} has the outcome "${String(mark.outcome)}"; it is one of ${OUTCOMES.join(', ')}.`);
  if (mark.recordedCallId !== null) checkId(mark.recordedCallId, `a recorded call id (mark ${index + 1})`);
  if (mark.reported !== undefined && !REPORTED.includes(mark.reported))
    throw invalid(`Mark ${index + 1} has the report "${String(mark.reported)}"; it is one of ${REPORTED.join(', ')}.`);
}

function checkSummary(summary: ReplaySummary): void {
  if (typeof summary !== 'object' || summary === null) throw invalid('A replay run needs its summary.');
  if (!TOOLS_MODES.includes(summary.mode))
    throw invalid(`"${String(summary.mode)}" is not a tools mode; it is one of ${TOOLS_MODES.join(', ')}.`);
  if (!Array.isArray(summary.marks)) throw invalid("A replay run's summary needs its marks.");
  if (summary.marks.length > REPLAY_LIMITS.marksPerRun)
    throw invalid(
      `The run made ${summary.marks.length.toLocaleString('en-US')} tool calls; the replay marks store keeps at most ${REPLAY_LIMITS.marksPerRun.toLocaleString('en-US')} per run.`,
    );
  if (summary.source !== null) {
    checkId(summary.source.branchId, 'the recorded branch');
    if (!Number.isSafeInteger(summary.source.turn) || summary.source.turn < 1)
      throw invalid(`${String(summary.source.turn)} is not a turn number.`);
  }
  summary.marks.forEach(checkMark);
}

function markOf(r: MarkRow): StoredReplayMark {
  return {
    callId: r.call_id,
    name: r.tool_name,
    arguments: r.arguments,
    outcome: r.outcome as ReplayOutcome,
    recordedCallId: r.recorded_call_id,
    ...(r.reported !== null ? { reported: r.reported as ReplayMark['reported'] } : {}),
    runId: r.run_id,
    recordedBranchId: r.recorded_branch_id,
    recordedTurn: r.recorded_turn === null ? null : Number(r.recorded_turn),
  };
}

export class ReplayMarkStore {
  private readonly statements: StatementCache;

  private constructor(
    readonly db: SqliteDatabase,
    readonly path: string,
  ) {
    this.statements = new StatementCache(db);
  }

  /** Opens (creating when missing and writable) the replay marks store at `path`. */
  static open(path: string, options: Partial<OpenOptions> = {}): ReplayMarkStore {
    return new ReplayMarkStore(openOwnStore(path, options, REPLAY_STORE_FILE), path);
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }

  private stmt(sql: string): SqliteStatement {
    return this.statements.get(sql);
  }

  /**
   * Records a run on `branchId` (`turn`: the turn it wrote, null when none) and a mark per call of `summary`, in one
   * transaction. A mark replaces the branch's earlier mark of the same call id. `freshBranch`: the run made the branch
   * (a fork), so rows kept under its id belong to a deleted branch of the same name and are removed first.
   */
  recordRun(
    storeKey: string,
    sessionId: string,
    branchId: string,
    turn: number | null,
    summary: ReplaySummary,
    runId: string,
    options: { freshBranch?: boolean } = {},
    nowMs: number = Date.now(),
  ): void {
    checkId(storeKey, 'the session store');
    checkId(sessionId, 'a session id');
    checkId(branchId, 'a branch id');
    checkId(runId, 'a run id');
    if (turn !== null && (!Number.isSafeInteger(turn) || turn < 1)) throw invalid(`${String(turn)} is not a turn number.`);
    checkSummary(summary);
    const source = summary.source;
    immediateTransaction(this.db, () => {
      if (options.freshBranch) this.removeBranch(storeKey, sessionId, branchId);
      this.stmt(
        `INSERT OR REPLACE INTO replay_runs (run_id, store_key, session_id, branch_id, turn, mode, source_branch_id, source_turn, summary_json, created_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        runId,
        storeKey,
        sessionId,
        branchId,
        turn,
        summary.mode,
        source?.branchId ?? null,
        source?.turn ?? null,
        JSON.stringify(summary),
        nowMs,
      );
      const mark = this.stmt(
        `INSERT OR REPLACE INTO replay_marks (store_key, session_id, branch_id, call_id, run_id, tool_name, arguments, outcome,
           recorded_call_id, recorded_branch_id, recorded_turn, reported)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const m of summary.marks) {
        // Every recorded call of a run is of the one turn it re-ran: the link from a mark to the call is that turn.
        const recorded = m.recordedCallId !== null && source !== null ? source : null;
        mark.run(
          storeKey,
          sessionId,
          branchId,
          m.callId,
          runId,
          m.name,
          m.arguments,
          m.outcome,
          m.recordedCallId,
          recorded?.branchId ?? null,
          recorded?.turn ?? null,
          m.reported ?? null,
        );
      }
    });
  }

  /** The marks of the calls on a branch (by the new call's id), those of its newest runs first; at most `REPLAY_LIMITS.marksRead`. */
  marksOfBranch(storeKey: string, sessionId: string, branchId: string): StoredReplayMark[] {
    return readTransaction(this.db, () =>
      this.stmt(
        `SELECT m.* FROM replay_marks m LEFT JOIN replay_runs r ON r.run_id = m.run_id
         WHERE m.store_key = ? AND m.session_id = ? AND m.branch_id = ?
         ORDER BY r.created_ms DESC, m.rowid LIMIT ?`,
      )
        .all<MarkRow>(storeKey, sessionId, branchId, REPLAY_LIMITS.marksRead)
        .map(markOf),
    );
  }

  /** The runs recorded on a branch, oldest first (the newest `REPLAY_LIMITS.runsRead`). */
  runsOfBranch(storeKey: string, sessionId: string, branchId: string): ReplayRunView[] {
    const rows = readTransaction(this.db, () =>
      this.stmt(
        `SELECT run_id, turn, summary_json FROM replay_runs WHERE store_key = ? AND session_id = ? AND branch_id = ?
         ORDER BY created_ms DESC, rowid DESC LIMIT ?`,
      ).all<RunRow>(storeKey, sessionId, branchId, REPLAY_LIMITS.runsRead),
    );
    return rows.reverse().map((r) => ({
      runId: r.run_id,
      turn: r.turn === null ? null : Number(r.turn),
      summary: JSON.parse(r.summary_json) as ReplaySummary,
    }));
  }

  /** Removes a branch's runs and marks (a deleted branch); the number of rows removed. */
  deleteBranch(storeKey: string, sessionId: string, branchId: string): number {
    return immediateTransaction(this.db, () => this.removeBranch(storeKey, sessionId, branchId));
  }

  /** Removes a session's runs and marks; the number of rows removed. */
  deleteSession(storeKey: string, sessionId: string): number {
    return immediateTransaction(this.db, () => {
      const marks = this.stmt('DELETE FROM replay_marks WHERE store_key = ? AND session_id = ?').run(storeKey, sessionId).changes;
      return marks + this.stmt('DELETE FROM replay_runs WHERE store_key = ? AND session_id = ?').run(storeKey, sessionId).changes;
    });
  }

  private removeBranch(storeKey: string, sessionId: string, branchId: string): number {
    const args = [storeKey, sessionId, branchId] as const;
    const marks = this.stmt('DELETE FROM replay_marks WHERE store_key = ? AND session_id = ? AND branch_id = ?').run(...args).changes;
    return marks + this.stmt('DELETE FROM replay_runs WHERE store_key = ? AND session_id = ? AND branch_id = ?').run(...args).changes;
  }
}
