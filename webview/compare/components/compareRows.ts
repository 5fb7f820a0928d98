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
  CompareTurnMark,
  CompareUsage,
  CompareVerdictTally,
  CompareView,
  DiffPiece,
} from '../../../src/shared/protocol/compareViews';
import { toolBadgeName } from '../../../src/shared/itemTitles';
import { visibleText } from '../../../src/shared/unicodeText';
import { formatCost } from '../../../src/shared/pricing';
import { latencyDeltaLabel, latencyLabel } from '../../../src/shared/latencyLabels';
import type { PairwiseOutcome } from '../../../src/shared/reviewVocabulary';
import { el, type Child } from '../../shared/dom';
import { t } from '../../shared/l10n';
import { divergenceBlock } from '../../shared/replayDivergence';
import type { ReplayCountsView } from '../../../src/shared/protocol/replay';

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
  if (!u) return t('no usage recorded');
  const parts = [
    t('in {0}', n(u.inputTokens) + delta(u.inputTokens, base?.usage?.inputTokens ?? null, tokens)),
    t('cached {0}', n(u.cachedTokens)),
    t('out {0}', n(u.outputTokens) + delta(u.outputTokens, base?.usage?.outputTokens ?? null, tokens)),
  ];
  if (u.reasoningTokens) parts.push(t('reasoning {0}', n(u.reasoningTokens)));
  parts.push(t('total {0}', n(u.totalTokens) + delta(u.totalTokens, base?.usage?.totalTokens ?? null, tokens)));
  if (cost !== null) parts.push(`${formatCost(cost)}${delta(cost, base?.cost ?? null, formatCost)}`);
  return parts.join(' · ');
}

/** A side's latency from its traces, with its difference to the baseline's when that has one too. */
function latencyLine(s: CompareSideView, base: CompareSideView | null): string {
  const ms = s.latencyMs as number;
  const vs = base && base.latencyMs !== null ? ` (${latencyDeltaLabel(ms - base.latencyMs)})` : '';
  return [t('took {0}', latencyLabel(ms) + vs), s.tracedRequests !== null ? t('{0} model requests', s.tracedRequests) : null]
    .filter(Boolean)
    .join(' · ');
}

/**
 * The tool calls of the last run recorded on a column's branch (docs/replay.md): how many got their recorded output,
 * ran live or matched nothing, and where that run left the recorded sequence.
 */
