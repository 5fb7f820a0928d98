/**
 * The built-in price table, as data: USD per 1,000,000 tokens, OpenAI's standard (not Batch, Flex or Priority) tier.
 * A TypeScript module rather than JSON because the webview's tsconfig (which includes src/shared) does not resolve
 * JSON modules. `agentSessions.pricing.prices` overrides and extends it (src/extension/sessionPricing.ts).
 *
 * Where the figures come from: OpenAI's pricing page (https://platform.openai.com/docs/pricing, now
 * https://developers.openai.com/api/docs/pricing) as recorded, with the date each model was checked against it, in
 * pydantic/genai-prices `prices/providers/openai.yml` (commit 47df840, 2026-08-21); the GPT-5 family was cross-checked
 * against OpenAI's own Priority processing page (https://openai.com/api-priority-processing/), whose prices are the
 * standard ones times the same factor. Taken on 2026-12-01. Models whose price could not be confirmed are left out
 * rather than guessed (o3-pro, the codex and realtime variants, gpt-5.3+ chat models apart from those below).
 *
 * Billing rules the arithmetic in pricing.ts follows (OpenAI's usage object, Responses API):
 * - `input_tokens` includes the cached tokens (`input_tokens_details.cached_tokens`), which are billed at the cached
 *   rate instead of the input rate (`cachedInput` null: no cached rate is published, they cost full input);
 * - `output_tokens` already includes the reasoning tokens (`output_tokens_details.reasoning_tokens`): reasoning is
 *   billed as output, once. Adding the reasoning tokens again would double count them.
 * - gpt-5.4 bills prompts above 272K tokens at a higher rate; usage rows are per turn, not per request, so the base
 *   rate is used.
 */
export const PRICE_TABLE_DATA = {
  date: '2026-12-01',
  source: 'OpenAI API pricing, standard tier (https://developers.openai.com/api/docs/pricing), via pydantic/genai-prices 2026-08-21',
  prices: {
    'gpt-5.5': { input: 5, cachedInput: 0.5, output: 30 },
    'gpt-5.4': { input: 2.5, cachedInput: 0.25, output: 15 },
    'gpt-5.4-mini': { input: 0.75, cachedInput: 0.075, output: 4.5 },
    'gpt-5.4-nano': { input: 0.2, cachedInput: 0.02, output: 1.25 },
    'gpt-5.2': { input: 1.75, cachedInput: 0.175, output: 14 },
    'gpt-5.2-pro': { input: 21, cachedInput: null, output: 168 },
    'gpt-5.1': { input: 1.25, cachedInput: 0.125, output: 10 },
    'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
    'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
    'gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
    'gpt-5-pro': { input: 15, cachedInput: null, output: 120 },
    'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
    'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
    'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
    'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
    // The first gpt-4o snapshot kept its launch price, which the base name's would hide (priceOf strips the date
    // only when the exact name has no price): OpenAI's pricing page, Standard tier, lists gpt-4o-2024-05-13 at $5.00
    // input, no cached rate, $15.00 output.
    'gpt-4o-2024-05-13': { input: 5, cachedInput: null, output: 15 },
    'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
    o1: { input: 15, cachedInput: 7.5, output: 60 },
    'o1-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
    'o1-pro': { input: 150, cachedInput: null, output: 600 },
    // o3's price was cut on 2025-06-10; this is the price since then.
    o3: { input: 2, cachedInput: 0.5, output: 8 },
    'o3-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
    'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  },
} as const;
