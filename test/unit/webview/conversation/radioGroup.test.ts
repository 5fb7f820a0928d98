import { strict as assert } from 'node:assert';
import { radioKeyTarget, radioStates } from '../../../../webview/conversation/logic/radioGroup';

describe('scope radio group', () => {
  it('marks the chosen option checked, primary and the one Tab stop', () => {
    assert.deepEqual(radioStates(2, 1), [
      { checked: false, tabIndex: -1, appearance: 'secondary' },
      { checked: true, tabIndex: 0, appearance: 'primary' },
    ]);
    assert.deepEqual(
      radioStates(2, 0).map((s) => s.checked),
      [true, false],
    );
  });

  it('moves the choice with the arrow keys, wrapping, and with Home and End', () => {
    assert.equal(radioKeyTarget('ArrowRight', 0, 2), 1);
    assert.equal(radioKeyTarget('ArrowDown', 1, 2), 0);
    assert.equal(radioKeyTarget('ArrowLeft', 0, 2), 1);
    assert.equal(radioKeyTarget('ArrowUp', 1, 3), 0);
    assert.equal(radioKeyTarget('Home', 2, 3), 0);
    assert.equal(radioKeyTarget('End', 0, 3), 2);
    assert.equal(radioKeyTarget('Tab', 0, 2), undefined);
    assert.equal(radioKeyTarget(' ', 0, 2), undefined);
  });
});
