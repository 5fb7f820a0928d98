/**
 * The compare view: two to five branches side by side from where they stop sharing turns. The state lives in
 * `CompareModel` (webview/logic/compareModel.ts); this file lays the page out and wires keys and buttons.
 * Keys: F7 / n next difference, Shift+F7 / p previous (as in VS Code's diff editor), Enter opens the focused row's
 * baseline turn in the conversation view. The rows are a grid with a roving tabindex: one row is in the tab order
 * (the focused one, else the first), the arrow keys move between rows, and a redraw (a live write, a page read, a
 * verdict) puts the focus back where it was.
 */
import { compareRowElement, markFocusedRow, sharedBar, summaryCard, type RowVerdicts } from './components/compareRows';
import type { PairwiseOutcome } from '../../src/shared/reviewVocabulary';
import { el, replaceChildren } from '../shared/dom';
import { keepDrafts } from '../shared/drafts';
import { CompareModel, type ComparePart } from './logic/compareModel';
import { compareRequest, listen } from '../shared/messenger';
import { registerToolkit } from '../shared/toolkit';
import { t } from '../shared/l10n';

const started = performance.now();
let firstRowsReported = false;
registerToolkit();

const app = document.getElementById('app') as HTMLElement;
const title = el('h1', { class: 'title' }, t('Compare'));
const status = el('span', { class: 'muted compare-status', 'aria-live': 'polite' });
const prev = el('vscode-button', { appearance: 'secondary', title: t('Previous difference (Shift+F7)') }, `↑ ${t('Previous difference')}`);
const next = el('vscode-button', { appearance: 'secondary', title: t('Next difference (F7)') }, `↓ ${t('Next difference')}`);
const banner = el('div', { class: 'banner', role: 'alert' });
const cards = el('div', { class: 'compare-cards' });
const shared = el('div', { class: 'shared-slot' });
const rowsSlot = el('div', { class: 'compare-rows', role: 'grid', 'aria-label': t('Turns side by side') });
const more = el('div', { class: 'compare-more muted' });
const verdictNote = el('p', { class: 'muted verdict-note' });
replaceChildren(
  app,
  el('header', { class: 'header' }, title, status, el('div', { class: 'actions' }, prev, next)),
  banner,
  cards,
  shared,
  verdictNote,
  rowsSlot,
  more,
);
app.classList.add('compare');

const model = new CompareModel(compareRequest, redraw);

/**
 * Every redraw keeps what is typed in the page's inputs (shared/drafts.ts), as the conversation view's do: the view
 * has no text input of its own yet, but one it gets is kept across its live refreshes without a fix of its own.
 */
function redraw(part: ComparePart): void {
  keepDrafts(app, () => drawPart(part));
}

function drawPart(part: ComparePart): void {
  const v = model.view;
  switch (part) {
    case 'summary': {
      if (!v) return;
      banner.classList.remove('visible');
      title.textContent = t('Compare {0}', v.columns.map((c) => c.label ?? c.branchId).join(' ↔ '));
      cards.className = `compare-cards cols-${v.columns.length}`;
      const totals = model.summary?.columns;
      const base = v.columns[0] ? { column: v.columns[0], totals: totals?.[0] } : undefined;
      const tallies = model.verdicts?.tallies ?? [];
      replaceChildren(
        cards,
        ...v.columns.map((c, i) =>
          summaryCard(
            c,
            totals?.[i],
            i,
            base,
            () => void change(i),
            tallies.find((x) => x.column === i),
          ),
        ),
      );
      replaceChildren(shared, sharedBar(v));
      return;
    }
    case 'rows':
      keepRowFocus(drawRows);
      return;
    case 'focus': {
      drawRows();
      const row = rowsSlot.querySelector<HTMLElement>('.compare-row.focused');
      row?.focus();
      row?.scrollIntoView({ block: 'nearest' });
      return;
    }
    case 'verdicts':
      keepRowFocus(drawRows);
      drawPart('summary');
      verdictNote.textContent = model.verdicts && !model.verdicts.available ? (model.verdicts.reason ?? '') : '';
      return;
    case 'error':
      banner.textContent = model.error ?? '';
      banner.classList.toggle('visible', !!model.error);
      return;
  }
}

/** A row's verdicts, when this comparison can keep them. */
function rowVerdicts(turn: number): RowVerdicts | undefined {
  const v = model.view;
  if (!v || !model.verdicts?.available) return undefined;
  return {
    labels: v.columns.map((c) => c.label ?? c.branchId),
    of: (column) => model.verdictOf(column, turn),
    judge: (column, outcome) => void model.judge(column, turn, outcome),
  };
}

/**
 * Runs `draw` (which replaces the rows) so that the focus, when it was in a row, is back on that row after (found by its
 * turn: the rows can shift), on the same button in it when it was on one, and the page is scrolled where it was.
 */
function keepRowFocus(draw: () => void): void {
  const active = document.activeElement;
  const row = active instanceof HTMLElement && rowsSlot.contains(active) ? active.closest<HTMLElement>('.compare-row') : null;
  const page = document.scrollingElement;
  const [top, left] = [page?.scrollTop ?? 0, page?.scrollLeft ?? 0];
  const inner = row && active !== row ? focusables(row).indexOf(active as HTMLElement) : -1;
  draw();
  if (!row) return;
  const index = model.indexOfTurn(Number(row.dataset.turn));
  const again = rowsSlot.querySelector<HTMLElement>(`.compare-row[data-index="${index}"]`);
  if (again) (focusables(again)[inner] ?? again).focus({ preventScroll: true });
  if (page && (page.scrollTop !== top || page.scrollLeft !== left)) page.scrollTo(left, top);
}

