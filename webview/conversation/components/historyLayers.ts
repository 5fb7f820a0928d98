/**
 * The history guard's layers in the conversation view (docs/history-guard.md "In VS Code"): beside the branch map, the
 * shown branch's layers ("before compaction at …"); choosing one shows its items read-only in place of the turn detail
 * and the composer (no write action reaches a layer), with a banner saying what it is, *Compare with Branch Now* (the
 * compare view reads the layer from the guard store, nothing is restored) and *Restore as Branch*. The items are
 * untrusted text: drawn like a branch's items, through `el()` only.
 */
import type { HistoryLayerView, LayerItemsView } from '../../../src/shared/protocol/layerViews';
import { errorMessage } from '../../../src/shared/errorMessage';
import { el, replaceChildren } from '../../shared/dom';
import { t } from '../../shared/l10n';
import { readOnlyItemCard } from './turnDetail';

export interface LayerCallbacks {
  layers(): Promise<HistoryLayerView[]>;
  items(layerId: number): Promise<LayerItemsView>;
  compare(layerId: number): Promise<unknown>;
  /** The restored branch's id, null when the user cancelled. */
  restore(layerId: number): Promise<{ branchId: string | null }>;
  /** Shows a branch (the restored one). */
  showBranch(branchId: string): void;
  /** A layer was opened (true) or closed: the view hides or shows the turn detail and the composer. */
  opened(open: boolean): void;
  openLink(url: string): void;
}

const when = (ms: number): string => new Date(ms).toLocaleString();

/** "before compaction at …" or "before items were removed at …": what a layer is, as its entry and banner say. */
export function layerName(l: HistoryLayerView): string {
  return l.cause === 'our-compaction'
    ? t('before compaction at {0}', when(l.noticedMs))
    : t('before items were removed at {0}', when(l.noticedMs));
}

export class HistoryLayers {
  /** The shown branch's layers, under the branch map (empty and hidden when it has none). */
  readonly strip = el('div', { class: 'layer-strip', hidden: true });
  /** The open layer: banner, actions and items, in place of the turn detail. */
  readonly pane = el('section', { class: 'layer-pane', hidden: true, 'aria-label': t('History layer'), tabindex: -1 });
  private all: HistoryLayerView[] = [];
  private branchId = '';
  private openId: number | null = null;
  private problem: string | null = null;

  constructor(private readonly cb: LayerCallbacks) {}

  get openLayer(): number | null {
    return this.openId;
  }

  /** Reads the session's layers again (the view's start, a `layers` or `database` notice). */
  async reload(): Promise<void> {
    try {
      this.all = await this.cb.layers();
      this.problem = null;
    } catch (err) {
      this.all = [];
      this.problem = errorMessage(err);
    }
    if (this.openId !== null && !this.all.some((l) => l.layerId === this.openId)) this.close();
    this.drawStrip();
  }

  /** The view shows another branch: its layers, and the open layer is closed. */
  setBranch(branchId: string): void {
    if (branchId === this.branchId) return;
    this.branchId = branchId;
    this.close();
    this.drawStrip();
  }

  close(): void {
    if (this.openId === null) return;
    this.openId = null;
    this.pane.hidden = true;
    replaceChildren(this.pane);
    this.cb.opened(false);
    this.drawStrip();
  }

  async open(layerId: number): Promise<void> {
    this.openId = layerId;
    this.drawStrip();
    this.pane.hidden = false;
    replaceChildren(this.pane, el('p', { class: 'note', role: 'status' }, t('Reading the layer…')));
    this.cb.opened(true);
    try {
      const view = await this.cb.items(layerId);
      if (this.openId === layerId) this.drawPane(view);
    } catch (err) {
      if (this.openId === layerId)
        replaceChildren(this.pane, el('p', { class: 'layer-error', role: 'alert' }, errorMessage(err)), this.backButton());
    }
  }