function replayStat(r: ReplayCountsView): HTMLElement {
  return el(
    'div',
    { class: 'stat replay-stat', title: t('The tool calls of the last run recorded on this branch') },
    el(
      'div',
      { class: 'replay-counts' },
      t('Tool calls:'),
      ' ',
      // Coloured only when there are some: a green "0 replayed" would read as good news.
      el('span', { class: `replay-count${r.replayed > 0 ? ' replay-replayed' : ''}` }, t('{0} replayed', r.replayed)),
      ' · ',
      el('span', { class: `replay-count${r.live > 0 ? ' replay-live' : ''}` }, t('{0} live', r.live)),
      r.unmatched > 0 ? ' · ' : null,
      r.unmatched > 0 ? el('span', { class: 'replay-count replay-unmatched' }, t('{0} unmatched', r.unmatched)) : null,
    ),
    r.divergence ? divergenceBlock(r.divergence) : null,
  );
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
  tally?: CompareVerdictTally,
): HTMLElement {
  const title = c.label ?? visibleText(c.branchId);
  const change = el(
    'vscode-button',
    { appearance: 'icon', 'aria-label': t('Compare another branch in place of {0}', title), title: t('Change branch…') },
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
        (c.turns === 1
          ? t('{0} turn', n(c.turns) + (c.turnsAtLeast ? '+' : ''))
          : t('{0} turns', n(c.turns) + (c.turnsAtLeast ? '+' : ''))) + (b ? delta(c.turns, b.column.turns, tokens) : ''),
      ),
    );
    if (!totals) body.push(el('div', { class: 'stat muted' }, t('Tokens, cost and tools: reading…')));
    else
      body.push(
        el(
          'div',
          { class: 'stat', title: t('Tokens of the whole conversation of this branch, shared turns included') },
          t('Tokens: {0}', n(totals.usage.totalTokens) + (bt ? delta(totals.usage.totalTokens, bt.usage.totalTokens, tokens) : '')),
        ),
        el(
          'div',
          {
            class: 'stat',
            title: totals.pricingModel
              ? t('Its own turns priced as {0}; turns it shares, at the model of the branch that ran them', totals.pricingModel)
              : t('Set Pricing Model… to see cost'),
          },
          t(
            'Cost: {0}',
            (totals.cost === null
              ? `– (${totals.pricingModel ? t('no price for {0}', totals.pricingModel) : t('no pricing model')})`
              : formatCost(totals.cost)) + (bt ? delta(totals.cost, bt.cost, formatCost) : ''),
          ),
        ),
        el(
          'div',
          { class: 'stat' },
          t(
            'Tools: {0}',
            totals.tools.length === 0 ? t('none') : totals.tools.map((tool) => `${toolBadgeName(tool.name)} ×${tool.calls}`).join(', '),
          ),
        ),
      );
    if (totals?.replay) body.push(replayStat(totals.replay));
    if (totals?.latency) {
      const l = totals.latency;
      const bl = bt?.latency ?? null;
      body.push(
        el(
          'div',
          { class: 'stat latency-stat', title: t('Turn latency from the traces of {0} turns of this branch', l.tracedTurns) },
          t(
            'Latency: p50 {0} · p95 {1}',
            latencyLabel(l.p50Ms) + (bl ? ` (${latencyDeltaLabel(l.p50Ms - bl.p50Ms)})` : ''),
            latencyLabel(l.p95Ms) + (bl ? ` (${latencyDeltaLabel(l.p95Ms - bl.p95Ms)})` : ''),
          ),
        ),
      );
    }
    if (tally && tally.better + tally.worse + tally.ties + tally.bothBad > 0)
      body.push(
        el(
          'div',
          { class: 'stat verdict-tally', title: t('Your verdicts on these turns against the baseline') },
          t('Verdicts: {0} better, {1} worse, {2} ties, {3} both bad', tally.better, tally.worse, tally.ties, tally.bothBad),
        ),
      );
    if (c.runMs !== null)
      body.push(
        el(
          'div',
          { class: 'stat' },
          t(
            'Run time: {0}',
            `${(c.runMs / 1000).toFixed(1)} s${b && b.column.runMs !== null ? delta(c.runMs / 1000, b.column.runMs / 1000, (v) => `${v.toFixed(1)} s`) : ''}`,
          ),
        ),
      );
  }
  return el(
    'section',
    { class: `compare-card${index === 0 ? ' baseline' : ''}`, 'aria-label': t('Column {0}: {1}', index + 1, title) },
    el(
      'div',
      { class: 'card-head' },
      el('strong', { class: 'card-title', title }, title),
      index === 0 ? el('span', { class: 'status-badge', title: t('The other columns are compared with this one') }, t('baseline')) : null,
      change,
    ),
    el(
      'div',
      { class: 'card-where muted', title: `${c.sessionId} · ${c.dbName}` },
      `${c.label ? `${visibleText(c.branchId)} · ` : ''}${c.sessionId} · ${c.dbName}`,
    ),
    ...body,
  );
}

/** The collapsed shared prefix: "Turns 1–2 shared". */
export function sharedBar(view: CompareView): HTMLElement {
  const s = view.sharedTurns;
  const how = view.sharedBy === 'fork' ? t('copied from the branch they forked from') : t('equal items in every session');
  const text =
    s === 0
      ? t('No shared turns: the branches differ from turn 1.')
      : s === 1
        ? t('Turn 1 shared ({0}).', how)
        : t('Turns 1–{0} shared ({1}).', s, how);
  return el('div', { class: 'shared-bar', role: 'note' }, text);
}

