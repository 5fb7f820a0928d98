/**
 * How the Tokens and Tools tables lay out their text, without the DOM: columns as wide as what they hold (so a cost or
 * a tool name never wraps), and the whole session's turns of a tool named by branch.
 */

/** Columns no wider than this many characters: longer text is cut with an ellipsis (the cell's tooltip has it all). */
const MAX_TEXT_CH = 40;
const MAX_NUMBER_CH = 18;
/**
 * A branch name's column (the whole session's Branch, a branch's Shared) is narrower: names can be long, and at 40ch
 * one pushed the figures after it, Cost among them, out of the view. The tooltip has the whole name.
 */
export const BRANCH_COLUMN_CH = 20;

/** How many `ch` a text takes: wide characters (Hangul, CJK, fullwidth forms) take two. */
export function textWidth(text: string): number {
  let w = 0;
  for (const c of text)
    w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u.test(c) ? 2 : 1;
  return w;
}

/**
 * A header as wide as it can be drawn: with room for the sort mark (▲/▼) only when the column can be sorted. Room
 * for a mark that never comes made the Tokens table wider than it needs (2ch a column, Cost among them), enough to
 * show a sideways scrollbar of a few pixels in a view it fits.
 */
export function headerWidthText(title: string, sortable: boolean): string {
  return sortable ? `${title} ▲` : title;
}

/**
 * Each column as wide as its widest text (header with its sort mark, cells, totals) plus room for the cell's padding,
 * in `ch`: figures and names then never wrap, and narrow columns leave room for the rest. `maxCh`: a column's own
 * limit, below the usual one (`BRANCH_COLUMN_CH`).
 */
export function columnWidths(texts: string[][], numeric: boolean[], maxCh: readonly (number | undefined)[] = []): string {
  return texts
    .map((column, i) => {
      const widest = Math.max(0, ...column.map(textWidth));
      const max = maxCh[i] ?? (numeric[i] ? MAX_NUMBER_CH : MAX_TEXT_CH);
      return `${Math.min(max, Math.max(5, widest + 3))}ch`;
    })
    .join(' ');
}

/**
 * The most a table's columns shrink (their share of their natural width) before the table scrolls sideways instead.
 * A view a few pixels narrower than the columns (the Tokens table at about 1,150 px) showed a scrollbar for a cut of
 * 3 px; taking those pixels from the columns' padding is better, and a cell too narrow for its text ends with an
 * ellipsis and has its tooltip.
 */
export const MIN_GRID_FIT = 0.85;

/** A template of `ch` widths that every row scales by the same factor, `--grid-fit` (set on the table's box). */
export function fittedTemplate(template: string): string {
  return template
    .split(' ')
    .map((w) => (/^\d+(?:\.\d+)?ch$/.test(w) ? `calc(${w} * var(--grid-fit, 1))` : w))
    .join(' ');
}

/**
 * The factor the columns take so that a table `natural` pixels wide fits in `available` pixels: 1 when it fits, else
 * the ratio (less a pixel), never below `MIN_GRID_FIT` (then the box scrolls).
 */
export function gridFit(natural: number, available: number): number {
  if (!(natural > 0) || !(available > 0) || available >= natural) return 1;
  // One pixel to spare: widths in `ch` round to fractions of a pixel, and a table 0.3 px too wide still scrolls.
  return Math.max(MIN_GRID_FIT, (available - 1) / natural);
}

/** The whole session's turns of a tool, by the branch that ran them: `main 2, 5 · retry 3`. */
export function turnsByBranch(runs: readonly { branchId: string; turn: number }[]): string {
  const byBranch = new Map<string, number[]>();
  for (const r of runs) byBranch.set(r.branchId, [...(byBranch.get(r.branchId) ?? []), r.turn]);
  return [...byBranch].map(([branch, turns]) => `${branch} ${turns.join(', ')}`).join(' · ');
}
