/**
 * Our byte-pair counter (src/store/context/bpe/, issue 43: the tokenizer's table in a tenth of the memory) against
 * gpt-tokenizer's own `countTokens` with no special tokens, on both encodings: the repository's documents (prose,
 * tables, code) cut into pieces, and random texts mixing what the splitting patterns treat apart — letters of every
 * case and script, digits, punctuation, every kind of whitespace, contractions, marks, emoji, lone surrogates and
 * special-token text. Every count must be the package's. And the packed table itself: every rank found by its bytes.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytePairCounter } from '../../../../src/store/context/bpe/bytePairCount';
import { packRanks, RankTable } from '../../../../src/store/context/bpe/rankTable';
import { tokenCounter } from '../../../../src/store/context/tokenCounter';
import { seededRandom } from '../../../support/seededRandom';
import { ROOT } from '../export/exportFixtures';

type Package = { countTokens(text: string, options?: object): number };
const NONE = { disallowedSpecial: new Set<string>() };

const PIECES = [
  'the',
  ' weather',
  'Berlin',
  'BERLIN',
  'McDonald',
  "'s",
  "'LL",
  '’re',
  "don't",
  ' 12',
  '2024',
  '1234567',
  '3.14',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\n\n\n',
  ' \n ',
  '\u00a0',
  '\u3000',
  '\u2028',
  '.',
  '!!',
  ' ...',
  '/',
  '//',
  '->',
  '{"city":"Berlin"}',
  '<|endoftext|>',
  '<|im_start|>',
  '°C',
  '—',
  'ß',
  'İstanbul',
  'ǅ',
  'Σας',
  'é',
  'e\u0301',
  '東京',
  'の天気',
  'Погода',
  'القاهرة',
  'हिन्दी',
  '한국어',
  '🙂',
  '👩‍👩‍👧',
  '🇩🇪',
  '\ud83d',
  '\udc00',
  '\u0000',
  '\u200b',
  'ＡＢＣ',
  '①②',
  'Ⅻ',
  '٣٤٥',
  '\\u00e9',
  'x'.repeat(40),
  'ab'.repeat(30),
  '='.repeat(50),
  ' '.repeat(20),
];

function randomText(next: () => number): string {
  let text = '';
  const parts = 1 + Math.floor(next() * 30);
  for (let i = 0; i < parts; i++) text += PIECES[Math.floor(next() * PIECES.length)]!;
  return text;
}

/** The repository's Markdown, cut into texts of a few hundred to a few thousand characters. */
function documentTexts(): string[] {
  const texts: string[] = [];
  for (const dir of [ROOT, join(ROOT, 'docs')]) {
    for (const name of readdirSync(dir)
      .filter((n) => n.endsWith('.md'))
      .sort()) {
      const text = readFileSync(join(dir, name), 'utf8');
      for (let at = 0, n = 0; at < text.length; at += 4000, n++) texts.push(text.slice(at, at + 300 + ((n * 977) % 3700)));
    }
  }
  return texts;
}