function toolBlock(tool: CompareToolView, baseline: boolean): HTMLElement {
  const status = { same: '', changed: t('changed'), added: t('only here'), removed: t('not in the others') }[tool.status];
  const block = el(
    'div',
    { class: `tool tool-${tool.status}` },
    el(
      'div',
      { class: 'tool-head' },
      el('span', { class: 'tool-name', title: tool.name }, toolBadgeName(tool.name)),
      status ? el('span', { class: 'tool-status' }, status) : null,
    ),
    el('pre', { class: 'tool-args' }, tool.arguments || t('(no arguments)')),
  );
  if (tool.argumentChanges.length > 0) {
    const list = el('ul', { class: 'json-changes', 'aria-label': t('Argument changes') });
    for (const c of tool.argumentChanges) {
      const what =
        c.kind === 'added'
          ? `+ ${c.path} = ${c.after ?? ''}`
          : c.kind === 'removed'
            ? `− ${c.path} ${t('(was {0})', c.before ?? '')}`
            : c.kind === 'moved'
              ? `↕ ${c.path} ${t('moved {0}', c.after ?? '')}`
              : `~ ${c.path}: ${c.before ?? ''} → ${c.after ?? ''}`;
      list.append(el('li', { class: `json-${c.kind}` }, what));
    }
    block.append(list);
  }
  if (tool.output !== null)
    block.append(
      el(
        'pre',
        {
          class: `tool-output${tool.outputChanged ? (baseline ? ' output-removed' : ' output-changed') : ''}`,
          title: tool.outputChanged ? t('The output differs') : null,
        },
        tool.output,
      ),
    );
  return block;
}

/** A turn's own verdict mark (✓ ✗ and tags), as the conversation view's turn list shows it. */
function verdictMark(mark: TurnMarkView | undefined): HTMLElement | null {
  if (!mark) return null;
  const words = mark.verdict === 'good' ? t('reviewed good') : mark.verdict === 'bad' ? t('reviewed bad') : t('reviewed');
  return el(
    'span',
    {
      class: `turn-verdict${mark.verdict ? ` verdict-${mark.verdict}` : ''}`,
      title: [words, ...mark.tags].join(', '),
      'aria-label': [words, ...mark.tags].join(', '),
    },
    mark.verdict === 'good' ? '✓' : mark.verdict === 'bad' ? '✗' : '•',
    mark.tags.length > 0 ? ` ${mark.tags.join(' ')}` : '',
  );
}

/** A column's turn verdict: what `compareRowElement` marks a cell with. */
export type TurnMarkView = Pick<CompareTurnMark, 'verdict' | 'tags'>;

function sideCell(
  s: CompareSideView | null,
  base: CompareSideView | null,
  column: number,
  onOpen: () => void,
  mark?: TurnMarkView,
): HTMLElement {
  if (!s) return el('div', { class: 'compare-cell missing' }, el('span', { class: 'muted' }, t('No such turn on this branch.')));
  const open = el(
    'vscode-button',
    { appearance: 'icon', title: t('Open this turn in the conversation view'), 'aria-label': t('Open turn {0}', s.turn) },
    '↗',
  );
  open.addEventListener('click', onOpen);
  const cell = el(
    'div',
    { class: `compare-cell${s.differs ? ' differs' : ''}`, 'data-column': column },
    el('div', { class: 'cell-head' }, verdictMark(mark), el('span', { class: 'muted' }, s.createdAt ?? ''), open),
    el('div', { class: 'role' }, t('User')),
    pieces(s.user, t('(no user text)')),
  );
  if (s.tools.length > 0) cell.append(el('div', { class: 'role' }, t('Tools')), ...s.tools.map((tool) => toolBlock(tool, column === 0)));
  cell.append(el('div', { class: 'role' }, t('Assistant')), pieces(s.assistant, t('(no assistant text)')));
  const extra: string[] = [];
  if (s.otherItems > 0) extra.push(s.otherItems === 1 ? t('1 other item') : t('{0} other items', s.otherItems));
  if (s.unreadable > 0) extra.push(t('{0} unreadable', s.unreadable));
  if (extra.length) cell.append(el('div', { class: 'muted' }, extra.join(' · ')));
  cell.append(el('div', { class: 'usage-line' }, usageLine(s.usage, s.cost, column === 0 ? null : base)));
  if (s.latencyMs !== null) cell.append(el('div', { class: 'latency-line' }, latencyLine(s, column === 0 ? null : base)));
  return cell;
}

/** What a row needs to show and take pairwise verdicts (absent: verdicts cannot be kept for these columns). */
export interface RowVerdicts {
  /** The columns' names, baseline first. */
  labels: readonly string[];
  of(column: number): PairwiseOutcome | undefined;
  judge(column: number, outcome: PairwiseOutcome): void;
}

