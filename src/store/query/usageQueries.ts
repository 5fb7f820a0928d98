/**
 * Token usage for a model: per turn of a branch (its own turns and the shared turns it got from its ancestors, each
 * counted on the branch that ran it, as the Tokens table counts them), or per branch with the session's total. Cost
 * comes from the price table in src/shared/pricing.ts when the caller names the model to price at: the files record
 * no model per turn (the extension asks the user for one per session for the same reason).
 */
import { BUILT_IN_PRICES, costOf, formatCost, priceOf, pricedModels, type ModelPrice } from '../../shared/pricing';
import { sharedTurnRanges } from '../../shared/turnOrigin';
import type { UsagePage, UsageRow } from '../inspector/usageTables';
import { answer, callText, sourceOf, type QueryAnswer } from './queryAnswer';
import { intArgument, optionalString, pickBranch, requireSession, stringArgument } from './queryArguments';
import { checkCancelled, someOf } from './queryErrors';
import { DEFAULT_MAX_ROWS, MAX_MAX_ROWS } from './queryLimits';
import type { QueryStore } from './queryStore';
import { counted, countNoun } from '../../shared/countNoun';

export interface UsageArgs {
  session: string;
  /** One branch's turns; default every branch's totals. */
  branch?: string;
  /** A model name from the price table (`gpt-4.1`, `gpt-4o-mini`, …) to price the tokens at. */
  model?: string;
  /** Rows to skip (the `next` of a cut answer). */
  offset?: number;
  maxRows?: number;
}

const TOOL = 'token_usage';

type Counts = UsagePage['totals'];

function countsText(c: Counts, price: ModelPrice | null): string {
  const n = (v: number | null) => (v === null ? '–' : String(v));
  const cost = price ? `, ${formatCost(costOf(c, price))}` : '';
  return `${n(c.requests)} ${countNoun(c.requests ?? 0, 'request')}, input ${n(c.inputTokens)} (cached ${n(c.cachedTokens)}), output ${n(c.outputTokens)} (reasoning ${n(c.reasoningTokens)}), total ${n(c.totalTokens)}${cost}`;
}

function rowText(r: UsageRow, price: ModelPrice | null): string {
  return `- turn ${r.turn}: ${countsText(r, price)}${r.sharedFrom ? ` (shared turn, run on ${JSON.stringify(r.sharedFrom)})` : ''}`;
}

export async function tokenUsage(store: QueryStore, args: UsageArgs, signal?: AbortSignal): Promise<QueryAnswer> {
  const sessionId = stringArgument('session', args.session);
  const example = { store: store.name, session: sessionId };
  const branchArg = optionalString('branch', args.branch);
  const model = optionalString('model', args.model);
  const offset = intArgument('offset', args.offset, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 });
  const maxRows = intArgument('maxRows', args.maxRows, { min: 1, max: MAX_MAX_ROWS, fallback: DEFAULT_MAX_ROWS });
  checkCancelled(signal);
  const tree = await requireSession(store, sessionId);
  const branch = branchArg === undefined ? undefined : pickBranch(store, sessionId, tree, branchArg);
  const source = sourceOf(store, sessionId, branch?.branchId);
  if (!store.keepsUsage) {
    return answer(
      source,
      store.kind === 'server'
        ? 'No token usage: PostgreSQL and Redis sessions record none (the SDKs write usage only to SQLite session files).'
        : 'No token usage: this file has no turn_usage table (a plain SQLiteSession, or usage was never stored).',
      null,
    );
  }
  const price = model === undefined ? null : priceOf(BUILT_IN_PRICES, model);
  const notes: string[] = [];
  if (model === undefined)
    notes.push(
      `Tokens only: the file records no model; pass model (e.g. ${callText(TOOL, { ...example, model: 'gpt-4.1' })}) to price them at the built-in table of ${BUILT_IN_PRICES.date}.`,
    );
  else if (price === null)
    notes.push(
      `No price for model ${JSON.stringify(model)} in the built-in table; priced models include ${someOf(pricedModels(BUILT_IN_PRICES), 8)}. Tokens only.`,
    );
  else notes.push(`Costs at ${model}'s price in the built-in table of ${BUILT_IN_PRICES.date} (USD).`);

  if (branch === undefined) {
    const lines: string[] = [];
    for (const b of tree) {
      checkCancelled(signal);
      const page = await store.reader.getUsagePage(sessionId, b.branchId, { limit: 1, shared: sharedTurnRanges(tree, b.branchId) });
      lines.push(`- branch ${JSON.stringify(b.branchId)}: ${counted(page.rowCount, 'turn')} with usage; ${countsText(page.totals, price)}`);
    }
    const all = await store.reader.getUsagePage(sessionId, null, { limit: 1 });
    const body = [
      `Per branch (each branch's whole conversation, shared turns included):`,
      ...lines,
      '',
      `Session total (each turn counted once): ${counted(all.rowCount, 'turn')} with usage; ${countsText(all.totals, price)}`,
    ].join('\n');
    return answer(
      source,
      body,
      null,
      [...notes, `Per-turn rows: ${callText(TOOL, { ...example, branch: tree[0]?.branchId ?? 'main' })}.`].join('\n'),
    );
  }
  const page = await store.reader.getUsagePage(sessionId, branch.branchId, {
    offset,
    limit: maxRows,
    shared: sharedTurnRanges(tree, branch.branchId),
  });
  checkCancelled(signal);
  const end = offset + page.rows.length;
  const more = end < page.rowCount;
  const body = [
    `Branch ${JSON.stringify(branch.branchId)}: ${counted(page.rowCount, 'turn')} with usage; ${countsText(page.totals, price)}`,
    // An offset past the last row shows none: said so, rather than leaving the rows out without a word.
    page.rows.length > 0
      ? `Turns (rows ${offset + 1}–${end} of ${page.rowCount}):`
      : offset > 0 && page.rowCount > 0
        ? `No rows after offset ${offset} (the last is at offset ${page.rowCount - 1}).`
        : '',
    ...page.rows.map((r) => rowText(r, price)),
  ]
    .filter(Boolean)
    .join('\n');
  const first = page.rows[0]?.turn;
  const last = page.rows[page.rows.length - 1]?.turn;
  return answer(
    first !== undefined && last !== undefined ? { ...source, turns: { from: first, to: last } } : source,
    body,
    more ? { offset: end } : null,
    [more ? `… truncated: ${counted(page.rowCount - end, 'more turn')} — call token_usage again with offset=${end}.` : '', ...notes]
      .filter(Boolean)
      .join('\n'),
  );
}
