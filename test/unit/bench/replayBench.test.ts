/** The replay benchmark runs end to end on a short branch (the full size is `npm run bench`). */
import { strict as assert } from 'node:assert';
import { runReplayBench } from '../../../scripts/bench/replay';
import { tempDir } from '../../support/tempFiles';

describe('replay benchmark', () => {
  it('forks with and without the turn read, reads the turn, builds the table and replays its 20 calls', async function () {
    this.timeout(60_000);
    const tmp = tempDir();
    try {
      const report = await runReplayBench(tmp.dir, 2, () => undefined, 40);
      assert.equal(report.turns, 40);
      // The last turn: its user message, 20 calls, 20 outputs and the answer, read back by forkWithTurnItems.
      assert.equal(report.turnItems, 42);
      for (const spread of [report.forkMs, report.forkWithTurnItemsMs, report.turnReadMs, report.tableAndMatchMs]) {
        assert.equal(spread.runs.length, 2);
        assert.ok(spread.min > 0 && spread.min <= spread.median && spread.median <= spread.max);
      }
      assert.equal(report.target.ms, 5);
      assert.equal(typeof report.target.met, 'boolean');
    } finally {
      tmp.cleanup();
    }
  });
});
