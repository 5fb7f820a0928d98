/**
 * The content key as docs/reviews.md ("How a review finds its turn") states it, so another program can compute it from
 * the doc alone: canonical JSON (keys sorted, no whitespace, non-ASCII as itself), SHA-256 of its UTF-8, 32 hex digits.
 * The pinned key was computed by the doc's Python line, on the item as Python's json.dumps stores it.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { canonicalJson, contentKey } from '../../../../src/store/reviews/contentKey';

/** How the Python SDK stores the item (`json.dumps` defaults: spaces after separators, `\uXXXX` escapes). */
const STORED_BY_PYTHON = String.raw`{"role": "user", "content": "Wie warm ist es in \uc11c\uc6b8? \u201cx\u201d", "n": 1.5, "z": [1, {"b": 2, "a": null}]}`;
/** The same item's key from the doc's line: sha256(json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)). */
const KEY_FROM_PYTHON = '7ad4cb0da46d3c37b32d1dbef1ed22bb';

describe('contentKey (the rule docs/reviews.md states)', () => {
  const item = JSON.parse(STORED_BY_PYTHON) as unknown;

  it('writes canonical JSON: keys sorted, no whitespace, non-ASCII characters as themselves', () => {
    assert.equal(canonicalJson(item), '{"content":"Wie warm ist es in 서울? “x”","n":1.5,"role":"user","z":[1,{"a":null,"b":2}]}');
  });

  it("is the first 32 hex digits of SHA-256 over that text's UTF-8 bytes", () => {
    const digest = createHash('sha256')
      .update(Buffer.from(canonicalJson(item), 'utf8'))
      .digest('hex');
    assert.equal(contentKey(item), digest.slice(0, 32));
  });

  it("equals the key the doc's Python line computes", () => {
    assert.equal(contentKey(item), KEY_FROM_PYTHON);
  });
});
