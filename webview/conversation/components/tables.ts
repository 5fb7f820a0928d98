import {
  USAGE_COUNT_KEYS,
  type TablesView,
  type ToolsView,
  type ToolUsageView,
  type TurnUsageView,
  type UsagePageView,
  type UsageSortKey,
} from '../../../src/shared/protocol/conversationViews';
import { toolBadgeName } from '../../../src/shared/itemTitles';
import { formatCost } from '../../../src/shared/pricing';
import { latencyLabel } from '../../../src/shared/latencyLabels';
import { el } from '../../shared/dom';
import { SortMemory, sortRows, type SortDirection } from '../logic/sortRows';
import { BRANCH_COLUMN_CH, columnWidths, fittedTemplate, gridFit, headerWidthText, turnsByBranch } from '../logic/tableLayout';
import { t as tr } from '../../shared/l10n';

interface Column<T> {
  key: keyof T;
  title: string;
  format?: (row: T) => string;
  numeric?: boolean;
  /** False: the host cannot sort by it (the header is plain text). */
  sortable?: boolean;
  /** At most this many `ch` wide, below the usual limit (logic/tableLayout.ts). */
  maxCh?: number;
}

const n = (v: number | null): string => (v === null ? '–' : v.toLocaleString('en-US'));

/** A grid sorted elsewhere (by the host): the header shows `key` and `descending`; choosing a header calls `onSort`. */
export interface ExternalSort<T> {
  key: keyof T;
  descending: boolean;
  onSort(key: keyof T): void;
  /** The columns the rows are really ordered by, in order, when that is more than `key` (the whole session's "turn"). */
  orderedBy?: (keyof T)[];
}

/**
 * A sortable data grid: clicking a header (or Enter/Space on it) sorts by it, choosing it again reverses. The rows
 * are sorted here, in the order kept in `sorted` (which outlives the grid: a refresh builds it again), unless
 * `external` is given: then `rows` are one page in the order it names, and choosing a header asks for another order
 * through it.
 */
function grid<T>(
  label: string,
  columns: Column<T>[],
  rows: T[],
  totals?: string[],
  external?: ExternalSort<T>,
  sorted: SortMemory<keyof T> = new SortMemory(),
): HTMLElement {
  // A column the kept order names that this table no longer has: the rows' own order.
  const choice = sorted.choice && columns.some((c) => c.key === sorted.choice?.key && c.sortable !== false) ? sorted.choice : undefined;
  let sortKey: keyof T | undefined = external ? external.key : choice?.key;
  let direction: SortDirection = external ? (external.descending ? 'desc' : 'asc') : (choice?.direction ?? 'asc');
  const text = (c: Column<T>, row: T): string => (c.format ? c.format(row) : String(row[c.key] ?? ''));
  // Rows built by hand (not from rowsData) do not inherit the grid's template: every row gets it, or the header and
  // the data rows size their columns differently.
  // Fixed widths, not fractions: the header row is laid out narrower than the data rows, so fractions of each row's
  // own width would not line up. Sized to the content, with room for a sort mark in a sortable column's header.
  // Every row scales its columns by the box's `--grid-fit` (fitGrid below), so a view slightly narrower than the
  // columns takes the difference from their padding instead of scrolling.
  const template = fittedTemplate(
    columnWidths(
      columns.map((c, i) => [headerWidthText(c.title, c.sortable !== false), ...rows.map((r) => text(c, r)), totals?.[i] ?? '']),
      columns.map((c) => !!c.numeric),
      columns.map((c) => c.maxCh),
    ),
  );
  const marked = (key: keyof T): boolean =>
    sortKey === key || (!!external?.orderedBy?.includes(key) && external.orderedBy.includes(sortKey as keyof T));
  const table = el('vscode-data-grid', {
    'aria-label': label,
    'grid-template-columns': template,
    class: 'grid',
    'generate-header': 'none',
  });
  const draw = (): void => {
    table.replaceChildren();
    // An ordinary row styled as the header: the toolkit lays out row-type="header" rows on its own, ignoring the
    // column template, so they would not line up with the data. Its cells are column headers all the same (their
    // role, and the sort order in aria-sort, are what a screen reader announces).
    const head = el('vscode-data-grid-row', { class: 'header-row', 'grid-template-columns': template });
    columns.forEach((c, i) => {
      if (c.sortable === false) {
        head.appendChild(
          el('vscode-data-grid-cell', { 'grid-column': i + 1, 'cell-type': 'columnheader', class: c.numeric ? 'num' : '' }, c.title),
        );
        return;
      }
      const mark = marked(c.key) ? (direction === 'asc' ? ' ▲' : ' ▼') : '';
      const cell = el(
        'vscode-data-grid-cell',
        {
          'grid-column': i + 1,
          'cell-type': 'columnheader',
          class: `sortable${c.numeric ? ' num' : ''}`,
          title: tr('Sort by {0}', c.title),
          'aria-sort': marked(c.key) ? (direction === 'asc' ? 'ascending' : 'descending') : 'none',
          'data-focus': `sort-${String(c.key)}`,
        },
        c.title + mark,
      );
      const sort = (): void => {
        if (external) return external.onSort(c.key);
        ({ key: sortKey, direction } = sorted.choose(c.key));
        // Drawn again from scratch: the header chosen keeps the focus (a keyboard user sorts on, or reverses).
        const focused = head.contains(document.activeElement);
        draw();
        if (focused) table.querySelector<HTMLElement>(`[data-focus="sort-${CSS.escape(String(c.key))}"]`)?.focus();
      };
      cell.addEventListener('click', sort);
      cell.addEventListener('keydown', (ev) => {
        if (ev.key !== 'Enter' && ev.key !== ' ') return;
        ev.preventDefault();
        sort();
      });
      head.appendChild(cell);
    });
    table.appendChild(head);
    for (const row of sortKey && !external ? sortRows(rows, sortKey, direction) : rows) {
      const r = el('vscode-data-grid-row', { 'grid-template-columns': template });
      columns.forEach((c, i) => {
        const value = text(c, row);
        // A text column's tooltip holds a text cut to its column's width (a figure is never cut).
        r.appendChild(
          el(
            'vscode-data-grid-cell',
            { 'grid-column': i + 1, class: c.numeric ? 'num' : '', ...(c.numeric ? {} : { title: value }) },
            value,
          ),
        );
      });
      table.appendChild(r);
    }
    if (totals) {
      const t = el('vscode-data-grid-row', { class: 'totals', 'grid-template-columns': template });
      totals.forEach((v, i) => t.appendChild(el('vscode-data-grid-cell', { 'grid-column': i + 1, class: i > 0 ? 'num' : '' }, v)));
      table.appendChild(t);
    }
  };
  draw();
  // Narrower than its columns (a split editor), the table scrolls inside this box, not the page.
  const box = el('div', { class: 'grid-scroll' }, table);
  fitGrid(box, table);
  return box;
}

