import type { TurnView } from '../../../src/shared/protocol/conversationViews';
import { visibleText } from '../../../src/shared/unicodeText';
import type { BranchLatencyView, TurnLatencyView } from '../../../src/shared/protocol/latencyViews';
import { latencyLabel } from '../../../src/shared/latencyLabels';
import type { TurnReviewView } from '../../../src/shared/protocol/reviewViews';
import type { Verdict } from '../../../src/shared/reviewVocabulary';
import { el, replaceChildren } from '../../shared/dom';
import { listWindow, scrollToShow } from '../logic/listWindow';
import { badgeFit } from '../logic/badgeFit';
import { itemCountLabel, tokenCountLabel, turnLabel, turnUsageLabel } from '../logic/itemCount';
import { t as tr } from '../../shared/l10n';
import { toolBadgeName } from '../../../src/shared/itemTitles';
import { previewText } from '../../../src/shared/toolItems';

export const TURN_ROW_HEIGHT = 52;

export interface TurnListCallbacks {
  onSelect(index: number): void;
  onOpen(index: number): void;
  onFork(direction: 'left' | 'right'): void;
  /** Called when the rows near the end of what is loaded come into view. */
  onNeedMore(): void;
  /** Called when the rows near the start of what is loaded come into view and earlier turns are not loaded. */
  onNeedEarlier(): void;
  /** End: go to the branch's last turn (loading it if it is not loaded). */
  onEnd(): void;
  /** Home: go to the branch's first turn (loading it if it is not loaded). */
  onHome(): void;
  /** G or B on a turn: its verdict. */
  onVerdict(index: number, verdict: Verdict): void;
}

/** Where the shown branch leaves the branch it forked from (null: a root branch, nothing to mark). */
export interface ForkMark {
  branchId: string;
  parentBranchId: string;
  /** The branch's first own turn: the turns before it are shared. */
  forkTurn: number;
}

/**
 * The turns of a branch as a virtualized list: only the rows in view (plus a margin) exist in the DOM, so a
 * branch of 10,000 turns scrolls as lightly as one of ten. The list holds a window of the branch's turns, which need
 * not start at its first turn (End loads the last page only): turns loaded above the window keep the rows in view
 * where they were. Up/down move the selection, left/right move between branches at a fork, Enter opens the turn.
 */
export class TurnList {
  /** The column: the branch's name and turn count above the list. */
  readonly element: HTMLElement;
  /** The scrolling listbox. */
  private readonly list: HTMLElement;
  private readonly heading: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly rows: HTMLElement;
  private turns: readonly TurnView[] = [];
  private selected = -1;
  private hasMore = false;
  private hasEarlier = false;
  private edgeCheckQueued = false;
  private fork: ForkMark | null = null;
  private latencyOf: (turn: TurnView) => TurnLatencyView | undefined = () => undefined;
  private reviewOf: (turn: TurnView) => TurnReviewView | undefined = () => undefined;
  private readonly latencySummary: HTMLElement;

  constructor(private readonly callbacks: TurnListCallbacks) {
    this.spacer = el('div', { class: 'turn-spacer' });
    this.rows = el('div', { class: 'turn-rows' });
    this.list = el('section', { class: 'turn-list', role: 'listbox', tabindex: 0, 'aria-label': tr('Turns') }, this.spacer, this.rows);
    this.heading = el('div', { class: 'turn-list-heading' });
    this.latencySummary = el('div', { class: 'turn-latency-summary', 'aria-live': 'polite' });
    this.element = el('div', { class: 'turn-column' }, this.heading, this.latencySummary, this.list);
    this.list.addEventListener('scroll', () => this.render());
    this.list.addEventListener('keydown', (ev) => this.key(ev));
    new ResizeObserver(() => this.render()).observe(this.element);
  }

