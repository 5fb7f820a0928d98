/**
 * The search box's small query language, parsed in one place for the extension, the view and the CLI:
 *
 *   free text        a literal, case-insensitive substring of an item's text (spec §12 a), spaces kept as typed
 *   "quoted text"    the same, for text that looks like a filter (`"tool:x"`) or has leading/trailing spaces
 *   tool:NAME        items of that tool (its call, and outputs named by their call), names compared case-insensitively
 *   is:failed        failed tool calls (see `failedReason`)
 *   role:ROLE        messages of that role (user, assistant, system, developer)
 *
 * Every part given must hold (AND); several `tool:` (or `role:`) values are alternatives (OR).
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
}

/** A query that cannot be run: its message says what is wrong, in the words of the syntax above. */
export class SearchQueryError extends Error {
  override readonly name = 'SearchQueryError';
}

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

/** Parses the query text; throws `SearchQueryError` for an empty query, an unknown `is:` or `role:`, or an empty filter. */
export function parseSearchQuery(input: string): SearchQuery {
  const query: SearchQuery = { text: '', tools: [], roles: [], failed: false };
  const words: string[] = [];
  // Tokens: a quoted phrase, or a run of non-space characters (a filter's value may itself be quoted: tool:"a b").
  const token = /(\S+?:)?"([^"]*)"?|\S+/gu;
  let quoted: string | null = null;
  for (const m of input.matchAll(token)) {
    const raw = m[0];
    const filter = /^(tool|is|role):(.*)$/isu.exec(raw);
    if (filter && filter[1]) {
      const key = filter[1].toLowerCase();
      const value = (m[2] ?? filter[2] ?? '').trim();
      if (value === '')
        throw new SearchQueryError(
          `"${key}:" needs a value, e.g. ${key === 'is' ? 'is:failed' : key === 'role' ? 'role:user' : 'tool:get_weather'}`,
        );
      if (key === 'tool') query.tools.push(foldForSearch(value));
      else if (key === 'is') {
        if (value.toLowerCase() !== 'failed') throw new SearchQueryError(`Unknown filter "is:${value}" (is:failed is the one there is)`);
        query.failed = true;
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
  if (query.text === '' && query.tools.length === 0 && query.roles.length === 0 && !query.failed) {
    throw new SearchQueryError('Type something to search for, or a filter: tool:NAME, is:failed, role:user');
  }
  return query;
}

/** The query as text again, for titles (text with a quote in it is shown as it is). */
export function formatSearchQuery(q: SearchQuery): string {
  const parts: string[] = [];
  if (q.text !== '') parts.push(/^\s|\s$|"|^\S+:/u.test(q.text) || /\s\S+:/u.test(q.text) ? `"${q.text}"` : q.text);
  for (const t of q.tools) parts.push(/\s|"/u.test(t) ? `tool:"${t}"` : `tool:${t}`);
  for (const r of q.roles) parts.push(`role:${r}`);
  if (q.failed) parts.push('is:failed');
  return parts.join(' ');
}
