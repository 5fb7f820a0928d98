/**
 * The tokens-per-turn chart above the Tokens table: stacked SVG bars built with createElementNS (no chart library:
 * the strict CSP allows no inline styles, so colours come from classes in main.css using --vscode-charts-*). The
 * geometry is `layoutChart` in logic/tokenChart.ts. Keyboard: the chart is one Tab stop; the arrow keys, Home and End
 * move between bars, each of which announces its counts and cost (its `<title>` is the hover tooltip).
 */
import type { TablesView } from '../../../src/shared/protocol/conversationViews';
import { el } from '../../shared/dom';
import { SEGMENT_KEYS, SEGMENT_LABELS, layoutChart, slotFor } from '../logic/tokenChart';
import { t } from '../../shared/l10n';

const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Moves the focus between bars with the arrow keys, Home and End (one Tab stop for the whole chart). */
function roving(bars: SVGGElement[]): void {
  bars.forEach((bar, i) => {
    bar.addEventListener('keydown', (ev) => {
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: bars.length - 1 }[ev.key];
      const target = to === undefined ? undefined : bars[Math.max(0, Math.min(bars.length - 1, to))];
      if (!target) return;
      ev.preventDefault();
      bar.setAttribute('tabindex', '-1');
      target.setAttribute('tabindex', '0');
      target.focus();
    });
  });
}

/** The chart of the page of usage rows the table shows (the same page, in turn order), or null without rows. */
export function renderTokenChart(tables: TablesView): HTMLElement | null {
  const rows = tables.usage.rows;
  if (rows.length === 0) return null;
  const session = tables.branchId === null;
  // As wide as the page allows (a 200-row page fits a wide editor without scrolling; a narrow one scrolls the chart).
  const available = Math.max(320, (document.body?.clientWidth ?? 800) - 48);
  const c = layoutChart(rows, { session, slot: slotFor(rows.length, available) });
  const root = svg('svg', {
    class: 'token-chart-svg',
    width: c.width,
    height: c.height,
    viewBox: `0 0 ${c.width} ${c.height}`,
    role: 'group',
    'aria-label': t('Tokens per turn, {0}', c.caption),
  });
  root.appendChild(
    svg('desc', {}, t('Stacked bars of {0} tokens per turn.', SEGMENT_KEYS.map((k) => SEGMENT_LABELS[k].toLowerCase()).join(', '))),
  );
  for (const tick of c.ticks) {
    root.appendChild(svg('line', { class: 'chart-grid', x1: c.plot.left, x2: c.plot.right, y1: tick.y, y2: tick.y }));
    root.appendChild(svg('text', { class: 'chart-tick', x: c.plot.left - 6, y: tick.y + 4, 'text-anchor': 'end' }, tick.label));
  }
  root.appendChild(svg('line', { class: 'chart-axis', x1: c.plot.left, x2: c.plot.right, y1: c.plot.bottom, y2: c.plot.bottom }));
  root.appendChild(
    svg(
      'text',
      {
        class: 'chart-axis-label',
        x: 12,
        y: (c.plot.top + c.plot.bottom) / 2,
        transform: `rotate(-90 12 ${(c.plot.top + c.plot.bottom) / 2})`,
        'text-anchor': 'middle',
      },
      t('tokens'),
    ),
  );
  root.appendChild(
    svg(
      'text',
      { class: 'chart-axis-label', x: (c.plot.left + c.plot.right) / 2, y: c.height - 4, 'text-anchor': 'middle' },
      session ? t('turn (all branches)') : t('turn'),
    ),
  );
  const bars: SVGGElement[] = [];
  c.bars.forEach((b, i) => {
    const g = svg('g', {
      class: `chart-bar${b.row.sharedFrom ? ' shared' : ''}`,
      tabindex: i === 0 ? 0 : -1,
      role: 'img',
      'aria-label': b.title,
      'data-turn': b.row.turn,
      'data-branch': b.row.branchId,
    });
    g.appendChild(svg('title', {}, b.title));
    // A transparent hit area the full height of the plot, so thin or empty bars still show their tooltip.
    g.appendChild(svg('rect', { class: 'chart-hit', x: b.x - 1, y: c.plot.top, width: b.width + 2, height: c.plot.bottom - c.plot.top }));
    for (const s of b.segments) g.appendChild(svg('rect', { class: `seg seg-${s.key}`, x: b.x, y: s.y, width: b.width, height: s.height }));
    if (b.label)
      g.appendChild(svg('text', { class: 'chart-tick', x: b.x + b.width / 2, y: c.plot.bottom + 14, 'text-anchor': 'middle' }, b.label));
    bars.push(g);
    root.appendChild(g);
  });
  // Under the turn numbers, each branch's name below its run of bars (the session scope groups them by branch).
  for (const g of c.groups) {
    root.appendChild(svg('line', { class: 'chart-axis', x1: g.x1 + 1, x2: g.x2 - 1, y1: c.plot.bottom + 20, y2: c.plot.bottom + 20 }));
    const label = svg(
      'text',
      { class: 'chart-tick chart-branch', x: (g.x1 + g.x2) / 2, y: c.plot.bottom + 32, 'text-anchor': 'middle' },
      g.label,
    );
    label.appendChild(svg('title', {}, g.branchId));
    root.appendChild(label);
  }
  roving(bars);
  const legend = el(
    'ul',
    { class: 'chart-legend', 'aria-label': t('Legend') },
    ...SEGMENT_KEYS.map((k) => el('li', {}, el('span', { class: `swatch seg-${k}`, 'aria-hidden': 'true' }), SEGMENT_LABELS[k])),
  );
  const caption = el('div', { class: 'chart-caption' }, t('Tokens per turn, {0} (this page of the table, in turn order)', c.caption));
  return el('figure', { class: 'token-chart' }, caption, el('div', { class: 'chart-scroll' }, root), legend);
}
