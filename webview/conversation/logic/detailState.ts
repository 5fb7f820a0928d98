/**
 * What the user set in the shown turn's detail that a redraw of the same turn keeps. A live refresh (another process
 * writing while an agent runs, the main live-debugging case) draws the detail again from new data, and a toggle drawn
 * again would start closed: so the item cards' toggles (a long output expanded, an item shown as raw JSON) read and
 * write their state here, each under a key that names the item by its row in the turn (its sequence number), not by
 * its place on the page. Showing another turn or branch starts afresh, as the detail always has.
 *
 * The detail's scroll position and the focused control are the page's (main.ts keeps them across a redraw of the same
 * turn); what is typed in its inputs is shared/drafts.ts's. No DOM here (unit-tested without one).
 */

/** A toggle of an item card: a long text expanded (`Show all`), or the item shown as its stored JSON (`Raw`). */
export type ItemToggle = 'expanded' | 'raw';

/** The key of one toggle: `part` names which of the item's texts (its output, a field) when it has more than one. */
export function toggleKey(toggle: ItemToggle, sequenceNumber: number, part = ''): string {
  return `${toggle} ${sequenceNumber}${part === '' ? '' : ` ${part}`}`;
}

/** Where the toggles of the cards drawn keep their state (a history layer's cards keep theirs in the card). */
export interface ToggleMemory {
  isOn(key: string): boolean;
  set(key: string, on: boolean): void;
}

/** A memory of its own (a history layer's card: no row of the session, nothing redraws it), for as long as it lives. */
export function localMemory(): ToggleMemory {
  const on = new Set<string>();
  return { isOn: (key) => on.has(key), set: (key, value) => void (value ? on.add(key) : on.delete(key)) };
}

export class DetailState implements ToggleMemory {
  /** The detail last drawn (logic/detailRedraw.ts's `detailKey`); undefined before the first draw. */
  private shown: string | null | undefined = undefined;
  private readonly on = new Set<string>();

  /**
   * Before the detail draws `key` (a branch's turn, or null: none): whether it draws the same turn again (a redraw,
   * which keeps the toggles' state); another turn forgets it.
   */
  draw(key: string | null): boolean {
    if (this.shown !== undefined && key === this.shown) return true;
    this.shown = key;
    this.on.clear();
    return false;
  }

  isOn(key: string): boolean {
    return this.on.has(key);
  }

  set(key: string, on: boolean): void {
    if (on) this.on.add(key);
    else this.on.delete(key);
  }
}

/**
 * The scroll position to put back after a redraw, as far as the pane can scroll now (`max`: its scroll height less its
 * height). `done`: the pane reached it; otherwise it is asked again as the content grows (a Timeline read again), until
 * it reaches it or the user scrolls.
 */
export function scrollBack(wanted: number, max: number): { top: number; done: boolean } {
  const top = Math.max(0, Math.min(wanted, Math.max(0, max)));
  return { top, done: top >= wanted - 1 };
}