/** What can take the focus inside a row, in document order. */
function focusables(row: HTMLElement): HTMLElement[] {
  return Array.from(row.querySelectorAll<HTMLElement>('button, vscode-button, [tabindex]'));
}

function drawRows(): void {
  const v = model.view;
  if (!v) return;
  const columns = v.columns.length;
  const tabStop = model.tabStop;
  rowsSlot.setAttribute('aria-rowcount', String(v.rowCount));
  replaceChildren(
    rowsSlot,
    ...model.rows.map((r, i) =>
      compareRowElement(
        r,
        columns,
        { focused: i === model.focused, tabStop: i === tabStop },
        (c) => void openTurn(c, r.turn),
        rowVerdicts(r.turn),
        (c) => model.markOf(c, r.turn),
      ),
    ),
  );
  const differing = model.rows.filter((r) => r.differs).length;
  status.textContent = `${v.rowCount === 1 ? t('1 turn after the shared ones') : t('{0} turns after the shared ones', v.rowCount.toLocaleString('en-US'))} · ${t('{0} of the {1} shown differ', differing, model.rows.length)}`;
  more.textContent = model.hasMore ? t('Showing {0} of {1}: scroll for more.', model.rows.length, v.rowCount.toLocaleString('en-US')) : '';
  if (v.rowCount === 0)
    replaceChildren(
      rowsSlot,
      el('div', { role: 'row' }, el('p', { class: 'muted', role: 'gridcell' }, t('Nothing to compare after the shared turns.'))),
    );
  if (!firstRowsReported && (model.rows.length > 0 || v.rowCount === 0)) {
    firstRowsReported = true;
    // Read by the compare benchmark and the UI test: from this script's start to the first rows laid out.
    requestAnimationFrame(() => {
      app.setAttribute('data-first-rows-ms', (performance.now() - started).toFixed(1));
      // The wall-clock time too, so a test can measure from the user's choice without its own polling in the figure.
      app.setAttribute('data-first-rows-at', String(Date.now()));
    });
  }
  observe();
}

async function openTurn(column: number, turn: number): Promise<void> {
  try {
    await compareRequest('compare/openTurn', { column, turn });
  } catch (err) {
    model.error = err instanceof Error ? err.message : String(err);
    redraw('error');
  }
}

async function change(column: number): Promise<void> {
  try {
    const { changed } = await compareRequest('compare/pickBranch', { column });
    if (changed) {
      model.rows = [];
      model.focused = -1;
      await model.load();
    }
  } catch (err) {
    model.error = err instanceof Error ? err.message : String(err);
    redraw('error');
  }
}

// More rows as the last one scrolls into view.
const sentinelObserver = new IntersectionObserver((entries) => {
  if (entries.some((e) => e.isIntersecting)) void model.loadMore();
});
function observe(): void {
  sentinelObserver.disconnect();
  sentinelObserver.observe(more);
}

const step = (d: 1 | -1): void => {
  void model.nextDifference(d).then((found) => {
    if (!found) status.textContent = d > 0 ? t('No more differences.') : t('No earlier difference.');
  });
};
prev.addEventListener('click', () => step(-1));
next.addEventListener('click', () => step(1));
document.addEventListener('keydown', (e) => {
  const target = e.target as HTMLElement | null;
  if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA')) return;
  if (e.key === 'F7' || e.key === 'n' || e.key === 'p') {
    e.preventDefault();
    step(e.key === 'p' || (e.key === 'F7' && e.shiftKey) ? -1 : 1);
  } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    const row = target?.closest<HTMLElement>('.compare-row');
    if (!row) return;
    e.preventDefault();
    model.focus(Number(row.dataset.index) + (e.key === 'ArrowDown' ? 1 : -1));
  } else if (['1', '2', '3', '4'].includes(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {
    // The focused row's verdict between the baseline and the first other column: 1 baseline, 2 it, 3 tie, 4 both bad.
    const row = target?.closest<HTMLElement>('.compare-row');
    const r = row ? model.rows[Number(row.dataset.index)] : undefined;
    if (!r || !model.verdicts?.available || !r.sides[0] || !r.sides[1]) return;
    e.preventDefault();
    const outcomes: PairwiseOutcome[] = ['left', 'right', 'tie', 'both-bad'];
    void model.judge(1, r.turn, outcomes[Number(e.key) - 1]!).then(() => model.focus(Number(row!.dataset.index)));
  } else if (e.key === 'Enter') {
    const row = target?.closest<HTMLElement>('.compare-row');
    const r = row ? model.rows[Number(row.dataset.index)] : undefined;
    if (r && target === row) void openTurn(0, r.turn);
  }
});
// Tab (or a click) into a row, or onto a button in it, makes it the focused row and the grid's tab stop.
rowsSlot.addEventListener('focusin', (e) => {
  const row = (e.target as HTMLElement).closest<HTMLElement>('.compare-row');
  if (row && model.follow(Number(row.dataset.index))) markFocusedRow(rowsSlot, model.focused);
});
rowsSlot.addEventListener('click', (e) => {
  const row = (e.target as HTMLElement).closest<HTMLElement>('.compare-row');
  if (row && !(e.target as HTMLElement).closest('vscode-button')) model.focus(Number(row.dataset.index));
});

listen({
  // A review changed (this window's verdicts): only the verdicts are read again.
  notice: (n) => void (n.what.every((k) => k === 'reviews') ? model.loadVerdicts() : model.load()),
  reveal: () => undefined,
  run: () => undefined,
});
void model.load();
