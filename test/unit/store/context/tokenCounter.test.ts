/**
 * The Context tab's token counts (docs/context.md, "Token counts"): the encoding by model family, an unknown model
 * counted with o200k_base and marked approximate, counts that match the published encodings, special-token text
 * counted as text (never refused), and the encodings loaded only when first asked for.
 */
import { strict as assert } from 'node:assert';
import { encodingFor, estimateTokens, tokenCounter } from '../../../../src/store/context/tokenCounter';

describe('token counts', () => {
  it('chooses the encoding by model family; an unknown or no model is o200k_base, approximate', () => {
    for (const m of [
      'gpt-4o',
      'gpt-4o-mini-2024-07-18',
      'gpt-4.1',
      'o3-mini',
      'o1',
      'gpt-5',
      'openai/gpt-4.1-mini',
      'ft:gpt-4o-mini:org::abc',
    ])
      assert.deepEqual(encodingFor(m), { encoding: 'o200k_base', approximate: false }, m);
    for (const m of [
      'gpt-4',
      'gpt-4-turbo',
      'gpt-3.5-turbo',
      'azure/gpt-35-turbo',
      'text-embedding-3-small',
      'ft:gpt-3.5-turbo-0125:acme::x',
      // The provider prefix before the fine-tune's "ft:".
      'openai/ft:gpt-3.5-turbo-0125:acme::x',
    ])
      assert.deepEqual(encodingFor(m), { encoding: 'cl100k_base', approximate: false }, m);
    for (const m of ['claude-sonnet-4', 'loopback-model-1', '', null, undefined])
      assert.deepEqual(encodingFor(m), { encoding: 'o200k_base', approximate: true }, String(m));
  });

  it('counts as the encodings do, and takes special-token text as text', async () => {
    const o200k = await tokenCounter('o200k_base');
    const cl100k = await tokenCounter('cl100k_base');
    // "hello world" is two tokens in both; the encodings part ways on other text.
    assert.equal(o200k('hello world'), 2);
    assert.equal(cl100k('hello world'), 2);
    assert.equal(o200k(''), 0);
    const special = 'before <|endoftext|> after';
    assert.ok(o200k(special) > 3, 'counted as ordinary text, not refused');
    assert.equal(o200k(special), o200k(special), 'the memo answers the same');
    assert.equal(estimateTokens('abcdefgh'), 2);
  });
});
