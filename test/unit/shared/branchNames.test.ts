import { strict as assert } from 'node:assert';
import { branchNameProblem, suggestedBranchName, whatIfBranchNames } from '../../../src/shared/branchNames';
import { visibleText } from '../../../src/shared/unicodeText';

describe('branchNameProblem', () => {
  const used = new Set(['main', 'alt', 'branch_from_turn_2_1700000000']);
  const cases: [string, RegExp | undefined][] = [
    ['', /cannot be empty/],
    ['   ', /cannot be empty/],
    ['\t', /cannot be empty/],
    [' padded', /start or end with spaces/],
    ['padded ', /start or end with spaces/],
    ['main', /'main'/],
    ['alt', /already been used/],
    ['branch_from_turn_2_1700000000', /already been used/],
    ['line\nbreak', /control characters/],
    ['next\u0085line', /control characters/], // C1, which the store refuses too
    ['half\ud800', /half of a character/], // a lone surrogate, which the store refuses too
    ['main\u200b', /invisible or direction-changing/], // looks like main; the store refuses it too
    ['fix\u202egnp.exe', /invisible or direction-changing/], // shown as fixexe.png
    ['\u2066main\u2069', /invisible or direction-changing/],
    ['family 👨\u200d👩\u200d👧', undefined], // the zero-width joiner of an emoji sequence
    ['emoji 😀', undefined],
    ['x'.repeat(201), /at most 200/],
    ['new-idea', undefined],
    ['Alt', undefined], // ids are case-sensitive in the store
    ['straße ✓', undefined],
    ['x'.repeat(200), undefined],
  ];
  for (const [name, problem] of cases) {
    it(`${JSON.stringify(name.length > 20 ? name.slice(0, 20) + '…' : name)} → ${problem ?? 'accepted'}`, () => {
      const got = branchNameProblem(name, used);
      if (problem) assert.match(got ?? '', problem);
      else assert.equal(got, undefined);
    });
  }
});

describe('suggestedBranchName', () => {
  it('offers <branch>-turn-<n>, and the next free -2, -3, … once that was used', () => {
    assert.equal(suggestedBranchName('main', 2, new Set(['main'])), 'main-turn-2');
    assert.equal(suggestedBranchName('main', 2, new Set(['main', 'main-turn-2'])), 'main-turn-2-2');
    assert.equal(suggestedBranchName('main', 2, new Set(['main', 'main-turn-2', 'main-turn-2-2'])), 'main-turn-2-3');
    for (const name of [suggestedBranchName('alt', 7, new Set(['alt-turn-7']))])
      assert.equal(branchNameProblem(name, new Set(['alt-turn-7'])), undefined);
  });
});

describe('whatIfBranchNames and visibleText', () => {
  it('a model name with invisible characters gives a name the prompts accept', () => {
    const [name] = whatIfBranchNames('retry', ['gpt\u200b-4o\u202e'], new Set());
    assert.equal(name, 'retry-gpt-4o-1');
    assert.equal(branchNameProblem(name!, new Set()), undefined);
  });

  it('shows a stored name with its hidden characters written out, and any other name as it is', () => {
    assert.equal(visibleText('main\u200b'), 'main<U+200B>');
    assert.equal(visibleText('fix\u202egnp.exe'), 'fix<U+202E>gnp.exe');
    assert.equal(visibleText('family 👨\u200d👩\u200d👧'), 'family 👨\u200d👩\u200d👧');
  });
});
