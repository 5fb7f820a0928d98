/**
 * Spec §10.2 (previews: 100 code points plus "...", non-string content as Python-style JSON with raw non-ASCII) and
 * §12 (a) (content search: literal, Unicode-aware, case-insensitive substring of the user text, never the raw JSON).
 * The raw-JSON pre-filter `couldMatchRaw` may only say false when the decoded text cannot match: checked on many
 * seeded random messages.
 */
import { strict as assert } from 'node:assert';
import { contentMatcher, contentPreview, foldForSearch, userTexts } from '../../../../src/store/format/conversationText';
import { previewJson, pythonJsonDumps } from '../../../../src/store/format/pythonJson';

const cp = (s: string): number => [...s].length;

describe('conversationText', () => {
  describe('contentPreview (§10.2)', () => {
    const a100 = 'a'.repeat(100);
    const emoji = '😀';
    const cases: [string, unknown, string][] = [
      ['empty string', '', ''],
      ['short string as is', 'hello', 'hello'],
      ['exactly 100 code points: no cut', a100, a100],
      ['101 code points: cut + "..."', a100 + 'b', a100 + '...'],
      ['200 code points', 'x'.repeat(200), 'x'.repeat(100) + '...'],
      ['100 emoji (200 code units): no cut', emoji.repeat(100), emoji.repeat(100)],
      ['101 emoji: cut after 100', emoji.repeat(101), emoji.repeat(100) + '...'],
      ['120 emoji: 100 + "..."', emoji.repeat(120), emoji.repeat(100) + '...'],
      ['99 ASCII + emoji + 1: cut after the emoji, pair intact', 'a'.repeat(99) + emoji + 'b', 'a'.repeat(99) + emoji + '...'],
      ['98 ASCII + 2 emoji: exactly 100 code points', 'a'.repeat(98) + emoji + emoji, 'a'.repeat(98) + emoji + emoji],
      ['combining marks count as code points (50 × e+U+0301 = 100)', 'e\u0301'.repeat(50), 'e\u0301'.repeat(50)],
      ['combining marks: 51 × e+U+0301 = 102 → 100', 'e\u0301'.repeat(51), 'e\u0301'.repeat(50) + '...'],
      ['string that is itself "null"', 'null', 'null'],
      ['null content → "null"', null, 'null'],
      [
        'list content: Python-style JSON, raw non-ASCII',
        [{ type: 'input_text', text: 'héllo' }],
        '[{"type": "input_text", "text": "héllo"}]',
      ],
      [
        'list content with two parts',
        [
          { type: 'input_text', text: 'a' },
          { type: 'input_image', image_url: 'https://x/y.png' },
        ],
        '[{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "https://x/y.png"}]',
      ],
      [
        'list content with escapes',
        [{ type: 'input_text', text: 'a\n"b"\\ 😀' }],
        '[{"type": "input_text", "text": "a\\n\\"b\\"\\\\ 😀"}]',
      ],
      ['empty list', [], '[]'],
      ['object content', { text: 'é' }, '{"text": "é"}'],
      ['number content', 42, '42'],
      ['float content, Python repr', 1e-5, '1e-05'],
      ['boolean content', true, 'true'],
    ];
    for (const [name, content, expected] of cases) {
      it(name, () => {
        assert.equal(contentPreview(content, true), expected);
      });
    }

    it('120 emoji give 103 code points', () => {
      assert.equal(cp(contentPreview(emoji.repeat(120), true)), 103);
    });

    it('cuts long list content after 100 code points of its JSON', () => {
      const content = [{ type: 'input_text', text: 'é'.repeat(200) }];
      const json = '[{"type": "input_text", "text": "' + 'é'.repeat(200) + '"}]';
      const out = contentPreview(content, true);
      assert.equal(out, json.slice(0, 100) + '...');
      assert.equal(cp(out), 103);
    });

    it('never cuts when cut is false (findTurnsByContent)', () => {
      const long = emoji.repeat(150) + 'z';
      assert.equal(contentPreview(long, false), long);
      const list = [{ type: 'input_text', text: 'é'.repeat(300) }];
      assert.equal(contentPreview(list, false), '[{"type": "input_text", "text": "' + 'é'.repeat(300) + '"}]');
    });
  });

  describe('foldForSearch (NFC, upper, lower)', () => {
    const cases: [string, string, string][] = [
      ['ASCII', 'WeAtHeR', 'weather'],
      ['STRASSE', 'STRASSE', 'strasse'],
      ['ß → ss', 'straße', 'strasse'],
      ['Kelvin sign → k', '\u212a', 'k'],
      ['long s → s', '\u017f', 's'],
      ['ﬀ ligature → ff', '\ufb00', 'ff'],
      ['NFC form', 'Caf\u00e9', 'caf\u00e9'],
      ['NFD form composes', 'Cafe\u0301', 'caf\u00e9'],
      ['uppercase NFD', 'CAFE\u0301', 'caf\u00e9'],
      ['% and _ unchanged', '50%_A', '50%_a'],
    ];
    for (const [name, input, expected] of cases) {
      it(`${name}: ${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => assert.equal(foldForSearch(input), expected));
    }
  });

  describe('userTexts', () => {
    const cases: [string, unknown, string[]][] = [
      ['string content', 'hello', ['hello']],
      ['empty string', '', ['']],
      [
        'list of input_text parts',
        [
          { type: 'input_text', text: 'a' },
          { type: 'input_text', text: 'b' },
        ],
        ['a', 'b'],
      ],
      [
        'images, files and audio add nothing',
        [
          { type: 'input_image', image_url: 'https://weather/x.png' },
          { type: 'input_file', file_id: 'f', filename: 'weather.txt' },
          { type: 'input_audio', audio: 'x' },
          { type: 'input_text', text: 'only me' },
        ],
        ['only me'],
      ],
      [
        'non-string text ignored',
        [
          { type: 'input_text', text: 5 },
          { type: 'input_text', text: null },
        ],
        [],
      ],
      ['bare strings in a list are not parts', ['hello'], []],
      ['null parts ignored', [null, { type: 'input_text', text: 'x' }], ['x']],
      ['null content', null, []],
      ['number content', 5, []],
      ['object content (not a list)', { type: 'input_text', text: 'x' }, []],
      ['undefined content', undefined, []],
    ];
    for (const [name, content, expected] of cases) {
      it(name, () => assert.deepStrictEqual(userTexts(content), expected));
    }
  });

  describe('contentMatcher.matches (§12 a)', () => {
    const list = (...texts: string[]) => texts.map((text) => ({ type: 'input_text', text }));
    const cases: [string, string, unknown, boolean][] = [
      ['case-insensitive ASCII', 'WEATHER', 'What is the weather?', true],
      ['lower term, upper text', 'weather', 'WEATHER REPORT', true],
      ['no match', 'rain', 'What is the weather?', false],
      ['STRASSE matches straße', 'STRASSE', 'Die Hauptstraße', true],
      ['straße matches STRASSE', 'straße', 'HAUPTSTRASSE', true],
      ['ss matches ß', 'ss', 'ß', true],
      ['Kelvin sign in text matches k', 'k', '\u212a', true],
      ['Kelvin sign in term matches K', '\u212a', 'OK', true],
      ['long s matches S', '\u017f', 'Sun', true],
      ['NFC term matches NFD text', 'caf\u00e9', 'Un cafe\u0301 noir', true],
      ['NFD term matches NFC text', 'cafe\u0301', 'Un caf\u00e9 noir', true],
      ['uppercase NFD term matches NFC text', 'CAFE\u0301', 'caf\u00e9', true],
      ['non-ASCII term matches', '22°C', 'Convert 22°C to Fahrenheit', true],
      ['JSON escape does not match', '\\u00b0', 'Convert 22°C to Fahrenheit', false],
      ['% is literal (no match)', '%', 'no percent here', false],
      ['% is literal (match)', '%', '50% off', true],
      ['_ is literal (no match)', '_', 'ab', false],
      ['_ is literal (match)', '_', 'snake_case', true],
      ['a%c is literal', 'a%c', 'abc', false],
      ['a_c is literal', 'a_c', 'abc', false],
      ['quote', '"hi"', 'say "HI"', true],
      ['backslash', 'a\\b', 'A\\B', true],
      ['slash', 'a/b', 'a/b', true],
      ['newline in term', 'a\nb', 'xa\nby', true],
      ['key "role" does not match', 'role', 'hello', false],
      ['key "content" does not match', 'content', 'hello', false],
      ['value "user" does not match', 'user', 'hello', false],
      ['"input_text" does not match list content', 'input_text', list('hello'), false],
      ['"type" does not match list content', 'type', list('hello'), false],
      ['"text" does not match list content', 'text', list('hello'), false],
      ['list part matches', 'WORLD', list('hello', 'world'), true],
      ['parts match separately', 'helloworld', list('hello', 'world'), false],
      ['parts are not joined by a space', 'hello world', list('hello', 'world'), false],
      ['image url adds nothing', 'weather', [{ type: 'input_image', image_url: 'https://weather.example/x.png' }], false],
      ['empty term matches a string', '', 'anything', true],
      ['empty term matches empty content', '', '', true],
      ['empty term matches image-only content', '', [{ type: 'input_image', image_url: 'x' }], true],
      ['empty term matches null content', '', null, true],
      ['non-empty term never matches null content', 'null', null, false],
      ['whole text', 'Hello', 'hello', true],
      ['term longer than text', 'hello!', 'hello', false],
    ];
    for (const [name, term, content, expected] of cases) {
      it(`${name}: ${JSON.stringify(term)}`, () => {
        const m = contentMatcher(term);
        assert.equal(m.matches(content), expected);
        if (expected) {
          // The pre-filter may never reject a real match.
          assert.equal(m.couldMatchRaw(pythonJsonDumps({ content, role: 'user' })), true, 'couldMatchRaw');
        }
      });
    }
  });

  describe('contentMatcher.couldMatchRaw', () => {
    const soundCases: [string, string, string][] = [
      ['ß escaped in the raw text, term ss', 'ss', '{"content": "stra\\u00dfe", "role": "user"}'],
      ['ß escaped with uppercase hex (other writer)', 'SS', '{"content": "stra\\u00DFe", "role": "user"}'],
      ['ß raw (ensure_ascii=False writer)', 'ss', '{"content": "straße", "role": "user"}'],
      ['Kelvin sign escaped, term k', 'k', '{"content": "\\u212a", "role": "user"}'],
      ['long s escaped, term S', 'S', '{"content": "\\u017f", "role": "user"}'],
      ['ﬀ escaped, term ff', 'ff', '{"content": "\\ufb00", "role": "user"}'],
      ['term ß against ASCII STRASSE', 'ß', '{"content": "STRASSE", "role": "user"}'],
      ['term Kelvin against ASCII k', '\u212a', '{"content": "ok", "role": "user"}'],
      ['ASCII letter written as \\u escape (other writer)', 'abc', '{"content": "\\u0061bc", "role": "user"}'],
      ['escaped slash (other writer)', 'a/b', '{"content": "a\\/b", "role": "user"}'],
      ['escaped quote', 'say "hi"', '{"content": "say \\"hi\\"", "role": "user"}'],
      ['escaped backslash', 'a\\b', '{"content": "a\\\\b", "role": "user"}'],
      ['whitespace-separated JSON (other writer)', 'hello', '{ "content" : "HELLO" }'],
      ['upper-case text, lower-case term', 'weather', '{"content": "WEATHER", "role": "user"}'],
      ['empty term', '', '{"content": "x", "role": "user"}'],
    ];
    for (const [name, term, raw] of soundCases) {
      it(`says true: ${name}`, () => assert.equal(contentMatcher(term).couldMatchRaw(raw), true));
    }

    it('rejects plain ASCII rows that cannot contain the term (its purpose)', () => {
      assert.equal(contentMatcher('weather').couldMatchRaw('{"content": "Convert 22 C to Fahrenheit", "role": "user"}'), false);
      assert.equal(contentMatcher('WEATHER').couldMatchRaw('{"content": "hello", "role": "user"}'), false);
    });
  });

  describe('property: couldMatchRaw never rejects a real match', () => {
    /** mulberry32: a small seeded PRNG, so every run checks the same cases. */
    function prng(seed: number): () => number {
      let a = seed >>> 0;
      return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
    }

    const ALPHABET = [
      ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
      ..." .,;:!?-+*=()[]{}<>@#$^&|~`'",
      '"',
      '\\',
      '/',
      '%',
      '_',
      '\n',
      '\t',
      '\r',
      '\b',
      '\f',
      '\x00',
      '\x1f',
      '\x7f',
      'ß',
      'ẞ',
      'SS',
      'ss',
      '\u212a',
      'K',
      'k',
      '\u017f',
      's',
      'S',
      '\ufb00',
      'ff',
      '\ufb06',
      'st',
      'é',
      'e\u0301',
      'É',
      'E\u0301',
      'İ',
      'i',
      'I',
      'ı',
      'Σ',
      'σ',
      'ς',
      '°',
      '😀',
      '𝄞',
      '\u2028',
      '\ud800',
      '\udfff',
      '\\u00df',
      '\\u',
      'u00',
      'NaN',
      'null',
      'user',
      'content',
      'role',
      'text',
      'input_text',
    ];

    function randomText(rand: () => number, maxLen: number): string {
      const n = Math.floor(rand() * maxLen);
      let s = '';
      for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)] as string;
      return s;
    }

    /** Encodings another writer might have used for the same row (the filter runs on whatever is stored). */
    const encodings: [string, (v: unknown) => string][] = [
      ['python ensure_ascii', pythonJsonDumps],
      ['python ensure_ascii=False', previewJson],
      ['JSON.stringify', (v) => JSON.stringify(v)],
      ['escaped slashes', (v) => pythonJsonDumps(v).replace(/\//g, '\\/')],
      ['uppercase hex', (v) => pythonJsonDumps(v).replace(/\\u([0-9a-f]{4})/g, (_m, h: string) => '\\u' + h.toUpperCase())],
    ];

    function variants(rand: () => number, s: string): string[] {
      const out = [s, s.toUpperCase(), s.toLowerCase(), foldForSearch(s)];
      if (s.length > 0) {
        const cps = [...s];
        const i = Math.floor(rand() * cps.length);
        const j = i + 1 + Math.floor(rand() * Math.min(6, cps.length - i));
        const sub = cps.slice(i, j).join('');
        out.push(sub, sub.toUpperCase(), sub.toLowerCase(), sub.normalize('NFD'), sub.normalize('NFC'));
      }
      return out;
    }

    it('holds for 4000 seeded random messages and terms', () => {
      const rand = prng(0x5eed1234);
      let checked = 0;
      let matched = 0;
      let asciiMatched = 0;
      const fixedTerms = ['ss', 'SS', 'ß', 'k', 'K', '\u212a', 's', '\u017f', 'ff', 'st', 'e', 'é', 'i', 'u00', '%', '_', ' '];
      for (let round = 0; round < 4000; round++) {
        const asList = rand() < 0.4;
        const texts = Array.from({ length: asList ? 1 + Math.floor(rand() * 3) : 1 }, () => randomText(rand, 24));
        const content: unknown = asList
          ? texts.map((text, i) => (i === 1 && rand() < 0.3 ? { type: 'input_image', image_url: text } : { type: 'input_text', text }))
          : texts[0];
        const source = texts[Math.floor(rand() * texts.length)] as string;
        const terms = [...variants(rand, source), randomText(rand, 4), fixedTerms[Math.floor(rand() * fixedTerms.length)] as string];
        const items = [
          { content, role: 'user' },
          { role: 'user', content },
          { type: 'message', role: 'user', content },
        ];
        for (const term of terms) {
          const m = contentMatcher(term);
          checked++;
          if (!m.matches(content)) continue;
          matched++;
          if (/^[\x20-\x7e]+$/.test(term)) asciiMatched++;
          for (const item of items) {
            for (const [encName, enc] of encodings) {
              const raw = enc(item);
              assert.equal(
                m.couldMatchRaw(raw),
                true,
                `pre-filter rejected a match: term=${JSON.stringify(term)} content=${JSON.stringify(content)} encoding=${encName} raw=${raw}`,
              );
            }
          }
        }
      }
      // The run must actually exercise matches, including the ASCII terms the shortcut applies to.
      assert.ok(checked >= 4000 * 7, `checked ${checked}`);
      assert.ok(matched >= 4000, `only ${matched} matches`);
      assert.ok(asciiMatched >= 1000, `only ${asciiMatched} ASCII-term matches`);
    });
  });
});
