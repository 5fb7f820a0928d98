/**
 * The page's side of a redraw of the same turn (logic/detailState.ts keeps the toggles): the detail pane's scroll
 * position and the control that had the focus. A control is found again by its `data-focus` name (the item cards'
 * buttons are named by the item's sequence number), else by its place among the focusable elements of its item card
 * (or of the pane). What is typed in an input, and its focus, is shared/drafts.ts's: an input is left to it.
 */
import { scrollBack } from '../logic/detailState';

const FOCUSABLE =
  'a[href], button, input, textarea, select, summary, [tabindex]:not([tabindex="-1"]), vscode-button, vscode-checkbox, vscode-text-field, vscode-dropdown';

/** Where the focus was in the pane: a named control, or the `index`th focusable element of item `item` (null: the pane). */
type FocusPlace = { key: string } | { item: string | null; index: number };

export interface DetailView {
  scrollTop: number;
  focus: FocusPlace | null;
}

/** Before a redraw of the turn `pane` shows: its scroll position and the focused control in it, if any. */
export function captureDetailView(pane: HTMLElement): DetailView {
  const active = document.activeElement;
  let focus: FocusPlace | null = null;
  // The pane itself stays in the page; an input is the drafts' (they give its text, caret and focus back).
  if (active instanceof HTMLElement && active !== pane && pane.contains(active) && !active.closest('[data-draft]')) {
    const key = active.closest('[data-focus]')?.getAttribute('data-focus');
    if (key) focus = { key };
    else {
      const item = active.closest('[data-sequence]');
      const scope = item && pane.contains(item) ? item : pane;
      focus = { item: scope === pane ? null : scope.getAttribute('data-sequence'), index: focusables(scope).indexOf(active) };
    }
  }
  return { scrollTop: pane.scrollTop, focus };
}

function focusables(scope: Element): Element[] {
  return Array.from(scope.querySelectorAll(FOCUSABLE));
}

/** The redraw's scroll that waits for content still loading (a Timeline read again), stopped by the next redraw. */
let stopWaiting: (() => void) | undefined;

/**
 * After the redraw: the focus back on the same control (the pane, if it is gone: never the page's body), and the
 * pane scrolled where it was.
 */
export function restoreDetailView(pane: HTMLElement, view: DetailView): void {
  stopWaiting?.();
  stopWaiting = undefined;
  const active = document.activeElement;
  if (view.focus && (active === null || active === document.body)) {
    const place = view.focus;
    let target: Element | null | undefined;
    if ('key' in place) target = pane.querySelector(`[data-focus="${CSS.escape(place.key)}"]`);
    else if (place.index >= 0) {
      const scope = place.item === null ? pane : pane.querySelector(`[data-sequence="${CSS.escape(place.item)}"]`);
      target = scope ? focusables(scope)[place.index] : undefined;
    }
    ((target as HTMLElement | null | undefined) ?? pane).focus({ preventScroll: true });
  }
  keepScroll(pane, view.scrollTop);
}

/** Scrolls `pane` to `wanted`, and again as its content grows (for up to 3 s) until it gets there or the user scrolls. */
function keepScroll(pane: HTMLElement, wanted: number): void {
  const apply = (): boolean => {
    const s = scrollBack(wanted, pane.scrollHeight - pane.clientHeight);
    pane.scrollTop = s.top;
    return s.done;
  };
  if (apply() || typeof ResizeObserver === 'undefined') return;
  let set = pane.scrollTop;
  const observer = new ResizeObserver(() => {
    // Scrolled since (the user, or a search hit shown): that place wins.
    if (Math.abs(pane.scrollTop - set) > 1) return stop();
    if (apply()) return stop();
    set = pane.scrollTop;
  });
  const userScrolls = ['wheel', 'keydown', 'pointerdown', 'touchstart'] as const;
  const stop = (): void => {
    observer.disconnect();
    window.clearTimeout(timer);
    for (const e of userScrolls) pane.removeEventListener(e, stop);
    if (stopWaiting === stop) stopWaiting = undefined;
  };
  const timer = window.setTimeout(stop, 3000);
  for (const e of userScrolls) pane.addEventListener(e, stop, { passive: true });
  for (const child of Array.from(pane.children)) observer.observe(child);
  stopWaiting = stop;
}
