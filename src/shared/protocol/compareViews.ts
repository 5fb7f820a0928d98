/**
 * Plain-JSON view models of the compare view: two or more branches (of any open sessions) side by side from where
 * they stop sharing turns. The host builds them (src/extension/compare/compareData.ts); the webview only reads them. Every
 * string in them is untrusted text from a database or a model: render it as text.
 */
import type { ReplayCountsView } from './replay';
import type { BranchRef } from './sessionRef';
import type { PairwiseOutcome } from '../reviewVocabulary';

/** One branch to compare: the first of a comparison is the baseline every other column is diffed against. */
export interface CompareTarget extends BranchRef {
  /** A name for the column instead of the branch id (a retry's model). */
  label?: string;
  /** How long the run that made the branch took, when a retry made it (the grid shows it). */
  runMs?: number;
  /** The model that ran the branch (a retry's): its column is priced at it instead of the session's pricing model. */
  model?: string;
  /** The model that ran the branch is not known (an agent command on its own model): no cost is shown for it. */
  unpriced?: true;
  /**
   * The column is history guard layer `layerId` of the branch (read from the guard store, read-only; no usage), not the
   * branch as it is now (docs/history-guard.md).
   */
  layerId?: number;
}

/** The token counts the compare view shows (null: not recorded). */
export interface CompareUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  cachedTokens: number | null;
  reasoningTokens: number | null;
}

/** One column: which branch, how long, and whether it can be read. */
export interface CompareColumnView {
  dbName: string;
  sessionId: string;
  branchId: string;
  label: string | null;
  turns: number;
  /** True when `turns` is only a lower bound (a long session in a server store). */
  turnsAtLeast: boolean;
  runMs: number | null;
  /** Why this column cannot be shown (branch deleted, database closed), or null. */
  problem: string | null;
}

/**
 * A column's totals (`compare/summary`, asked for after the first rows: summing a long branch's usage and tools
 * costs more than the rows on screen).
 */
export interface CompareTotalsView {
  /**
   * The usage of the branch's whole conversation: its own turns' rows and its shared turns' rows on the branches
   * that ran them (as the Tokens table's branch scope counts it).
   */
  usage: CompareUsage;
  /**
   * The cost of `usage`, each turn at the model that ran it: the column's own turns at `pricingModel`, the turns it
   * shares at the price of the branch that ran them (its column's, else the session's); null when a part has no price.
   */
  cost: number | null;
  /** The price the column's own turns are at. */
  pricingModel: string | null;
  /** Tools the branch's conversation called, most used first. */
  tools: { name: string; calls: number }[];
  /** p50/p95 of its traced turns' latency (shared turns included), or null when none of them has a trace. */
  latency: { p50Ms: number; p95Ms: number; tracedTurns: number } | null;
  /**
   * The tool calls of the last run recorded on the branch (a re-run's replay marks, docs/replay.md): how many got
   * their recorded output, ran live or matched nothing, and where it left the recorded sequence. Absent: no run of
   * ours is recorded on the branch.
   */
  replay?: ReplayCountsView;
}

/** How the shared turns were found. */
export type SharedBy =
  /** Same session: the branches copied the same turns from a common ancestor (spec §8.3). */
  | 'fork'
  /** Different sessions or databases: the first turns hold equal items. */
  | 'content';

export interface CompareView {
  columns: CompareColumnView[];
  /** Turns 1…sharedTurns are the same on every column; rows start after them. */
  sharedTurns: number;
  sharedBy: SharedBy;
  /** How many rows there are: the longest column's turns after the shared ones. */
  rowCount: number;
}

/** A piece of a text diff: the baseline column shows `same` and `removed`, the others `same` and `added`. */
export interface DiffPiece {
  text: string;
  change: 'same' | 'added' | 'removed';
}

/** One change between two JSON values (a tool call's arguments), at a path like `city` or `stops[2].name`. */
export interface JsonChange {
  path: string;
  kind: 'added' | 'removed' | 'changed' | 'moved';
  /** The baseline's value as compact JSON (absent for `added`). */
  before?: string;
  /** This column's value as compact JSON (absent for `removed`). */
  after?: string;
}

/** A tool call of a turn with its output, and how it compares with the baseline's matching call. */
export interface CompareToolView {
  callId: string | null;
  name: string;
  /** The arguments as the model wrote them. */
  arguments: string;
  output: string | null;
  /**
   * `same`: the baseline made this call with equal arguments and output; `changed`: a call of the same tool with
   * other arguments or output (see `argumentChanges`); `added`: the baseline made no matching call. On the baseline
   * column, `removed` marks a call no other column made.
   */
  status: 'same' | 'changed' | 'added' | 'removed';
  /** Structural changes of the arguments against the baseline's call (non-baseline columns, `changed` only). */
  argumentChanges: JsonChange[];
  outputChanged: boolean;
}

/** One column's turn in a row. */
export interface CompareSideView {
  turn: number;
  createdAt: string | null;
  user: DiffPiece[];
  assistant: DiffPiece[];
  tools: CompareToolView[];
  /** Items that are neither messages nor tool calls (reasoning, handoffs, …), counted. */
  otherItems: number;
  usage: CompareUsage | null;
  cost: number | null;
  /** The turn's latency and model requests from its traces (docs/traces.md); null: no trace is linked to it. */
  latencyMs: number | null;
  tracedRequests: number | null;
  /** True when anything of this side differs from the baseline's side (always false on the baseline). */
  differs: boolean;
  /** Items of the turn that could not be read. */
  unreadable: number;
}

/** One aligned turn: one side per column, null where that column has no such turn. */
export interface CompareRowView {
  /** Row index: the turn is `sharedTurns + 1 + index` on every column. */
  index: number;
  turn: number;
  sides: (CompareSideView | null)[];
  /** True when any column differs from the baseline in this row (or lacks the turn). */
  differs: boolean;
}

export interface CompareSummaryView {
  /** One per column, in column order; null for a column that cannot be read. */
  columns: (CompareTotalsView | null)[];
}

export interface CompareRowsView {
  /** The rows asked for, in order (fewer at the end). */
  rows: CompareRowView[];
}

/** A pairwise verdict on one row, between the baseline (column 0) and `column`. */
export interface CompareVerdictView {
  column: number;
  turn: number;
  /** `left`: the baseline's answer was better; `right`: this column's. */
  outcome: PairwiseOutcome;
  reason: string;
}

/** One non-baseline column's verdicts against the baseline (docs/reviews.md). */
export interface CompareVerdictTally {
  column: number;
  /** The column's label (a retry's model) or branch. */
  label: string;
  model: string | null;
  better: number;
  worse: number;
  ties: number;
  bothBad: number;
}

/** The comparison's pairwise verdicts (`compare/verdicts`). */
export interface CompareVerdictsView {
  /** False when verdicts cannot be kept here: `reason` says why (columns of different sessions). */
  available: boolean;
  reason: string | null;
  verdicts: CompareVerdictView[];
  tallies: CompareVerdictTally[];
  /** Each column's turn verdicts (the review of the turn on the branch that ran it), for a mark beside the turn. */
  marks?: CompareTurnMark[];
}

/** A turn's own review as a compare column shows it. */
export interface CompareTurnMark {
  column: number;
  turn: number;
  verdict: 'good' | 'bad' | null;
  tags: string[];
}
