/**
 * An encoding's byte-pair ranks in a compact form (issue 43: `context` within 100 MB). gpt-tokenizer holds a table as
 * an array and a Map of 200,000 JavaScript strings, about 40 MB of heap built while V8 lets the heap grow to 70 MB;
 * here the same table is one buffer of the tokens' bytes and an open-addressing index over it, about 5 MB outside the
 * heap. The tokens' bytes and their ranks are the package's (OpenAI's published tables); only their form is ours.
 *
 * The packed form, rank after rank from 0: one byte giving the token's length, then its bytes (a rank the encoding
 * leaves unused has length 0). No token of the published tables is longer than 255 bytes (o200k_base's longest: 128).
 */

/** A rank's token: its text (valid UTF-8) or its bytes (a piece of a character), as gpt-tokenizer's tables hold it. */
export type RankEntry = string | readonly number[] | undefined | null;

/** Packs a table of ranks (index = rank) into the form above. */
export function packRanks(ranks: readonly RankEntry[]): Uint8Array {
  const encoder = new TextEncoder();
  const tokens = Array.from(ranks, (v) => (v == null ? new Uint8Array(0) : typeof v === 'string' ? encoder.encode(v) : Uint8Array.from(v)));
  const out = new Uint8Array(tokens.reduce((n, t) => n + 1 + t.length, 0));
  let at = 0;
  tokens.forEach((t, rank) => {
    if (t.length > 255) throw new RangeError(`rank ${rank}: a token of ${t.length} bytes does not fit the packed form`);
    out[at++] = t.length;
    out.set(t, at);
    at += t.length;
  });
  return out;
}

/** FNV-1a over `bytes[start, end)`: cheap, and spreads the short byte strings of a BPE table well. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** The ranks of a packed table, looked up by a token's bytes. */
export class RankTable {
  /** Where each rank's bytes start in `packed` (its length is the byte before). */
  private readonly starts: Uint32Array;
  /** Open addressing, linear probing: a rank per slot, -1 for an empty one; at most half full. */
  private readonly slots: Int32Array;
  private readonly mask: number;

  private constructor(private readonly packed: Uint8Array) {
    let count = 0;
    for (let at = 0; at < packed.length; at += 1 + packed[at]!) count++;
    this.starts = new Uint32Array(count);
    let size = 1;
    while (size < count * 2) size *= 2;
    this.slots = new Int32Array(size).fill(-1);
    this.mask = size - 1;
    let at = 0;
    for (let rank = 0; rank < count; rank++) {
      const length = packed[at]!;
      const start = at + 1;
      this.starts[rank] = start;
      at = start + length;
      if (length === 0) continue;
      // A token listed under two ranks would make its rank a matter of probing order: the published tables list
      // none twice, and a table that does is refused rather than counted differently from the package.
      if (this.rankOf(packed, start, at) !== -1) throw new RangeError(`rank ${rank}: the same token as an earlier rank`);
      let slot = hashBytes(packed, start, at) & this.mask;
      while (this.slots[slot] !== -1) slot = (slot + 1) & this.mask;
      this.slots[slot] = rank;
    }
    if (at !== packed.length) throw new RangeError('the packed table ends inside a token');
  }

  static fromPacked(packed: Uint8Array): RankTable {
    return new RankTable(packed);
  }

  /** How many ranks the table holds (unused ones included). */
  get size(): number {
    return this.starts.length;
  }

  /** The rank of the token `bytes[start, end)`, or -1 when no token is those bytes. */
  rankOf(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start;
    const { packed, starts, slots, mask } = this;
    for (let slot = hashBytes(bytes, start, end) & mask; ; slot = (slot + 1) & mask) {
      const rank = slots[slot]!;
      if (rank === -1) return -1;
      const at = starts[rank]!;
      if (packed[at - 1] !== length) continue;
      let i = 0;
      while (i < length && packed[at + i] === bytes[start + i]) i++;
      if (i === length) return rank;
    }
  }

  /** The bytes of a rank's token (a view into the table), or null for a rank it does not hold. */
  bytesOf(rank: number): Uint8Array | null {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.starts.length) return null;
    const at = this.starts[rank]!;
    return this.packed.subarray(at, at + this.packed[at - 1]!);
  }
}
