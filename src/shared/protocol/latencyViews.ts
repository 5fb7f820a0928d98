/**
 * Turns' latency as their traces tell it (docs/traces.md), shared by the conversation view (turn list, Tokens table)
 * and the compare view. Built by src/extension/traces/turnLatency.ts from the trace store; absent where no trace is
 * linked to a turn, so "no figure" and "0 ms" never look alike.
 */

/** One turn's figures: its turn number on the branch that ran it (`branchId`). */
export interface TurnLatencyView {
  branchId: string;
  turn: number;
  /** From the first span of the turn's traces to the last one's end. */
  ms: number;
  /** Model requests, and the models that answered them, most requests first. */
  requests: number;
  models: string[];
  /** Spans that ended in an error. */
  errors: number;
  traces: number;
}

/** A branch's turns' latency (`branch/latency`): each traced turn (shared ones too), and p50/p95 over them. */
export interface BranchLatencyView {
  branchId: string;
  /** The traced turns, in turn order; `branchId` of each is the branch that ran it. */
  turns: TurnLatencyView[];
  /** Turns read (traced or not). */
  turnCount: number;
  /** True when the branch is longer than the host reads for these figures (its last turns were read). */
  partial: boolean;
  /** Null when no turn of the branch has a trace. */
  p50Ms: number | null;
  p95Ms: number | null;
}
