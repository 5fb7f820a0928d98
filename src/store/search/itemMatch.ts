/**
 * Whether one decoded item matches a query, and where: the exact test that runs on the rows the SQL prefilter lets
 * through (see `sqlPrefilter`), and the snippet with the match ranges the results show.
 */
import { Buffer } from 'node:buffer';
import { foldForSearch } from '../format/conversationText';
import { callArguments, isRecord, outputText, readableJsonText, searchableTexts } from '../../shared/itemText';
import { toolNameOf } from '../format/itemClassification';
import type { SearchQuery } from './searchQuery';

/** A piece of an item's text around the match, and where the matches are in it (UTF-16 offsets, end exclusive). */
export interface SearchSnippet {
  text: string;
  ranges: [number, number][];
}

/** What an item is, as the search sees it. */
export interface ItemFacts {
  role: string | null;
  /** The item's tool: its own name (spec §6 `tool_name`), or for an output the name of its call when known. */
  toolName: string | null;
  /** Why the item counts as a failed tool call, or null (see `failedReason`). */
  failed: string | null;
  /** `call_id`, for naming an output by its call. */
  callId: string | null;
}

/** The text the Agents SDKs return to the model when a function tool throws (their default `errorFunction`). */
export const SDK_TOOL_ERROR_PREFIX = 'An error occurred while running the tool';
/** The JS SDK's default timeout message for a function tool (`timeoutBehavior: 'error_as_result'`). */
const SDK_TOOL_TIMEOUT = /^Tool '.*' timed out after \d+ms\.$/su;
const OUTPUT_TYPES = new Set(['function_call_output', 'function_call_result', 'custom_tool_call_output']);

/**
 * Why an item is a failed tool call, or null. "Failed" means one of:
 * - a function or custom tool output whose text is what the Agents SDKs write when the tool threw
 *   (`An error occurred while running the tool…`, Python's and JS's default error function) or timed out
 *   (JS: `Tool '…' timed out after …ms.`);
 * - a tool call or output (any item that is not a message) with `status` `failed` or `incomplete` (built-in tools:
 *   web/file search, code interpreter, computer, image generation, shell, MCP);
 * - an `mcp_call` with a non-empty `error`.
 * A tool that returns its own error text ("city not found") is not recognised: that is an ordinary output.
 */
export function failedReason(item: unknown): string | null {
  if (!isRecord(item) || typeof item.role === 'string') return null;
  const type = typeof item.type === 'string' ? item.type : '';
  if (OUTPUT_TYPES.has(type)) {
    const text = outputText(item.output).trimStart();
    if (text.startsWith(SDK_TOOL_ERROR_PREFIX)) return 'tool error';
    if (SDK_TOOL_TIMEOUT.test(text.trim())) return 'timed out';
  }
  if (item.status === 'failed' || item.status === 'incomplete') return `status ${item.status}`;
  if (type === 'mcp_call' && item.error !== undefined && item.error !== null && item.error !== '') return 'MCP error';
  return null;
}

/** The facts of a decoded item. */
export function itemFacts(item: unknown): ItemFacts {
  const r = isRecord(item) ? item : {};
  const callId = typeof r.call_id === 'string' ? r.call_id : typeof r.callId === 'string' ? r.callId : null;
  return {
    role: typeof r.role === 'string' ? r.role : null,
    toolName: typeof r.role === 'string' ? null : toolNameOf(item),
    failed: failedReason(item),
    callId,
  };
}

/** Whether an item answers a call (its `call_id` names the call, not itself). */
export function isOutputItem(item: unknown): boolean {
  const type = typeof item === 'object' && item !== null ? (item as { type?: unknown }).type : undefined;
  return typeof type === 'string' && (type.endsWith('_output') || type.endsWith('_result'));
}

/** The exact test of the parts of a query that do not need the text: role, failed, tool (with the name resolved). */
export function matchesFilters(query: SearchQuery, facts: ItemFacts): boolean {
  if (query.roles.length > 0 && (facts.role === null || !query.roles.includes(facts.role))) return false;
  if (query.failed && facts.failed === null) return false;
  if (query.tools.length > 0 && (facts.toolName === null || !query.tools.includes(foldForSearch(facts.toolName)))) return false;
  return true;
}

const SNIPPET_BEFORE = 40;
const SNIPPET_LENGTH = 160;

/** The calls whose snippet, found by filters alone, is their arguments whole (compared, not looked up: once per hit). */
const showsArguments = (type: unknown): boolean => type === 'function_call' || type === 'mcp_call' || type === 'mcp_approval_request';

/**
 * Matches the query's text against each of the item's texts (spec §12 a: each text on its own, folded with
 * `foldForSearch` on both sides) and returns a snippet of the first text that matches, or null. Without text in the
 * query, the snippet is the start of the item's first text (or `fallback`).
 */
