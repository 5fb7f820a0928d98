/** `--grader` specs: every form becomes its grader; every mistake is a GraderSpecError before anything runs. */
import { strict as assert } from 'node:assert';
import { GraderSpecError } from '../../../../../src/agents/check/graders/graderErrors';
import { defaultGraderSpecs, parseGrader, parseGraders } from '../../../../../src/agents/check/graders/graderSpec';
import { never, weatherCase, weatherRun } from '../checkKit';

const refused = (spec: string, pattern: RegExp, ctx = {}) =>
  assert.throws(
    () => parseGrader(spec, ctx),
    (e: unknown) => e instanceof GraderSpecError && pattern.test(e.message),
    spec,
  );

describe('grader specs', () => {
  it('names each grader it builds', () => {
    const key = { apiKey: 'sk-test-0123456789', model: 'gpt-x' };
    const names = [
      'trajectory',
      'trajectory:args',
      'answer:exact',
      'answer:normalized',
      'answer:contains',
      'answer:json',
      'answer:regex=^It is',
      'answer:regex:is=sunny.*22',
      'command:"node grade.js --strict"',
      'command:python grade.py',
      'model',
      'model:llama3.1:8b',
      'model:claude@2024@',
    ].map((s) => parseGrader(s, key).name);
    assert.deepEqual(names, [
      'trajectory',
      'trajectory:args',
      'answer:exact',
      'answer:normalized',
      'answer:contains',
      'answer:json',
      'answer:regex=^It is',
      'answer:regex:is=sunny.*22',
      'command:"node grade.js --strict"',
      'command:"python grade.py"',
      'model:gpt-x',
      'model:llama3.1:8b',
      'model:claude@2024',
    ]);
  });

  it('reads a quoted command as a JSON string, escapes included', async () => {
    const g = parseGrader(String.raw`command:"node -e \"console.log(JSON.stringify({pass:true,reason:'q'}))\""`);
    assert.equal(g.name, String.raw`command:"node -e \"console.log(JSON.stringify({pass:true,reason:'q'}))\""`);
    assert.deepEqual(await g.grade(weatherCase(), weatherRun(), never), { grader: g.name, pass: true, score: 1, reason: 'q' });
  });

  it('refuses what is no grader, naming the known ones', () => {
    refused('trajectroy', /"trajectroy" is not a grader\. Known: trajectory, trajectory:args, answer:exact/);
    refused('answer:fuzzy', /not an answer grader/);
    refused('answer:regex', /not a regex grader/);
    refused('answer:regex:g=x', /flags among i, m, s/);
    refused('answer:regex=', /needs a pattern/);
    refused('answer:regex=(unclosed', /is not a regular expression/);
    refused(`answer:regex=${'a'.repeat(1001)}`, /at most 1000/);
    refused('command:', /needs a command line/);
    refused('command:"unterminated', /not one quoted string/);
    refused('modelx', /is not a grader/);
    refused('model:', /names no model/, { apiKey: 'sk-test-0123456789' });
    refused('model', /needs an API key/);
    refused('x'.repeat(5000), /at most 4000 characters/);
  });

  it('defaults to trajectory, plus model when a key is configured; refuses a grader given twice', () => {
    assert.deepEqual(defaultGraderSpecs({}), ['trajectory']);
    assert.deepEqual(defaultGraderSpecs({ apiKey: 'sk-test-0123456789' }), ['trajectory', 'model']);
    assert.deepEqual(
      parseGraders([], { apiKey: 'sk-test-0123456789' }).map((g) => g.name),
      ['trajectory', 'model:gpt-4.1-mini'],
    );
    assert.deepEqual(
      parseGraders(['answer:exact', 'trajectory:args']).map((g) => g.name),
      ['answer:exact', 'trajectory:args'],
    );
    assert.throws(
      () => parseGraders(['trajectory', ' trajectory']),
      (e: unknown) => e instanceof GraderSpecError && /given twice/.test(e.message),
    );
  });
});
