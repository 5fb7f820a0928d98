/**
 * How user messages are previewed (spec §10.2) and searched (spec §12 a): previews cut at 100 code points, and
 * search matches the message's text, folded the same way on both sides, never the raw JSON.
 */
import { previewJson } from './pythonJson';

const PREVIEW_CODE_POINTS = 100;

/** The preview text of a user item's `content`, cut to 100 code points plus `...` when `cut` is set. */
export function contentPreview(content: unknown, cut: boolean): string {
  const text = typeof content === 'string' ? content : previewJson(content);
  // Code units ≥ code points, so a string of ≤ 100 units never needs cutting.
  if (!cut || text.length <= PREVIEW_CODE_POINTS) return text;
  // Without surrogates in the first 100 units, those units are the first 100 code points, and more follow.
  const head = text.slice(0, PREVIEW_CODE_POINTS);
  if (!/[\ud800-\udfff]/.test(head)) return head + '...';
  let units = 0;
  let points = 0;
  for (const ch of text) {
    if (points === PREVIEW_CODE_POINTS) return text.slice(0, units) + '...';
    units += ch.length;
    points++;
  }
  return text;
}

/** Unicode-aware, locale-independent case folding: NFC, upper, lower. `STRASSE` and `straße` fold alike. */
export function foldForSearch(s: string): string {
  return s.normalize('NFC').toUpperCase().toLowerCase();
}

/** The searchable texts of a user item's content: the string, or each list part's `text`. */
export function userTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const part of content) {
    if (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string') {
      out.push((part as { text: string }).text);
    }
  }
  return out;
}

/**
 * A matcher for one search term. `couldMatchRaw` is a cheap test on a row's raw JSON that may say `false` only
 * when the decoded text certainly cannot match, so most rows of a large branch are rejected without JSON.parse.
 */
export interface ContentMatcher {
  couldMatchRaw(raw: string): boolean;
  /**
   * The same pre-filter as a `LIKE` pattern (escape character `\`) for SQL, or null when every row must be decoded.
   * SQLite's LIKE folds ASCII case only, which is exactly what the raw-text shortcut needs.
   */
  readonly likePattern: string | null;
  matches(content: unknown): boolean;
}

export function contentMatcher(term: string): ContentMatcher {
  const folded = foldForSearch(term);
  // The raw-text shortcut holds for printable ASCII terms without the characters JSON escapes (" \ /): such a term
  // occurs in the decoded text only if it occurs, ASCII-lowercased, in the raw text, provided the raw text is pure
  // ASCII without \u escapes (non-ASCII text may fold into ASCII: ß → ss, K (Kelvin) → k).
  const simple = /^[\x20-\x7e]*$/.test(folded) && !/["\\/]/.test(folded);
  return {
    likePattern: simple && folded !== '' ? '%' + folded.replace(/[\\%_]/g, (c) => '\\' + c) + '%' : null,
    couldMatchRaw(raw: string): boolean {
      if (!simple || folded === '') return true;
      // eslint-disable-next-line no-control-regex
      if (!/^[\x00-\x7e]*$/.test(raw) || raw.includes('\\u')) return true;
      return raw.toLowerCase().includes(folded);
    },
    matches(content: unknown): boolean {
      if (folded === '') return true;
      return userTexts(content).some((t) => foldForSearch(t).includes(folded));
    },
  };
}
