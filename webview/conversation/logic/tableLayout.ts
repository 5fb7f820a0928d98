/**
 * How the Tokens and Tools tables lay out their text, without the DOM: columns as wide as what they hold (so a cost or
 * a tool name never wraps), and the whole session's turns of a tool named by branch.
 */

/** Columns no wider than this many characters: longer text is cut with an ellipsis (the cell's tooltip has it all). */
const MAX_TEXT_CH = 40;
const MAX_NUMBER_CH = 18;

/** How many `ch` a text takes: wide characters (Hangul, CJK, fullwidth forms) take two. */
export function textWidth(text: string): number {
  let w = 0;
  for (const c of text)
    w += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u.test(c) ? 2 : 1;
  return w;
}

/**
 * Each column as wide as its widest text (header with its sort mark, cells, totals) plus room for the cell's padding,
 * in `ch`: figures and names then never wrap, and narrow columns leave room for the rest.
 */
export function columnWidths(texts: string[][], numeric: boolean[]): string {
  return texts
    .map((column, i) => {
      const widest = Math.max(0, ...column.map(textWidth));
      const max = numeric[i] ? MAX_NUMBER_CH : MAX_TEXT_CH;
      return `${Math.min(max, Math.max(5, widest + 3))}ch`;
    })
    .join(' ');
}

/** The whole session's turns of a tool, by the branch that ran them: `main 2, 5 · retry 3`. */
export function turnsByBranch(runs: readonly { branchId: string; turn: number }[]): string {
  const byBranch = new Map<string, number[]>();
  for (const r of runs) byBranch.set(r.branchId, [...(byBranch.get(r.branchId) ?? []), r.turn]);
  return [...byBranch].map(([branch, turns]) => `${branch} ${turns.join(', ')}`).join(' · ');
}