/**
 * Keeps `--grid-fit` on `box` such that `table` fits it when a small cut of its columns is enough (gridFit). The
 * natural width is read with the factor at 1, once per size change of the box; reading it costs one layout.
 */
function fitGrid(box: HTMLElement, table: HTMLElement): void {
  const fit = (): void => {
    box.style.setProperty('--grid-fit', '1');
    const natural = table.scrollWidth;
    const factor = gridFit(natural, box.clientWidth);
    if (factor !== 1) box.style.setProperty('--grid-fit', factor.toFixed(4));
  };
  if (typeof ResizeObserver === 'undefined') return;
  new ResizeObserver(() => fit()).observe(box);
}

/** What the Tokens table asks the model for: another order, another page. */
export interface UsageTableActions {
  sort(key: UsageSortKey): void;
  page(step: 1 | -1): void;
}

/** "rows 201–400 of 100,000" with Previous and Next buttons (buttons: reachable with Tab, pressed with Enter/Space). */
function pager(u: UsagePageView, actions: UsageTableActions): HTMLElement {
  const first = u.offset + 1;
  const last = u.offset + u.rows.length;
  const button = (step: 1 | -1, disabled: boolean): HTMLElement => {
    const b = el(
      'vscode-button',
      {
        appearance: 'secondary',
        disabled,
        'data-focus': step === 1 ? 'usage-next' : 'usage-previous',
        'aria-label': step === 1 ? tr('Next usage page') : tr('Previous usage page'),
      },
      step === 1 ? tr('Next') : tr('Previous'),
    );
    b.addEventListener('click', () => {
      if (!b.hasAttribute('disabled')) actions.page(step);
    });
    return b;
  };
  return el(
    'div',
    { class: 'pager', role: 'navigation', 'aria-label': tr('Token usage pages') },
    button(-1, u.offset === 0),
    el('span', { class: 'pager-status', 'aria-live': 'polite' }, tr('rows {0}–{1} of {2}', n(first), n(last), n(u.rowCount))),
    button(1, last >= u.rowCount),
  );
}

/** Which branch ran a shared turn (branch scope; not sortable: the host orders rows by stored columns). */
const SHARED_COLUMN: Column<TurnUsageView> = {
  key: 'sharedFrom',
  title: tr('Shared'),
  sortable: false,
  maxCh: BRANCH_COLUMN_CH,
  format: (r) => (r.sharedFrom ? tr('shared with {0}', r.sharedFrom) : ''),
};

/**
 * The Tokens table: one page of the scope's usage rows as the host sorted them, a pager, and the totals row from
 * the host (summed over the whole scope by SQLite, not over the page).
 */
