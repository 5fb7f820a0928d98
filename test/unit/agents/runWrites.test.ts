/**
 * Which of a branch's new items are an agent command's run (src/agents/runWrites.ts `ownSpan`): its turn, told by the
 * message the run gave, among what other writers of the file added to the same branch.
 */
import { strict as assert } from 'node:assert';
import { ownSpan } from '../../../src/agents/runWrites';

const user = (content: unknown) => ({ role: 'user', content });
const answer = (text: string) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
const call = { type: 'function_call', call_id: 'c1', name: 't', arguments: '{}' };

describe('ownSpan: the run’s turn among the branch’s new items', () => {
  it('starts at the first user message with the run’s text and ends before the next user message', () => {
    const items = [user('theirs'), answer('a'), user('mine'), call, answer('b'), user('later'), answer('c')];
    assert.deepEqual(ownSpan(items, 'mine'), { start: 2, end: 5, proven: true });
  });

  it('matches the text whatever the shape: a string, or input_text parts (as the JS SDK may store it)', () => {
    const items = [user([{ type: 'input_text', text: 'mine' }]), answer('b')];
    assert.deepEqual(ownSpan(items, [user('mine')]), { start: 0, end: 2, proven: true });
  });

  it('takes every user message the run gave, in order, into its turn', () => {
    const items = [user('one'), user('two'), answer('b'), user('theirs')];
    assert.deepEqual(ownSpan(items, [user('one'), user('two')]), { start: 0, end: 3, proven: true });
  });

  it('without a user message of the run’s text: the first new user message, by position only', () => {
    assert.deepEqual(ownSpan([answer('x'), user('rephrased'), answer('b'), user('theirs')], 'mine'), {
      start: 1,
      end: 3,
      proven: false,
    });
    assert.equal(ownSpan([answer('x'), call], 'mine'), undefined);
    assert.equal(ownSpan([], 'mine'), undefined);
  });
});
