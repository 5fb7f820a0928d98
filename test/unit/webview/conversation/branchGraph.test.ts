import { strict as assert } from 'node:assert';
import type { BranchView } from '../../../../src/shared/protocol/conversationViews';
import { branchGraph, graphKeyTarget, GRAPH_METRICS, type BranchGraph } from '../../../../webview/conversation/logic/branchGraph';

const branch = (branchId: string, parentBranchId: string | null, forkTurn: number | null, userTurns = 6): BranchView => ({
  branchId,
  parentBranchId,
  forkTurn,
  userTurns,
  messageCount: userTurns * 2,
  createdAt: null,
  isCurrent: false,
});

const { rowHeight, laneWidth, padding } = GRAPH_METRICS;
const laneX = (lane: number): number => padding + lane * laneWidth + laneWidth / 2;
const rowY = (row: number): number => row * rowHeight + rowHeight / 2;

/** Fork lines that pass over another branch's line (their own parent's and child's lines excepted). */
function crossings(g: BranchGraph): string[] {
  const out: string[] = [];
  for (const f of g.forks) {
    const [left, right] = [Math.min(f.x1, f.x2), Math.max(f.x1, f.x2)];
    for (const l of g.lines) {
      if (l.branchId === f.parentId || l.branchId === f.childId) continue;
      if (l.x >= left && l.x <= right && l.y1 < f.y2 && l.y2 > f.y1) out.push(`${f.parentId}→${f.childId} crosses ${l.branchId}`);
    }
  }
  return out;
}

describe('branch graph geometry', () => {
  it('puts each branch in a row under the branch it forked from, one lane further right per level of nesting', () => {
    const g = branchGraph([
      branch('main', null, null),
      branch('late', 'main', 6), // forked at main's last turn
      branch('first', 'main', 1), // forked at turn 1: shares nothing
      branch('x', 'main', 3),
      branch('y', 'x', 5), // nested: x's own turn 4 and main's 1–2 are shared
    ]);
    assert.deepEqual(
      g.rows.map((r) => [r.branch.branchId, r.row, r.lane]),
      [
        ['main', 0, 0],
        ['first', 1, 1],
        ['x', 2, 1],
        ['y', 3, 2],
        ['late', 4, 1],
      ],
    );
    assert.equal(g.laneCount, 3);
    assert.equal(g.width, 3 * laneWidth + 2 * padding);
    assert.equal(g.height, 5 * rowHeight);
    assert.deepEqual(g.rows[0]?.childRows, [1, 2, 4]);
    assert.deepEqual(g.rows[3]?.parentRow, 2);
  });

  it('draws fork lines from the parent lane to the child node, and each lane down to its last fork', () => {
    const g = branchGraph([branch('main', null, null), branch('x', 'main', 3), branch('y', 'x', 5), branch('z', 'main', 4)]);
    assert.deepEqual(
      g.forks.map((f) => [f.parentId, f.childId, f.forkTurn, f.x1, f.y1, f.x2, f.y2]),
      [
        ['main', 'x', 3, laneX(0), rowY(1) - rowHeight / 2, laneX(1), rowY(1)],
        ['x', 'y', 5, laneX(1), rowY(2) - rowHeight / 2, laneX(2), rowY(2)],
        ['main', 'z', 4, laneX(0), rowY(3) - rowHeight / 2, laneX(1), rowY(3)],
      ],
    );
    assert.match(g.forks[0]?.path ?? '', /^M [\d.]+ [\d.]+ C /);
    const line = (id: string) => g.lines.find((l) => l.branchId === id);
    // main runs down to where z, its last fork, leaves; x down to y's fork; y and z are stubs.
    assert.deepEqual([line('main')?.y1, line('main')?.y2], [rowY(0), rowY(3) - rowHeight / 2]);
    assert.deepEqual([line('x')?.y1, line('x')?.y2], [rowY(1), rowY(2) - rowHeight / 2]);
    assert.ok((line('y')?.y2 ?? 0) > rowY(2) && (line('y')?.y2 ?? 0) < rowY(3) - rowHeight / 2);
    assert.deepEqual(crossings(g), []);
  });

  it('makes branches with unknown parents roots in lane 0, with no fork line', () => {
    const g = branchGraph([
      branch('main', null, null),
      branch('orphan', 'deleted', 4),
      branch('fresh', null, 1),
      branch('kid', 'orphan', 5),
    ]);
    assert.deepEqual(
      g.rows.map((r) => [r.branch.branchId, r.lane, r.parentRow]),
      [
        ['main', 0, null],
        ['orphan', 0, null],
        ['kid', 1, 1],
        ['fresh', 0, null],
      ],
    );
    assert.deepEqual(
      g.forks.map((f) => f.childId),
      ['kid'],
    );
  });

  it('keeps 60 branches usable: fixed-height rows that scroll, two lanes, no crossings', () => {
    const many = [branch('main', null, null, 100), ...Array.from({ length: 60 }, (_, i) => branch(`b${i}`, 'main', 1 + (i % 100)))];
    const g = branchGraph(many);
    assert.equal(g.rows.length, 61);
    assert.equal(g.height, 61 * rowHeight, 'rows keep their height: the list scrolls, it does not shrink');
    assert.equal(g.laneCount, 2);
    assert.deepEqual(crossings(g), []);
  });

  it('never crosses lines in random trees, deep nesting included', () => {
    let seed = 11;
    const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    for (let trial = 0; trial < 100; trial++) {
      const branches = [branch('main', null, null, 20)];
      for (let i = 1; i < 2 + rand(40); i++)
        branches.push(branch(`b${i}`, (branches[rand(branches.length)] as BranchView).branchId, 1 + rand(20)));
      const g = branchGraph(branches);
      assert.equal(g.rows.length, branches.length, 'every branch has a row');
      assert.deepEqual(crossings(g), [], `trial ${trial}`);
      for (const r of g.rows) if (r.parentRow !== null) assert.equal(r.lane, (g.rows[r.parentRow]?.lane ?? -2) + 1);
    }
  });

  it('moves focus with the arrow keys: rows up and down, left to the parent, right to the first fork', () => {
    const g = branchGraph([branch('main', null, null), branch('x', 'main', 3), branch('y', 'x', 5), branch('z', 'main', 4)]);
    assert.equal(graphKeyTarget(g, 0, 'ArrowDown'), 1);
    assert.equal(graphKeyTarget(g, 3, 'ArrowDown'), undefined);
    assert.equal(graphKeyTarget(g, 0, 'ArrowUp'), undefined);
    assert.equal(graphKeyTarget(g, 2, 'ArrowLeft'), 1);
    assert.equal(graphKeyTarget(g, 0, 'ArrowRight'), 1);
    assert.equal(graphKeyTarget(g, 3, 'ArrowRight'), undefined);
    assert.equal(graphKeyTarget(g, 2, 'End'), 3);
    assert.equal(graphKeyTarget(g, 2, 'Home'), 0);
    assert.equal(graphKeyTarget(g, 2, 'x'), undefined);
  });
});
