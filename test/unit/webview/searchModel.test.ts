import { strict as assert } from 'node:assert';
import { SearchModel } from '../../../webview/logic/searchModel';

const hit = (turn: number, sequenceNumber: number) => ({ turn, sequenceNumber, itemType: 'user', snippet: { text: 'x', ranges: [] } });

describe('SearchModel (the view’s search box)', () => {
  it('starts at the first hit from the selected turn, steps both ways with wrap-around, and counts "n of m"', () => {
    const m = new SearchModel();
    const view = { hits: [hit(1, 1), hit(3, 9), hit(5, 20)], truncated: false };
    assert.equal(m.found('q', 'main', view, 2)?.sequenceNumber, 9);
    assert.deepEqual(m.status, { kind: 'hits', index: 1, count: 3, truncated: false });
    assert.equal(m.step(1)?.turn, 5);
    assert.equal(m.step(1)?.turn, 1, 'wraps to the first');
    assert.equal(m.step(-1)?.turn, 5, 'wraps to the last');
    assert.equal(m.found('q', 'main', view, 9)?.turn, 1, 'past the last hit: the first');
  });

  it('knows which query and branch its hits are for, and says when there are none or the search failed', () => {
    const m = new SearchModel();
    m.found('q', 'main', { hits: [], truncated: false }, null);
    assert.deepEqual(m.status, { kind: 'none' });
    assert.equal(m.step(1), null);
    assert.ok(m.has('q', 'main'));
    assert.ok(!m.has('q', 'alt') && !m.has('Q', 'main'));
    m.failed('Unknown filter "is:x"');
    assert.deepEqual(m.status, { kind: 'error', message: 'Unknown filter "is:x"' });
    assert.ok(!m.has('q', 'main'));
  });
});
