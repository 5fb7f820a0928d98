/** The answer graders: exact, normalized, contains, json and regex, each passing and failing with its reason. */
import { strict as assert } from 'node:assert';
import { AnswerGrader, RegexAnswerGrader, normalizeAnswer } from '../../../../../src/agents/check/graders/answerGraders';
import { graderResult } from '../../../../../src/agents/check/graders/graderResult';
import { never, weatherCase, weatherRun } from '../checkKit';

const grade = (mode: 'exact' | 'normalized' | 'contains' | 'json', expected: string | null, actual: string) =>
  new AnswerGrader(mode).grade(weatherCase({ expected: { answer: expected, trajectory: [] } }), weatherRun({ answer: actual }), never);

describe('answer graders', () => {
  it('exact: the same text passes; one character off fails, showing where', async () => {
    assert.deepEqual(await grade('exact', 'Sunny, 22 °C.', 'Sunny, 22 °C.'), {
      grader: 'answer:exact',
      pass: true,
      score: 1,
      reason: 'the answer is the expected text exactly',
    });
    const r = await grade('exact', 'Sunny, 22 °C.', 'Sunny, 23 °C.');
    assert.equal(r.pass, false);
    assert.equal(r.score, 0);
    assert.equal(r.reason, 'differs at character 9: expected "Sunny, 22 °C.", got "Sunny, 23 °C."');
  });

  it('normalized: case, inner whitespace, NFKC and punctuation at the ends do not matter; words do', async () => {
    assert.equal(normalizeAnswer('  «Sunny,\n\tTwenty-two  ＤＥＧＲＥＥＳ!»  '), 'sunny, twenty-two degrees');
    assert.equal((await grade('normalized', 'Sunny, twenty-two degrees.', '“sunny,   TWENTY-TWO degrees”')).pass, true);
    const r = await grade('normalized', 'Sunny, twenty-two degrees.', 'Sunny; twenty-two degrees.');
    assert.equal(r.pass, false);
    assert.match(r.reason, /^normalized, differs at character 6: expected "sunny, twenty-two degrees", got "sunny; twenty-two degrees"$/);
  });

  it('contains: the normalized expected text inside the answer passes; absent fails, quoting both', async () => {
    assert.equal((await grade('contains', 'Sunny.', 'Today it is SUNNY in Paris')).pass, true);
    const r = await grade('contains', 'Sunny.', 'Rain all day in Paris');
    assert.equal(r.pass, false);
    assert.equal(r.reason, 'the answer does not contain "sunny"; it begins "rain all day in paris"');
    assert.match((await grade('contains', ' ... ', 'anything')).reason, /empty once normalized/);
  });

  it('json: equal values pass whatever the key order and spacing; a different value fails with its path', async () => {
    assert.equal((await grade('json', '{"city":"Paris","temp":22}', ' { "temp": 22.0, "city": "Paris" }\n')).pass, true);
    const r = await grade('json', '{"city":"Paris","temp":22}', '{"city":"Paris","temp":23}');
    assert.equal(r.pass, false);
    assert.equal(r.reason, 'JSON differs: temp: 22 → 23');
    assert.match((await grade('json', '{"a":1}', 'It is {"a":1}')).reason, /^the answer is not JSON: "It is/);
    assert.match((await grade('json', 'sunny', '{}')).reason, /^the expected answer is not JSON/);
  });

  it('a case without an expected answer fails every comparing grader, saying so', async () => {
    for (const mode of ['exact', 'normalized', 'contains', 'json'] as const) {
      const r = await grade(mode, null, 'anything');
      assert.deepEqual([r.pass, r.reason], [false, 'the case has no expected answer to compare with'], mode);
    }
  });

  it('regex: searched anywhere, the spec flags honoured, a miss quotes the answer', async () => {
    const g = new RegexAnswerGrader(/\b2\d\s*°C/u);
    const pass = await g.grade(weatherCase(), weatherRun({ answer: 'Sunny and 22 °C' }), never);
    assert.deepEqual([pass.pass, pass.reason], [true, 'matches /\\b2\\d\\s*°C/u at character 11']);
    const fail = await g.grade(weatherCase(), weatherRun({ answer: 'Cold: 4 °C' }), never);
    assert.deepEqual([fail.pass, fail.score], [false, 0]);
    assert.equal(fail.reason, 'does not match /\\b2\\d\\s*°C/u; the answer begins "Cold: 4 °C"');
    const i = new RegexAnswerGrader(/^sunny/iu);
    assert.equal(i.name, 'answer:regex:i=^sunny');
    assert.equal((await i.grade(weatherCase(), weatherRun({ answer: 'SUNNY' }), never)).pass, true);
  });

  it('keeps a reason to one line of at most 300 characters and a score within 0..1, whatever a grader says', () => {
    const r = graderResult('command:"x"', true, 7, `line one\n\tline two ${'x'.repeat(5000)}`);
    assert.equal(r.score, 1);
    assert.ok(r.reason.startsWith('line one line two xxx'));
    assert.equal(r.reason.length, 300);
    assert.ok(r.reason.endsWith('…'));
    assert.equal(graderResult('g', false, Number.NaN, 'r').score, 0);
  });
});
