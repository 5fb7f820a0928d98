/** The compare benchmark runs end to end on a small pair of branches (the full size is `npm run bench`). */
import { strict as assert } from 'node:assert';
import { runCompareBench } from '../../../scripts/bench/compare';
import { tempDir } from '../../support/tempFiles';

describe('compare benchmark', () => {
  it('builds two branches, compares them and reports the first rows’ time', async function () {
    this.timeout(60_000);
    const tmp = tempDir();
    try {
      const report = await runCompareBench(tmp.dir, 2, () => undefined, 60);
      assert.equal(report.file.turnsPerBranch, 60);
      assert.equal(report.rows, 20);
      assert.equal(report.firstRowsMs.runs.length, 2);
      assert.ok(report.firstRowsMs.first > 0 && report.viewMs > 0 && report.rowsMs > 0);
      assert.equal(typeof report.target.met, 'boolean');
    } finally {
      tmp.cleanup();
    }
  });
});
