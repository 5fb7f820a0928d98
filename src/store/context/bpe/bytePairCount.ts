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

/**
 * Past this many bytes a piece is merged with a heap (`mergeLong`): the scan for the lowest pair is quadratic in a
 * piece's length, and a piece can be long (a run of letters: base64 of zeros is "AAAA…"; 32,000 of them took 0.7 s,
 * 256 KB, the most one answer counts exactly, would take about 40 s). Below it, the scan is faster than a heap.
 */
const LONG_PIECE_BYTES = 256;

/** A counter over `table`, cutting texts with `split` (a global, Unicode pattern: the encoding's). */
export function bytePairCounter(table: RankTable, split: RegExp): CountTokens {
  if (!split.global) throw new TypeError('the split pattern must be global');
  const encoder = new TextEncoder();
  // Scratch space reused across pieces: the bytes grown for the longest piece (a UTF-16 unit is at most 3 UTF-8
  // bytes); the scan's parts and ranks only ever for a short one (a long piece brings its own, `mergeLong`).
  let bytes = new Uint8Array(LONG_PIECE_BYTES * 2);
  const starts = new Uint32Array(LONG_PIECE_BYTES + 1);
  const ranks = new Float64Array(LONG_PIECE_BYTES + 1);

  const rankOr = (start: number, end: number): number => {
    const rank = table.rankOf(bytes, start, end);
    return rank === -1 ? Infinity : rank;
  };

  const countPiece = (piece: string): number => {
    if (piece.length * 3 > bytes.length) bytes = new Uint8Array(piece.length * 3);
    const n = encoder.encodeInto(piece, bytes).written;
    if (table.rankOf(bytes, 0, n) !== -1) return 1;
    if (n > LONG_PIECE_BYTES) return mergeLong(table, bytes, n);
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

/**
 * The same merges as the scan in `bytePairCounter`, for a long piece: the parts as a linked list by their first byte,
 * the pairs in a binary heap keyed by (rank, position), so the lowest-ranked pair, the leftmost on a tie, comes first;
 * a pair changed by a merge is pushed again and its old entry skipped when it comes up. Returns the parts left.
 */
function mergeLong(table: RankTable, bytes: Uint8Array, n: number): number {
  // Part i (i a byte offset) ends where `next[i]` starts (n after the last); -1: no next part. A merged-away part has
  // `pairRank` -2; `pairRank[i]` is the rank of part i joined with the next, -1 when that is no token.
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const pairRank = new Float64Array(n);
  const heap = new Float64Array(n * 3 + 1);
  let size = 0;
  const key = (rank: number, at: number) => rank * (n + 1) + at;
  const push = (k: number) => {
    let i = size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]! <= k) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = k;
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap[--size]!;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const c = l + 1 < size && heap[l + 1]! < heap[l]! ? l + 1 : l;
      if (heap[c]! >= last) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = last;
    return top;
  };
  const endOf = (i: number) => (next[i] === -1 ? n : next[i]!);
  const rankPair = (i: number) => {
    const j = next[i]!;
    pairRank[i] = j === -1 ? -1 : table.rankOf(bytes, i, endOf(j));
    // The heap holds n entries at first and at most two more per merge: n * 3 is room enough.
    if (pairRank[i]! >= 0) push(key(pairRank[i]!, i));
  };
  for (let i = 0; i < n; i++) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  for (let i = 0; i < n; i++) rankPair(i);
  let parts = n;
  while (size > 0) {
    const k = pop();
    const at = k % (n + 1);
    const rank = (k - at) / (n + 1);
    // A stale entry: the part was merged away, or its pair changed since.
    if (pairRank[at] !== rank) continue;
    const gone = next[at]!;
    next[at] = next[gone]!;
    if (next[gone] !== -1) prev[next[gone]!] = at;
    pairRank[gone] = -2;
    parts--;
    rankPair(at);
    if (prev[at] !== -1) rankPair(prev[at]!);
  }
  return parts;
}
