/**
 * Search for a model: the store's own scan (src/store/search) with the search box's query syntax, hits bounded and
 * continued by how many were already shown (`afterHit`). A continued search scans again from the start and skips
 * the hits shown before: the scan keeps no cursor, and a store that changed in between shows its hits as they are now.
 */
import { parseSearchQuery, SearchQueryError, type SearchQuery } from '../search/searchQuery';
import type { SearchHit } from '../search/searchHits';
import { answer, callText, sourceOf, type QueryAnswer } from './queryAnswer';
import { intArgument, optionalString, requireSession, stringArgument } from './queryArguments';
import { QueryError, checkCancelled } from './queryErrors';
import { DEFAULT_MAX_CHARS, DEFAULT_MAX_HITS, MAX_AFTER_HIT, MAX_MAX_CHARS, MAX_MAX_HITS, TextBudget } from './queryLimits';
import type { QueryStore } from './queryStore';
import { counted } from '../../shared/countNoun';

export interface SearchArgs {
  query: string;
  /** Only this session (default: every session of the store). */
  session?: string;
  /** Hits to skip: the ones an earlier answer showed (its `next`). */
  afterHit?: number;
  maxHits?: number;
  maxChars?: number;
}

/** The snippet with its matches between «guillemets», whitespace flattened. */
function marked(hit: SearchHit): string {
  const { text, ranges } = hit.snippet;
  let out = '';
  let at = 0;
  for (const [start, end] of ranges) {
    if (start < at) continue;
    out += `${text.slice(at, start)}«${text.slice(start, end)}»`;
    at = end;
  }
  return (out + text.slice(at)).replace(/\s+/g, ' ');
}

/** The search syntax the tool takes, for its errors (the tool's description says the same). */
export const SEARCH_SYNTAX =
  'free text (a case-insensitive substring), "quoted text", tool:NAME, is:failed, role:user|assistant|system|developer; every part must hold';

/**
 * Review filters, which the search syntax has (docs/reviews.md) but a query tool cannot run: reviews are kept in the
 * VS Code extension's review store, which the query surface does not read, so they would match nothing without a
 * word. Found with the parser's own tokens (a quoted "is:bad" is text); returns the query without them, and why.
 */
function reviewFilters(input: string): { found: string[]; rest: string } | null {
  const found: string[] = [];
  const kept: string[] = [];
  for (const m of input.matchAll(/(\S+?:)?"([^"]*)"?|\S+/gu)) {
    const filter = /^(is|tag|reviewed):(.*)$/isu.exec(m[0]);
    const key = filter?.[1]?.toLowerCase();
    const value = (m[2] ?? filter?.[2] ?? '').trim().toLowerCase();
    if (key === 'tag' || key === 'reviewed' || (key === 'is' && (value === 'good' || value === 'bad'))) found.push(m[0]);
    else kept.push(m[0]);
  }
  return found.length > 0 ? { found, rest: kept.join(' ') } : null;
}

/**
 * The query parsed, or a `bad-query` error in this tool's syntax: a blank query, a review filter, an `is:` other than
 * is:failed, or what the parser refuses. Also what queryExamples.ts asks of a query it keeps in an example.
 */
export function parseToolQuery(input: string): SearchQuery {
  if (input.trim() === '')
    throw new QueryError('bad-query', `The query is blank: give text to find or a filter. The syntax: ${SEARCH_SYNTAX}.`, {
      drop: ['query'],
    });
  const review = reviewFilters(input);
  if (review)
    throw new QueryError(
      'bad-query',
      `${review.found.map((f) => JSON.stringify(f)).join(', ')}: review filters (is:good, is:bad, tag:, reviewed:) are not available to search_sessions: reviews are kept in the VS Code extension's review store, which the query tools do not read. The syntax: ${SEARCH_SYNTAX}.`,
      review.rest.trim() === '' ? { drop: ['query'] } : { set: { query: review.rest } },
    );
  for (const m of input.matchAll(/(\S+?:)?"([^"]*)"?|\S+/gu)) {
    const is = /^is:(.*)$/isu.exec(m[0]);
    // The parser's message for another is: names the review verdicts too, which this tool does not take.
    const value = is ? (m[2] ?? is[1] ?? '').trim().toLowerCase() : 'failed';
    if (value !== 'failed')
      throw new QueryError(
        'bad-query',
        `${value === '' ? '"is:" needs a value' : `Unknown filter ${JSON.stringify(m[0])}`}: the is: filter here is is:failed. The syntax: ${SEARCH_SYNTAX}.`,
        { drop: ['query'] },
      );
  }
  try {
    return parseSearchQuery(input);
  } catch (err) {
    if (!(err instanceof SearchQueryError)) throw err;
    throw new QueryError('bad-query', `${err.message}. The syntax: ${SEARCH_SYNTAX}.`, { drop: ['query'] });
  }
}