  private drawStrip(): void {
    const mine = this.all.filter((l) => l.branchId === this.branchId);
    this.strip.hidden = mine.length === 0 && this.problem === null;
    if (this.strip.hidden) return replaceChildren(this.strip);
    const list = el('ul', { class: 'layer-list', 'aria-label': t('History layers of branch {0}', this.branchId) });
    for (const l of mine) {
      const open = l.layerId === this.openId;
      const entry = el(
        'vscode-button',
        {
          appearance: open ? 'primary' : 'secondary',
          class: 'layer-entry',
          'data-layer': l.layerId,
          'aria-pressed': open ? 'true' : 'false',
          title: t('{0} of {1} items removed', l.removedCount, l.itemCount),
        },
        layerName(l),
      );
      entry.addEventListener('click', () => void (open ? this.close() : this.open(l.layerId)));
      list.appendChild(el('li', {}, entry));
    }
    replaceChildren(
      this.strip,
      el('h3', { class: 'layer-heading' }, t('History layers')),
      this.problem !== null ? el('p', { class: 'layer-error' }, this.problem) : null,
      list,
    );
  }

  private backButton(): HTMLElement {
    const back = el('vscode-button', { appearance: 'secondary', class: 'layer-back' }, t('Back to Branch'));
    back.addEventListener('click', () => this.close());
    return back;
  }

  private drawPane(view: LayerItemsView): void {
    const l = view.layer;
    const facts = [
      t('Noticed at {0}', when(l.noticedMs)),
      l.cause === 'our-compaction' ? t('removed by our compaction') : t('removed by another writer'),
      t('{0} of {1} items removed', l.removedCount, l.itemCount),
    ];
    if (l.fromReplacedFile) facts.push(t('from a replaced file: taken from the file that was at this path before'));
    const status = el('p', { class: 'layer-status', role: 'status' });
    const compare = el('vscode-button', { appearance: 'primary', class: 'layer-compare' }, t('Compare with Branch Now'));
    compare.addEventListener('click', () => {
      status.textContent = '';
      this.cb.compare(l.layerId).catch((err: unknown) => (status.textContent = errorMessage(err)));
    });
    const restore = el('vscode-button', { appearance: 'secondary', class: 'layer-restore' }, t('Restore as Branch'));
    restore.addEventListener('click', () => {
      status.textContent = '';
      this.cb.restore(l.layerId).then(
        (r) => {
          if (r.branchId === null) return;
          this.close();
          this.cb.showBranch(r.branchId);
        },
        (err: unknown) => (status.textContent = errorMessage(err)),
      );
    });
    const banner = el(
      'div',
      { class: 'layer-banner' },
      el('h2', { class: 'layer-title' }, t('Branch {0}, {1}', l.branchId, layerName(l))),
      el('p', { class: 'layer-facts' }, facts.join(' · ')),
      el('p', { class: 'layer-readonly' }, t('Read-only: kept by the history guard, not in the session file.')),
      el('div', { class: 'layer-actions' }, compare, restore, this.backButton()),
      status,
    );
    const items = el('ol', { class: 'items layer-items', 'aria-label': t('Items of the layer') });
    let turn = -1;
    for (const i of view.items) {
      if (i.turn !== turn) {
        turn = i.turn;
        items.appendChild(el('li', { class: 'layer-turn' }, turn === 0 ? t('Before the first turn') : t('Turn {0}', turn)));
      }
      const badge = i.removed
        ? el('span', { class: 'status-badge layer-removed', title: t('Not on the branch any more') }, t('removed'))
        : null;
      const card = readOnlyItemCard(i.item, this.cb.openLink, badge);
      if (i.removed) card.classList.add('removed');
      items.appendChild(card);
    }
    replaceChildren(
      this.pane,
      banner,
      items,
      view.truncated
        ? el(
            'p',
            { class: 'note layer-truncated' },
            t('The first {0} items are shown: restore the layer as a branch to read them all.', view.items.length),
          )
        : null,
    );
  }
}
