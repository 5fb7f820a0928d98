/**
 * `turn_context`: what the model saw in a turn (docs/context.md), for coding agents: each model request's input item
 * by item with token counts and shares, the cached share, and the stored items outside the window, labelled recorded
 * or reconstructed. The same answer as the conversation view's Context section and `agent-sessions context`.
 */
import { buildTurnContext, type ContextSpanSource } from '../context/turnContext';
import { contextHeader, itemLines, outsideLines, requestLine } from '../context/contextText';
import { answer, sourceOf, type QueryAnswer } from './queryAnswer';
import { intArgument, optionalString, requireTurn, turnArguments } from './queryArguments';
import { checkCancelled } from './queryErrors';
import { DEFAULT_MAX_CHARS, MAX_MAX_CHARS, TextBudget } from './queryLimits';
import type { QueryStore } from './queryStore';

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

const TOOL = 'turn_context';

export async function turnContext(
  store: QueryStore,
  traces: ContextSpanSource | undefined,
  args: ContextArgs,
  signal?: AbortSignal,
): Promise<QueryAnswer> {
  const at = turnArguments(TOOL, store, args, 'the turn whose context to show');
  const { sessionId, turn, example } = at;
  const request = intArgument(TOOL, 'request', args.request, { min: 1, max: 1000, fallback: 0 }, example);
  const limit = intArgument(TOOL, 'limit', args.limit, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: -1 }, example);
  const model = optionalString(TOOL, 'model', args.model, { ...example, model: 'gpt-4.1' });
  const afterItem = intArgument(TOOL, 'afterItem', args.afterItem, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 }, example);
  const maxChars = intArgument(TOOL, 'maxChars', args.maxChars, { min: 200, max: MAX_MAX_CHARS, fallback: DEFAULT_MAX_CHARS }, example);
  checkCancelled(signal);
  const { branch } = await requireTurn(TOOL, store, at);
  const view = await buildTurnContext(store.reader, traces, {
    sessionId,
    branchId: branch.branchId,
    turn,
    ...(limit >= 0 ? { limit } : {}),
    ...(model !== undefined ? { model } : {}),
  });
  checkCancelled(signal);
  const source = { ...sourceOf(store, sessionId, branch.branchId), turns: { from: turn, to: turn } };
  const chosen = view.requests[(request > 0 ? Math.min(request, view.requests.length) : view.requests.length) - 1];
  const budget = new TextBudget(maxChars);
  budget.add(contextHeader(view));
  for (const r of view.requests) budget.add(requestLine(r));
  const lines = chosen
    ? [`Items of request ${chosen.index}, in the order sent:\n`, ...itemLines(chosen), ...outsideLines(view)]
    : outsideLines(view);
  let shown = 0;
  for (const line of lines.slice(afterItem)) {
    if (!budget.add(line)) break;
    shown++;
  }
  const end = afterItem + shown;
  const more = end < lines.length;
  return answer(
    source,
    budget.text(),
    more ? { afterItem: end } : null,
    more ? `… truncated: ${lines.length - end} more lines — call turn_context again with afterItem=${end}.` : undefined,
  );
}
