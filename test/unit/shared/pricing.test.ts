import { strict as assert } from 'node:assert';
import { BUILT_IN_PRICES, costOf, formatCost, priceOf, pricedModels, withOverrides, type PriceTable } from '../../../src/shared/pricing';

const table: PriceTable = {
  date: '2026-01-01',
  source: 'test',
  prices: {
    'gpt-x': { input: 2, cachedInput: 0.5, output: 8 },
    'gpt-x-2024-05-13': { input: 5, cachedInput: null, output: 15 },
    'no-cache': { input: 1, cachedInput: null, output: 4 },
  },
};
const counts = (
  inputTokens: number | null,
  cachedTokens: number | null,
  outputTokens: number | null,
  reasoningTokens: number | null = null,
) => ({
  inputTokens,
  cachedTokens,
  outputTokens,
  reasoningTokens,
});
const close = (actual: number | null, expected: number): void => {
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${actual} ≠ ${expected}`);
};

describe('pricing', () => {
  it('bills uncached input, cached input at its own rate and output (per 1M tokens)', () => {
    const p = priceOf(table, 'gpt-x');
    // 1,000,000 input of which 400,000 cached: 600,000 × $2 + 400,000 × $0.50; 100,000 output × $8.
    close(costOf(counts(1_000_000, 400_000, 100_000), p), 1.2 + 0.2 + 0.8);
    close(costOf(counts(1000, null, 0), p), 0.002);
  });

  it('does not bill the reasoning tokens again: they are part of output_tokens', () => {
    const p = priceOf(table, 'gpt-x');
    // 500 output tokens of which 300 reasoning: 500 × $8 / 1M, not 800 × $8.
    close(costOf(counts(0, 0, 500, 300), p), 0.004);
    assert.equal(costOf(counts(0, 0, 500, 300), p), costOf(counts(0, 0, 500, 0), p));
  });

  it('bills cached tokens at the input rate when the model has no cached rate, and never more cached than input', () => {
    close(costOf(counts(1000, 1000, 0), priceOf(table, 'no-cache')), 0.001);
    close(costOf(counts(100, 5000, 0), priceOf(table, 'gpt-x')), (100 * 0.5) / 1e6);
  });

  it('is null for an unknown model, no model, or a row without counts', () => {
    assert.equal(priceOf(table, 'claude-3'), null);
    assert.equal(priceOf(table, null), null);
    assert.equal(priceOf(table, '  '), null);
    assert.equal(costOf(counts(10, 0, 10), null), null);
    assert.equal(costOf(counts(null, null, null), priceOf(table, 'gpt-x')), null);
    // Not from the object's prototype.
    assert.equal(priceOf(table, 'constructor'), null);
    assert.equal(priceOf(table, 'toString'), null);
  });

  it('prices a dated snapshot as its base model, unless the table prices the snapshot itself', () => {
    assert.deepEqual(priceOf(table, 'gpt-x-2024-08-06'), table.prices['gpt-x']);
    assert.deepEqual(priceOf(table, 'gpt-x-0613'), table.prices['gpt-x']);
    assert.deepEqual(priceOf(table, 'gpt-x-2024-05-13'), table.prices['gpt-x-2024-05-13']);
    assert.deepEqual(priceOf(table, ' GPT-X '), table.prices['gpt-x']);
    assert.deepEqual(priceOf(table, 'openai/gpt-x'), table.prices['gpt-x']);
    assert.equal(priceOf(table, 'gpt-x-mini'), null);
    assert.deepEqual(priceOf(BUILT_IN_PRICES, 'gpt-4o-2024-08-06'), BUILT_IN_PRICES.prices['gpt-4o']);
    // The first gpt-4o snapshot has a price of its own (OpenAI's pricing page, Standard tier), not gpt-4o's.
    for (const name of ['gpt-4o-2024-05-13', 'openai/GPT-4o-2024-05-13'])
      assert.deepEqual(priceOf(BUILT_IN_PRICES, name), { input: 5, cachedInput: null, output: 15 }, name);
    assert.deepEqual(priceOf(BUILT_IN_PRICES, 'gpt-4.1-mini-2025-04-14'), { input: 0.4, cachedInput: 0.1, output: 1.6 });
  });

  it('ships a dated table with a source, covering the models agents run on', () => {
    assert.match(BUILT_IN_PRICES.date, /^\d{4}-\d{2}-\d{2}$/);
    assert.match(BUILT_IN_PRICES.source, /openai\.com/);
    for (const m of [
      'gpt-5',
      'gpt-5-mini',
      'gpt-5-nano',
      'gpt-4.1',
      'gpt-4.1-mini',
      'gpt-4.1-nano',
      'gpt-4o',
      'gpt-4o-mini',
      'o3',
      'o4-mini',
      'o1',
    ])
      assert.ok(priceOf(BUILT_IN_PRICES, m), m);
    for (const p of Object.values(BUILT_IN_PRICES.prices)) {
      assert.ok(p.input > 0 && p.output >= p.input, JSON.stringify(p));
      assert.ok(p.cachedInput === null || p.cachedInput < p.input, JSON.stringify(p));
    }
    assert.deepEqual(pricedModels(table), ['gpt-x', 'gpt-x-2024-05-13', 'no-cache']);
  });

  it('takes overrides from the setting: replaces and adds models, ignores bad entries with a problem each', () => {
    const { table: t, problems } = withOverrides(table, {
      'GPT-X': { input: 1, cachedInput: 0.1, output: 2 },
      'my-model': { input: 3, output: 6 },
      bad1: { input: -1, output: 2 },
      bad2: { input: 1 },
      bad3: 'cheap',
      bad4: { input: 1, output: 2, cachedInput: 'x' },
    });
    assert.deepEqual(t.prices['gpt-x'], { input: 1, cachedInput: 0.1, output: 2 });
    assert.deepEqual(t.prices['my-model'], { input: 3, cachedInput: null, output: 6 });
    assert.deepEqual(t.prices['no-cache'], table.prices['no-cache']);
    assert.equal(priceOf(t, 'bad1'), null);
    assert.equal(problems.length, 4);
    assert.match(problems[0] ?? '', /"bad1"\]: input must be/);
    assert.match(problems[1] ?? '', /"bad2"\]: output must be/);
    assert.match(t.source, /2 prices from settings/);
    // The original table is untouched.
    assert.deepEqual(table.prices['gpt-x'], { input: 2, cachedInput: 0.5, output: 8 });
    assert.deepEqual(withOverrides(table, undefined), { table, problems: [] });
    assert.equal(withOverrides(table, [1]).problems.length, 1);
    assert.equal(withOverrides(table, 'x').table, table);
  });

  it('formats costs readably from fractions of a cent to thousands', () => {
    assert.equal(formatCost(null), '–');
    assert.equal(formatCost(Number.NaN), '–');
    assert.equal(formatCost(0), '$0.00');
    assert.equal(formatCost(0.0123), '$0.0123');
    assert.equal(formatCost(0.012345), '$0.0123');
    assert.equal(formatCost(0.00045), '$0.000450');
    assert.equal(formatCost(0.5), '$0.500');
    assert.equal(formatCost(1), '$1.00');
    assert.equal(formatCost(1234.567), '$1,234.57');
    assert.equal(formatCost(2_500_000), '$2,500,000.00');
    assert.equal(formatCost(0.0000004), '<$0.000001');
  });
});
