import { strict as assert } from 'node:assert';
import { SearchQueryError, formatSearchQuery, parseSearchQuery, reviewOnly, reviewTurnSet } from '../../../../src/store';
import { MAX_SEARCH_QUERY_CHARS } from '../../../../src/store/search/searchQuery';
import { turnFilter, turnSetKey } from '../../../../src/store/search/reviewTurns';
import { foldForSearch } from '../../../../src/store/format/conversationText';
import { FOLDS_INTO_ASCII, failedReason, rawCouldMatch } from '../../../../src/store/search/itemMatch';

describe('parseSearchQuery', () => {
  it('reads free text, quoted text and the filters', () => {
    assert.deepEqual(parseSearchQuery('refund  policy'), { text: 'refund policy', tools: [], roles: [], failed: false });
    assert.deepEqual(parseSearchQuery('tool:Get_Weather is:failed role:USER'), {
      text: '',
      tools: ['get_weather'],
      roles: ['user'],
      failed: true,
    });
    assert.deepEqual(parseSearchQuery('"tool:x is here" role:assistant'), {
      text: 'tool:x is here',
      tools: [],
      roles: ['assistant'],
      failed: false,
    });
    assert.deepEqual(parseSearchQuery('tool:"crm lookup" 50%_off').tools, ['crm lookup']);
    assert.equal(parseSearchQuery('50%_off').text, '50%_off');
  });

  it('says what is wrong with a query', () => {
    assert.throws(() => parseSearchQuery('   '), SearchQueryError);
    assert.throws(() => parseSearchQuery('is:slow'), /Unknown filter "is:slow"/);
    assert.throws(() => parseSearchQuery('role:robot'), /Unknown role "robot"/);
    assert.throws(() => parseSearchQuery('tool:'), /"tool:" needs a value/);
    assert.throws(() => parseSearchQuery('reviewed:maybe'), /"reviewed:" takes yes or no/);
    assert.throws(() => parseSearchQuery('reviewed:no is:bad'), /cannot have a verdict or a tag/);
    assert.throws(() => parseSearchQuery('reviewed:yes reviewed:no'), /match nothing/);
    assert.throws(() => parseSearchQuery('tag:'), /"tag:" needs a value, e.g. tag:wrong-tool/);
  });

  it('refuses a query longer than its bound, naming it, wherever it was typed (one parser)', () => {
    assert.equal(MAX_SEARCH_QUERY_CHARS, 10_000);
    assert.equal(parseSearchQuery('a'.repeat(MAX_SEARCH_QUERY_CHARS)).text.length, MAX_SEARCH_QUERY_CHARS);
    for (const long of ['a'.repeat(MAX_SEARCH_QUERY_CHARS + 1), `tool:${'x'.repeat(100_000)}`]) {
      assert.throws(
        () => parseSearchQuery(long),
        (e: unknown) => e instanceof SearchQueryError && /a search query may be at most 10,000$/.test(e.message),
      );
    }
  });

  it('reads the review filters, which alone make a query', () => {
    assert.deepEqual(parseSearchQuery('is:bad tag:"Wrong Tool" refund').review, {
      verdicts: ['bad'],
      tags: ['wrong-tool'],
      reviewed: null,
    });
    assert.deepEqual(parseSearchQuery('reviewed:no').review, { verdicts: [], tags: [], reviewed: false });
    assert.deepEqual(parseSearchQuery('is:good is:bad is:good').review?.verdicts, ['good', 'bad']);
    assert.equal(parseSearchQuery('refund').review, undefined);
    assert.ok(reviewOnly(parseSearchQuery('is:bad tag:x')));
    assert.ok(!reviewOnly(parseSearchQuery('is:bad is:failed')));
    assert.equal(formatSearchQuery(parseSearchQuery('is:bad tag:slow reviewed:yes x')), 'x is:bad tag:slow reviewed:yes');
  });
});

