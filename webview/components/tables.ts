import {
  USAGE_COUNT_KEYS,
  type TablesView,
  type ToolUsageView,
  type TurnUsageView,
  type UsagePageView,
  type UsageSortKey,
} from '../../src/shared/viewModels';
import { toolBadgeName } from '../../src/shared/itemTitles';
import { formatCost } from '../../src/shared/pricing';
import { el } from '../dom';
import { sortRows, type SortDirection } from '../logic/sortRows';

interface Column<T> {
  key: keyof T;
  title: string;
  format?: (row: T) => string;
  numeric?: boolean;
  /** False: the host cannot sort by it (the header is plain text). */
  sortable?: boolean;
}

const n = (v: number | null): string => (v === null ? '–' : v.toLocaleString('en-US'));

/** A grid sorted elsewhere (by the host): the header shows `key` and `descending`; choosing a header calls `onSort`. */
export interface ExternalSort<T> {
  key: keyof T;
  descending: boolean;
  onSort(key: keyof T): void;
}

/**
 * A sortable data grid: clicking a header (or Enter/Space on it) sorts by it, choosing it again reverses. The rows
 * are sorted here, unless `external` is given: then `rows` are one page in the order it names, and choosing a header
 * asks for another order through it.
 */
function grid<T>(label: string, columns: Column<T>[], rows: T[], totals?: string[], external?: ExternalSort<T>): HTMLElement {
  let sortKey: keyof T | undefined = external?.key;
  let direction: SortDirection = external?.descending ? 'desc' : 'asc';
  // Rows built by hand (not from rowsData) do not inherit the grid's template: every row gets it, or the header and
  // the data rows size their columns differently.
  // Fixed widths, not fractions: the header row is laid out narrower than the data rows, so fractions of each row's
  // own width would not line up.
  const template = columns.map((c) => (c.numeric ? '96px' : '150px')).join(' ');
  const table = el('vscode-data-grid', {
    'aria-label': label,
    'grid-template-columns': template,
    class: 'grid',
    'generate-header': 'none',
  });
  const draw = (): void => {
    table.replaceChildren();
    // An ordinary row styled as the header: the toolkit lays out row-type="header" rows on its own, ignoring the
    // column template, so they would not line up with the data.
    const head = el('vscode-data-grid-row', { class: 'header-row', 'grid-template-columns': template });
    columns.forEach((c, i) => {
      if (c.sortable === false) {
        head.appendChild(el('vscode-data-grid-cell', { 'grid-column': i + 1, class: c.numeric ? 'num' : '' }, c.title));
        return;
      }
      const mark = sortKey === c.key ? (direction === 'asc' ? ' ▲' : ' ▼') : '';
      const cell = el(
        'vscode-data-grid-cell',
        {
          'grid-column': i + 1,
          class: `sortable${c.numeric ? ' num' : ''}`,
          title: `Sort by ${c.title}`,
          'aria-sort': sortKey === c.key ? (direction === 'asc' ? 'ascending' : 'descending') : 'none',
          'data-focus': `sort-${String(c.key)}`,
        },
        c.title + mark,
      );
      const sort = (): void => {
        if (external) return external.onSort(c.key);
        direction = sortKey === c.key && direction === 'asc' ? 'desc' : 'asc';
        sortKey = c.key;
        draw();
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
      columns.forEach((c, i) =>
        r.appendChild(
          el(
            'vscode-data-grid-cell',
            { 'grid-column': i + 1, class: c.numeric ? 'num' : '' },
            c.format ? c.format(row) : String(row[c.key] ?? ''),
          ),
        ),
      );
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
  return el('div', { class: 'grid-scroll' }, table);
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
  const button = (step: 1 | -1, text: string, disabled: boolean): HTMLElement => {
    const b = el(
      'vscode-button',
      { appearance: 'secondary', disabled, 'data-focus': step === 1 ? 'usage-next' : 'usage-previous', 'aria-label': `${text} usage page` },
      text,
    );
    b.addEventListener('click', () => {
      if (!b.hasAttribute('disabled')) actions.page(step);
    });
    return b;
  };
  return el(
    'div',
    { class: 'pager', role: 'navigation', 'aria-label': 'Token usage pages' },
    button(-1, 'Previous', u.offset === 0),
    el('span', { class: 'pager-status', 'aria-live': 'polite' }, `rows ${n(first)}–${n(last)} of ${n(u.rowCount)}`),
    button(1, 'Next', last >= u.rowCount),
  );
}

/** Which branch ran a shared turn (branch scope; not sortable: the host orders rows by stored columns). */
const SHARED_COLUMN: Column<TurnUsageView> = {
  key: 'sharedFrom',
  title: 'Shared',
  sortable: false,
  format: (r) => (r.sharedFrom ? `shared with ${r.sharedFrom}` : ''),
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
    ...(session ? [{ key: 'branchId', title: 'Branch' } as Column<TurnUsageView>] : []),
    { key: 'turn', title: 'Turn', numeric: true },
    // A branch's shared turns carry the usage of the branch that ran them (the session lists each row once).
    ...(shared ? [SHARED_COLUMN] : []),
    { key: 'requests', title: 'Requests', numeric: true, format: (r) => n(r.requests) },
    { key: 'inputTokens', title: 'Input', numeric: true, format: (r) => n(r.inputTokens) },
    { key: 'outputTokens', title: 'Output', numeric: true, format: (r) => n(r.outputTokens) },
    { key: 'totalTokens', title: 'Total', numeric: true, format: (r) => n(r.totalTokens) },
    { key: 'cachedTokens', title: 'Cached', numeric: true, format: (r) => n(r.cachedTokens) },
    { key: 'reasoningTokens', title: 'Reasoning', numeric: true, format: (r) => n(r.reasoningTokens) },
  ];
  const totals = [...(session || shared ? ['Total', ''] : ['Total']), ...USAGE_COUNT_KEYS.map((k) => n(u.totals[k]))];
  // Priced by the host at the session's pricing model; not sortable (the host sorts in SQL, by stored columns).
  if (t.pricing?.known) {
    columns.push({ key: 'cost', title: 'Cost', numeric: true, sortable: false, format: (r) => formatCost(r.cost ?? null) });
    totals.push(formatCost(u.totals.cost ?? null));
  }
  const sort: ExternalSort<TurnUsageView> = { key: u.sort, descending: u.descending, onSort: (key) => actions.sort(key as UsageSortKey) };
  const parts: HTMLElement[] = [grid('Token usage per turn', columns, u.rows, totals, sort)];
  if (u.rowCount > 0) parts.push(pager(u, actions));
  const missing = t.turnsWithoutUsageCount;
  if (missing > 0) {
    const list = t.turnsWithoutUsage.map((m) => (session ? `${m.branchId} turn ${m.turn}` : `turn ${m.turn}`));
    const more = missing - list.length;
    parts.push(
      el(
        'p',
        { class: 'note', role: 'note' },
        `No usage recorded for ${n(missing)} turn${missing === 1 ? '' : 's'} (${list.join(', ')}${more > 0 ? `, and ${n(more)} more` : ''}): the agent did not call storeRunUsage after those runs.`,
      ),
    );
  }
  if (u.rowCount === 0) parts.push(el('p', { class: 'note' }, 'This scope has no usage rows.'));
  return el('div', { class: 'table-block usage-table' }, ...parts);
}

/** The Tools table of one scope (`tools/get`; a `TablesView` fits too). */
export function renderToolTable(t: Pick<TablesView, 'tools'>): HTMLElement {
  const columns: Column<ToolUsageView>[] = [
    // A built-in tool by its people name, as the turn list's badges and the item cards say it.
    { key: 'toolName', title: 'Tool', format: (r) => (r.toolName ? toolBadgeName(r.toolName) : '(unnamed)') },
    { key: 'calls', title: 'Calls', numeric: true },
    {
      key: 'turns',
      title: 'Turns it ran in',
      format: (r) => r.turns.join(', ') + (r.turnCount > r.turns.length ? ` … (${r.turnCount} turns)` : ''),
    },
  ];
  if (t.tools.length === 0)
    return el('div', { class: 'table-block tool-table' }, el('p', { class: 'note' }, 'No tool calls in this scope.'));
  return el(
    'div',
    { class: 'table-block tool-table' },
    grid('Tool usage', columns, t.tools, ['Total', String(t.tools.reduce((a, r) => a + r.calls, 0)), '']),
  );
}
