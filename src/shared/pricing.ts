/**
 * What tokens cost: the price table (built in, overridable by a setting), the model name → price lookup, the cost of
 * a usage row and its text. Shared by the host (which prices the tables and the tree) and the webview (the compare
 * view), so both apply one rule.
 */
import { PRICE_TABLE_DATA } from './priceTable';

/** USD per 1,000,000 tokens. `cachedInput` null: no cached rate, cached tokens cost full input. */
export interface ModelPrice {
  input: number;
  cachedInput: number | null;
  output: number;
}

/** A price table: when its prices were taken, from where, and the price of each model by its base name. */
export interface PriceTable {
  date: string;
  source: string;
  prices: Record<string, ModelPrice>;
}

/** The table shipped with the extension (src/shared/priceTable.ts says where the figures come from). */
export const BUILT_IN_PRICES: PriceTable = {
  date: PRICE_TABLE_DATA.date,
  source: PRICE_TABLE_DATA.source,
  prices: Object.fromEntries(Object.entries(PRICE_TABLE_DATA.prices).map(([model, p]) => [model, { ...p }])),
};

// A dated snapshot (`gpt-4o-2024-08-06`) or an old-style one (`gpt-4-0613`) is priced as its base model.
const SNAPSHOT_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{4})$/;

/** The table's key for a model name: trimmed, lower case, without an `openai/` provider prefix. */
function normalise(model: string): string {
  return model
    .trim()
    .toLowerCase()
    .replace(/^openai\//, '');
}

/**
 * The price of a model: its exact name first (a table may price a snapshot differently), then its name without a
 * dated snapshot suffix. Null for an unknown model or none.
 */
export function priceOf(table: PriceTable, model: string | null): ModelPrice | null {
  if (model === null) return null;
  const name = normalise(model);
  if (!name) return null;
  const exact = Object.hasOwn(table.prices, name) ? table.prices[name] : undefined;
  if (exact) return exact;
  const base = name.replace(SNAPSHOT_SUFFIX, '');
  return (base !== name && Object.hasOwn(table.prices, base) ? table.prices[base] : undefined) ?? null;
}

/** The token counts of a usage row (a turn, a branch's or a session's totals), as the store reads them. */
export interface TokenCounts {
  inputTokens: number | null;
  outputTokens: number | null;
  cachedTokens: number | null;
  reasoningTokens: number | null;
}

/**
 * What the counts cost in USD at `price`; null for an unknown model (no price) or a row without input and output
 * counts. OpenAI's `input_tokens` include the cached tokens, which are billed at the cached rate instead; its
 * `output_tokens` already include the reasoning tokens, so `reasoningTokens` adds nothing here (reasoning is billed
 * as output, once). The cost is linear in the counts, so the cost of summed counts is the sum of the costs.
 */
export function costOf(counts: TokenCounts, price: ModelPrice | null): number | null {
  if (!price) return null;
  if (counts.inputTokens === null && counts.outputTokens === null) return null;
  const input = Math.max(0, counts.inputTokens ?? 0);
  // More cached than input tokens cannot be billed: a damaged row is priced as all cached.
  const cached = Math.min(input, Math.max(0, counts.cachedTokens ?? 0));
  const output = Math.max(0, counts.outputTokens ?? 0);
  return ((input - cached) * price.input + cached * (price.cachedInput ?? price.input) + output * price.output) / 1_000_000;
}

/**
 * A cost as text: "–" for none, two decimals from a dollar ("$1,234.57"), three significant digits below it
 * ("$0.0123", "$0.000450"), and "<$0.000001" for a sum too small to show (never a misleading "$0.00").
 */
export function formatCost(usd: number | null): string {
  if (usd === null || !Number.isFinite(usd)) return '–';
  if (usd <= 0) return '$0.00';
  if (usd >= 1) return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  if (usd < 0.000001) return '<$0.000001';
  return `$${usd.toPrecision(3)}`;
}

/** A price from a setting or a message: three finite, non-negative numbers (cachedInput may be null or left out). */
function asPrice(value: unknown): ModelPrice | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object with input, cachedInput and output';
  const v = value as Record<string, unknown>;
  const rate = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  if (!rate(v.input)) return 'input must be a number of USD per 1M tokens, 0 or more';
  if (!rate(v.output)) return 'output must be a number of USD per 1M tokens, 0 or more';
  if (v.cachedInput !== undefined && v.cachedInput !== null && !rate(v.cachedInput))
    return 'cachedInput must be a number of USD per 1M tokens, 0 or more, or null';
  return { input: v.input, cachedInput: rate(v.cachedInput) ? v.cachedInput : null, output: v.output };
}

/**
 * The table with the setting's prices (model → {input, cachedInput, output}) over it: they replace a built-in
 * model's price or add a model. Bad entries are left out and described in `problems`, so a typo in settings is a
 * warning in the log, not a broken view.
 */
export function withOverrides(table: PriceTable, overrides: unknown): { table: PriceTable; problems: string[] } {
  if (overrides === undefined || overrides === null) return { table, problems: [] };
  if (typeof overrides !== 'object' || Array.isArray(overrides))
    return { table, problems: ['agentSessions.pricing.prices must be an object of model name → prices; it is ignored.'] };
  const prices = { ...table.prices };
  const problems: string[] = [];
  let changed = 0;
  for (const [model, value] of Object.entries(overrides as Record<string, unknown>)) {
    const name = normalise(model);
    const price = asPrice(value);
    if (!name) problems.push('agentSessions.pricing.prices: an empty model name is ignored.');
    else if (typeof price === 'string') problems.push(`agentSessions.pricing.prices["${model}"]: ${price}; it is ignored.`);
    else {
      prices[name] = price;
      changed++;
    }
  }
  if (changed === 0) return { table, problems };
  return { table: { ...table, source: `${table.source}; ${changed} price${changed === 1 ? '' : 's'} from settings`, prices }, problems };
}

/** The table's model names, for a picker: sorted so families stay together. */
export function pricedModels(table: PriceTable): string[] {
  return Object.keys(table.prices).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}