  set(turns: readonly TurnView[], hasMore: boolean, hasEarlier: boolean, label: string): void {
    // Keep the row at the top of the view, and the selected row, on their turns when the window grows at its start.
    const top = Math.floor(this.list.scrollTop / TURN_ROW_HEIGHT);
    const topTurn = this.turns[top]?.turn;
    const selectedTurn = this.turns[this.selected]?.turn;
    const shift = topTurn === undefined ? 0 : turns.findIndex((t) => t.turn === topTurn) - top;
    this.turns = turns;
    this.hasMore = hasMore;
    this.hasEarlier = hasEarlier;
    this.list.setAttribute('aria-label', label);
    if (shift > 0 && selectedTurn !== undefined && turns[this.selected + shift]?.turn === selectedTurn) this.selected += shift;
    if (this.selected >= turns.length) this.selected = turns.length - 1;
    // Grow the spacer before moving: scrollTop cannot exceed the old height.
    this.spacer.style.height = `${turns.length * TURN_ROW_HEIGHT}px`;
    if (shift > 0) this.list.scrollTop += shift * TURN_ROW_HEIGHT;
    this.render();
  }

  /** The branch shown, above the list: a long name is cut with an ellipsis and given whole in the tooltip. */
  setHeading(branchId: string, count: string): void {
    replaceChildren(
      this.heading,
      el('span', { class: 'turn-list-branch', title: visibleText(branchId) }, visibleText(branchId)),
      count ? el('span', { class: 'turn-list-count' }, count) : null,
    );
  }

  /**
   * The branch's latency from its traces: each turn's beside it, p50/p95 under the heading (undefined: not read, or
   * the trace store could not be read: `problem` says why).
   */
  setLatency(view: BranchLatencyView | undefined, of: (turn: TurnView) => TurnLatencyView | undefined, problem?: string): void {
    this.latencyOf = of;
    // For tests and tools: whether the branch's latency has been read (an empty summary means "no trace", not "not yet").
    this.latencySummary.dataset.read = view ? 'true' : 'false';
    if (view && view.p50Ms !== null && view.p95Ms !== null) {
      const text = tr('p50 {0} · p95 {1} over {2} traced turns', latencyLabel(view.p50Ms), latencyLabel(view.p95Ms), view.turns.length);
      replaceChildren(
        this.latencySummary,
        el(
          'span',
          {
            title: view.partial
              ? tr('Turn latency from the traces linked to this branch (its last {0} turns)', view.turnCount.toLocaleString('en-US'))
              : tr('Turn latency from the traces linked to this branch'),
          },
          text,
        ),
      );
    } else
      replaceChildren(
        this.latencySummary,
        problem ? el('span', { class: 'latency-problem', title: problem }, tr('no latency: {0}', problem)) : null,
      );
    this.render();
  }

  /** The turns' reviews: a mark beside each reviewed turn's number. */
  setReviews(of: (turn: TurnView) => TurnReviewView | undefined): void {
    this.reviewOf = of;
    this.render();
  }

  /** Marks where the shown branch leaves its parent (drawn with the next `set`). */
  setFork(fork: ForkMark | null): void {
    this.fork = fork;
  }

  get selectedIndex(): number {
    return this.selected;
  }

  /** The index of the last row rendered (the rows in view plus the margin), or -1 when there are none. */
  get lastShownIndex(): number {
    return listWindow(this.list.scrollTop, this.list.clientHeight || 600, TURN_ROW_HEIGHT, this.turns.length).last;
  }

  select(index: number, reveal = true): void {
    if (index < 0 || index >= this.turns.length) return;
    this.selected = index;
    if (reveal) this.list.scrollTop = scrollToShow(index, this.list.scrollTop, this.list.clientHeight, TURN_ROW_HEIGHT);
    this.render();
    const t = this.turns[index];
    if (t) this.list.setAttribute('aria-activedescendant', `turn-${t.turn}`);
  }

