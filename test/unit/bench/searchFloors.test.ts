import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scaleFileSpec } from '../../../scripts/bench/scaleFiles';
import { floorMet, reviewedTurns, runSearchFloorBench, SEARCH_FLOOR_TARGET_RATIO } from '../../../scripts/bench/searchFloors';

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

describe('search floors bench: each floor finds what the search finds', function () {
  this.timeout(120_000);
  let cacheDir: string;
  before(() => {
    cacheDir = mkdtempSync(join(tmpdir(), 'asi-search-floors-'));
  });
  after(() => rmSync(cacheDir, { recursive: true, force: true }));

  it('reviews 200 turns of a one-session file and the middle turn of sessions spread over a many-session file', () => {
    const a = reviewedTurns(scaleFileSpec('A', 1));
    assert.equal(a.all.length, 200);
    assert.deepEqual(
      [a.all[0], a.all[199]],
      [
        ['scale-a', 500],
        ['scale-a', 100_000],
      ],
    );
    assert.equal(a.bad.length, 100);
    const b = reviewedTurns(scaleFileSpec('B', 1));
    assert.equal(b.all.length, 200);
    assert.equal(new Set(b.all.map((r) => r[0])).size, 200);
    assert.ok(b.all.every((r) => r[1] === 25));
  });

  // Small A (one session, branches) and B (many sessions): every query's floor returns exactly the search's hits.
  for (const name of ['A', 'B'] as const) {
    it(`agrees with the search on every query of file ${name}`, async () => {
      const r = await runSearchFloorBench(cacheDir, 1, null, () => {}, name, 0.01);
      assert.equal(r.queries.length, 7);
      for (const q of r.queries) {
        assert.equal(q.floorRows, q.hits, q.query);
        if (q.query !== 'is:failed') assert.ok(q.hits > 0, `${q.query} found nothing`);
      }
    });
  }
});
