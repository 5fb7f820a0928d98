/**
 * The search box's small query language, parsed in one place for the extension, the view and the CLI:
 *
 *   free text        a literal, case-insensitive substring of an item's text (spec §12 a), spaces kept as typed
 *   "quoted text"    the same, for text that looks like a filter (`"tool:x"`) or has leading/trailing spaces
 *   tool:NAME        items of that tool (its call, and outputs named by their call), names compared case-insensitively
 *   is:failed        failed tool calls (see `failedReason`)
 *   role:ROLE        messages of that role (user, assistant, system, developer)
 *   is:good, is:bad  turns with that verdict (docs/reviews.md)
 *   tag:TAG          turns reviewed with that tag
 *   reviewed:yes|no  turns with (or without) a review
 *
 * Every part given must hold (AND); several `tool:` (or `role:`, `tag:`, verdict) values are alternatives (OR). The
 * review filters are about turns: the review data is not in the session store, so whoever runs the search turns them
 * into the set of turns they allow (`reviewTurnSet`); a query of review filters alone finds each turn's user message.
 */
import { foldForSearch } from '../format/conversationText';

export interface SearchQuery {
  /** The literal text to find (as typed; folded when matched), or '' for none. */
  text: string;
  /** Tool names (folded); empty = any. */
  tools: string[];
  /** Roles (lower-case); empty = any. */
  roles: string[];
  /** Only failed tool calls and outputs. */
  failed: boolean;
  /** The review filters, when the query has any. */
  review?: ReviewQuery;
}

/** What a query asks of a turn's review (each list empty = anything). */
export interface ReviewQuery {
  verdicts: ('good' | 'bad')[];
  /** Normalized as the review store keeps tags (lower case, spaces as dashes). */
  tags: string[];
  /** true: reviewed turns only; false: turns without a review; null: either. */
  reviewed: boolean | null;
}

/** A query that cannot be run: its message says what is wrong, in the words of the syntax above. */
export class SearchQueryError extends Error {
  override readonly name = 'SearchQueryError';
}

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

/**
 * The longest query, in characters (UTF-16 code units), wherever it is typed: the extension's searches, the CLI and
 * the query tools all parse here. A paragraph pasted from a prompt fits many times over. The bound keeps the SQL
 * prefilter's LIKE pattern under SQLite's 50,000-byte limit (SQLITE_MAX_LIKE_PATTERN_LENGTH): folding makes at most
 * three ASCII characters of one (`ﬃ` → `ffi`) and escaping two (`%` → `\%`), so 30,002 bytes at worst.
 */
export const MAX_SEARCH_QUERY_CHARS = 10_000;

/**
 * Parses the query text; throws `SearchQueryError` for an empty query, one longer than `MAX_SEARCH_QUERY_CHARS`, an
 * unknown `is:` or `role:`, or an empty filter.
 */
export function parseSearchQuery(input: string): SearchQuery {
  if (input.length > MAX_SEARCH_QUERY_CHARS)
    throw new SearchQueryError(
      `The query is ${input.length.toLocaleString('en-US')} characters long; a search query may be at most ${MAX_SEARCH_QUERY_CHARS.toLocaleString('en-US')}`,
    );
  const query: SearchQuery = { text: '', tools: [], roles: [], failed: false };
  const words: string[] = [];
  // Tokens: a quoted phrase, or a run of non-space characters (a filter's value may itself be quoted: tool:"a b").
  const token = /(\S+?:)?"([^"]*)"?|\S+/gu;
  let quoted: string | null = null;
  for (const m of input.matchAll(token)) {
    const raw = m[0];
    const filter = /^(tool|is|role|tag|reviewed):(.*)$/isu.exec(raw);
    if (filter && filter[1]) {
      const key = filter[1].toLowerCase();
      const value = (m[2] ?? filter[2] ?? '').trim();
      if (value === '') throw new SearchQueryError(`"${key}:" needs a value, e.g. ${EXAMPLES[key] ?? 'tool:get_weather'}`);
      const review = (): ReviewQuery => (query.review ??= { verdicts: [], tags: [], reviewed: null });
      if (key === 'tool') query.tools.push(foldForSearch(value));
      else if (key === 'is') {
        const is = value.toLowerCase();
        if (is === 'failed') query.failed = true;
        else if (is === 'good' || is === 'bad') {
          if (!review().verdicts.includes(is)) review().verdicts.push(is);
        } else throw new SearchQueryError(`Unknown filter "is:${value}" (is:failed, is:good or is:bad)`);
      } else if (key === 'tag') {
        review().tags.push(value.trim().toLowerCase().replace(/\s+/gu, '-'));
      } else if (key === 'reviewed') {
        const v = value.toLowerCase();
        if (v !== 'yes' && v !== 'no') throw new SearchQueryError(`"reviewed:" takes yes or no, not "${value}"`);
        const wanted = v === 'yes';
        if (review().reviewed === !wanted) throw new SearchQueryError('reviewed:yes and reviewed:no together match nothing');
        review().reviewed = wanted;
      } else {
        const role = value.toLowerCase();
        if (!ROLES.has(role)) throw new SearchQueryError(`Unknown role "${value}" (user, assistant, system or developer)`);
        query.roles.push(role);
      }
      continue;
    }
    if (m[2] !== undefined && m[1] === undefined) {
      // A quoted phrase is the whole text, exactly as typed between the quotes.
      quoted = m[2];
      continue;
    }
    words.push(raw);
  }
  query.text = quoted ?? words.join(' ');
  if (quoted !== null && words.length > 0) query.text = [quoted, ...words].join(' ');
  if (query.text === '' && query.tools.length === 0 && query.roles.length === 0 && !query.failed && !query.review) {
    throw new SearchQueryError('Type something to search for, or a filter: tool:NAME, is:failed, role:user, is:bad, reviewed:no');
  }
  const r = query.review;
  if (r && r.reviewed === false && (r.verdicts.length > 0 || r.tags.length > 0))
    throw new SearchQueryError('reviewed:no matches turns without a review, so it cannot have a verdict or a tag too');
  return query;
}

const EXAMPLES: Record<string, string> = {
  is: 'is:failed or is:bad',
  role: 'role:user',
  tool: 'tool:get_weather',
  tag: 'tag:wrong-tool',
  reviewed: 'reviewed:no',
};

/** Whether the query asks only about turns' reviews (no text, tool, role or failure): its hits are user messages. */
export function reviewOnly(q: SearchQuery): boolean {
  return q.review !== undefined && q.text === '' && q.tools.length === 0 && q.roles.length === 0 && !q.failed;
}

/** The query as text again, for titles (text with a quote in it is shown as it is). */
export function formatSearchQuery(q: SearchQuery): string {
  const parts: string[] = [];
  if (q.text !== '') parts.push(/^\s|\s$|"|^\S+:/u.test(q.text) || /\s\S+:/u.test(q.text) ? `"${q.text}"` : q.text);
  for (const t of q.tools) parts.push(/\s|"/u.test(t) ? `tool:"${t}"` : `tool:${t}`);
  for (const r of q.roles) parts.push(`role:${r}`);
  if (q.failed) parts.push('is:failed');
  for (const v of q.review?.verdicts ?? []) parts.push(`is:${v}`);
  for (const t of q.review?.tags ?? []) parts.push(`tag:${t}`);
  if (q.review && q.review.reviewed !== null) parts.push(`reviewed:${q.review.reviewed ? 'yes' : 'no'}`);
  return parts.join(' ');
}
