/**
 * `turn_context`: what the model saw in a turn (docs/context.md), for coding agents: each model request's input item
 * by item with token counts and shares, the cached share, and the stored items outside the window, labelled recorded
 * or reconstructed. The same answer as the conversation view's Context section and `agent-sessions context`.
 */
import { buildTurnContext, type ContextSpanSource } from '../context/turnContext';
import { contextHeader, itemLines, outsideLines, requestLine } from '../context/contextText';
import { answer, sourceOf, type QueryAnswer } from './queryAnswer';
import { intArgument, optionalString, requireTurn, turnArguments } from './queryArguments';
import { QueryError, checkCancelled } from './queryErrors';
import { DEFAULT_MAX_CHARS, MAX_MAX_CHARS, TextBudget } from './queryLimits';
import type { QueryStore } from './queryStore';
import { counted } from '../../shared/countNoun';

export interface ContextArgs {
  session: string;
  branch?: string;
  turn: number;
  /** Which request's items to list (1-based; default the last, which holds the most). */
  request?: number;
  /** The session's `limit`, when the caller knows it (the file does not record it). */
  limit?: number;
  model?: string;
  /** Item lines to skip (the `next` of a cut answer). */
  afterItem?: number;
  maxChars?: number;
}

export async function turnContext(
  store: QueryStore,
  traces: ContextSpanSource | undefined,
  args: ContextArgs,
  signal?: AbortSignal,
): Promise<QueryAnswer> {
  const at = turnArguments(args, 'the turn whose context to show');
  const { sessionId, turn } = at;
  const request = intArgument('request', args.request, { min: 1, max: 1000, fallback: 0 });
  const limit = intArgument('limit', args.limit, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: -1 });
  const model = optionalString('model', args.model);
  const afterItem = intArgument('afterItem', args.afterItem, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
  const maxChars = intArgument('maxChars', args.maxChars, { min: 200, max: MAX_MAX_CHARS, fallback: DEFAULT_MAX_CHARS });
  checkCancelled(signal);
  const { branch } = await requireTurn(store, at);
  const view = await buildTurnContext(store.reader, traces, {
    sessionId,
    branchId: branch.branchId,
    turn,
    ...(limit >= 0 ? { limit } : {}),
    ...(model !== undefined ? { model } : {}),
  });
  checkCancelled(signal);
  const source = { ...sourceOf(store, sessionId, branch.branchId), turns: { from: turn, to: turn } };
  // Requests are numbered as made; a turn of more than are listed lists its last ones. A number not listed is refused,
  // never answered with another request's items.
  const chosen = request > 0 ? view.requests.find((r) => r.index === request) : view.requests.at(-1);
  if (request > 0 && !chosen) {
    const first = view.requests[0]?.index ?? 0;
    const last = view.requests.at(-1)?.index ?? 0;
    throw new QueryError(
      'bad-argument',
      last === 0
        ? `Turn ${turn} lists no model request.`
        : request > last
          ? `Turn ${turn} made ${counted(last, 'model request')}: there is no request ${request}. Pass request ${first}–${last}.`
          : `Request ${request} of turn ${turn} is not listed: a turn of more than ${counted(view.requests.length, 'request')} lists only its last ones (${first}–${last}). Pass request ${first}–${last}.`,
      { set: { request: last } },
    );
  }
  // Every page repeats the turn's header and its requests, so a continuation reads on its own.
  const header = [contextHeader(view), ...view.requests.map(requestLine)].join('');
  const lines = chosen
    ? [`Items of request ${chosen.index}, in the order sent:\n`, ...itemLines(chosen), ...outsideLines(view)]
    : outsideLines(view);
  if (afterItem >= lines.length)
    return answer(source, `${header}No lines after line ${afterItem}: the context has ${counted(lines.length, 'line')}.`, null);
  // Every page must show at least one line, or its continuation (afterItem unchanged) would be the same page for
  // ever. A maxChars that leaves too little room after the header for the longest line still to come is refused, with
  // the one that leaves enough, so that every continuation at that maxChars works too.
  const longest = lines.slice(afterItem).reduce((most, line) => Math.max(most, line.length), 0);
  const needed = header.length + longest;
  if (needed > maxChars && needed <= MAX_MAX_CHARS)
    throw new QueryError(
      'bad-argument',
      `maxChars ${maxChars} is too small for turn ${turn}'s context: every page starts with its header (${counted(header.length, 'character')}), and the longest line after it takes ${counted(longest, 'character')}, so a page could hold no line and the answer could not go on. Pass maxChars ${needed} or more.`,
      { set: { maxChars: Math.max(200, needed) } },
    );
  const budget = new TextBudget(maxChars);
  budget.add(header);
  let shown = 0;
  for (const line of lines.slice(afterItem)) {
    if (!budget.add(line)) break;
    shown++;
  }
  // A header longer than any maxChars (hundreds of requests) still shows one line a page, past the limit.
  const forced = shown === 0 ? lines[afterItem]! : '';
  if (forced) shown = 1;
  const end = afterItem + shown;
  const more = end < lines.length;
  return answer(
    source,
    `${budget.text()}${forced}`,
    more ? { afterItem: end } : null,
    more ? `… truncated: ${counted(lines.length - end, 'more line')} — call turn_context again with afterItem=${end}.` : undefined,
  );
}