/** The verdict buttons under a column's cell: which of the baseline's and this column's answers was better. */
function verdictBar(row: CompareRowView, column: number, v: RowVerdicts): HTMLElement {
  const current = v.of(column);
  const button = (outcome: PairwiseOutcome, label: string, key: string): HTMLElement => {
    const b = el(
      'button',
      {
        type: 'button',
        class: `review-toggle verdict-button verdict-${outcome}`,
        'aria-pressed': current === outcome ? 'true' : 'false',
        title: column === 1 ? t('{0} (key {1} on the focused row)', label, key) : label,
      },
      label,
    );
    b.addEventListener('click', (e) => {
      e.stopPropagation();
      v.judge(column, outcome);
    });
    return b;
  };
  return el(
    'div',
    { class: 'verdict-bar', role: 'group', 'aria-label': t('Which answer of turn {0} was better', row.turn) },
    button('left', t('{0} better', v.labels[0] ?? ''), '1'),
    button('right', t('{0} better', v.labels[column] ?? ''), '2'),
    button('tie', t('Tie'), '3'),
    button('both-bad', t('Both bad'), '4'),
  );
}

/**
 * Where a row stands for the keyboard: `focused` (highlighted, what the row keys act on) and `tabStop` (the one row
 * of the grid in the tab order: a roving tabindex, `CompareModel.tabStop`).
 */
export interface RowFocus {
  focused: boolean;
  tabStop: boolean;
}

/**
 * One aligned row of the grid (`role="grid"` on the rows' container): a row header and one cell per column. The row
 * itself takes the focus; `data-turn` finds it again after a redraw.
 */
export function compareRowElement(
  row: CompareRowView,
  columns: number,
  focus: RowFocus,
  onOpen: (column: number) => void,
  verdicts?: RowVerdicts,
  markOf?: (column: number) => TurnMarkView | undefined,
): HTMLElement {
  const base = row.sides[0] ?? null;
  const cells = row.sides.map((s, i) => {
    const cell = sideCell(s, base, i, () => onOpen(i), markOf?.(i));
    cell.setAttribute('role', 'gridcell');
    if (verdicts && i > 0 && s && base) cell.append(verdictBar(row, i, verdicts));
    return cell;
  });
  const e = el(
    'div',
    {
      class: `compare-row${row.differs ? ' differs' : ''}${focus.focused ? ' focused' : ''}`,
      role: 'row',
      tabindex: focus.tabStop ? 0 : -1,
      'data-index': row.index,
      'data-turn': row.turn,
      // Rows are read a page at a time: the container's aria-rowcount has them all, this is where this one stands.
      'aria-rowindex': row.index + 1,
      'aria-label': row.differs ? t('Turn {0}, differs', row.turn) : t('Turn {0}, same', row.turn),
    },
    el(
      'div',
      { class: 'row-head', role: 'rowheader' },
      t('Turn {0}', row.turn),
      el('span', { class: 'row-state' }, row.differs ? t('differs') : t('same')),
    ),
    el('div', { class: `row-cells cols-${columns}`, role: 'none' }, ...cells),
  );
  if (!focus.tabStop) setTabbable(e, false);
  return e;
}

/**
 * Puts a row's buttons in the tab order or takes them out: only the tab-stop row's are in it, so Tab from before the
 * grid lands on that row (not on a button of a row above it), and from the row goes through its buttons and on past
 * the grid. A click still focuses any button.
 */
function setTabbable(row: HTMLElement, on: boolean): void {
  for (const b of row.querySelectorAll<HTMLElement>('button, vscode-button')) {
    if (on) b.removeAttribute('tabindex');
    else b.setAttribute('tabindex', '-1');
  }
}

/**
 * Moves the focus mark and the tab stop (with its buttons) to the row at `index` in place, without drawing the rows again (a redraw
 * would replace the element being focused or clicked).
 */
export function markFocusedRow(rows: Element, index: number): void {
  for (const r of rows.querySelectorAll<HTMLElement>('.compare-row')) {
    const on = Number(r.dataset.index) === index;
    r.classList.toggle('focused', on);
    r.tabIndex = on ? 0 : -1;
    setTabbable(r, on);
  }
}