  private key(ev: KeyboardEvent): void {
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
    if (ev.key in moves) {
      ev.preventDefault();
      const next = Math.max(0, Math.min(this.turns.length - 1, this.selected + (moves[ev.key] as number)));
      this.select(next);
      this.callbacks.onSelect(next);
    } else if (ev.key === 'Home') {
      ev.preventDefault();
      this.callbacks.onHome();
    } else if (ev.key === 'End') {
      ev.preventDefault();
      this.callbacks.onEnd();
    } else if (ev.key === 'Enter') {
      ev.preventDefault();
      if (this.selected >= 0) this.callbacks.onOpen(this.selected);
    } else if ((ev.key === 'g' || ev.key === 'b') && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      ev.preventDefault();
      if (this.selected >= 0) this.callbacks.onVerdict(this.selected, ev.key === 'g' ? 'good' : 'bad');
    } else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
      ev.preventDefault();
      this.callbacks.onFork(ev.key === 'ArrowLeft' ? 'left' : 'right');
    }
  }

  private render(): void {
    const count = this.turns.length;
    // CSSOM assignments (not style attributes) are allowed by the page's CSP.
    this.spacer.style.height = `${count * TURN_ROW_HEIGHT}px`;
    const w = listWindow(this.list.scrollTop, this.list.clientHeight || 600, TURN_ROW_HEIGHT, count);
    const nodes: HTMLElement[] = [];
    const fork = this.fork;
    for (let i = w.first; i <= w.last; i++) {
      const t = this.turns[i] as TurnView;
      // The first own turn opens with a divider: the parent went on differently from here. A branch with no own turns
      // yet (forked after its parent's last turn) gets the divider under its last shared turn instead.
      const leavesHere = fork !== null && t.turn === fork.forkTurn;
      const leavesAfter = fork !== null && !leavesHere && t.turn === fork.forkTurn - 1 && i === count - 1 && !this.hasMore;
      const forkNote = fork
        ? leavesHere
          ? tr("{0}'s own turns start here; {1} continues differently", fork.branchId, fork.parentBranchId)
          : tr('{0} has no turns of its own yet; {1} continues differently', fork.branchId, fork.parentBranchId)
        : '';
      const preview = previewText(t.preview);
      const latency = this.latencyOf(t);
      const usage = turnUsageLabel(t.turn, t.totalTokens);
      const review = this.reviewOf(t);
      const reviewText = review
        ? [
            review.verdict === 'good' ? tr('reviewed good') : review.verdict === 'bad' ? tr('reviewed bad') : tr('reviewed'),
            ...review.tags,
          ].join(', ')
        : '';
      const latencyText = latency ? [latencyLabel(latency.ms), latency.models[0]].filter(Boolean).join(' · ') : '';
      const row = el(
        'div',
        {
          class: `turn-row${i === this.selected ? ' selected' : ''}${t.error ? ' unreadable' : ''}${t.sharedFrom ? ' shared' : ''}${leavesHere ? ' fork-start' : ''}${leavesAfter ? ' fork-end' : ''}`,
          role: 'option',
          id: `turn-${t.turn}`,
          'data-turn': t.turn,
          'aria-selected': i === this.selected ? 'true' : 'false',
          'aria-label': [
            `${turnLabel(t.turn)}: ${t.error ? tr('unreadable ({0})', t.error) : preview}`,
            itemCountLabel(t.itemCount),
            t.tools.length ? tr('tools {0}', t.tools.map(toolBadgeName).join(', ')) : '',
            t.totalTokens !== null ? tokenCountLabel(t.totalTokens) : '',
            latency ? tr('took {0}', latencyText) : '',
            reviewText,
            t.sharedFrom ? tr('shared with {0}', t.sharedFrom) : '',
          ]
            .filter(Boolean)
            .join(', ')
            .concat(leavesHere || leavesAfter ? `. ${forkNote}` : ''),
        },
        leavesHere || leavesAfter
          ? el('span', { class: 'fork-marker', title: forkNote }, leavesHere ? tr('own turns start here') : tr('no own turns yet'))
          : null,
        el('span', { class: 'turn-number' }, turnLabel(t.turn)),
        review
          ? el(
              'span',
              {
                class: `turn-verdict${review.verdict ? ` verdict-${review.verdict}` : ''}`,
                title: [reviewText, review.note].filter(Boolean).join('\n'),
              },
              review.verdict === 'good' ? '✓' : review.verdict === 'bad' ? '✗' : '•',
              review.tags.length > 0 ? ` ${review.tags.join(' ')}` : '',
            )
          : null,
        el('span', { class: 'turn-preview', title: t.error ? '' : preview }, t.error ? tr('unreadable: {0}', t.error) : preview),
        el(
          'span',
          { class: 'turn-meta' },
          itemCountLabel(t.itemCount),
          usage !== null ? el('span', { class: 'turn-tokens' }, usage) : null,
          latency
            ? el(
                'span',
                {
                  class: `turn-latency${latency.errors > 0 ? ' failed' : ''}`,
                  title: [
                    tr('{0} from its traces: {1} model requests', latencyLabel(latency.ms), latency.requests),
                    latency.models.length ? tr('models: {0}', latency.models.join(', ')) : '',
                    latency.errors > 0 ? tr('{0} failed steps', latency.errors) : '',
                  ]
                    .filter(Boolean)
                    .join('\n'),
                },
                latencyText,
              )
            : null,
          // Where the turn ran comes before its tools: the tools are what gives way ("+N") when the row is narrow.
          t.sharedFrom
            ? el(
                'span',
                { class: 'shared-badge', title: tr('Run on {0}: this branch shares the turn, its usage and its time', t.sharedFrom) },
                tr('shared with {0}', t.sharedFrom),
              )
            : null,
          t.tools.length
            ? el(
                'span',
                { class: 'turn-tools' },
                // A built-in tool by its people name ("web search"); its stored name stays in the tooltip.
                ...t.tools.map((name) => {
                  const shown = toolBadgeName(name);
                  return el('span', { class: 'tool-badge', title: shown === name ? name : `${shown} (${name})` }, shown);
                }),
              )
            : null,
        ),
      );
      row.style.transform = `translateY(${i * TURN_ROW_HEIGHT}px)`;
      const index = i;
      row.addEventListener('click', () => {
        this.select(index, false);
        this.callbacks.onSelect(index);
      });
      row.addEventListener('dblclick', () => this.callbacks.onOpen(index));
      nodes.push(row);
    }
    replaceChildren(this.rows, ...nodes);
    for (const row of nodes) fitBadges(row);
    // After the current task's redraws: a new window's rows are drawn before the selection scrolls to them (End
    // scrolls to the bottom), and only where the list then stands says whether a page is missing.
    if (!this.edgeCheckQueued) {
      this.edgeCheckQueued = true;
      queueMicrotask(() => this.checkEdges());
    }
  }

  /** Asks for the page after or before the window when the rows near its end or start are in view. */
  private checkEdges(): void {
    this.edgeCheckQueued = false;
    const count = this.turns.length;
    const w = listWindow(this.list.scrollTop, this.list.clientHeight || 600, TURN_ROW_HEIGHT, count);
    if (this.hasMore && w.last >= count - 20) this.callbacks.onNeedMore();
    if (this.hasEarlier && count > 0 && w.first <= 20) this.callbacks.onNeedEarlier();
  }
}

/**
 * Hides the tool badges of a row that do not fit its width, ending with "+N" (the hidden names in its tooltip). The
 * badges' widths are measured once the row is in the page; which to keep is `badgeFit` (webview/logic/badgeFit.ts).
 */
function fitBadges(row: HTMLElement): void {
  const meta = row.querySelector<HTMLElement>('.turn-meta');
  const tools = meta?.querySelector<HTMLElement>('.turn-tools');
  if (!meta || !tools || meta.clientWidth === 0) return;
  const badges = Array.from(tools.querySelectorAll<HTMLElement>('.tool-badge'));
  const room = meta.clientWidth - (tools.offsetLeft - meta.offsetLeft);
  // "+N" is at most as wide as a short badge: reserve room for one.
  const fit = badgeFit(
    badges.map((b) => b.offsetWidth + 4),
    room,
    32,
  );
  if (fit.hidden === 0) return;
  const hiddenNames = badges.slice(fit.shown).map((b) => b.textContent ?? '');
  for (const b of badges.slice(fit.shown)) b.remove();
  tools.appendChild(el('span', { class: 'tool-badge more-badge', title: hiddenNames.join(', ') }, `+${fit.hidden}`));
}