export function matchText(query: SearchQuery, item: unknown, fallback: () => string): SearchSnippet | null {
  const texts = searchableTexts(item);
  // Without text to match, a call shows its arguments whole (as people read them), not its first value.
  if (query.text === '') {
    // An MCP call's (and approval request's) too: their first string is the server's label, which says nothing of what
    // was asked.
    const args = isRecord(item) && showsArguments(item.type) ? callArguments(item) : undefined;
    return { text: flatten(cut(args !== undefined ? readableJsonText(args) : (texts[0] ?? fallback()), 0, SNIPPET_LENGTH)), ranges: [] };
  }
  const needle = foldForSearch(query.text);
  // eslint-disable-next-line no-control-regex -- ASCII includes the control characters
  const asciiNeedle = /^[\x00-\x7f]*$/.test(needle);
  for (const text of texts) {
    if (asciiNeedle) {
      const lower = text.toLowerCase();
      // ASCII text folds to its lower case (NFC and the case round trip leave every ASCII character as it is), so a
      // common word's hits, mostly ASCII, skip the three passes of `foldForSearch`.
      if (isAscii(text) || !NOT_INERT.test(text)) {
        const first = lower.indexOf(needle);
        if (first !== -1) return snippetInPlace(text, lower, needle, first);
        continue;
      }
      if (!lower.includes(needle) && !FOLDS_INTO_ASCII_PATTERN.test(text)) continue;
    }
    const folded = foldForSearch(text);
    if (!folded.includes(needle)) continue;
    return snippetAround(text, folded, needle);
  }
  return null;
}

/**
 * Non-ASCII characters that folding leaves as they are, whatever their neighbours: each is its own NFC form, composes
 * with no neighbour (none is the second half of a canonical composition, and no ASCII character is), and is its own
 * upper and lower case; the one rule of lower-casing that looks at neighbours (a final sigma) needs a sigma, which is
 * not among them. So text of ASCII and these folds to its lower case, as ASCII text does: a Python tool output that
 * ends in `— 22°C` no longer takes the three passes of `foldForSearch` (a unit test checks each character).
 */
export const INERT_IN_FOLDING = '\u00a0\u00b0\u00b7\u00d7\u2013\u2014\u2018\u2019\u201c\u201d\u2022\u2026\u20ac';
const NOT_INERT = new RegExp(`[^\\x00-\\x7f${INERT_IN_FOLDING}]`);

/** Whether every unit of `text` is ASCII: its UTF-8 is as long as it is (counted natively, twice a regex's speed). */
const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;
// eslint-disable-next-line no-control-regex -- ASCII includes the control characters
const NON_ASCII_ALL = /[^\x00-\x7f]/gu;

/**
 * Whether every code point of `text` folds (alone) to as many UTF-16 units as it has: then an offset in the folded
 * text is the same offset in `text`, and the per-character map `snippetAround` builds is the identity. Only the
 * non-ASCII characters are looked at (ASCII folds to one unit): a hit's text is mostly ASCII, and building the map
 * for all of it cost two arrays as long as the text per hit.
 */
function foldsInPlace(text: string): boolean {
  NON_ASCII_ALL.lastIndex = 0;
  for (let m = NON_ASCII_ALL.exec(text); m !== null; m = NON_ASCII_ALL.exec(text)) {
    const ch = m[0];
    if (ch.toUpperCase().toLowerCase().length !== ch.length) return false;
  }
  return true;
}

/**
 * The non-ASCII characters whose folding (`foldForSearch`, alone) holds an ASCII character: ß → ss, İ → i̇, ı → i,
 * ŉ → ʼn, ſ → s, ǰ ẖ ẗ ẘ ẙ → letter + mark, ẚ → aʾ, the Greek question mark → `;`, U+1FEF → `` ` ``, the Kelvin sign
 * → k, and the Latin ligatures ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ. No astral character folds into ASCII. A unit test folds every code
 * point and checks this list.
 */
export const FOLDS_INTO_ASCII = 'ßİıŉſǰ\u037eẖẗẘẙẚ\u1fef\u212aﬀﬁﬂﬃﬄﬅﬆ';
const FOLDS_INTO_ASCII_PATTERN = new RegExp(`[${FOLDS_INTO_ASCII}]`);

const FOLDS_INTO_ASCII_ESCAPED = new RegExp(
  `\\\\u(?:${[...FOLDS_INTO_ASCII].map((c) => c.charCodeAt(0).toString(16).padStart(4, '0')).join('|')})`,
  'i',
);

