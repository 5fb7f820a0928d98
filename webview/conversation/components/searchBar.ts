/**
 * The search box in the conversation view's header: Ctrl/Cmd+F opens it (VS Code's own find widget is off for this
 * view), Enter and F3 go to the next hit, Shift+Enter and Shift+F3 to the previous one, Escape closes it. It searches
 * the whole session: the shown branch's hits first, then the other branches' (webview/logic/searchModel.ts). A hit is
 * shown by showing its branch (as clicking it on the branch map does; the session's current branch is not changed),
 * revealing its turn (selected in the turn list, its items in the detail) and marking its item there.
 */
import type { SessionSearchHitView, SessionSearchView } from '../../../src/shared/protocol/conversation';
import type { BranchView } from '../../../src/shared/protocol/conversationViews';
import { el, replaceChildren } from '../../shared/dom';
import { draftInput } from '../../shared/drafts';
import { t } from '../../shared/l10n';
import { SearchModel } from '../logic/searchModel';

export interface SearchBarCallbacks {
  /** Runs `search/session` on the shown session, the shown branch's hits first. */
  search(query: string, branchId: string): Promise<SessionSearchView>;
  /** Shows the hit's branch and turn; resolves once its items are drawn. */
  reveal(hit: SessionSearchHitView): Promise<void>;
  branchId(): string;
  /** The session's branches (their creation order orders the other branches' hits). */
  branches(): readonly BranchView[];
  selectedTurn(): number | null;
}

export class SearchBar {
  readonly element: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly counter: HTMLElement;
  private readonly model = new SearchModel();
  private current: SessionSearchHitView | null = null;
  /** Bumped per search, so a slow answer to an older query is dropped. */
  private generation = 0;

  constructor(private readonly cb: SearchBarCallbacks) {
    // Registered with the drafts of the view's redraws (shared/drafts.ts), as every inline input is.
    this.input = draftInput(
      el('input', {
        class: 'search-input',
        type: 'search',
        placeholder: t('Search this session (tool:, is:failed, role:, is:bad, reviewed:no)'),
        'aria-label': t('Search this session'),
        spellcheck: 'false',
      }),
      'search',
    );
    this.counter = el('span', { class: 'search-count', 'aria-live': 'polite' });
    const prev = el(
      'button',
      { class: 'search-prev icon-button', title: t('Previous match (Shift+Enter)'), 'aria-label': t('Previous match') },
      '↑',
    );
    const next = el('button', { class: 'search-next icon-button', title: t('Next match (Enter)'), 'aria-label': t('Next match') }, '↓');
    const close = el('button', { class: 'search-close icon-button', title: t('Close (Escape)'), 'aria-label': t('Close search') }, '×');
    prev.addEventListener('click', () => void this.go(-1));
    next.addEventListener('click', () => void this.go(1));
    close.addEventListener('click', () => this.close());
    // An edited query supersedes the hits and any search still running for the old one (its answer is dropped).
    this.input.addEventListener('input', () => {
      if (this.model.has(this.input.value.trim()) || this.model.status.kind === 'idle') return;
      this.generation++;
      this.model.clear();
      this.current = null;
      this.drawCount();
      markHit(null);
    });
    this.input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === 'F3') {
        ev.preventDefault();
        void this.go(ev.shiftKey ? -1 : 1);
      } else if (ev.key === 'Escape') {
        ev.preventDefault();
        this.close();
      }
    });
    this.element = el('div', { class: 'search-bar', role: 'search', hidden: true }, this.input, this.counter, prev, next, close);
    document.addEventListener('keydown', (ev) => {
      if ((ev.ctrlKey || ev.metaKey) && !ev.altKey && ev.key.toLowerCase() === 'f') {
        ev.preventDefault();
        this.open();
      } else if (ev.key === 'F3' && !this.element.hidden && ev.target !== this.input) {
        ev.preventDefault();
        void this.go(ev.shiftKey ? -1 : 1);
      }
    });
  }

  open(): void {
    this.element.hidden = false;
    this.input.focus();
    this.input.select();
  }

  close(): void {
    this.generation++;
    this.element.hidden = true;
    this.model.clear();
    this.current = null;
    this.drawCount();
    markHit(null);
  }

  /** Marks the current hit's item again after the detail was redrawn (another turn, a refresh). */
  itemsDrawn(turn: number | null): void {
    const c = this.current;
    markHit(c && c.turn === turn && c.branchId === this.cb.branchId() ? c : null);
  }

  /** The next or previous hit of the typed query; searches first when the query changed. */
  private async go(direction: 1 | -1): Promise<void> {
    const query = this.input.value.trim();
    if (query === '') return;
    const branchId = this.cb.branchId();
    let hit: SessionSearchHitView | null;
    if (this.model.has(query)) hit = this.model.step(direction);
    else {
      const generation = ++this.generation;
      this.model.searching();
      this.drawCount();
      try {
        const view = await this.cb.search(query, branchId);
        if (generation !== this.generation) return;
        hit = this.model.found(query, branchId, view, this.cb.selectedTurn(), this.cb.branches());
      } catch (err) {
        if (generation !== this.generation) return;
        this.model.failed(err instanceof Error ? err.message : String(err));
        hit = null;
      }
    }
    this.current = hit;
    this.drawCount();
    if (hit) {
      const shown = this.generation;
      await this.cb.reveal(hit);
      // The query may have been edited (or the bar closed, or another hit chosen) while the turn's items loaded: a
      // late mark would put back a hit the box no longer has.
      if (shown === this.generation && this.current === hit) markHit(hit);
    }
  }

  private drawCount(): void {
    const s = this.model.status;
    this.counter.classList.toggle('error', s.kind === 'error' || s.kind === 'none');
    const text =
      s.kind === 'hits'
        ? t('{0} of {1}', s.index + 1, s.count) +
          (s.truncated ? '+' : '') +
          (s.elsewhere === 1 ? ' · ' + t('1 on another branch') : s.elsewhere > 1 ? ' · ' + t('{0} on other branches', s.elsewhere) : '')
        : s.kind === 'searching'
          ? t('Searching…')
          : s.kind === 'none'
            ? t('No results')
            : s.kind === 'error'
              ? s.message
              : '';
    replaceChildren(this.counter, text);
    this.counter.setAttribute('title', s.kind === 'error' ? s.message : '');
  }
}

/** Marks the hit's item in the turn detail (`data-sequence` on each item) and scrolls it into view. */
function markHit(hit: SessionSearchHitView | null): void {
  for (const old of Array.from(document.querySelectorAll('.search-hit'))) old.classList.remove('search-hit');
  if (!hit) return;
  const item = document.querySelector(`.turn-detail [data-sequence="${hit.sequenceNumber}"]`);
  if (!item) return;
  item.classList.add('search-hit');
  item.scrollIntoView({ block: 'nearest' });
}
