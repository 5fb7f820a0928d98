/**
 * The compare view's state: the comparison's summary, the rows read so far (from the first, a page at a time), and
 * which row is focused. Next/previous difference reads further pages when the next difference is not read yet.
 * The host is reached only through `request`, so the model is tested with a host written in the test.
 */
import type { CompareRequests } from '../../../src/shared/protocol/compare';
import type { CompareRowView, CompareSummaryView, CompareVerdictsView, CompareView } from '../../../src/shared/protocol/compareViews';
import type { PairwiseOutcome } from '../../../src/shared/reviewVocabulary';

export type CompareRequest = <M extends keyof CompareRequests>(
  method: M,
  params: CompareRequests[M]['params'],
) => Promise<CompareRequests[M]['result']>;

/** Rows per page: a screen and a half of rows. */
export const COMPARE_PAGE = 20;

export type ComparePart = 'summary' | 'rows' | 'focus' | 'error' | 'verdicts';

export class CompareModel {
  view: CompareView | undefined;
  /** The columns' totals, read after the first rows (null until then). */
  summary: CompareSummaryView | undefined;
  rows: CompareRowView[] = [];
  /**
   * Index (in `rows`) of the focused row, or -1. A reload keeps it on the same turn (`indexOfTurn`), not at the same
   * index: the rows shift when the shared turns before them change.
   */
  focused = -1;
  error: string | undefined;
  /** The pairwise verdicts on the rows, and each column's tally (undefined until read). */
  verdicts: CompareVerdictsView | undefined;
  private loading: Promise<void> | undefined;
  /** Grows with every reload, so answers to an older one are dropped. */
  private generation = 0;

  constructor(
    private readonly request: CompareRequest,
    private readonly redraw: (part: ComparePart) => void,
  ) {}

  get hasMore(): boolean {
    return !!this.view && this.rows.length < this.view.rowCount;
  }

  /**
   * The one row in the page's tab order (a roving tabindex): the focused row, else the first; -1 without rows. Tab
   * lands on it, the arrow keys move from it.
   */
  get tabStop(): number {
    if (this.rows.length === 0) return -1;
    return this.focused >= 0 && this.focused < this.rows.length ? this.focused : 0;
  }

  /**
   * The index of the row of `turn`, or of the nearest row read when that turn has no row any more: the first one
   * after it, else the last (-1 without rows). How a redraw finds again the row the focus was on.
   */
  indexOfTurn(turn: number): number {
    const i = this.rows.findIndex((r) => r.turn >= turn);
    return i >= 0 ? i : this.rows.length - 1;
  }

  /**
   * (Re)reads the comparison and its first page (keeping as many rows as were shown), then the columns' totals. The
   * first page is asked for with the comparison, not after it: the host builds the comparison once for both.
   */
  async load(): Promise<void> {
    const generation = ++this.generation;
    const keep = Math.max(COMPARE_PAGE, this.rows.length);
    try {
      const [view, first] = await Promise.all([
        this.request('compare/get', {}),
        this.request('compare/rows', { offset: 0, limit: Math.min(COMPARE_PAGE * 2, keep) }),
      ]);
      if (generation !== this.generation) return;
      this.view = view;
      this.error = undefined;
      this.redraw('summary');
      const rows: CompareRowView[] = [...first.rows];
      while (rows.length < Math.min(keep, view.rowCount)) {
        const page = await this.request('compare/rows', { offset: rows.length, limit: Math.min(COMPARE_PAGE * 2, keep - rows.length) });
        if (generation !== this.generation) return;
        if (page.rows.length === 0) break;
        rows.push(...page.rows);
      }
      const focusedTurn = this.rows[this.focused]?.turn;
      this.rows = rows;
      this.focused = focusedTurn === undefined ? -1 : this.indexOfTurn(focusedTurn);
      this.redraw('rows');
      await this.loadVerdicts();
      const summary = await this.request('compare/summary', {});
      if (generation !== this.generation) return;
      this.summary = summary;
      this.redraw('summary');
    } catch (err) {
      if (generation !== this.generation) return;
      this.error = err instanceof Error ? err.message : String(err);
      this.redraw('error');
    }
  }

  /** Reads the verdicts again (a review changed); a failure leaves the rows as they are and says why. */
  async loadVerdicts(): Promise<void> {
    try {
      this.verdicts = await this.request('compare/verdicts', {});
    } catch (err) {
      this.verdicts = { available: false, reason: err instanceof Error ? err.message : String(err), verdicts: [], tallies: [] };
    }
    this.redraw('verdicts');
  }

  /** The verdict on row `turn` between the baseline and `column` (`left`: the baseline was better). */
  /** The column's own review of `turn` (✓ ✗ and tags), if it has one. */
  markOf(column: number, turn: number): { verdict: 'good' | 'bad' | null; tags: string[] } | undefined {
    return this.verdicts?.marks?.find((m) => m.column === column && m.turn === turn);
  }

  verdictOf(column: number, turn: number): PairwiseOutcome | undefined {
    return this.verdicts?.verdicts.find((v) => v.column === column && v.turn === turn)?.outcome;
  }

  /** Sets the verdict (the same one again takes it back), and shows what the host kept. */
  async judge(column: number, turn: number, outcome: PairwiseOutcome): Promise<void> {
    const next = this.verdictOf(column, turn) === outcome ? null : outcome;
    try {
      this.verdicts = await this.request('compare/verdict', { column, turn, outcome: next, reason: '' });
      this.error = undefined;
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
      this.redraw('error');
    }
    this.redraw('verdicts');
  }

  /** Reads the next page (once at a time). */
  loadMore(): Promise<void> {
    if (!this.hasMore) return Promise.resolve();
    this.loading ??= (async () => {
      const generation = this.generation;
      try {
        const page = await this.request('compare/rows', { offset: this.rows.length, limit: COMPARE_PAGE });
        if (generation !== this.generation) return;
        this.rows = this.rows.concat(page.rows);
        this.redraw('rows');
      } catch (err) {
        this.error = err instanceof Error ? err.message : String(err);
        this.redraw('error');
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  /**
   * Focuses the next (`1`) or previous (`-1`) row that differs, reading further pages going forward. Returns false
   * when there is none.
   */
  async nextDifference(step: 1 | -1): Promise<boolean> {
    let i = this.focused + step;
    for (;;) {
      while (i >= 0 && i < this.rows.length) {
        if (this.rows[i]!.differs) {
          this.focused = i;
          this.redraw('focus');
          return true;
        }
        i += step;
      }
      if (step < 0 || !this.hasMore) return false;
      const before = this.rows.length;
      await this.loadMore();
      if (this.rows.length === before) return false;
    }
  }

  focus(index: number): void {
    if (index < 0 || index >= this.rows.length) return;
    this.focused = index;
    this.redraw('focus');
  }

  /**
   * The page's focus went to row `index` (Tab, or a click on something in it): it becomes the focused row without a
   * redraw, which would replace the element being focused or clicked. Returns whether it changed.
   */
  follow(index: number): boolean {
    if (index < 0 || index >= this.rows.length || index === this.focused) return false;
    this.focused = index;
    return true;
  }
}
