/**
 * A hit's snippet (`matchText`, src/store/search/itemMatch.ts) against the way it was made before its fast paths
 * (test/support/searchOracleSnippet.ts: every text folded whole, every character mapped): on random texts mixing ASCII
 * with the characters that make folding hard — ones that fold into ASCII (ß, İ, ı, ﬃ, the Kelvin sign), change length
 * (ŉ, ǰ), depend on their neighbours (Σ), compose under NFC (e + U+0301), astral and lone surrogates, whitespace of
 * every kind — and on needles cut from those texts or typed, every snippet and every range must be the same.
 */
import { strict as assert } from 'node:assert';
import { foldForSearch } from '../../../../src/store/format/conversationText';
import { INERT_IN_FOLDING, matchText } from '../../../../src/store/search/itemMatch';
import { parseSearchQuery } from '../../../../src/store/search/searchQuery';
import { oracleMatchText } from '../../../support/searchOracleSnippet';
import { seededRandom as rng } from '../../../support/seededRandom';

const ASCII_PIECES = ['weather', 'Berlin', 'TURN ', 'a', 'b', ' ', '  ', '\t', '\n', 'x1', '%_', '"', '\\', '22', 'C.'];
const HARD_PIECES = [
  'ß',
  'İ',
  'ı',
  'ﬃ',
  '\u212a',
  'ŉ',
  'ǰ',
  'Σ',
  'σ',
  'ς',
  'e\u0301',
  '\u0301',
  'é',
  '—',
  '°',
  '😀',
  '\ud83d',
  '\ude00',
  '\u00a0',
  '\u2028',
  '\u3000',
  'ẞ',
  'Ω',
  'Å',
  '\u1100\u1161',
  '\u11a8',
  'ﬅ',
  'ﬆ',
  '…',
  '’',
  '€',
  '×',
  'Σ—',
  '—\u0301',
];

function randomText(next: () => number, hardShare: number, length: number): string {
  let text = '';
  while (text.length < length) {
    const pieces = next() < hardShare ? HARD_PIECES : ASCII_PIECES;
    text += pieces[Math.floor(next() * pieces.length)]!;
  }
  return text;
}

/** A needle: a piece of the text's folded form (so it matches), of the text itself, or typed. */
function randomNeedle(next: () => number, text: string): string {
  const pick = next();
  const source = pick < 0.45 ? foldForSearch(text) : pick < 0.7 ? text : randomText(next, 0.3, 1 + Math.floor(next() * 4));
  const start = Math.floor(next() * source.length);
  return source.slice(start, start + 1 + Math.floor(next() * 8));
}

describe('a search hit snippet is the one made before its fast paths', () => {
  it('on random texts and needles, ASCII and not, short and past the snippet length', () => {
    const next = rng(43);
    let compared = 0;
    let matched = 0;
    for (let i = 0; i < 20_000; i++) {
      const hardShare = [0, 0.002, 0.05, 0.4][i % 4]!;
      const text = randomText(next, hardShare, 1 + Math.floor(next() * (i % 3 === 0 ? 600 : 120)));
      const needle = randomNeedle(next, text);
      if (needle.trim() === '' || /"/.test(needle)) continue;
      const query = { ...parseSearchQuery('x'), text: needle };
      const items = [
        { role: 'user', content: text },
        { type: 'function_call_output', call_id: 'c', output: `${text} — 22°C` },
        {
          role: 'assistant',
          type: 'message',
          content: [
            { type: 'output_text', text: needle.toUpperCase() },
            { type: 'output_text', text },
          ],
        },
      ];
      for (const item of items) {
        const expected = oracleMatchText(query, item, () => 'fallback');
        assert.deepEqual(
          matchText(query, item, () => 'fallback'),
          expected,
          `case ${i}: ${JSON.stringify({ text, needle })}`,
        );
        compared++;
        if (expected !== null) matched++;
      }
    }
    // Most cases must be hits, or the ranges would go untested.
    assert.ok(matched > compared / 2, `${matched} of ${compared} matched`);
  });

  it('takes as inert in folding only characters that are their own NFC, case and fold, composing with nothing', () => {
    for (const c of INERT_IN_FOLDING) {
      const name = `U+${c.charCodeAt(0).toString(16)}`;
      assert.equal(c.normalize('NFC'), c, `${name} is its NFC form`);
      assert.equal(c.toUpperCase(), c, name);
      assert.equal(c.toLowerCase(), c, name);
      assert.ok(!/\p{Cased}/u.test(c), `${name} is not cased`);
      // Nothing before it composes with it, and it composes with nothing after it (the planes compositions are in).
      for (let cp = 0; cp < 0x20000; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        const x = String.fromCodePoint(cp);
        const nx = x.normalize('NFC');
        if ((x + c).normalize('NFC') !== nx + c || (c + x).normalize('NFC') !== c + nx)
          assert.fail(`${name} composes with U+${cp.toString(16)}`);
      }
    }
  });

  it('on queries without text: the start of the item, a call with its arguments whole', () => {
    const query = parseSearchQuery('role:user');
    for (const item of [
      { role: 'user', content: 'x'.repeat(400) },
      { type: 'function_call', name: 'f', call_id: 'c', arguments: '{"city": "Ber\\u00dfin", "n": 2}' },
      { type: 'function_call_output', call_id: 'c', output: '' },
    ]) {
      assert.deepEqual(
        matchText(query, item, () => 'fallback'),
        oracleMatchText(query, item, () => 'fallback'),
      );
    }
  });
});
