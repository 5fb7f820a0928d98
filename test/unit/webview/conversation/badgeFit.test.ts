import { strict as assert } from 'node:assert';
import { badgeFit } from '../../../../webview/conversation/logic/badgeFit';

describe('badgeFit', () => {
  it('shows every badge that fits, and no "+N"', () => {
    assert.deepEqual(badgeFit([40, 40, 40], 120, 30), { shown: 3, hidden: 0 });
    assert.deepEqual(badgeFit([], 0, 30), { shown: 0, hidden: 0 });
  });

  it('keeps room for "+N" when some do not fit', () => {
    // 40 + 40 + 30 = 110 ≤ 115; a third would need 150.
    assert.deepEqual(badgeFit([40, 40, 40, 40], 115, 30), { shown: 2, hidden: 2 });
    // Not even one beside "+N".
    assert.deepEqual(badgeFit([90, 10], 95, 30), { shown: 0, hidden: 2 });
  });
});
