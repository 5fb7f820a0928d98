/**
 * Search for a model: the store's own scan (src/store/search) with the search box's query syntax, hits bounded and
 * continued by how many were already shown (`afterHit`). A continued search scans again from the start and skips
 * the hits shown before: the scan keeps no cursor, and a store that changed in between shows its hits as they are now.
 */
import { parseSearchQuery, SearchQueryError } from '../search/searchQuery';
import type { SearchHit } from '../search/searchHits';
import { answer, callText, sourceOf, type QueryAnswer } from './queryAnswer';
import { intArgument, optionalString, requireSession, stringArgument } from './queryArguments';
import { QueryError, checkCancelled } from './queryErrors';
import { DEFAULT_MAX_CHARS, DEFAULT_MAX_HITS, MAX_MAX_CHARS, MAX_MAX_HITS, TextBudget } from './queryLimits';
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

const TOOL = 'search_sessions';

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

export async function searchSessions(store: QueryStore, args: SearchArgs, signal?: AbortSignal): Promise<QueryAnswer> {
  const input = stringArgument(TOOL, 'query', args.query, { store: store.name, query: 'tool:refund is:failed' });
  const example = { store: store.name, query: input };
  const sessionId = optionalString(TOOL, 'session', args.session, { ...example, session: 'my-session' });
  const afterHit = intArgument(TOOL, 'afterHit', args.afterHit, { min: 0, max: 100_000, fallback: 0 }, example);
  const maxHits = intArgument(TOOL, 'maxHits', args.maxHits, { min: 1, max: MAX_MAX_HITS, fallback: DEFAULT_MAX_HITS }, example);
  const maxChars = intArgument(TOOL, 'maxChars', args.maxChars, { min: 200, max: MAX_MAX_CHARS, fallback: DEFAULT_MAX_CHARS }, example);
  let query;
  try {
    query = parseSearchQuery(input);
  } catch (err) {
    if (!(err instanceof SearchQueryError)) throw err;
    throw new QueryError(
      'bad-query',
      `${err.message}. The syntax: free text (a case-insensitive substring), "quoted text", tool:NAME, is:failed, role:user|assistant|system|developer; every part must hold. Example: ${callText(TOOL, { store: store.name, query: 'tool:get_weather is:failed' })}`,
    );
  }
  if (sessionId !== undefined) await requireSession(TOOL, store, sessionId);
  checkCancelled(signal);
  // The scan stops one hit past the page (which tells whether there are more), so the answer comes as soon as the
  // page is found, not after the whole store; the hits before `afterHit` are counted, not kept.
  const page: SearchHit[] = [];
  let found = 0;
  const summary = await store.search(query, {
    signal,
    maxHits: afterHit + maxHits + 1,
    ...(sessionId !== undefined ? { sessionId } : {}),
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
        : `No hits for ${JSON.stringify(input)} in ${scope} (${counted(summary.rowsScanned, 'item')} searched).`
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
