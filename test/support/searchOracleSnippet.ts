/**
 * The snippet of a search hit as it was made before the fast paths for ASCII text and for text that folds in place
 * (commit 713ae55's `matchText` of src/store/search/itemMatch.ts, kept verbatim but for the imports and this name):
 * every text folded whole, every character of the hit's text mapped. The differential test
 * (test/unit/store/differential/searchSnippet.test.ts) holds `matchText` to exactly its snippets and ranges.
 */
import { foldForSearch } from '../../src/store/format/conversationText';
import { callArguments, isRecord, readableJsonText, searchableTexts } from '../../src/shared/itemText';
import { FOLDS_INTO_ASCII, type SearchSnippet } from '../../src/store/search/itemMatch';
import type { SearchQuery } from '../../src/store/search/searchQuery';

const FOLDS_INTO_ASCII_PATTERN = new RegExp(`[${FOLDS_INTO_ASCII}]`);

const SNIPPET_BEFORE = 40;
const SNIPPET_LENGTH = 160;

/**
 * Matches the query's text against each of the item's texts (spec §12 a: each text on its own, folded with
 * `foldForSearch` on both sides) and returns a snippet of the first text that matches, or null. Without text in the
 * query, the snippet is the start of the item's first text (or `fallback`).
 */
export function oracleMatchText(query: SearchQuery, item: unknown, fallback: () => string): SearchSnippet | null {
  const texts = searchableTexts(item);
  // Without text to match, a call shows its arguments whole (as people read them), not its first value.
  if (query.text === '') {
    const args = isRecord(item) && item.type === 'function_call' ? callArguments(item) : undefined;
    return { text: flatten(cut(args !== undefined ? readableJsonText(args) : (texts[0] ?? fallback()), 0, SNIPPET_LENGTH)), ranges: [] };
  }
  const needle = foldForSearch(query.text);
  // eslint-disable-next-line no-control-regex -- ASCII includes the control characters
  const asciiNeedle = /^[\x00-\x7f]*$/.test(needle);
  for (const text of texts) {
    if (asciiNeedle && cannotContain(text, needle)) continue;
    const folded = foldForSearch(text);
    if (!folded.includes(needle)) continue;
    return snippetAround(text, folded, needle);
  }
  return null;
}

/**
 * A cheap sure "no" for an ASCII needle: if the lower-cased text lacks it and the text has no character that folds into
 * ASCII, its folded text lacks it too (other characters fold to non-ASCII, which an ASCII needle cannot overlap).
 */
function cannotContain(text: string, needle: string): boolean {
  return !text.toLowerCase().includes(needle) && !FOLDS_INTO_ASCII_PATTERN.test(text);
}

/**
 * A snippet around the first match, with every match inside it. Folding may change lengths (ß → ss), so offsets in
 * the folded text are mapped back through each code point's own folded length; when that per-character folding
 * disagrees with the whole-text folding (context-dependent cases), the snippet has no ranges rather than wrong ones.
 */
function snippetAround(original: string, folded: string, needle: string): SearchSnippet {
  const text = original.normalize('NFC');
  // foldedStart[i] = offset in the folded text where the i-th UTF-16 unit of `text` starts (for code point starts).
  const starts: number[] = [];
  const unitAt: number[] = [];
  let f = 0;
  for (let i = 0; i < text.length;) {
    const cp = text.codePointAt(i)!;
    starts.push(f);
    unitAt.push(i);
    // ASCII folds to one character: no string to make (a hit's text is mostly ASCII, and this loop ran over all of
    // it per hit: 10,000 hits of a common word on a 1,500-character text spent seconds here).
    if (cp < 0x80) {
      f += 1;
      i += 1;
      continue;
    }
    const ch = String.fromCodePoint(cp);
    f += ch.toUpperCase().toLowerCase().length;
    i += ch.length;
  }
  starts.push(f);
  unitAt.push(text.length);
  const mapped = f === folded.length;
  // The code point whose folded text starts at or before (a match's start) or at or after (its end) an offset.
  const toUnit = (foldedOffset: number, roundUp: boolean): number => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      if (roundUp) {
        const mid = (lo + hi) >> 1;
        if (starts[mid]! >= foldedOffset) hi = mid;
        else lo = mid + 1;
      } else {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= foldedOffset) lo = mid;
        else hi = mid - 1;
      }
    }
    return unitAt[lo]!;
  };
  const ranges: [number, number][] = [];
  if (mapped) {
    for (let at = folded.indexOf(needle); at !== -1; at = folded.indexOf(needle, at + Math.max(1, needle.length))) {
      ranges.push([toUnit(at, false), toUnit(at + needle.length, true)]);
    }
  }
  const first = ranges[0]?.[0] ?? 0;
  const start = Math.max(0, first - SNIPPET_BEFORE);
  const end = Math.min(text.length, start + SNIPPET_LENGTH);
  const prefix = start > 0 ? '…' : '';
  const body = text.slice(safeStart(text, start), end);
  const shift = prefix.length - safeStart(text, start);
  return {
    text: flatten(prefix + body + (end < text.length ? '…' : '')),
    ranges: ranges.filter(([s, e]) => s >= safeStart(text, start) && e <= end).map(([s, e]) => [s + shift, e + shift] as [number, number]),
  };
}

/** Never start a slice on the low half of a surrogate pair. */
function safeStart(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff && i > 0 ? i - 1 : i;
}

function cut(text: string, start: number, length: number): string {
  return text.length > start + length ? text.slice(start, start + length) + '…' : text.slice(start);
}

/** Whitespace to single spaces one for one, so the ranges stay where they are. */
function flatten(text: string): string {
  return text.replace(/\s/gu, ' ');
}
