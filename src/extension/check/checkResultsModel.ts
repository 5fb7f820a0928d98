/**
 * What the check results view shows (docs/check.md, "In VS Code"), without `vscode`: the cases of the last check as
 * they finish, its totals, the failures-only filter, the cases *Re-run Failed Cases* runs again (their new results
 * replace the old ones, the others stay), and the flips against a saved experiment, regressions first. Unit-tested in
 * Node; the tree (checkResultsView.ts) only draws it.
 */
import type { CaseResult, CheckCase, CheckReport } from '../../agents/check/checkTypes';
import { checkTotals, type CheckTotals } from '../../agents/check/reports/reportTotals';
import type { BaselineComparison, ExperimentFlip, FlipKind } from '../../store/experiments/experimentTypes';

/** The order flips are listed in: what broke before what was fixed, then what came and went. */
export const FLIP_ORDER: readonly FlipKind[] = ['regression', 'fix', 'new', 'missing'];

/** What the check being shown was asked: enough to run its failed cases again and to name it. */
export interface CheckScope {
  dbPath: string;
  /** Only this session's reviews, when the check was started on a session. */
  sessionId: string | null;
  graders: string[];
}

export interface CheckTotalsNow extends CheckTotals {
  /** Cases not finished yet (running or waiting), 0 once the check ended. */
  pending: number;
}

const caseOrder = (a: CheckCase, b: CheckCase): number =>
  a.sessionId < b.sessionId
    ? -1
    : a.sessionId > b.sessionId
      ? 1
      : a.branchId < b.branchId
        ? -1
        : a.branchId > b.branchId
          ? 1
          : a.turn - b.turn;

const notPassed = (r: CaseResult): boolean => r.status === 'fail' || r.status === 'error';

export class CheckResultsModel {
  private readonly byId = new Map<string, CaseResult>();
  private expected = 0;
  private startedAt = new Date(0).toISOString();
  private ms = 0;
  /** The check is running. */
  running = false;
  /** Stopped before every case finished. */
  interrupted = false;
  /** Show only the cases that failed or errored. */
  failuresOnly = false;
  /** The flips against a saved experiment, once compared; cleared by a new check. */
  comparison: BaselineComparison | null = null;

  constructor(public scope: CheckScope | null = null) {}

  /** A new check: every earlier result is dropped. */
  start(scope: CheckScope, cases: number): void {
    this.scope = scope;
    this.byId.clear();
    this.comparison = null;
    this.startedAt = new Date().toISOString();
    this.ms = 0;
    this.begin(cases);
  }

  /**
   * A re-run of some cases of the shown check: their results are dropped (they are pending again), the others kept. A
   * comparison made before no longer describes what is shown, so it goes too. The check keeps its start, and its time
   * adds the re-run's.
   */
  restart(cases: readonly CheckCase[]): void {
    for (const c of cases) this.byId.delete(c.id);
    this.comparison = null;
    this.begin(this.byId.size + cases.length);
  }

  private begin(expected: number): void {
    this.expected = expected;
    this.running = true;
    this.interrupted = false;
  }

  /** A case's result as it finished (a second result for the same case replaces the first). */
  add(result: CaseResult): void {
    this.byId.set(result.case.id, result);
  }

  /** The check ended (`interrupted`: stopped before every case finished; those that did are kept). */
  finish(interrupted: boolean, ms: number): void {
    this.running = false;
    this.interrupted = interrupted;
    this.ms += ms;
    this.expected = this.byId.size;
  }

  get hasResults(): boolean {
    return this.byId.size > 0;
  }

  /** Every result, in case order (session, branch, turn). */
  results(): CaseResult[] {
    return [...this.byId.values()].sort((a, b) => caseOrder(a.case, b.case));
  }

  /** The results the view lists: all, or with the filter on only those that failed or errored. */
  visible(): CaseResult[] {
    const all = this.results();
    return this.failuresOnly ? all.filter(notPassed) : all;
  }

  result(caseId: string): CaseResult | undefined {
    return this.byId.get(caseId);
  }

  totals(): CheckTotalsNow {
    const t = checkTotals([...this.byId.values()]);
    return { ...t, pending: Math.max(0, this.expected - this.byId.size) };
  }

  /** The cases *Re-run Failed Cases* runs again: those that failed or errored (never the orphaned: they cannot run). */
  failedCases(): CheckCase[] {
    return this.results()
      .filter(notPassed)
      .map((r) => r.case);
  }

  /** The shown check as a report (to save as an experiment, or compare with one). */
  report(): CheckReport {
    return {
      file: this.scope?.dbPath ?? '',
      graders: this.scope?.graders ?? [],
      results: this.results(),
      startedAt: this.startedAt,
      ms: this.ms,
    };
  }

  /** The flips, regressions first, then fixes, new and missing cases (each kind in the order the store gave). */
  flips(): ExperimentFlip[] {
    const flips = this.comparison?.flips ?? [];
    return FLIP_ORDER.flatMap((kind) => flips.filter((f) => f.kind === kind));
  }
}