describe('reviewTurnSet', () => {
  const r = (branchId: string, turn: number, verdict: 'good' | 'bad' | null, tags: string[] = []) => ({
    sessionId: 's',
    branchId,
    turn,
    verdict,
    tags,
  });
  const reviews = [r('main', 1, 'good'), r('main', 2, 'bad', ['wrong-tool']), r('alt', 2, null, ['too-slow']), r('alt', 3, 'bad')];
  const allowed = (q: string, turns: [string, number][]) => {
    const test = turnFilter(reviewTurnSet(parseSearchQuery(q).review!, reviews));
    return turns.filter(([b, t]) => test('s', b, t)).map(([b, t]) => `${b}:${t}`);
  };
  const every: [string, number][] = [
    ['main', 1],
    ['main', 2],
    ['main', 3],
    ['alt', 2],
    ['alt', 3],
  ];

  it('keeps the turns whose review has a verdict and a tag asked for; reviewed:no keeps the rest', () => {
    assert.deepEqual(allowed('is:bad', every), ['main:2', 'alt:3']);
    assert.deepEqual(allowed('is:bad tag:wrong-tool', every), ['main:2']);
    assert.deepEqual(allowed('tag:too-slow tag:wrong-tool', every), ['main:2', 'alt:2']);
    assert.deepEqual(allowed('reviewed:yes', every), ['main:1', 'main:2', 'alt:2', 'alt:3']);
    assert.deepEqual(allowed('reviewed:no', every), ['main:3']);
    assert.deepEqual(
      allowed('is:good', [
        ['main', 1],
        ['other', 1],
      ]),
      ['main:1'],
    );
  });

  it('answers as a lookup of whole keys, ids holding U+0000 and the separator itself included', () => {
    // What the filter answered before it split the keys: the turn's key looked up among the keys as given.
    const byWholeKeys = (keys: string[], s: string, b: string, t: number) => new Set(keys).has(turnSetKey(s, b, t));
    const ids = ['s', 'main', 'a\u0000b', 'a', 'b', '', '\u0000', '5'];
    const places: [string, string, number][] = [];
    for (const s of ids) for (const b of ids) for (const t of [0, 5, 12]) places.push([s, b, t]);
    // Key sets: plain ones, one whose key holds U+0000 inside an id (splits into more than three), and raw strings.
    const keySets = [
      places
        .filter((_, i) => i % 3 === 0 && !places[i]![0].includes('\u0000') && !places[i]![1].includes('\u0000'))
        .map((p) => turnSetKey(...p)),
      places.filter((_, i) => i % 5 === 1).map((p) => turnSetKey(...p)),
      ['a\u0000b\u00005', 's\u0000main', 'x', ''],
      [],
    ];
    let compared = 0;
    for (const keys of keySets) {
      for (const mode of ['only', 'except'] as const) {
        const test = turnFilter({ mode, keys });
        for (const [s, b, t] of places) {
          const expected = mode === 'only' ? byWholeKeys(keys, s, b, t) : !byWholeKeys(keys, s, b, t);
          assert.equal(test(s, b, t), expected, `${mode} ${JSON.stringify(keys.slice(0, 3))}: ${JSON.stringify([s, b, t])}`);
          compared++;
        }
      }
    }
    assert.ok(compared > 1000);
  });
});

describe('failedReason', () => {
  it('recognises the SDKs’ tool errors and timeouts, failed built-in calls and MCP errors, nothing else', () => {
    const out = (output: unknown) => ({ type: 'function_call_output', call_id: 'c', output });
    assert.equal(failedReason(out('An error occurred while running the tool. Please try again.')), 'tool error');
    assert.equal(
      failedReason(out([{ type: 'input_text', text: 'An error occurred while running the tool. Please try again. Error: x' }])),
      'tool error',
    );
    assert.equal(
      failedReason({
        type: 'function_call_result',
        callId: 'c',
        name: 'f',
        output: { type: 'text', text: "Tool 'f' timed out after 500ms." },
      }),
      'timed out',
    );
    assert.equal(failedReason({ type: 'code_interpreter_call', status: 'incomplete' }), 'status incomplete');
    assert.equal(failedReason({ type: 'mcp_call', server_label: 's', name: 'n', error: 'denied' }), 'MCP error');
    assert.equal(failedReason(out('city not found')), null);
    assert.equal(failedReason({ role: 'assistant', status: 'incomplete', content: [] }), null, 'a cut-off message is not a tool call');
    assert.equal(failedReason({ type: 'mcp_call', error: null }), null);
  });
});

describe('the raw-text check before decoding', () => {
  it('lists exactly the characters whose folding holds ASCII (every code point folded)', function () {
    this.timeout(60_000);
    let found = '';
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      // eslint-disable-next-line no-control-regex -- ASCII includes the control characters
      if (/[\x00-\x7f]/.test(foldForSearch(ch))) found += ch;
    }
    assert.equal(found, FOLDS_INTO_ASCII);
  });

  it('rejects only raw text whose decoded text cannot hold the needle', () => {
    assert.equal(rawCouldMatch('{"content": "The WEATHER"}', 'weather'), true);
    assert.equal(rawCouldMatch('{"content": "caf\\u00e9 \\u2014 22\\u00b0C"}', 'weather'), false);
    // ß folds to ss: escaped (Python) or raw (JS), the row must be decoded.
    assert.equal(rawCouldMatch('{"content": "stra\\u00dfe"}', 'strasse'), true);
    assert.equal(rawCouldMatch('{"content": "straße"}', 'strasse'), true);
    assert.equal(rawCouldMatch('{"content": "STRA\\u00DFE"}', 'strasse'), true);
  });
});
