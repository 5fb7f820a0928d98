import { strict as assert } from 'node:assert';
import { errorMessage } from '../../../src/shared/errorMessage';

describe('errorMessage', () => {
  it('gives an Error its message, and its stack only when asked', () => {
    const err = new TypeError('bad input');
    assert.equal(errorMessage(err), 'bad input');
    assert.match(errorMessage(err, { stack: true }), /^TypeError: bad input\n\s+at /);
  });

  it('turns anything else into a string', () => {
    assert.equal(errorMessage('plain text'), 'plain text');
    assert.equal(errorMessage(42), '42');
    assert.equal(errorMessage(undefined), 'undefined');
    assert.equal(errorMessage(null), 'null');
  });
});
