/** How the compare view lines branches up, and its text and JSON diffs. */
import { strict as assert } from 'node:assert';
import { compareRow, matchTools, rowCount, sharedTurnsByFork } from '../../../src/shared/compare/alignment';
import { diffJsonText, MAX_JSON_CHANGES } from '../../../src/shared/compare/jsonDiff';
import { diffText, MAX_WORD_DIFF_CHARS } from '../../../src/shared/compare/textDiff';
import { turnContent } from '../../../src/shared/compare/turnContent';

const b = (branchId: string, parentBranchId: string | null = null, forkTurn: number | null = null) => ({
  branchId,
  parentBranchId,
  forkTurn,
});

describe('compare alignment', () => {
  // main: 10 turns; a: from main at 1 (shares nothing); c: from main at 10 (shares 1–9); n: from c at 10+1.
  const tree = [b('main'), b('a', 'main', 1), b('c', 'main', 10), b('n', 'c', 11)];

  it('finds the shared turns from the fork structure: fork at turn 1, at the last turn, nested', () => {
    assert.equal(sharedTurnsByFork(tree, ['main', 'a'], [10, 4]), 0);
    assert.equal(sharedTurnsByFork(tree, ['main', 'c'], [10, 12]), 9);
    assert.equal(sharedTurnsByFork(tree, ['c', 'n'], [12, 11]), 10);
    assert.equal(sharedTurnsByFork(tree, ['main', 'n'], [10, 11]), 9);
    assert.equal(sharedTurnsByFork(tree, ['a', 'n'], [4, 11]), 0);
    assert.equal(sharedTurnsByFork(tree, ['main', 'c', 'n'], [10, 12, 11]), 9);
    // A branch against itself shares everything; an empty branch shares nothing.
    assert.equal(sharedTurnsByFork(tree, ['main', 'main'], [10, 10]), 10);
    assert.equal(sharedTurnsByFork(tree, ['main', 'a'], [10, 0]), 0);
  });

  it('counts rows by the longest column after the shared turns', () => {
    assert.equal(rowCount(9, [10, 12]), 3);
    assert.equal(rowCount(10, [10, 10]), 0);
  });

  it('matches tool calls by name in order, so an extra call does not shift the others', () => {
    const call = (name: string, args: string, output = 'ok') => ({ callId: null, name, arguments: args, output });
    const m = matchTools(
      [call('search', '{"q":"a"}'), call('fetch', '{"u":1}')],
      [call('search', '{"q":"b"}'), call('lookup', '{}'), call('fetch', '{"u":1}')],
    );
    assert.deepEqual(
      m.after.map((t) => [t.name, t.status]),
      [
        ['search', 'changed'],
        ['lookup', 'added'],
        ['fetch', 'same'],
      ],
    );
    assert.deepEqual(m.after[0]!.argumentChanges, [{ path: 'q', kind: 'changed', before: '"a"', after: '"b"' }]);
    assert.equal(m.changed, true);
    assert.equal(matchTools([call('x', '{}')], [call('x', '{}', 'other')]).after[0]!.outputChanged, true);
  });

  it('marks a row whose column lacks the turn as differing', () => {
    const content = turnContent(3, [{ corrupt: false, item: { role: 'user', content: 'hi' }, createdAt: null }]);
    const row = compareRow(0, 3, [{ content, usage: null, cost: null }, null]);
    assert.equal(row.differs, true);
    assert.equal(row.sides[1], null);
    const same = compareRow(0, 3, [
      { content, usage: null, cost: null },
      { content, usage: null, cost: null },
    ]);
    assert.equal(same.differs, false);
  });

  it('pairs outputs with their calls by call id, in Python’s and the JS SDK’s shapes', () => {
    const c = turnContent(1, [
      { corrupt: false, item: { role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] }, createdAt: 't' },
      {
        corrupt: false,
        item: { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        createdAt: null,
      },
      {
        corrupt: false,
        item: { type: 'function_call_result', callId: 'c2', name: 'other', output: { type: 'text', text: 'x' } },
        createdAt: null,
      },
      { corrupt: false, item: { type: 'function_call_output', call_id: 'c1', output: 'Sunny' }, createdAt: null },
      { corrupt: false, item: { type: 'reasoning', summary: [] }, createdAt: null },
      { corrupt: true, createdAt: null },
    ]);
    assert.equal(c.user, 'Weather?');
    assert.deepEqual(
      c.tools.map((t) => [t.name, t.output]),
      [
        ['get_weather', 'Sunny'],
        ['other', 'x'],
      ],
    );
    assert.equal(c.otherItems, 1);
    assert.equal(c.unreadable, 1);
  });
});

describe('compare diffs', () => {
  it('diffs words, and shows very long or unrelated texts as replaced', () => {
    const d = diffText('the cat sat', 'the dog sat');
    assert.deepEqual(d.after, [
      { text: 'the ', change: 'same' },
      { text: 'dog', change: 'added' },
      { text: ' sat', change: 'same' },
    ]);
    assert.deepEqual(diffText('same', 'same'), {
      before: [{ text: 'same', change: 'same' }],
      after: [{ text: 'same', change: 'same' }],
      changed: false,
    });
    const long = 'x '.repeat(MAX_WORD_DIFF_CHARS);
    assert.deepEqual(diffText(long, `${long}y`).after, [{ text: `${long}y`, change: 'added' }]);
    const unrelated = diffText('alpha beta gamma delta epsilon zeta eta theta', 'one two three four five six seven eight nine ten');
    assert.equal(unrelated.after.length, 1);
    assert.equal(unrelated.after[0]!.change, 'added');
  });

  it('diffs JSON structurally: spacing is not a change, keys and array items are', () => {
    assert.deepEqual(diffJsonText('{"a": 1}', '{"a":1}'), []);
    assert.deepEqual(diffJsonText('{"list":[{"id":1},{"id":2}]}', '{"list":[{"id":0},{"id":1},{"id":2}]}'), [
      { path: 'list[0]', kind: 'added', after: '{"id":0}' },
    ]);
    assert.deepEqual(diffJsonText('not json', 'also not'), [{ path: '', kind: 'changed', before: 'not json', after: 'also not' }]);
    const many = diffJsonText(JSON.stringify({}), JSON.stringify(Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i]))));
    assert.equal(many.length, MAX_JSON_CHANGES);
    assert.match(many[many.length - 1]!.after ?? '', /31 more changes/);
  });
});
