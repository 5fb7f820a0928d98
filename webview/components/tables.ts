import { USAGE_COUNT_KEYS, type TablesView, type ToolUsageView, type TurnUsageView } from '../../src/shared/viewModels';
import { el } from '../dom';
import { sortRows, type SortDirection } from '../logic/sortRows';

interface Column<T> {
  key: keyof T;
  title: string;
  format?: (row: T) => string;
  numeric?: boolean;
}

const n = (v: number | null): string => (v === null ? '–' : v.toLocaleString('en-US'));

/** A sortable data grid: clicking a header sorts by it, clicking again reverses. */
function grid<T>(label: string, columns: Column<T>[], rows: T[], totals?: string[]): HTMLElement {
  let sortKey: keyof T | undefined;
  let direction: SortDirection = 'asc';
  // Rows built by hand (not from rowsData) do not inherit the grid's template: every row gets it, or the header and
  // the data rows size their columns differently.
  // Fixed widths, not fractions: the header row is laid out narrower than the data rows, so fractions of each row's
  // own width would not line up.
  const template = columns.map((c) => (c.numeric ? '110px' : '170px')).join(' ');
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
      const mark = sortKey === c.key ? (direction === 'asc' ? ' ▲' : ' ▼') : '';
      const cell = el(
        'vscode-data-grid-cell',
        {
          'grid-column': i + 1,
          class: `sortable${c.numeric ? ' num' : ''}`,
          title: `Sort by ${c.title}`,
          'aria-sort': sortKey === c.key ? (direction === 'asc' ? 'ascending' : 'descending') : 'none',
        },
        c.title + mark,
      );
      cell.addEventListener('click', () => {
        direction = sortKey === c.key && direction === 'asc' ? 'desc' : 'asc';
        sortKey = c.key;
        draw();
      });
      head.appendChild(cell);
    });
    table.appendChild(head);
    for (const row of sortKey ? sortRows(rows, sortKey, direction) : rows) {
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
  return table;
}

const sum = (rows: TurnUsageView[], key: keyof TurnUsageView): number => rows.reduce((a, r) => a + ((r[key] as number | null) ?? 0), 0);

export function renderUsageTable(t: TablesView): HTMLElement {
  const session = t.branchId === null;
  const columns: Column<TurnUsageView>[] = [
    ...(session ? [{ key: 'branchId', title: 'Branch' } as Column<TurnUsageView>] : []),
    { key: 'turn', title: 'Turn', numeric: true },
    { key: 'requests', title: 'Requests', numeric: true, format: (r) => n(r.requests) },
    { key: 'inputTokens', title: 'Input', numeric: true, format: (r) => n(r.inputTokens) },
    { key: 'outputTokens', title: 'Output', numeric: true, format: (r) => n(r.outputTokens) },
    { key: 'totalTokens', title: 'Total', numeric: true, format: (r) => n(r.totalTokens) },
    { key: 'cachedTokens', title: 'Cached', numeric: true, format: (r) => n(r.cachedTokens) },
    { key: 'reasoningTokens', title: 'Reasoning', numeric: true, format: (r) => n(r.reasoningTokens) },
  ];
  const totals = [...(session ? ['Total', ''] : ['Total']), ...USAGE_COUNT_KEYS.map((k) => n(sum(t.usage, k)))];
  const parts: HTMLElement[] = [grid('Token usage per turn', columns, t.usage, totals)];
  if (t.turnsWithoutUsage.length > 0) {
    const list = t.turnsWithoutUsage.map((m) => (session ? `${m.branchId} turn ${m.turn}` : `turn ${m.turn}`));
    parts.push(
      el(
        'p',
        { class: 'note', role: 'note' },
        `No usage recorded for ${list.length} turn${list.length === 1 ? '' : 's'} (${list.slice(0, 20).join(', ')}${list.length > 20 ? ', …' : ''}): the agent did not call storeRunUsage after those runs.`,
      ),
    );
  }
  if (t.usage.length === 0) parts.push(el('p', { class: 'note' }, 'This scope has no usage rows.'));
  return el('div', { class: 'table-block usage-table' }, ...parts);
}

export function renderToolTable(t: TablesView): HTMLElement {
  const columns: Column<ToolUsageView>[] = [
    { key: 'toolName', title: 'Tool', format: (r) => r.toolName || '(unnamed)' },
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
