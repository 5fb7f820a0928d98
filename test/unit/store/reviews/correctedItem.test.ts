import { strict as assert } from 'node:assert';
import { correctedItem } from '../../../../src/store/reviews/correctedItem';

describe('correctedItem', () => {
  it('keeps the shape of the answer it replaces: a string stays a string, output_text parts become one, no id', () => {
    assert.deepEqual(correctedItem({ role: 'assistant', content: 'No.' }, 'Yes.'), { role: 'assistant', content: 'Yes.' });
    assert.deepEqual(
      correctedItem(
        {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          status: 'in_progress',
          content: [
            { type: 'output_text', text: 'No.', annotations: [{ type: 'url_citation' }], logprobs: [] },
            { type: 'refusal', refusal: 'x' },
          ],
        },
        'Yes.',
      ),
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Yes.', annotations: [], logprobs: [] }],
      },
    );
    assert.deepEqual(correctedItem({ role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }, 'Sure.'), {
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Sure.', annotations: [] }],
    });
  });
});
