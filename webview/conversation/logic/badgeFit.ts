/**
 * How many of a row's badges fit in `room` pixels, in order: all of them if they fit, else as many as fit beside a
 * "+N" badge `moreWidth` wide (N = the rest). Widths are measured by the caller; this only counts.
 */
export function badgeFit(widths: readonly number[], room: number, moreWidth: number): { shown: number; hidden: number } {
  const total = widths.reduce((a, b) => a + b, 0);
  if (total <= room) return { shown: widths.length, hidden: 0 };
  let used = moreWidth;
  let shown = 0;
  for (const w of widths) {
    if (used + w > room) break;
    used += w;
    shown++;
  }
  return { shown, hidden: widths.length - shown };
}
