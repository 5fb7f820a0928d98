import type { BranchView } from '../../../src/shared/protocol/conversationViews';
import { el, replaceChildren, svgEl } from '../../shared/dom';
import { branchGraph, graphKeyTarget, type BranchGraph } from '../logic/branchGraph';
import { forkLabel, turnCountLabel } from '../../../src/shared/forkLabel';
import { visibleText } from '../../../src/shared/unicodeText';
import { t } from '../../shared/l10n';

/** How many lane colours the stylesheet defines (`.lane-color-0` …). */
const LANE_COLORS = 6;

/**
 * The branch map as a git graph: an SVG of lanes and fork lines (geometry in webview/logic/branchGraph.ts) behind a
 * tree of focusable rows, one per branch, aligned with the graph's rows. The SVG is decoration (aria-hidden); the rows
 * carry the names, turn counts and fork points for keyboard and screen-reader users. Click, Enter or Space shows a
 * branch; Up/Down/Home/End move between rows, Left to the branch it forked from, Right to its first fork.
 */
export function renderBranchMap(branches: BranchView[], selected: string, onSelect: (branchId: string) => void): HTMLElement {
  const graph = branchGraph(branches);
  const nav = el('nav', { class: 'branch-map', 'aria-label': t('Branches') });
  const scroller = el('div', { class: 'branch-graph' });
  // The labels start right of the lanes; CSSOM custom properties are allowed by the CSP (style attributes are not).
  scroller.style.setProperty('--graph-width', `${graph.width}px`);
  scroller.appendChild(drawGraph(graph, selected));
  const list = el('ul', { role: 'tree', class: 'graph-rows', 'aria-label': t('Branches and where they forked') });
  const items: HTMLElement[] = [];
  const focusRow = (row: number): void => {
    const item = items[row];
    if (!item) return;
    for (const other of items) other.setAttribute('tabindex', other === item ? '0' : '-1');
    item.focus();
    item.scrollIntoView({ block: 'nearest' });
  };
  const selectedRow = graph.rows.find((r) => r.branch.branchId === selected)?.row ?? 0;
  for (const r of graph.rows) {
    const b = r.branch;
    const fork = forkLabel(b);
    const isSelected = b.branchId === selected;
    const item = el(
      'li',
      {
        role: 'treeitem',
        class: `lane${isSelected ? ' selected' : ''}${b.isCurrent ? ' current' : ''}`,
        'data-branch': b.branchId,
        'aria-level': r.lane + 1,
        'aria-selected': isSelected ? 'true' : 'false',
        'aria-label': [t('Branch {0}', b.branchId), b.isCurrent ? t('current') : '', isSelected ? t('shown') : '', turnCountLabel(b), fork]
          .filter(Boolean)
          .join(', '),
        tabindex: r.row === selectedRow ? 0 : -1,
      },
      laneName(visibleText(b.branchId)),
      b.isCurrent ? el('span', { class: 'lane-current', title: t('Current branch') }, '●') : null,
      el(
        'span',
        { class: 'lane-meta', title: `${turnCountLabel(b)}${fork ? ` · ${fork}` : ''}` },
        `${turnCountLabel(b)}${fork ? ` · ${fork}` : ''}`,
      ),
    );
    item.addEventListener('click', () => onSelect(b.branchId));
    item.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        onSelect(b.branchId);
        return;
      }
      const target = graphKeyTarget(graph, r.row, ev.key);
      if (target === undefined) return;
      ev.preventDefault();
      focusRow(target);
    });
    items.push(item);
    list.appendChild(item);
  }
  scroller.appendChild(list);
  nav.appendChild(scroller);
  return nav;
}

/** How long a redraw keeps applying the map's scroll position while the new element cannot take it yet. */
const RESTORE_SCROLL_MS = 2000;

/** Where each slot's map was last scrolled to, kept apart from the element a redraw replaces. */
const wantedScroll = new WeakMap<HTMLElement, { top: number; left: number }>();

/**
 * Draws the map into `slot`, keeping what a redraw would otherwise lose: where the list was scrolled to, and the
 * keyboard focus on the row that had it (a branch shown with Enter redraws the map). The position is remembered from
 * scroll events rather than read off the old element, and applied again on the next frames while the new element
 * cannot take it yet: a redraw while the view is being laid out (the toolkit's panels upgrading, a theme change)
 * clamps scrollTop to 0, and the map then jumped back to the top (seen in CI on VS Code 1.139, dark theme).
 */
