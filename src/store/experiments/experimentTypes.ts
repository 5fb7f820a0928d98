/**
 * What the experiment store takes and gives back. It takes a check's report (src/agents/check/checkTypes.ts
 * `CheckReport`) by its shape, since the store, a library, imports nothing of src/agents: `ExperimentReport` is the
 * part of a report it keeps, and a `CheckReport` is one.
 */
import type { ReplaySummary } from '../../shared/protocol/replay';
import type { RunUsageView } from '../../shared/protocol/runEvents';

export type ExperimentCaseStatus = 'pass' | 'fail' | 'error' | 'orphaned';

export interface ExperimentGrade {
  grader: string;
  pass: boolean;
  score: number;
  reason: string;
}

export interface ExperimentCall {
  name: string;
  arguments: string;
  output: unknown;
}

/** One case of a report, as the store reads it. */
export interface ExperimentCaseResult {
  case: { id: string; sessionId: string; branchId: string; turn: number; contentKey: string; verdict: 'good' | 'bad' };
  status: ExperimentCaseStatus;
  graders: readonly ExperimentGrade[];
  run: {
    answer: string;
    trajectory: readonly ExperimentCall[];
    usage: RunUsageView | null;
    ms: number;
    replay: ReplaySummary | null;
    branchId: string | null;
  } | null;
  error: string | null;
  ms: number;
}

/** A check's report, as the store reads it. */
export interface ExperimentReport {
  file: string;
  graders: readonly string[];
  results: readonly ExperimentCaseResult[];
  startedAt: string;
  ms: number;
}

/** An experiment as listed: what was checked, when, by which graders, and its totals. */
export interface ExperimentSummary {
  name: string;
  /** The session file the check read. */
  file: string;
  graders: string[];
  /** The agent's model, when the check knew it (it prices the tokens). */
  model: string | null;
  startedAt: string;
  ms: number;
  savedMs: number;
  cases: number;
  passed: number;
  failed: number;
  errors: number;
  orphaned: number;
  totalTokens: number;
  /** USD, summed over the cases with a known cost; null when none had one. */
  costUsd: number | null;
}

/** One case of a saved experiment. */
export interface SavedCase {
  caseId: string;
  sessionId: string;
  branchId: string;
  turn: number;
  contentKey: string;
  verdict: 'good' | 'bad';
  status: ExperimentCaseStatus;
  grades: ExperimentGrade[];
  /** The new run's answer and calls (cut at `EXPERIMENT_LIMITS`); null when the case did not run. */
  answer: string | null;
  calls: ExperimentCall[] | null;
  usage: RunUsageView | null;
  costUsd: number | null;
  latencyMs: number | null;
  /** The whole case, graders included. */
  caseMs: number;
  replay: ReplaySummary | null;
  error: string | null;
  keptBranch: string | null;
}

export interface SavedExperiment {
  summary: ExperimentSummary;
  cases: SavedCase[];
}

/**
 * A case that changed between a baseline and a new check: `regression` (passed, now fails or errors), `fix` (failed or
 * errored, now passes), `new` (not in the baseline), `missing` (in the baseline, not now). A case is the same case
 * when its id (session/branch/turn) and its content key are: one whose turn now holds another message is another case.
 */
export type FlipKind = 'regression' | 'fix' | 'new' | 'missing';

export interface ExperimentFlip {
  kind: FlipKind;
  caseId: string;
  before: ExperimentCaseStatus | null;
  after: ExperimentCaseStatus | null;
  /** Why the side that does not pass did not: its failing graders' reasons, or its error ('' when both pass or none ran). */
  reason: string;
}

export interface BaselineComparison {
  baseline: ExperimentSummary;
  /** Regressions first, then fixes, then new and missing cases; by session, branch and turn within each. */
  flips: ExperimentFlip[];
  /** Cases in both whose pass or no-pass did not change. */
  unchanged: number;
}

/**
 * The bounds of what one experiment keeps, so a runaway answer or tool output cannot grow the store without end; what
 * passes them is cut with a note of how much was cut.
 */
export const EXPERIMENT_LIMITS = {
  /** An experiment's name: 1 to 100 characters, no control characters. */
  nameChars: 100,
  /** The new run's answer. */
  answerChars: 100_000,
  /** Each call's arguments and output, as text. */
  callChars: 10_000,
  /** Calls kept per case: the first 200. */
  callsPerCase: 200,
  /** A case's error and each grader's reason. */
  textChars: 2_000,
  /** Cases per experiment. */
  cases: 100_000,
} as const;
