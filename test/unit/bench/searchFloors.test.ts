import { strict as assert } from 'node:assert';
import { floorMet, SEARCH_FLOOR_TARGET_RATIO } from '../../../scripts/bench/searchFloors';

describe('search floors bench: when a query meets its floor', () => {
  const q = { ratioCpu: 1.2, ratioWall: 1.3, short: false, hits: 10, floorRows: 10 };

  it('judges a long scan by its CPU ratio alone (the load of a shared machine moves wall time)', () => {
    assert.equal(floorMet(q), true);
    assert.equal(floorMet({ ...q, ratioWall: 4 }), true);
    assert.equal(floorMet({ ...q, ratioCpu: SEARCH_FLOOR_TARGET_RATIO + 0.01 }), false);
  });

  it("judges a short query by its wall ratio too: a few milliseconds of process CPU may be mostly V8's other threads", () => {
    // is:bad on file A, once: 1.6 ms of CPU against the floor's 2.0 (0.78×), wall 1.6 against 0.32 ms (4.9×).
    assert.equal(floorMet({ ...q, short: true, ratioCpu: 0.78, ratioWall: 4.88 }), false);
    assert.equal(floorMet({ ...q, short: true, ratioCpu: 1.4, ratioWall: 1.45 }), true);
  });

  it('never meets with hits missing or extra', () => {
    assert.equal(floorMet({ ...q, hits: 9 }), false);
    assert.equal(floorMet({ ...q, hits: 11 }), false);
  });
});