/**
 * A test on a row's raw JSON that may say `false` only when the decoded item cannot match `needle` (folded, printable
 * ASCII without `"` or `\\`, see `isRawSearchable`): the raw text, lower-cased, lacks the needle, and holds none of the
 * characters that fold into ASCII, neither as themselves (UTF-8, the JS SDK) nor escaped (`\\u00df`, Python). Keys
 * may match where text does not; that only costs a decode.
 */
export function rawCouldMatch(raw: string, needle: string): boolean {
  // The needle as it is first: a common word's rows mostly hold it in lower case, and lower-casing copies the row.
  return (
    raw.includes(needle) || raw.toLowerCase().includes(needle) || FOLDS_INTO_ASCII_PATTERN.test(raw) || FOLDS_INTO_ASCII_ESCAPED.test(raw)
  );
}

/**
 * The snippet of a text that folds to its lower case (`lower`, as long as `text`): ASCII and the inert characters,
 * each its own NFC form and a single UTF-16 unit, so `text` is its own NFC, every offset in `lower` is the same in
 * `text`, and no slice can split a pair. What `snippetAround` gives such a text, without its passes over the whole
 * text (NFC, the scan for characters that change length, every match to the end): a common word's hits are mostly
 * such texts of 1–2 KB, and those passes were a third of the scan's CPU on file A.
 */
function snippetInPlace(text: string, lower: string, needle: string, first: number): SearchSnippet {
  const start = Math.max(0, first - SNIPPET_BEFORE);
  const end = Math.min(text.length, start + SNIPPET_LENGTH);
  return snippetOf(text, rangesUpTo(lower, needle, first, end));
}

/**
 * The matches of `needle` in `folded` from `first` on, each ending at or before `end`: `snippetOf` keeps only those,
 * and the matches are found left to right without overlap, so the first one past `end` ends the search.
 */
function rangesUpTo(folded: string, needle: string, first: number, end: number): [number, number][] {
  const ranges: [number, number][] = [];
  for (let at = first; at !== -1 && at + needle.length <= end; at = folded.indexOf(needle, at + Math.max(1, needle.length))) {
    ranges.push([at, at + needle.length]);
  }
  return ranges;
}

/**
 * A snippet around the first match, with every match inside it. Folding may change lengths (ß → ss), so offsets in
 * the folded text are mapped back through each code point's own folded length; when that per-character folding
 * disagrees with the whole-text folding (context-dependent cases), the snippet has no ranges rather than wrong ones.
 */
function snippetAround(original: string, folded: string, needle: string): SearchSnippet {
  const text = original.normalize('NFC');
  const ranges: [number, number][] = [];
  if (foldsInPlace(text) && !splitsPair(needle)) {
    // Offsets are the same in both texts; the lengths still differ when folding the whole text is not folding each
    // character (context-dependent cases): then no ranges, as below.
    if (folded.length !== text.length) return snippetOf(text, ranges);
    const first = folded.indexOf(needle);
    const start = Math.max(0, first - SNIPPET_BEFORE);
    return snippetOf(text, first === -1 ? ranges : rangesUpTo(folded, needle, first, Math.min(text.length, start + SNIPPET_LENGTH)));
  }
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
  if (mapped) {
    for (let at = folded.indexOf(needle); at !== -1; at = folded.indexOf(needle, at + Math.max(1, needle.length))) {
      ranges.push([toUnit(at, false), toUnit(at + needle.length, true)]);
    }
  }
  return snippetOf(text, ranges);
}

/** The snippet of `text` (NFC) around the first of `ranges` (offsets in `text`), with the ranges inside it. */
function snippetOf(text: string, ranges: [number, number][]): SearchSnippet {
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

/**
 * Whether a match of `needle` could start or end inside a surrogate pair (it starts with a low half or ends with a
 * high one): the map below widens such a match to whole code points, the identity would not.
 */
function splitsPair(needle: string): boolean {
  const first = needle.charCodeAt(0);
  const last = needle.charCodeAt(needle.length - 1);
  return (first >= 0xdc00 && first <= 0xdfff) || (last >= 0xd800 && last <= 0xdbff);
}

/** Never start a slice on the low half of a surrogate pair. */
function safeStart(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff && i > 0 ? i - 1 : i;
}

function cut(text: string, start: number, length: number): string {
  return text.length > start + length ? text.slice(start, start + length) + '…' : text.slice(start);
}

const OTHER_WHITESPACE = /[^\S ]/;
const OTHER_WHITESPACE_ALL = /[^\S ]/g;

/** Whitespace to single spaces one for one, so the ranges stay where they are. */
function flatten(text: string): string {
  // Spaces stay as they are: most snippets hold no other whitespace and are returned without a copy. Without the u
  // flag: every \s character is one UTF-16 unit, and the plain pattern runs faster.
  return OTHER_WHITESPACE.test(text) ? text.replace(OTHER_WHITESPACE_ALL, ' ') : text;
}
