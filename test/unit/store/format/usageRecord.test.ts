/**
 * Spec §9: the `turn_usage` column values written for a JS `Usage`: four scalars (missing, null, 0 or non-finite →
 * 0) and two detail texts with fixed keys in a fixed order, summed over the per-request detail records, always
 * written (zeros included) with Python separators.
 */
import { strict as assert } from 'node:assert';
import { Usage } from '@openai/agents';
import { usageColumns, type UsageColumns } from '../../../../src/store/format/usageRecord';
import type { UsageLike } from '../../../../src/store/types';

const ZERO_IN = '{"cache_write_tokens": 0, "cached_tokens": 0}';
const ZERO_OUT = '{"reasoning_tokens": 0}';

function cols(partial: Partial<UsageColumns>): UsageColumns {
  return {
    requests: 0,
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    inputTokensDetails: ZERO_IN,
    outputTokensDetails: ZERO_OUT,
    ...partial,
  };
}

describe('usageColumns (spec §9)', () => {
  describe('scalars', () => {
    const cases: [string, UsageLike, UsageColumns][] = [
      ['empty usage: all zeros, both details written', {}, cols({})],
      [
        'plain values',
        { requests: 2, inputTokens: 100, outputTokens: 20, totalTokens: 120 },
        cols({ requests: 2, inputTokens: 100, outputTokens: 20, totalTokens: 120 }),
      ],
      ['null → 0', { requests: null, inputTokens: null, outputTokens: null, totalTokens: null }, cols({})],
      ['undefined → 0', { requests: undefined, inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }, cols({})],
      ['0 stays 0', { requests: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0 }, cols({})],
      ['NaN → 0', { requests: NaN, inputTokens: NaN, outputTokens: NaN, totalTokens: NaN }, cols({})],
      ['Infinity → 0', { requests: Infinity, inputTokens: Infinity, outputTokens: Infinity, totalTokens: Infinity }, cols({})],
      ['-Infinity → 0', { requests: -Infinity, inputTokens: -Infinity, outputTokens: -Infinity, totalTokens: -Infinity }, cols({})],
      ['mixed', { requests: 1, inputTokens: NaN, outputTokens: null, totalTokens: 7 }, cols({ requests: 1, totalTokens: 7 })],
    ];
    for (const [name, usage, expected] of cases) {
      it(name, () => assert.deepStrictEqual(usageColumns(usage), expected));
    }

    it('ignores keys other than the four scalars and two detail lists', () => {
      const usage = {
        requests: 1,
        inputTokens: 2,
        outputTokens: 3,
        totalTokens: 5,
        input_tokens: 999,
        total_tokens: 999,
        requestUsageEntries: [{ inputTokens: 50, inputTokensDetails: { cached_tokens: 50 } }],
        extra: 'x',
      } as UsageLike;
      assert.deepStrictEqual(usageColumns(usage), cols({ requests: 1, inputTokens: 2, outputTokens: 3, totalTokens: 5 }));
    });
  });

  describe('detail texts', () => {
    const cases: [string, unknown, unknown, string, string][] = [
      ['no details: zeros', undefined, undefined, ZERO_IN, ZERO_OUT],
      ['null details: zeros', null, null, ZERO_IN, ZERO_OUT],
      ['empty arrays: zeros', [], [], ZERO_IN, ZERO_OUT],
      ['empty records: zeros', [{}], [{}], ZERO_IN, ZERO_OUT],
      [
        'records summed per key',
        [{ cached_tokens: 10 }, { cached_tokens: 22, cache_write_tokens: 0 }],
        [{ reasoning_tokens: 5 }, { reasoning_tokens: 7 }],
        '{"cache_write_tokens": 0, "cached_tokens": 32}',
        '{"reasoning_tokens": 12}',
      ],
      [
        'a single object is one record',
        { cached_tokens: 32 },
        { reasoning_tokens: 12 },
        '{"cache_write_tokens": 0, "cached_tokens": 32}',
        '{"reasoning_tokens": 12}',
      ],
      [
        'fixed key order whatever the record order',
        [{ cached_tokens: 1, cache_write_tokens: 2 }, { cache_write_tokens: 3 }],
        [{ reasoning_tokens: 0 }],
        '{"cache_write_tokens": 5, "cached_tokens": 1}',
        ZERO_OUT,
      ],
      [
        'non-numeric values count 0',
        [
          { cached_tokens: '5', cache_write_tokens: true },
          { cached_tokens: null },
          { cached_tokens: [3] },
          { cached_tokens: { n: 1 } },
          { cached_tokens: 4 },
        ],
        [{ reasoning_tokens: '12' }, { reasoning_tokens: false }, { reasoning_tokens: 1 }],
        '{"cache_write_tokens": 0, "cached_tokens": 4}',
        '{"reasoning_tokens": 1}',
      ],
      [
        'other keys ignored (audio, text, camelCase spellings)',
        [{ cached_tokens: 1, audio_tokens: 100, text_tokens: 100, cachedTokens: 100, cacheWriteTokens: 100 }],
        [{ reasoning_tokens: 2, reasoningTokens: 100, accepted_prediction_tokens: 100 }],
        '{"cache_write_tokens": 0, "cached_tokens": 1}',
        '{"reasoning_tokens": 2}',
      ],
      [
        'non-object entries in the list ignored',
        [null, 7, 'cached_tokens', { cached_tokens: 3 }],
        [undefined, { reasoning_tokens: 4 }],
        '{"cache_write_tokens": 0, "cached_tokens": 3}',
        '{"reasoning_tokens": 4}',
      ],
      ['scalar details: zeros', 5, 'x', ZERO_IN, ZERO_OUT],
      [
        'cache_write_tokens summed too',
        [{ cache_write_tokens: 8 }, { cache_write_tokens: 2, cached_tokens: 1 }],
        [],
        '{"cache_write_tokens": 10, "cached_tokens": 1}',
        ZERO_OUT,
      ],
    ];
    for (const [name, input, output, expectedIn, expectedOut] of cases) {
      it(name, () => {
        const c = usageColumns({ requests: 1, inputTokensDetails: input, outputTokensDetails: output });
        assert.equal(c.inputTokensDetails, expectedIn);
        assert.equal(c.outputTokensDetails, expectedOut);
        assert.equal(c.requests, 1);
      });
    }

    it('accepts snake_case detail lists on the usage object as a fallback (documented in the code)', () => {
      const usage = {
        input_tokens_details: [{ cached_tokens: 32 }],
        output_tokens_details: { reasoning_tokens: 12 },
      } as UsageLike;
      const c = usageColumns(usage);
      assert.equal(c.inputTokensDetails, '{"cache_write_tokens": 0, "cached_tokens": 32}');
      assert.equal(c.outputTokensDetails, '{"reasoning_tokens": 12}');
    });

    it('prefers the camelCase detail list when both spellings are present', () => {
      const usage = {
        inputTokensDetails: [{ cached_tokens: 1 }],
        input_tokens_details: [{ cached_tokens: 100 }],
        outputTokensDetails: [{ reasoning_tokens: 2 }],
        output_tokens_details: [{ reasoning_tokens: 200 }],
      } as UsageLike;
      const c = usageColumns(usage);
      assert.equal(c.inputTokensDetails, '{"cache_write_tokens": 0, "cached_tokens": 1}');
      assert.equal(c.outputTokensDetails, '{"reasoning_tokens": 2}');
    });
  });

  describe('with the real @openai/agents Usage', () => {
    it('reads a Usage built from snake_case keys (as the conformance replay does)', () => {
      const usage = new Usage({
        requests: 2,
        input_tokens: 100,
        output_tokens: 20,
        total_tokens: 120,
        input_tokens_details: { cached_tokens: 32 },
        output_tokens_details: { reasoning_tokens: 12 },
      });
      assert.deepStrictEqual(usageColumns(usage), {
        requests: 2,
        inputTokens: 100,
        outputTokens: 20,
        totalTokens: 120,
        inputTokensDetails: '{"cache_write_tokens": 0, "cached_tokens": 32}',
        outputTokensDetails: '{"reasoning_tokens": 12}',
      });
    });

    it('sums the per-request records a run accumulates with Usage.add', () => {
      const total = new Usage();
      total.add(
        new Usage({
          requests: 1,
          input_tokens: 10,
          output_tokens: 5,
          total_tokens: 15,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens_details: { reasoning_tokens: 2 },
        }),
      );
      total.add(
        new Usage({
          requests: 1,
          input_tokens: 30,
          output_tokens: 7,
          total_tokens: 37,
          input_tokens_details: { cached_tokens: 28 },
          output_tokens_details: { reasoning_tokens: 10 },
        }),
      );
      assert.deepStrictEqual(usageColumns(total), {
        requests: 2,
        inputTokens: 40,
        outputTokens: 12,
        totalTokens: 52,
        inputTokensDetails: '{"cache_write_tokens": 0, "cached_tokens": 32}',
        outputTokensDetails: '{"reasoning_tokens": 12}',
      });
    });

    it('writes zeros for an empty Usage', () => {
      assert.deepStrictEqual(usageColumns(new Usage()), cols({}));
    });
  });
});