export async function searchSessions(store: QueryStore, args: SearchArgs, signal?: AbortSignal): Promise<QueryAnswer> {
  const input = stringArgument('query', args.query);
  const sessionId = optionalString('session', args.session);
  const afterHit = intArgument('afterHit', args.afterHit, { min: 0, max: MAX_AFTER_HIT, fallback: 0 });
  const maxHits = intArgument('maxHits', args.maxHits, { min: 1, max: MAX_MAX_HITS, fallback: DEFAULT_MAX_HITS });
  const maxChars = intArgument('maxChars', args.maxChars, { min: 200, max: MAX_MAX_CHARS, fallback: DEFAULT_MAX_CHARS });
  const query = parseToolQuery(input);
  if (sessionId !== undefined) await requireSession(store, sessionId);
  checkCancelled(signal);
  // The scan stops one hit past the page (which tells whether there are more), so the answer comes as soon as the
  // page is found, not after the whole store; the hits before `afterHit` are counted, not kept.
  const page: SearchHit[] = [];
  let found = 0;
  const summary = await store.search(query, {
    signal,
    maxHits: afterHit + maxHits + 1,
    ...(sessionId !== undefined ? { sessionId } : {}),
    // An answer without hits says how many items were searched.
    countItems: true,
    onHits: (batch) => {
      for (const hit of batch) if (found++ >= afterHit && page.length < maxHits) page.push(hit);
    },
  });
  checkCancelled(signal);
  const budget = new TextBudget(maxChars);
  let shown = 0;
  for (const h of page) {
    const what = `${h.itemType}${h.toolName ? ` ${h.toolName}` : ''}${h.failed ? ` (failed: ${h.failed})` : ''}`;
    const shared = h.sharedWith.length > 0 ? ` (also on ${h.sharedWith.map((b) => JSON.stringify(b)).join(', ')})` : '';
    if (
      !budget.add(
        `- session ${JSON.stringify(h.sessionId)}, branch ${JSON.stringify(h.branchId)}${shared}, turn ${h.turn}, ${what}: ${marked(h)}\n`,
      )
    )
      break;
    shown++;
  }
  const end = afterHit + shown;
  const more = found > end;
  const scope = sessionId === undefined ? 'the store' : `session ${JSON.stringify(sessionId)}`;
  const head =
    found === 0 || page.length === 0
      ? afterHit > 0
        ? `No hits after the first ${afterHit} for ${JSON.stringify(input)} in ${scope}.`
        : `No hits for ${JSON.stringify(input)} in ${scope}${summary.itemsSearched === null ? '' : ` (${counted(summary.itemsSearched, 'item')} searched)`}.`
      : `Hits ${afterHit + 1}–${end} for ${JSON.stringify(input)} in ${scope} (matches in «»):`;
  const first = page[0];
  const hint = first
    ? `Read a hit's turn with ${callText('read_turns', { store: store.name, session: first.sessionId, branch: first.branchId, turn: first.turn })}.`
    : '';
  return answer(
    sourceOf(store, sessionId),
    `${head}\n${budget.text()}`,
    more ? { afterHit: end } : null,
    [more ? `… truncated: more hits — call search_sessions again with afterHit=${end}.` : '', hint].filter(Boolean).join('\n'),
  );
}