export function drawBranchMap(slot: HTMLElement, branches: BranchView[], selected: string, onSelect: (branchId: string) => void): void {
  const old = slot.querySelector<HTMLElement>('.branch-graph');
  const wanted = wantedScroll.get(slot) ?? { top: old?.scrollTop ?? 0, left: old?.scrollLeft ?? 0 };
  const active = document.activeElement;
  const focused = active && slot.contains(active) ? active.closest('[data-branch]')?.getAttribute('data-branch') : undefined;
  replaceChildren(slot, renderBranchMap(branches, selected, onSelect));
  const next = slot.querySelector<HTMLElement>('.branch-graph');
  if (next) restoreScroll(slot, next, wanted);
  if (focused) {
    const rows = Array.from(slot.querySelectorAll<HTMLElement>('li[data-branch]'));
    const row = rows.find((r) => r.getAttribute('data-branch') === focused);
    if (row) {
      for (const other of rows) other.setAttribute('tabindex', other === row ? '0' : '-1');
      row.focus({ preventScroll: true });
    }
  }
}

function restoreScroll(slot: HTMLElement, scroller: HTMLElement, wanted: { top: number; left: number }): void {
  let settled = false;
  const apply = (): boolean => {
    scroller.scrollTop = wanted.top;
    scroller.scrollLeft = wanted.left;
    return Math.abs(scroller.scrollTop - wanted.top) < 1 && Math.abs(scroller.scrollLeft - wanted.left) < 1;
  };
  settled = apply();
  // Until the position holds, the scroll events are our own clamping, not the user's: they must not overwrite it.
  scroller.addEventListener('scroll', () => {
    if (settled) wantedScroll.set(slot, { top: scroller.scrollTop, left: scroller.scrollLeft });
  });
  if (!settled) {
    // Frames for up to 2 s, not a count of them: a view laid out under load (or in a throttled frame) takes longer
    // than 30 frames to grow tall enough, and the map was then left at the top.
    const until = performance.now() + RESTORE_SCROLL_MS;
    const retry = (): void => {
      if (!scroller.isConnected) return;
      settled = apply() || performance.now() >= until;
      if (settled) wantedScroll.set(slot, { top: scroller.scrollTop, left: scroller.scrollLeft });
      else requestAnimationFrame(retry);
    };
    requestAnimationFrame(retry);
  } else {
    wantedScroll.set(slot, wanted);
  }
}

function drawGraph(graph: BranchGraph, selected: string): SVGElement {
  const svg = svgEl('svg', {
    class: 'graph-lines',
    width: graph.width,
    height: graph.height,
    viewBox: `0 0 ${graph.width} ${graph.height}`,
    'aria-hidden': 'true',
    focusable: 'false',
  });
  const color = (lane: number): string => `lane-color-${lane % LANE_COLORS}`;
  const laneOf = new Map(graph.rows.map((r) => [r.branch.branchId, r.lane]));
  for (const l of graph.lines) {
    svg.appendChild(
      svgEl('line', {
        class: `graph-lane ${color(laneOf.get(l.branchId) ?? 0)}`,
        'data-branch': l.branchId,
        x1: l.x,
        y1: l.y1,
        x2: l.x,
        y2: l.y2,
      }),
    );
  }
  for (const f of graph.forks) {
    svg.appendChild(
      svgEl('path', {
        class: `graph-fork ${color(laneOf.get(f.childId) ?? 0)}`,
        'data-parent': f.parentId,
        'data-child': f.childId,
        d: f.path,
      }),
    );
  }
  for (const r of graph.rows) {
    const b = r.branch;
    const classes = `graph-node ${color(r.lane)}${b.isCurrent ? ' current' : ''}${b.branchId === selected ? ' shown' : ''}`;
    svg.appendChild(svgEl('circle', { class: classes, 'data-branch': b.branchId, cx: r.x, cy: r.y, r: b.branchId === selected ? 5.5 : 4 }));
  }
  return svg;
}

/** Characters of a long name kept whole at its end. */
const NAME_TAIL = 8;

/**
 * A branch name that, when the lane is too narrow, loses characters from its middle, not its end: sibling branches
 * differ at the end (`branch_from_turn_2_1700000000` and `…_2`), so cutting the end made them look the same. The head
 * shrinks with an ellipsis (CSS) and the tail always shows; the text is the whole name either way.
 */
function laneName(name: string): HTMLElement {
  const chars = Array.from(name);
  if (chars.length <= NAME_TAIL * 2) return el('span', { class: 'lane-name', title: name }, name);
  const cut = chars.length - NAME_TAIL;
  return el(
    'span',
    { class: 'lane-name split', title: name },
    el('span', { class: 'lane-name-head' }, chars.slice(0, cut).join('')),
    el('span', { class: 'lane-name-tail' }, chars.slice(cut).join('')),
  );
}
