import { strict as assert } from 'node:assert';
import { sharedTurnRanges, turnOrigin, type ForkFacts } from '../../../src/shared/turnOrigin';

const b = (branchId: string, parentBranchId: string | null, forkTurn: number | null): ForkFacts => ({ branchId, parentBranchId, forkTurn });

// main ── x (from main @ 4) ── y (from x @ 6); z from main @ 1 (shares nothing); orphan's parent was deleted.
const tree = [b('main', null, null), b('x', 'main', 4), b('y', 'x', 6), b('z', 'main', 1), b('orphan', 'gone', 3), b('lost', null, 1)];

describe('turnOrigin', () => {
  it('gives a branch its own turns, from its fork turn on', () => {
    assert.equal(turnOrigin(tree, 'main', 1), 'main');
    assert.equal(turnOrigin(tree, 'main', 40), 'main');
    assert.equal(turnOrigin(tree, 'x', 4), 'x');
    assert.equal(turnOrigin(tree, 'x', 9), 'x');
  });

  it('gives the turns before the fork to the parent', () => {
    assert.equal(turnOrigin(tree, 'x', 3), 'main');
    assert.equal(turnOrigin(tree, 'x', 1), 'main');
  });

  it('follows nested forks up to the grandparent that ran the turn', () => {
    assert.equal(turnOrigin(tree, 'y', 6), 'y');
    assert.equal(turnOrigin(tree, 'y', 5), 'x');
    assert.equal(turnOrigin(tree, 'y', 4), 'x');
    assert.equal(turnOrigin(tree, 'y', 3), 'main');
    assert.equal(turnOrigin(tree, 'y', 1), 'main');
  });

  it('shares nothing at a fork at turn 1, and turn 0 (items before the first user message) follows the same rule', () => {
    assert.equal(turnOrigin(tree, 'z', 1), 'z');
    assert.equal(turnOrigin(tree, 'z', 0), 'main');
    assert.equal(turnOrigin(tree, 'lost', 1), 'lost');
  });

  it('stops at a branch whose parent is unknown, and answers an unknown branch with itself', () => {
    assert.equal(turnOrigin(tree, 'orphan', 1), 'orphan');
    assert.equal(turnOrigin(tree, 'nobody', 2), 'nobody');
    assert.equal(turnOrigin([], 'main', 2), 'main');
  });

  it('does not loop on a cycle in a bad list', () => {
    const cycle = [b('a', 'b', 5), b('b', 'a', 5)];
    assert.ok(['a', 'b'].includes(turnOrigin(cycle, 'a', 1)));
  });
});

describe('sharedTurnRanges', () => {
  it('lists one turn range per ancestor, nearest first', () => {
    assert.deepEqual(sharedTurnRanges(tree, 'y'), [
      { originBranchId: 'x', fromTurn: 4, toTurn: 5 },
      { originBranchId: 'main', fromTurn: 1, toTurn: 3 },
    ]);
    assert.deepEqual(sharedTurnRanges(tree, 'x'), [{ originBranchId: 'main', fromTurn: 1, toTurn: 3 }]);
    assert.deepEqual(sharedTurnRanges(tree, 'main'), []);
    assert.deepEqual(sharedTurnRanges(tree, 'z'), []);
    assert.deepEqual(sharedTurnRanges(tree, 'orphan'), []);
  });

  it('agrees with turnOrigin on every turn of random trees', () => {
    let seed = 7;
    const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    for (let trial = 0; trial < 200; trial++) {
      const branches: ForkFacts[] = [b('main', null, null)];
      const count = 1 + rand(8);
      for (let i = 1; i <= count; i++) {
        const parent = rand(4) === 0 ? `gone${i}` : (branches[rand(branches.length)] as ForkFacts).branchId;
        branches.push(b(`b${i}`, parent, 1 + rand(12)));
      }
      for (const branch of branches) {
        const ranges = sharedTurnRanges(branches, branch.branchId);
        for (let turn = 1; turn <= 14; turn++) {
          const range = ranges.find((r) => turn >= r.fromTurn && turn <= r.toTurn);
          assert.equal(
            range?.originBranchId ?? branch.branchId,
            turnOrigin(branches, branch.branchId, turn),
            `${branch.branchId} turn ${turn}`,
          );
        }
      }
    }
  });
});
