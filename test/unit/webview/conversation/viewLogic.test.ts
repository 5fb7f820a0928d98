import { strict as assert } from 'node:assert';
import type { BranchView } from '../../../../src/shared/protocol/conversationViews';
import { branchAtFork, branchLanes } from '../../../../webview/conversation/logic/branchLayout';
import { listWindow, scrollToShow } from '../../../../webview/conversation/logic/listWindow';
import { sortRows } from '../../../../webview/conversation/logic/sortRows';

const branch = (branchId: string, parentBranchId: string | null, forkTurn: number | null): BranchView => ({
  branchId,
  parentBranchId,
  forkTurn,
  userTurns: 3,
  messageCount: 6,
  createdAt: null,
  isCurrent: false,
});

describe('view logic', () => {
  it('windows a 10,000-row list to the rows in view plus overscan', () => {
    assert.deepEqual(listWindow(0, 520, 52, 10_000), { first: 0, last: 18 });
    assert.deepEqual(listWindow(52 * 5000, 520, 52, 10_000), { first: 4992, last: 5018 });
    assert.deepEqual(listWindow(52 * 9995, 520, 52, 10_000), { first: 9987, last: 9999 });
    assert.deepEqual(listWindow(0, 520, 52, 0), { first: 0, last: -1 });
  });

  it('scrolls just enough to show a row', () => {
    assert.equal(scrollToShow(0, 100, 520, 52), 0);
    assert.equal(scrollToShow(20, 0, 520, 52), 20 * 52 + 52 - 520);
    assert.equal(scrollToShow(3, 0, 520, 52), 0);
  });

  it('lays branches out under their parents, children by fork turn', () => {
    const lanes = branchLanes([
      branch('main', null, null),
      branch('late', 'main', 5),
      branch('early', 'main', 2),
      branch('nested', 'early', 3),
      branch('orphan', 'gone', 4),
    ]);
    assert.deepEqual(
      lanes.map((l) => `${'  '.repeat(l.depth)}${l.branch.branchId}`),
      ['main', '  early', '    nested', '  late', 'orphan'],
    );
  });

  it('moves between branches at a fork with left/right', () => {
    const branches = [branch('main', null, null), branch('alt', 'main', 2), branch('later', 'main', 4)];
    assert.equal(branchAtFork(branches, 'main', 1, 'right'), 'alt'); // alt diverges right after turn 1
    assert.equal(branchAtFork(branches, 'main', 3, 'right'), 'later');
    assert.equal(branchAtFork(branches, 'main', 0, 'right'), undefined);
    assert.equal(branchAtFork(branches, 'alt', 1, 'left'), 'main');
    assert.equal(branchAtFork(branches, 'main', 1, 'left'), undefined);
  });

  it('sorts table rows with nulls last and stable ties', () => {
    const rows = [
      { turn: 1, total: 30 },
      { turn: 2, total: null },
      { turn: 3, total: 10 },
      { turn: 4, total: 30 },
    ];
    assert.deepEqual(
      sortRows(rows, 'total', 'asc').map((r) => r.turn),
      [3, 1, 4, 2],
    );
    assert.deepEqual(
      sortRows(rows, 'total', 'desc').map((r) => r.turn),
      [1, 4, 3, 2],
    );
  });
});
