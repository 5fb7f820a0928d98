import { strict as assert } from 'node:assert';
import { forkLabel } from '../../../src/shared/forkLabel';

describe('forkLabel', () => {
  it('names the parent and the fork turn, only the turn when the parent is unknown, nothing for a root branch', () => {
    assert.equal(forkLabel({ parentBranchId: 'main', forkTurn: 3 }), 'from main @ turn 3');
    assert.equal(forkLabel({ parentBranchId: null, forkTurn: 1 }), 'forked @ turn 1');
    assert.equal(forkLabel({ parentBranchId: null, forkTurn: null }), '');
    assert.equal(forkLabel({ parentBranchId: 'main', forkTurn: null }), '');
  });
});