export function renderUsageTable(t: TablesView, actions: UsageTableActions): HTMLElement {
  const session = t.branchId === null;
  const u = t.usage;
  const shared = u.rows.some((r) => r.sharedFrom !== undefined);
  const columns: Column<TurnUsageView>[] = [
    ...(session ? [{ key: 'branchId', title: tr('Branch'), maxCh: BRANCH_COLUMN_CH } as Column<TurnUsageView>] : []),
    { key: 'turn', title: tr('Turn'), numeric: true },
    // A branch's shared turns carry the usage of the branch that ran them (the session lists each row once).
    ...(shared ? [SHARED_COLUMN] : []),
    { key: 'requests', title: tr('Requests'), numeric: true, format: (r) => n(r.requests) },
    { key: 'inputTokens', title: tr('Input'), numeric: true, format: (r) => n(r.inputTokens) },
    { key: 'outputTokens', title: tr('Output'), numeric: true, format: (r) => n(r.outputTokens) },
    { key: 'totalTokens', title: tr('Total'), numeric: true, format: (r) => n(r.totalTokens) },
    { key: 'cachedTokens', title: tr('Cached'), numeric: true, format: (r) => n(r.cachedTokens) },
    { key: 'reasoningTokens', title: tr('Reasoning'), numeric: true, format: (r) => n(r.reasoningTokens) },
  ];
  const totals = [...(session || shared ? [tr('Total'), ''] : [tr('Total')]), ...USAGE_COUNT_KEYS.map((k) => n(u.totals[k]))];
  // Priced by the host at the session's pricing model; not sortable (the host sorts in SQL, by stored columns).
  if (t.pricing?.known) {
    columns.push({ key: 'cost', title: tr('Cost'), numeric: true, sortable: false, format: (r) => formatCost(r.cost ?? null) });
    totals.push(formatCost(u.totals.cost ?? null));
  }
  // From the trace store, when any row's turn has a trace (not sortable: the rows are ordered in the session file).
  if (u.rows.some((r) => r.latencyMs !== undefined && r.latencyMs !== null)) {
    columns.push(
      {
        key: 'latencyMs',
        title: tr('Latency'),
        numeric: true,
        sortable: false,
        format: (r) => (r.latencyMs == null ? '–' : latencyLabel(r.latencyMs)),
      },
      { key: 'tracedRequests', title: tr('Traced requests'), numeric: true, sortable: false, format: (r) => n(r.tracedRequests ?? null) },
    );
    totals.push('', '');
  }
  const sort: ExternalSort<TurnUsageView> = {
    key: u.sort,
    descending: u.descending,
    onSort: (key) => actions.sort(key as UsageSortKey),
    // The whole session's rows by turn are grouped by branch first (the host's order): both headers say so.
    ...(session ? { orderedBy: ['branchId', 'turn'] as (keyof TurnUsageView)[] } : {}),
  };
  const parts: HTMLElement[] = [grid(tr('Token usage per turn'), columns, u.rows, totals, sort)];
  if (u.rowCount > 0) parts.push(pager(u, actions));
  const missing = t.turnsWithoutUsageCount;
  if (missing > 0) {
    const list = t.turnsWithoutUsage.map((m) => (session ? tr('{0} turn {1}', m.branchId, m.turn) : tr('turn {0}', m.turn)));
    const more = missing - list.length;
    const turns = `${list.join(', ')}${more > 0 ? tr(', and {0} more', n(more)) : ''}`;
    parts.push(
      el(
        'p',
        { class: 'note', role: 'note' },
        missing === 1
          ? tr('No usage recorded for 1 turn ({0}): the agent did not call storeRunUsage after that run.', turns)
          : tr('No usage recorded for {0} turns ({1}): the agent did not call storeRunUsage after those runs.', n(missing), turns),
      ),
    );
  }
  if (u.rowCount === 0) parts.push(el('p', { class: 'note' }, tr('This scope has no usage rows.')));
  return el('div', { class: 'table-block usage-table' }, ...parts);
}

/**
 * The Tools table of one scope (`tools/get`), sorted here: in the order kept in `sorted`, the user's choice across
 * the table's rebuilds.
 */
export function renderToolTable(t: Pick<ToolsView, 'tools'>, sorted: SortMemory<keyof ToolUsageView> = new SortMemory()): HTMLElement {
  const columns: Column<ToolUsageView>[] = [
    // A built-in tool by its people name, as the turn list's badges and the item cards say it.
    { key: 'toolName', title: tr('Tool'), format: (r) => (r.toolName ? toolBadgeName(r.toolName) : tr('(unnamed)')) },
    { key: 'calls', title: tr('Calls'), numeric: true, format: (r) => n(r.calls) },
    {
      key: 'turns',
      title: tr('Turns it ran in'),
      format: (r) => {
        const listed = r.branchTurns ?? r.turns;
        const more = r.turnCount > listed.length ? ` … (${tr('{0} turns', n(r.turnCount))})` : '';
        return (r.branchTurns ? turnsByBranch(r.branchTurns) : r.turns.join(', ')) + more;
      },
    },
  ];
  if (t.tools.length === 0)
    return el('div', { class: 'table-block tool-table' }, el('p', { class: 'note' }, tr('No tool calls in this scope.')));
  return el(
    'div',
    { class: 'table-block tool-table' },
    grid(tr('Tool usage'), columns, t.tools, [tr('Total'), n(t.tools.reduce((a, r) => a + r.calls, 0)), ''], undefined, sorted),
  );
}
