/** The Context benchmark runs end to end on a short session (the full size is `npm run bench`). */
import { strict as assert } from 'node:assert';
import { runContextBench } from '../../../scripts/bench/context';
import { tempDir } from '../../support/tempFiles';

describe('context benchmark', () => {
  it('answers the last turn reconstructed (whole history, limit 100) and recorded, in process and through the store worker, and times the tokenizer', async function () {
    this.timeout(60_000);
    const tmp = tempDir();
    try {
      const report = await runContextBench(tmp.dir, 2, () => undefined, 300);
      assert.equal(report.turns, 300);
      assert.equal(report.historyItems, 4 * 299);
      assert.equal(report.reconstructed.source, 'reconstructed');
      // The last request: the whole history, then the turn's user message, call and output.
      assert.equal(report.reconstructed.items, 4 * 299 + 3);
      assert.equal(report.reconstructedLimit100.items, 103);
      assert.equal(report.reconstructedLimit100.outside, 4 * 299 - 100);
      assert.equal(report.recorded.source, 'recorded');
      // Through the store worker, as the view asks: the same answers as on the inspector's own connection.
      assert.deepEqual(
        [report.worker.reconstructed.source, report.worker.reconstructed.items, report.worker.reconstructed.outside],
        ['reconstructed', 4 * 299 + 3, 0],
      );
      assert.deepEqual([report.worker.recorded.source, report.worker.recorded.items], ['recorded', report.recorded.items]);
      assert.equal(report.worker.driver, 'better-sqlite3');
      const cases = [
        report.reconstructed,
        report.reconstructedLimit100,
        report.recorded,
        report.worker.reconstructed,
        report.worker.recorded,
      ];
      for (const c of cases) assert.ok(c.min > 0 && c.min <= c.median && c.median <= c.max && c.cpuMedian > 0);
      assert.ok(report.tokenizerMBps > 0);
      assert.equal(report.target.ms, 100);
    } finally {
      tmp.cleanup();
    }
  });
});
