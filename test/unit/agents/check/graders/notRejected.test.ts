/**
 * `not-rejected`, the check's own rule for a bad turn's case (src/agents/check/graders/notRejected.ts): when a run's
 * answer repeats the answer reviewed as bad (NFC, case and whitespace aside), and its result, which names the rule and
 * never quotes the answer: failing on a repeat, passing otherwise.
 */
import { strict as assert } from 'node:assert';
import {
  NOT_REJECTED,
  notRejectedResult,
  rejectedAnswerKey,
  repeatedRejectedResult,
  repeatsRejected,
  withRejectedRedacted,
} from '../../../../../src/agents/check/graders/notRejected';
import { weatherCase } from '../checkKit';

describe('not-rejected: a bad case’s run must not repeat the answer reviewed as bad', () => {
  const rejected = 'Take an umbrella: it is raining in Paris.';

  it('the same text repeats it, whatever its case, its whitespace (line breaks, tabs, no-break spaces) or its Unicode form', () => {
    for (const answer of [rejected, 'take an umbrella: IT IS RAINING IN PARIS.', '  Take an umbrella:\n\tit is  raining in\u00a0Paris.\n'])
      assert.equal(repeatsRejected(rejected, answer), true, JSON.stringify(answer));
    // NFD (a letter, then its combining accent) against NFC (the accented letter).
    assert.equal(repeatsRejected('Il pleut à Paris, café fermé.', 'Il pleut a\u0300 Paris, cafe\u0301 ferme\u0301.'), true);
    assert.equal(rejectedAnswerKey(' A\u00a0\u00a0B\r\nC '), 'a b c');
  });

  it('anything else does not: other punctuation or words, more or less text; nor a case without a rejected answer', () => {
    for (const answer of [
      'Take an umbrella: it is raining in Paris',
      'Take an umbrella; it is raining in Paris.',
      'No umbrella needed: it is sunny in Paris.',
      `${rejected} Stay dry!`,
      'It is sunny in Paris.',
    ])
      assert.equal(repeatsRejected(rejected, answer), false, JSON.stringify(answer));
    // No rejected answer (a good turn's case, a case made by hand), or one with no text: nothing to repeat.
    assert.equal(repeatsRejected(null, rejected), false);
    assert.equal(repeatsRejected(undefined, rejected), false);
    assert.equal(repeatsRejected(' \n ', ' '), false);
    // An empty answer is the "wrote no answer" error's, not this rule's.
    assert.equal(repeatsRejected(rejected, ''), false);
  });

  it('fails as a grader result named not-rejected, with a reason that says so and never quotes the answer', () => {
    assert.deepEqual(repeatedRejectedResult(), {
      grader: NOT_REJECTED,
      pass: false,
      score: 0,
      reason: 'repeats the answer reviewed as bad (the same text, ignoring case and whitespace)',
    });
    assert.equal(NOT_REJECTED, 'not-rejected');
  });

  it('its result on a run of a case: a fail on a repeat, else a pass that says so; none without a rejected answer', () => {
    const bad = weatherCase({ verdict: 'bad', expected: { answer: 'No umbrella needed.', trajectory: null, rejected } });
    assert.deepEqual(notRejectedResult(bad, ' TAKE an umbrella: it is raining in Paris. '), repeatedRejectedResult());
    assert.deepEqual(notRejectedResult(bad, 'No umbrella needed: it is sunny.'), {
      grader: 'not-rejected',
      pass: true,
      score: 1,
      reason: 'the answer differs from the one reviewed as bad',
    });
    // A good turn's case, a bad one whose corrected message held no text, a case made by hand: the rule says nothing.
    assert.equal(notRejectedResult(weatherCase(), rejected), null);
    assert.equal(notRejectedResult({ ...bad, expected: { ...bad.expected, rejected: null } }, 'Sunny.'), null);
    assert.equal(notRejectedResult({ ...bad, expected: { answer: 'x', trajectory: null } }, 'Sunny.'), null);
  });

  it('a result’s case holds its rejected answer redacted; a case with nothing to redact is the same case', () => {
    const bad = weatherCase({ verdict: 'bad', expected: { answer: 'Sunny.', trajectory: null, rejected: 'my key is k-123' } });
    const shown = withRejectedRedacted(bad, (t) => t.replace('k-123', '[redacted]'));
    assert.equal(shown.expected.rejected, 'my key is [redacted]');
    assert.equal(bad.expected.rejected, 'my key is k-123', 'the case itself is not changed');
    assert.equal(
      withRejectedRedacted(bad, (t) => t),
      bad,
    );
    const good = weatherCase();
    assert.equal(
      withRejectedRedacted(good, () => 'x'),
      good,
    );
  });
});
