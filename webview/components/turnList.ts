import type { TurnView } from '../../src/shared/viewModels';
import { el, replaceChildren } from '../dom';
import { listWindow, scrollToShow } from '../logic/listWindow';

export const TURN_ROW_HEIGHT = 52;

export interface TurnListCallbacks {
  onSelect(index: number): void;
  onOpen(index: number): void;
  onFork(direction: 'left' | 'right'): void;
  /** Called when the rows near the end of what is loaded come into view. */
  onNeedMore(): void;
  /** End: go to the branch's last turn (loading what is not loaded yet). */
  onEnd(): void;
}

/**
 * The turns of a branch as a virtualized list: only the rows in view (plus a margin) exist in the DOM, so a
 * branch of 10,000 turns scrolls as lightly as one of ten. Up/down move the selection, left/right move between
 * branches at a fork, Enter opens the turn.
 */
export class TurnList {
  readonly element: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly rows: HTMLElement;
  private turns: readonly TurnView[] = [];
  private selected = -1;
  private hasMore = false;

  constructor(private readonly callbacks: TurnListCallbacks) {
    this.spacer = el('div', { class: 'turn-spacer' });
    this.rows = el('div', { class: 'turn-rows' });
    this.element = el('section', { class: 'turn-list', role: 'listbox', tabindex: 0, 'aria-label': 'Turns' }, this.spacer, this.rows);
    this.element.addEventListener('scroll', () => this.render());
    this.element.addEventListener('keydown', (ev) => this.key(ev));
    new ResizeObserver(() => this.render()).observe(this.element);
  }

  set(turns: readonly TurnView[], hasMore: boolean, label: string): void {
    this.turns = turns;
    this.hasMore = hasMore;
    this.element.setAttribute('aria-label', label);
    if (this.selected >= turns.length) this.selected = turns.length - 1;
    this.render();
  }

  get selectedIndex(): number {
    return this.selected;
  }

  /** The index of the last row rendered (the rows in view plus the margin), or -1 when there are none. */
  get lastShownIndex(): number {
    return listWindow(this.element.scrollTop, this.element.clientHeight || 600, TURN_ROW_HEIGHT, this.turns.length).last;
  }

  select(index: number, reveal = true): void {
    if (index < 0 || index >= this.turns.length) return;
    this.selected = index;
    if (reveal) this.element.scrollTop = scrollToShow(index, this.element.scrollTop, this.element.clientHeight, TURN_ROW_HEIGHT);
    this.render();
    const t = this.turns[index];
    if (t) this.element.setAttribute('aria-activedescendant', `turn-${t.turn}`);
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
      this.select(0);
      this.callbacks.onSelect(0);
    } else if (ev.key === 'End') {
      ev.preventDefault();
      this.callbacks.onEnd();
    } else if (ev.key === 'Enter') {
      ev.preventDefault();
      if (this.selected >= 0) this.callbacks.onOpen(this.selected);
    } else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
      ev.preventDefault();
      this.callbacks.onFork(ev.key === 'ArrowLeft' ? 'left' : 'right');
    }
  }

  private render(): void {
    const count = this.turns.length;
    // CSSOM assignments (not style attributes) are allowed by the page's CSP.
    this.spacer.style.height = `${count * TURN_ROW_HEIGHT}px`;
    const w = listWindow(this.element.scrollTop, this.element.clientHeight || 600, TURN_ROW_HEIGHT, count);
    const nodes: HTMLElement[] = [];
    for (let i = w.first; i <= w.last; i++) {
      const t = this.turns[i] as TurnView;
      const row = el(
        'div',
        {
          class: `turn-row${i === this.selected ? ' selected' : ''}${t.error ? ' unreadable' : ''}`,
          role: 'option',
          id: `turn-${t.turn}`,
          'data-turn': t.turn,
          'aria-selected': i === this.selected ? 'true' : 'false',
          'aria-label': `Turn ${t.turn}: ${t.error ? `unreadable (${t.error})` : t.preview}, ${t.itemCount} items${t.tools.length ? `, tools ${t.tools.join(', ')}` : ''}${t.totalTokens !== null ? `, ${t.totalTokens} tokens` : ''}`,
        },
        el('span', { class: 'turn-number' }, `Turn ${t.turn}`),
        el('span', { class: 'turn-preview' }, t.error ? `unreadable: ${t.error}` : t.preview),
        el(
          'span',
          { class: 'turn-meta' },
          `${t.itemCount} item${t.itemCount === 1 ? '' : 's'}`,
          ...t.tools.map((name) => el('span', { class: 'tool-badge' }, name)),
          el('span', { class: 'turn-tokens' }, t.totalTokens !== null ? `${t.totalTokens.toLocaleString('en-US')} tokens` : 'no usage'),
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
    if (this.hasMore && w.last >= count - 20) this.callbacks.onNeedMore();
  }
}
