import { strict as assert } from 'node:assert';
import { SearchModel, orderHits } from '../../../../webview/conversation/logic/searchModel';
import type { BranchView } from '../../../../src/shared/protocol/conversationViews';

const hit = (turn: number, sequenceNumber: number, branchId = 'main') => ({
  branchId,
  turn,
  sequenceNumber,
  itemType: 'user',
  snippet: { text: 'x', ranges: [] },
});
const branch = (branchId: string, createdAt: string | null): BranchView => ({
  branchId,
  parentBranchId: branchId === 'main' ? null : 'main',
  forkTurn: branchId === 'main' ? null : 1,
  userTurns: 3,
  messageCount: 9,
  createdAt,
  isCurrent: branchId === 'main',
});
// Listed by name (as the session lists them), created in another order: main, then zeta, then alpha.
const BRANCHES = [branch('alpha', '2026-01-03'), branch('main', '2026-01-01'), branch('zeta', '2026-01-02')];
const where = (h: { branchId: string; turn: number } | null) => (h ? `${h.branchId}:${h.turn}` : null);

describe('SearchModel (the view’s search box)', () => {
  it('starts at the first hit from the selected turn, steps both ways with wrap-around, and counts "n of m"', () => {
    const m = new SearchModel();
    const view = { hits: [hit(1, 1), hit(3, 9), hit(5, 20)], truncated: false };
    assert.equal(m.found('q', 'main', view, 2, BRANCHES)?.sequenceNumber, 9);
    assert.deepEqual(m.status, { kind: 'hits', index: 1, count: 3, elsewhere: 0, truncated: false });
    assert.equal(m.step(1)?.turn, 5);
    assert.equal(m.step(1)?.turn, 1, 'wraps to the first');
    assert.equal(m.step(-1)?.turn, 5, 'wraps to the last');
    assert.equal(m.found('q', 'main', view, 9, BRANCHES)?.turn, 1, 'past the last hit: the first');
  });

  it('orders the session’s hits: the searched branch’s first, then each other branch by creation, each in turn order', () => {
    const hits = [hit(3, 30, 'alpha'), hit(2, 5, 'zeta'), hit(4, 8), hit(2, 40, 'alpha'), hit(1, 1), hit(3, 7, 'zeta'), hit(2, 2, 'gone')];
    assert.deepEqual(orderHits(hits, 'zeta', BRANCHES).map(where), [
      'zeta:2',
      'zeta:3',
      'main:1',
      'main:4',
      'alpha:2',
      'alpha:3',
      'gone:2',
    ]);
    assert.deepEqual(orderHits(hits, 'main', BRANCHES).map(where).slice(0, 4), ['main:1', 'main:4', 'zeta:2', 'zeta:3']);
  });

  it('steps from the searched branch’s hits on to the other branches’ and back, saying how many are elsewhere', () => {
    const m = new SearchModel();
    const view = { hits: [hit(2, 5, 'alpha'), hit(1, 1), hit(3, 7, 'zeta'), hit(3, 9)], truncated: true };
    assert.equal(where(m.found('q', 'main', view, 3, BRANCHES)), 'main:3', 'from the selected turn, on the searched branch');
    assert.deepEqual(m.status, { kind: 'hits', index: 1, count: 4, elsewhere: 2, truncated: true });
    assert.equal(where(m.step(1)), 'zeta:3', 'on to the first other branch (created first)');
    assert.equal(where(m.step(1)), 'alpha:2');
    assert.deepEqual(m.status, { kind: 'hits', index: 3, count: 4, elsewhere: 2, truncated: true });
    assert.equal(where(m.step(1)), 'main:1', 'wraps to the searched branch');
    assert.equal(where(m.step(-1)), 'alpha:2', 'and back');
    // Showing another branch (as stepping does) keeps the hits: only a new query searches again.
    assert.ok(m.has('q'));
    // Nothing on the searched branch: the first hit is on another branch.
    const elsewhere = { hits: [hit(2, 5, 'alpha'), hit(3, 7, 'zeta')], truncated: false };
    assert.equal(where(m.found('q', 'main', elsewhere, 1, BRANCHES)), 'zeta:3');
  });

  it('knows which query its hits are for, and says when there are none or the search failed', () => {
    const m = new SearchModel();
    m.found('q', 'main', { hits: [], truncated: false }, null, BRANCHES);
    assert.deepEqual(m.status, { kind: 'none' });
    assert.equal(m.step(1), null);
    assert.ok(m.has('q'));
    assert.ok(!m.has('Q'));
    m.failed('Unknown filter "is:x"');
    assert.deepEqual(m.status, { kind: 'error', message: 'Unknown filter "is:x"' });
    assert.ok(!m.has('q'));
  });
});
