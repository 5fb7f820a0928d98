/**
 * Drawing the compare view: the columns' summary cards and the aligned rows. All text is inserted as text; diff
 * pieces become spans with a class (`diff-added`, `diff-removed`), so added and removed words read at a glance and
 * screen readers hear them as marked (`<ins>`/`<del>`).
 */
import type {
  CompareColumnView,
  CompareTotalsView,
  CompareRowView,
  CompareSideView,
  CompareToolView,
  CompareUsage,
  CompareView,
  DiffPiece,
} from '../../src/shared/compareView';
import { formatCost } from '../../src/shared/pricing';
import { el, type Child } from '../dom';

const n = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : v.toLocaleString('en-US'));

/** A signed difference to the baseline, or '' when there is nothing to compare. */
function delta(value: number | null, base: number | null, format: (v: number) => string): string {
  if (value === null || base === null || value === base) return '';
  const d = value - base;
  return ` (${d > 0 ? '+' : '−'}${format(Math.abs(d))})`;
}

const tokens = (v: number): string => v.toLocaleString('en-US');

export function pieces(list: readonly DiffPiece[], empty: string): Node {
  const out = el('div', { class: 'diff-text' });
  if (list.length === 0) out.append(el('span', { class: 'muted' }, empty));
  for (const p of list) {
    if (p.change === 'added') out.append(el('ins', { class: 'diff-added' }, p.text));
    else if (p.change === 'removed') out.append(el('del', { class: 'diff-removed' }, p.text));
    else out.append(p.text);
  }
  return out;
}

function usageLine(u: CompareUsage | null, cost: number | null, base: { usage: CompareUsage | null; cost: number | null } | null): string {
  if (!u) return 'no usage recorded';
  const parts = [
    `in ${n(u.inputTokens)}${delta(u.inputTokens, base?.usage?.inputTokens ?? null, tokens)}`,
    `cached ${n(u.cachedTokens)}`,
    `out ${n(u.outputTokens)}${delta(u.outputTokens, base?.usage?.outputTokens ?? null, tokens)}`,
  ];
  if (u.reasoningTokens) parts.push(`reasoning ${n(u.reasoningTokens)}`);
  parts.push(`total ${n(u.totalTokens)}${delta(u.totalTokens, base?.usage?.totalTokens ?? null, tokens)}`);
  if (cost !== null) parts.push(`${formatCost(cost)}${delta(cost, base?.cost ?? null, formatCost)}`);
  return parts.join(' · ');
}

/**
 * The summary card of a column, with deltas against the baseline (column 0). `totals` are null until the view has
 * read them (after the first rows), or for a column that cannot be read.
 */
export function summaryCard(
  c: CompareColumnView,
  totals: CompareTotalsView | null | undefined,
  index: number,
  base: { column: CompareColumnView; totals: CompareTotalsView | null | undefined } | undefined,
  onChange: () => void,
): HTMLElement {
  const title = c.label ?? c.branchId;
  const change = el(
    'vscode-button',
    { appearance: 'icon', 'aria-label': `Compare another branch in place of ${title}`, title: 'Change branch…' },
    el('span', { class: 'codicon-text' }, '⇄'),
  );
  change.addEventListener('click', onChange);
  const body: Child[] = [];
  if (c.problem) body.push(el('div', { class: 'problem', role: 'alert' }, c.problem));
  else {
    const b = index === 0 ? undefined : base;
    const bt = b?.totals ?? null;
    body.push(
      el(
        'div',
        { class: 'stat' },
        `${n(c.turns)}${c.turnsAtLeast ? '+' : ''} turn${c.turns === 1 ? '' : 's'}${b ? delta(c.turns, b.column.turns, tokens) : ''}`,
      ),
    );
    if (!totals) body.push(el('div', { class: 'stat muted' }, 'Tokens, cost and tools: reading…'));
    else
      body.push(
        el(
          'div',
          { class: 'stat', title: 'Tokens of the whole conversation of this branch, shared turns included' },
          `Tokens: ${n(totals.usage.totalTokens)}${bt ? delta(totals.usage.totalTokens, bt.usage.totalTokens, tokens) : ''}`,
        ),
        el(
          'div',
          { class: 'stat', title: totals.pricingModel ? `Priced as ${totals.pricingModel}` : 'Set Pricing Model… to see cost' },
          `Cost: ${totals.cost === null ? `– (${totals.pricingModel ? `no price for ${totals.pricingModel}` : 'no pricing model'})` : formatCost(totals.cost)}${bt ? delta(totals.cost, bt.cost, formatCost) : ''}`,
        ),
        el(
          'div',
          { class: 'stat' },
          `Tools: ${totals.tools.length === 0 ? 'none' : totals.tools.map((t) => `${t.name} ×${t.calls}`).join(', ')}`,
        ),
      );
    if (c.runMs !== null)
      body.push(
        el(
          'div',
          { class: 'stat' },
          `Run time: ${(c.runMs / 1000).toFixed(1)} s${b && b.column.runMs !== null ? delta(c.runMs / 1000, b.column.runMs / 1000, (v) => `${v.toFixed(1)} s`) : ''}`,
        ),
      );
  }
  return el(
    'section',
    { class: `compare-card${index === 0 ? ' baseline' : ''}`, 'aria-label': `Column ${index + 1}: ${title}` },
    el(
      'div',
      { class: 'card-head' },
      el('strong', { class: 'card-title', title }, title),
      index === 0 ? el('span', { class: 'status-badge', title: 'The other columns are compared with this one' }, 'baseline') : null,
      change,
    ),
    el(
      'div',
      { class: 'card-where muted', title: `${c.sessionId} · ${c.dbName}` },
      `${c.label ? `${c.branchId} · ` : ''}${c.sessionId} · ${c.dbName}`,
    ),
    ...body,
  );
}

