/** The compare view's text and JSON diffs: each column reads as its own text, and differing arguments never show same. */
import { strict as assert } from 'node:assert';
import { matchTools } from '../../../src/shared/compare/alignment';
import { diffJsonText, MAX_JSON_DIFF_CHARS } from '../../../src/shared/compare/jsonDiff';
import { diffText } from '../../../src/shared/compare/textDiff';

const joined = (pieces: { text: string }[]): string => pieces.map((p) => p.text).join('');

/** A small deterministic generator, so a failure can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PARTS = [
  'return',
  '0',
  ';',
  'if',
  ' ',
  '  ',
  '\t',
  '\n',
  '\n\n',
  '    ',
  'x',
  'café',
  'e\u0301',
  '👍🏽',
  '🇫🇷',
  'مرحبا',
  '{',
  '}',
  ',',
  '.',
];

function randomText(next: () => number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += PARTS[Math.floor(next() * PARTS.length)];
  return out;
}

/** `text` with a few random edits, so most pairs are near-equal and diffed word by word. */
function edited(next: () => number, text: string): string {
  let out = text;
  for (let i = Math.floor(next() * 4); i >= 0; i--) {
    const at = Math.floor(next() * (out.length + 1));
    const cut = Math.floor(next() * 3);
    out = out.slice(0, at) + (next() < 0.5 ? PARTS[Math.floor(next() * PARTS.length)] : '') + out.slice(at + cut);
  }
  return out;
}

describe('compare text diffs', () => {
  it('gives each column exactly its own text, whitespace included, and marks every difference', () => {
    const next = rng(7);
    for (let i = 0; i < 400; i++) {
      const before = randomText(next, Math.floor(next() * 30));
      const after = next() < 0.8 ? edited(next, before) : randomText(next, Math.floor(next() * 30));
      const d = diffText(before, after);
      const pair = JSON.stringify([before, after]);
      assert.equal(joined(d.before), before, `baseline column of ${pair}`);
      assert.equal(joined(d.after), after, `other column of ${pair}`);
      assert.equal(d.changed, before !== after, `changed of ${pair}`);
      assert.ok(d.before.every((p) => p.change !== 'added') && d.after.every((p) => p.change !== 'removed'), pair);
      // Changed texts mark something; equal texts mark nothing.
      const marked = [...d.before, ...d.after].some((p) => p.change !== 'same');
      assert.equal(marked, before !== after, `marks of ${pair}`);
    }
  });

  it('keeps the baseline code block indentation and blank lines', () => {
    const before = 'if (x) {\n    return 0;\n}\n\nend';
    const after = 'if (x) {\n  return 1;\n}\nend';
    const d = diffText(before, after);
    assert.equal(joined(d.before), before);
    assert.equal(joined(d.after), after);
  });

  it('marks whitespace-only differences as changes', () => {
    const d = diffText('x y z', 'x  y  z');
    assert.equal(d.changed, true);
    assert.deepEqual(
      d.after.filter((p) => p.change === 'added').map((p) => p.text),
      ['  ', '  '],
    );
    assert.deepEqual(
      d.before.filter((p) => p.change === 'removed').map((p) => p.text),
      [' ', ' '],
    );
  });

  it('still joins a replaced phrase into one marked piece', () => {
    const d = diffText('alpha beta gamma delta', 'alpha one two delta');
    assert.deepEqual(d.after, [
      { text: 'alpha ', change: 'same' },
      { text: 'one two', change: 'added' },
      { text: ' delta', change: 'same' },
    ]);
  });

  it('gives one pair the same diff however slow the machine is', () => {
    // Many edits in a long pair: the diff is word by word (within the edit bound), and a clock that jumps a second
    // at every look (a loaded machine) must not turn it into a wholly replaced pair.
    const next = rng(11);
    const words = Array.from({ length: 400 }, () => `w${Math.floor(next() * 50)}`);
    const before = words.join(' ');
    const after = words.map((w, i) => (i % 9 === 0 ? 'CHANGED' : w)).join(' ');
    const calm = diffText(before, after);
    assert.ok(
      calm.after.some((p) => p.change === 'same'),
      'the pair is diffed word by word',
    );
    const realNow = Date.now;
    let t = realNow();
    Date.now = () => (t += 1000);
    try {
      assert.deepEqual(diffText(before, after), calm);
    } finally {
      Date.now = realNow;
    }
  });
});

describe('compare argument diffs', () => {
  it('compares big numbers exactly and shows them as written', () => {
    assert.deepEqual(diffJsonText('{"id":12345678901234567890}', '{"id":12345678901234567891}'), [
      { path: 'id', kind: 'changed', before: '12345678901234567890', after: '12345678901234567891' },
    ]);
    assert.deepEqual(diffJsonText('{"n":1.0,"m":1e2}', '{"n":1,"m":100}'), []);
    // A string is never taken for a number.
    assert.equal(diffJsonText('{"n":"1"}', '{"n":1}').length, 1);
  });

  it('lists a change of a key named _t outside array deltas', () => {
    assert.deepEqual(diffJsonText('{"_t":"x"}', '{"_t":"y"}'), [{ path: '_t', kind: 'changed', before: '"x"', after: '"y"' }]);
    assert.deepEqual(diffJsonText('{"o":{"_t":1}}', '{"o":{"_t":2}}'), [{ path: 'o._t', kind: 'changed', before: '1', after: '2' }]);
  });

  it('does not count key order inside array items as a change', () => {
    assert.deepEqual(diffJsonText('{"stops":[{"a":1,"b":2}]}', '{"stops":[{"b":2,"a":1}]}'), []);
    assert.deepEqual(diffJsonText('{"s":[{"a":1,"b":2},{"c":3}]}', '{"s":[{"c":3},{"b":2,"a":1}]}'), [
      { path: 's[1]', kind: 'moved', after: 'to 0' },
    ]);
  });

  it('shows arguments past the size bound as replaced, and equal ones as unchanged', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => i);
    const before = JSON.stringify({ ids });
    const after = JSON.stringify({ ids: ids.map((x) => (x % 2 === 0 ? x : -x)) });
    assert.ok(before.length + after.length > MAX_JSON_DIFF_CHARS);
    const started = performance.now();
    assert.deepEqual(diffJsonText(before, after), [{ path: '', kind: 'changed', before, after }]);
    assert.ok(performance.now() - started < 1000);
    assert.deepEqual(diffJsonText(before, JSON.stringify({ ids }, null, 2)), []);
  });
});

describe('compare tool call matching', () => {
  const call = (name: string, args: string, output = 'ok') => ({ callId: null, name, arguments: args, output });

  it('pairs equal calls of one name first, so an added call before them reads as added', () => {
    const m = matchTools(
      [call('search', '{"q":"paris"}'), call('search', '{"q":"rome"}')],
      [call('search', '{"q":"lisbon"}'), call('search', '{"q": "paris"}'), call('search', '{"q":"rome"}')],
    );
    assert.deepEqual(
      m.after.map((t) => t.status),
      ['added', 'same', 'same'],
    );
    assert.deepEqual(
      m.before.map((t) => t.status),
      ['same', 'same'],
    );
  });

  it('still pairs calls of one name with other arguments, between equal ones, as changed', () => {
    const m = matchTools([call('a', '{"x":1}'), call('b', '{}')], [call('a', '{"x":2}'), call('b', '{}')]);
    assert.deepEqual(
      m.after.map((t) => [t.name, t.status]),
      [
        ['a', 'changed'],
        ['b', 'same'],
      ],
    );
  });
});