describe('the byte-pair counter against gpt-tokenizer', function () {
  this.timeout(120_000);
  const docs = documentTexts();

  for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
    describe(encoding, () => {
      let theirs: Package;
      let ours: (text: string) => number;
      before(async () => {
        theirs = (await import(`gpt-tokenizer/encoding/${encoding}`)) as Package;
        ours = await tokenCounter(encoding);
      });

      it('counts the documents as the package does', () => {
        assert.ok(docs.length > 100, `${docs.length} texts`);
        let tokens = 0;
        for (const text of docs) {
          const want = theirs.countTokens(text, NONE);
          assert.equal(ours(text), want, JSON.stringify(text.slice(0, 80)));
          tokens += want;
        }
        assert.ok(tokens > 50_000, `${tokens} tokens`);
      });

      it('counts random texts of every kind of piece as the package does', () => {
        const next = seededRandom(encoding === 'o200k_base' ? 44 : 45);
        for (let i = 0; i < 4000; i++) {
          const text = randomText(next);
          assert.equal(ours(text), theirs.countTokens(text, NONE), `case ${i}: ${JSON.stringify(text)}`);
        }
      });

      it('counts long pieces (merged with a heap) as the package does', () => {
        const next = seededRandom(encoding === 'o200k_base' ? 46 : 47);
        const runs = ['A', 'ab', 'xyz', 'Zz', '東京', 'é', ' ', '=', '-_', '7'];
        for (let i = 0; i < 60; i++) {
          // One piece of 300 to 3,000 characters (a run of letters, spaces or punctuation), often among others.
          const unit = runs[Math.floor(next() * runs.length)]!;
          let piece = '';
          while (piece.length < 300 + next() * 2700) piece += next() < 0.8 ? unit : runs[Math.floor(next() * 3)]!;
          const text = `${randomText(next)}${piece}${randomText(next)}`;
          assert.equal(ours(text), theirs.countTokens(text, NONE), `case ${i}: ${JSON.stringify(text.slice(0, 60))}… (${text.length})`);
        }
      });

      it('finds every rank of the table by its bytes, and packs it back the same', async () => {
        const ranks = ((await import(`gpt-tokenizer/bpeRanks/${encoding}`)) as { default: (string | number[])[] }).default;
        const packed = packRanks(ranks);
        const table = RankTable.fromPacked(packed);
        assert.equal(table.size, ranks.length);
        const encoder = new TextEncoder();
        let used = 0;
        ranks.forEach((token, rank) => {
          if (token == null) return;
          const bytes = typeof token === 'string' ? encoder.encode(token) : Uint8Array.from(token);
          assert.equal(table.rankOf(bytes, 0, bytes.length), rank, `rank ${rank}`);
          assert.deepEqual(table.bytesOf(rank), bytes);
          used++;
        });
        assert.ok(used > 100_000, `${used} ranks`);
        // Bytes that are no token: none of the table's, and not every pair of bytes.
        assert.equal(table.rankOf(encoder.encode('\u0000weather in Berlin\u0000'), 0, 19), -1);
      });
    });
  }

  it('refuses a table listing a token twice, or ending inside a token', () => {
    assert.throws(() => RankTable.fromPacked(packRanks(['a', 'b', 'ab', 'a'])), /rank 3: the same token/);
    assert.throws(() => RankTable.fromPacked(Uint8Array.from([1, 97, 3, 98])), /ends inside a token/);
    assert.throws(() => packRanks(['x'.repeat(256)]), /does not fit/);
  });

  it('counts a piece of 256 KB in well under a second (the scan for the lowest pair would take about 40 s)', async () => {
    const count = await tokenCounter('o200k_base');
    const c0 = process.cpuUsage();
    const n = count('A'.repeat(256 * 1024));
    const used = process.cpuUsage(c0);
    assert.equal(n, (256 * 1024) / 8, 'eight A make one token, and the run is whole tokens');
    assert.ok((used.user + used.system) / 1000 < 1000, `${(used.user + used.system) / 1000} ms of CPU`);
  });

  it('merges the lowest-ranked pair first, the leftmost on a tie', () => {
    // Made-up tables. "abcd": "bc" (4) outranks "ab" (5) and "cd" (6), so a(bc)d, and neither "abc" nor "bcd" is a
    // token: 3 parts (merging "ab" first would give (ab)(cd), 2).
    const byRank = bytePairCounter(RankTable.fromPacked(packRanks(['a', 'b', 'c', 'd', 'bc', 'ab', 'cd'])), /[a-z]+|./gu);
    assert.equal(byRank('abcd'), 3);
    assert.equal(byRank('ab'), 1);
    assert.equal(byRank('abcd abcd'), 7);
    // "aaab": both "aa" pairs rank the same; the leftmost gives (aa)(a)(b), and "aaa" and "ab" are no tokens: 3 parts
    // (the rightmost would give (a)(aa)(b), then (a)(aab): 2).
    const byPlace = bytePairCounter(RankTable.fromPacked(packRanks(['a', 'b', 'aa', 'aab'])), /[a-z]+/gu);
    assert.equal(byPlace('aaab'), 3);
    assert.equal(byPlace('aab'), 1);
    // The same rules in a piece long enough for the heap: each "abcd" is 3 parts, each "aaab" 3.
    assert.equal(byRank('abcd'.repeat(100)), 300, 'one piece: a(bc)d repeated, no pair across the units');
    assert.equal(byPlace('aaab'.repeat(100)), 300);
  });
});
