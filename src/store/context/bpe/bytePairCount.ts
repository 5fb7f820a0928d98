/**
 * Counting a text's tokens the way tiktoken encodes it (issue 43: the counts of gpt-tokenizer's `countTokens` with no
 * special tokens, from a table a tenth of its size): the text is cut into pieces by the encoding's pattern; a piece
 * that is a token is one; any other is encoded as UTF-8 and its bytes merged pair by pair, always the adjacent pair
 * whose joined bytes have the lowest rank (the leftmost on a tie), until no adjacent pair is a token. The count is the
 * parts left. Special-token text ("<|endoftext|>") is ordinary text here, as the Context tab counts it.
 */
import type { RankTable } from './rankTable';

/** Counts one text's tokens. */
export type CountTokens = (text: string) => number;

/** A counter over `table`, cutting texts with `split` (a global, Unicode pattern: the encoding's). */
export function bytePairCounter(table: RankTable, split: RegExp): CountTokens {
  if (!split.global) throw new TypeError('the split pattern must be global');
  const encoder = new TextEncoder();
  // Scratch space reused across pieces, grown for the longest (a UTF-16 unit is at most 3 UTF-8 bytes).
  let bytes = new Uint8Array(256);
  let starts = new Uint32Array(257);
  let ranks = new Float64Array(257);

  const rankOr = (start: number, end: number): number => {
    const rank = table.rankOf(bytes, start, end);
    return rank === -1 ? Infinity : rank;
  };

  const countPiece = (piece: string): number => {
    if (piece.length * 3 > bytes.length) {
      bytes = new Uint8Array(piece.length * 3);
      starts = new Uint32Array(bytes.length + 1);
      ranks = new Float64Array(bytes.length + 1);
    }
    const n = encoder.encodeInto(piece, bytes).written;
    if (table.rankOf(bytes, 0, n) !== -1) return 1;
    // Parts i = [starts[i], starts[i + 1]); ranks[i] is the rank of parts i and i + 1 joined.
    let parts = n;
    for (let i = 0; i <= n; i++) starts[i] = i;
    for (let i = 0; i < n - 1; i++) ranks[i] = rankOr(i, i + 2);
    ranks[n - 1] = Infinity;
    while (parts > 1) {
      let lowest = Infinity;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        if (ranks[i]! < lowest) {
          lowest = ranks[i]!;
          at = i;
        }
      }
      if (at === -1) break;
      // Parts `at` and `at + 1` become one: drop the boundary between them, then rank the new part's two pairs.
      starts.copyWithin(at + 1, at + 2, parts + 1);
      ranks.copyWithin(at, at + 1, parts);
      parts--;
      ranks[at] = at + 1 < parts ? rankOr(starts[at]!, starts[at + 2]!) : Infinity;
      if (at > 0) ranks[at - 1] = rankOr(starts[at - 1]!, starts[at + 1]!);
    }
    return parts;
  };

  return (text) => {
    let count = 0;
    for (const match of text.matchAll(split)) count += countPiece(match[0]);
    return count;
  };
}