/** The collapsed shared prefix: "Turns 1–2 shared". */
export function sharedBar(view: CompareView): HTMLElement {
  const s = view.sharedTurns;
  const how = view.sharedBy === 'fork' ? 'copied from the branch they forked from' : 'equal items in every session';
  const text = s === 0 ? 'No shared turns: the branches differ from turn 1.' : `${s === 1 ? 'Turn 1' : `Turns 1–${s}`} shared (${how}).`;
  return el('div', { class: 'shared-bar', role: 'note' }, text);
}

function toolBlock(t: CompareToolView, baseline: boolean): HTMLElement {
  const status = { same: '', changed: 'changed', added: 'only here', removed: 'not in the others' }[t.status];
  const block = el(
    'div',
    { class: `tool tool-${t.status}` },
    el(
      'div',
      { class: 'tool-head' },
      el('span', { class: 'tool-name' }, t.name),
      status ? el('span', { class: 'tool-status' }, status) : null,
    ),
    el('pre', { class: 'tool-args' }, t.arguments || '(no arguments)'),
  );
  if (t.argumentChanges.length > 0) {
    const list = el('ul', { class: 'json-changes', 'aria-label': 'Argument changes' });
    for (const c of t.argumentChanges) {
      const what =
        c.kind === 'added'
          ? `+ ${c.path} = ${c.after ?? ''}`
          : c.kind === 'removed'
            ? `− ${c.path} (was ${c.before ?? ''})`
            : c.kind === 'moved'
              ? `↕ ${c.path} moved ${c.after ?? ''}`
              : `~ ${c.path}: ${c.before ?? ''} → ${c.after ?? ''}`;
      list.append(el('li', { class: `json-${c.kind}` }, what));
    }
    block.append(list);
  }
  if (t.output !== null)
    block.append(
      el(
        'pre',
        {
          class: `tool-output${t.outputChanged ? (baseline ? ' output-removed' : ' output-changed') : ''}`,
          title: t.outputChanged ? 'The output differs' : null,
        },
        t.output,
      ),
    );
  return block;
}

function sideCell(s: CompareSideView | null, base: CompareSideView | null, column: number, onOpen: () => void): HTMLElement {
  if (!s) return el('div', { class: 'compare-cell missing' }, el('span', { class: 'muted' }, 'No such turn on this branch.'));
  const open = el(
    'vscode-button',
    { appearance: 'icon', title: 'Open this turn in the conversation view', 'aria-label': `Open turn ${s.turn}` },
    '↗',
  );
  open.addEventListener('click', onOpen);
  const cell = el(
    'div',
    { class: `compare-cell${s.differs ? ' differs' : ''}`, 'data-column': column },
    el('div', { class: 'cell-head' }, el('span', { class: 'muted' }, s.createdAt ?? ''), open),
    el('div', { class: 'role' }, 'User'),
    pieces(s.user, '(no user text)'),
  );
  if (s.tools.length > 0) cell.append(el('div', { class: 'role' }, 'Tools'), ...s.tools.map((t) => toolBlock(t, column === 0)));
  cell.append(el('div', { class: 'role' }, 'Assistant'), pieces(s.assistant, '(no assistant text)'));
  const extra: string[] = [];
  if (s.otherItems > 0) extra.push(`${s.otherItems} other item${s.otherItems === 1 ? '' : 's'}`);
  if (s.unreadable > 0) extra.push(`${s.unreadable} unreadable`);
  if (extra.length) cell.append(el('div', { class: 'muted' }, extra.join(' · ')));
  cell.append(el('div', { class: 'usage-line' }, usageLine(s.usage, s.cost, column === 0 ? null : base)));
  return cell;
}

/** One aligned row: a heading and one cell per column. */
export function compareRowElement(row: CompareRowView, columns: number, focused: boolean, onOpen: (column: number) => void): HTMLElement {
  const base = row.sides[0] ?? null;
  const cells = row.sides.map((s, i) => sideCell(s, base, i, () => onOpen(i)));
  const e = el(
    'div',
    {
      class: `compare-row${row.differs ? ' differs' : ''}${focused ? ' focused' : ''}`,
      role: 'row',
      tabindex: focused ? 0 : -1,
      'data-index': row.index,
      'aria-label': `Turn ${row.turn}${row.differs ? ', differs' : ', same'}`,
    },
    el('div', { class: 'row-head' }, `Turn ${row.turn}`, el('span', { class: 'row-state' }, row.differs ? 'differs' : 'same')),
    el('div', { class: `row-cells cols-${columns}` }, ...cells),
  );
  return e;
}
