/**
 * The words of `agent-sessions check` (and the extension's *Check Agent Against Reviews…*): a case taken from a
 * reviewed turn, what re-running it produced, how graders judged it, and the report of a whole check. Shared by the
 * case selection, the runner, the graders, the reports and the experiment store, which are written separately and
 * meet only here.
 */
import type { ReplaySummary } from '../../shared/protocol/replay';
import type { RunUsageView } from '../../shared/protocol/runEvents';

/** One reviewed turn to re-run as a what-if of itself. */
export interface CheckCase {
  /** `${sessionId}/${branchId}/${turn}`. */
  id: string;
  sessionId: string;
  branchId: string;
  turn: number;
  contentKey: string;
  verdict: 'good' | 'bad';
  /** The user message, as whatIfInput makes it. */
  input: string | unknown[];
  expected: {
    /** good: the recorded answer; bad: the correction. */
    answer: string | null;
    /**
     * good: the recorded turn's calls, in order: function and custom tool calls by the tool's name, every other call
     * (MCP, hosted, shell, computer…) by its item type, MCP ones with their server and tool (trajectorySteps.ts).
     * bad: null, no trajectory to expect. The bad turn's calls were part of the answer its reviewer rejected (a wrong
     * tool or wrong arguments are what most often makes an answer wrong), so they are no reference: the trajectory
     * graders give a case without one no result (graders/trajectoryGrader.ts).
     */
    trajectory: { name: string; arguments: string }[] | null;
    /**
     * bad: the rejected answer, the text of the assistant message the correction was made on (read as the recorded
     * answer is), which a run must not give again (graders/notRejected.ts); null for a good turn, or when that message
     * holds no text. Absent in a case made by hand: none. In a result (`CaseResult.case`) it is redacted as the run is.
     */
    rejected?: string | null;
  };
  note: string | null;
  tags: string[];
}

/** What re-running one case produced. */
export interface CaseRun {
  answer: string;
  /** Every call the run made, named as `CheckCase.expected.trajectory` names them. */
  trajectory: { name: string; arguments: string; output: unknown }[];
  usage: RunUsageView | null;
  ms: number;
  replay: ReplaySummary | null;
  /** The kept branch (`--keep-branches`), else null. */
  branchId: string | null;
}

export interface GraderResult {
  grader: string;
  pass: boolean;
  /** 0..1 */
  score: number;
  reason: string;
}

export interface Grader {
  readonly name: string;
  /**
   * The grader's result for the case's run, or null when the grader does not judge that case (a trajectory grader on
   * a case with no expected trajectory): then it has no result on the case, neither a pass nor a fail.
   */
  grade(c: CheckCase, run: CaseRun, signal: AbortSignal): Promise<GraderResult | null>;
}

export type CaseStatus = 'pass' | 'fail' | 'error' | 'orphaned';

export interface CaseResult {
  case: CheckCase;
  status: CaseStatus;
  graders: GraderResult[];
  run: CaseRun | null;
  error: string | null;
  ms: number;
}

export interface CheckReport {
  file: string;
  /** Which graders ran. */
  graders: string[];
  results: CaseResult[];
  startedAt: string;
  ms: number;
}
