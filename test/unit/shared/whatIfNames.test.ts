import { strict as assert } from 'node:assert';
import { branchNameProblem, whatIfBranchNames } from '../../../src/shared/branchNames';
import {
  MAX_WHAT_IF_MODELS,
  commandModel,
  runModelLabel,
  whatIfModelChoices,
  whatIfSelectionProblem,
} from '../../../src/shared/whatIfModels';

describe('what-if branch names', () => {
  it('names a retry after its model, numbered from 1', () => {
    assert.deepEqual(whatIfBranchNames('retry', ['gpt-4o'], new Set(['main'])), ['retry-gpt-4o-1']);
    assert.deepEqual(whatIfBranchNames('edit', ['gpt-4.1-mini'], new Set(['main'])), ['edit-gpt-4.1-mini-1']);
  });

  it('never hands out a name the session used, deleted branches included, nor one name twice in a batch', () => {
    const used = new Set(['main', 'retry-gpt-4o-1', 'retry-gpt-4o-3']);
    assert.deepEqual(whatIfBranchNames('retry', ['gpt-4o', 'gpt-4o', 'o3'], used), ['retry-gpt-4o-2', 'retry-gpt-4o-4', 'retry-o3-1']);
  });

  it('makes valid names of any model name: spaces, control characters, very long names, an empty name', () => {
    const long = 'org/' + 'x'.repeat(400);
    const names = whatIfBranchNames('retry', ['  llama 3.1:8b ', 'bad\u0000\nname', long, ' '], new Set());
    assert.deepEqual(names.slice(0, 2), ['retry-llama-3.1:8b-1', 'retry-badname-1']);
    assert.equal(names[3], 'retry-1');
    for (const name of names) assert.equal(branchNameProblem(name, new Set()), undefined, name);
    assert.ok(Array.from(names[2] as string).length <= 80, names[2]);
  });
});

describe('what-if models', () => {
  it('offers the configured model first, then the listed ones, trimmed and without repeats', () => {
    assert.deepEqual(whatIfModelChoices('gpt-4.1-mini', ['gpt-4o', ' gpt-4.1-mini ', '', 'o3', 'gpt-4o', 42, null]), [
      'gpt-4.1-mini',
      'gpt-4o',
      'o3',
    ]);
    assert.deepEqual(whatIfModelChoices('', ['a']), ['a']);
  });

  it('runs 1 to 4 distinct models at once', () => {
    assert.equal(MAX_WHAT_IF_MODELS, 4);
    assert.equal(whatIfSelectionProblem(['a']), undefined);
    assert.equal(whatIfSelectionProblem(['a', 'b', 'c', 'd']), undefined);
    assert.match(whatIfSelectionProblem(['a', 'b', 'c', 'd', 'e']) ?? '', /at most 4/);
    assert.match(whatIfSelectionProblem([]) ?? '', /at least one/);
    assert.match(whatIfSelectionProblem(['a', 'a']) ?? '', /twice/);
  });
});

describe('the model a run is labelled with', () => {
  it("an agent command left on its own model is 'agent's own model', unpriced, not the configured model", () => {
    assert.equal(commandModel('gpt-4.1-mini', 'gpt-4.1-mini'), null);
    assert.equal(commandModel(undefined, 'gpt-4.1-mini'), null);
    const own = runModelLabel('gpt-4.1-mini', 'gpt-4.1-mini', true);
    assert.deepEqual(own, { label: "agent's own model", namePart: 'own-model', model: null });
    assert.deepEqual(whatIfBranchNames('retry', [own.namePart], new Set(['main'])), ['retry-own-model-1']);
  });

  it('a model passed to a command, and any model of our own agent, is named and priced as itself', () => {
    assert.equal(commandModel('o3', 'gpt-4.1-mini'), 'o3');
    assert.deepEqual(runModelLabel('o3', 'gpt-4.1-mini', true), { label: 'o3', namePart: 'o3', model: 'o3' });
    assert.deepEqual(runModelLabel('gpt-4.1-mini', 'gpt-4.1-mini', false), {
      label: 'gpt-4.1-mini',
      namePart: 'gpt-4.1-mini',
      model: 'gpt-4.1-mini',
    });
  });
});
