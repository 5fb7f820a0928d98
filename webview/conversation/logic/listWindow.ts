/** Which rows of a fixed-height list are in view (plus some overscan), so only those get DOM nodes. */
export interface ListWindow {
  first: number;
  last: number;
}

export function listWindow(scrollTop: number, viewportHeight: number, rowHeight: number, count: number, overscan = 8): ListWindow {
  if (count === 0 || rowHeight <= 0) return { first: 0, last: -1 };
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count - 1, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return { first, last };
}

/** The scrollTop that brings row `index` into view (minimal movement). */
export function scrollToShow(index: number, scrollTop: number, viewportHeight: number, rowHeight: number): number {
  const top = index * rowHeight;
  if (top < scrollTop) return top;
  if (top + rowHeight > scrollTop + viewportHeight) return top + rowHeight - viewportHeight;
  return scrollTop;
}
