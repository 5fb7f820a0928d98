/**
 * The CLI memory benchmark runs end to end on a small file A (the full size is `npm run bench`), each command's peak
 * its own process's, not the bench's.
 */
import { strict as assert } from 'node:assert';
import { cliMemoryTable, runCliMemoryBench } from '../../../scripts/bench/cliMemory';
import { tempDir } from '../../support/tempFiles';

describe('CLI memory benchmark', () => {
  it('runs every command that reads file A in a process of its own and reads each one’s peak memory', async function () {
    this.timeout(180_000);
    const tmp = tempDir();
    try {
      // This process made large first: Linux keeps getrusage's maxrss across exec, so a child's peak read that way is
      // at least this process's RSS at the fork; each child's own figure must not be.
      const ballast = Buffer.alloc(200 * 2 ** 20, 1);
      assert.ok(process.memoryUsage.rss() > 200 * 2 ** 20);
      // node:sqlite under another Node is left out: the test must not depend on the tools' cache.
      const report = await runCliMemoryBench({ cacheDir: tmp.dir, scale: 0.001, sqliteNode: null }, () => undefined);
      assert.ok(ballast.length > 0);
      assert.ok(report.nodes[0]!.floorRssMB! < 120, `node -e 0 peaked at ${report.nodes[0]!.floorRssMB} MB: the bench's own RSS`);
      assert.deepEqual(
        report.nodes.map((n) => n.driver),
        ['better-sqlite3'],
      );
      assert.ok(report.nodes[0]!.floorRssMB! > 0 && report.nodes[0]!.versionRssMB! >= report.nodes[0]!.floorRssMB! / 2);
      assert.equal(report.runs.length, 17);
      // As users run it: through the code cache, written by each command's first run into the bench's own folder.
      assert.ok(report.codeCacheFiles > 0, 'no code cache was written');
      assert.ok(report.runs.every((r) => r.firstRun !== undefined && r.firstRun.peakRssMB! > 0));
      for (const r of report.runs) {
        assert.equal(r.exitCode, 0, `${r.command}: ${r.error ?? ''}`);
        assert.ok(r.peakRssMB! > 0 && r.cpuMs! > 0, r.command);
      }
      // The outputs were counted, on stdout or in the -o file.
      for (const name of ['show (whole session)', 'export json (whole session) -o', 'export md --branch b1_late (stdout)']) {
        assert.ok(report.runs.find((r) => r.command === name)!.bytesOut > 1000, name);
      }
      assert.equal(report.target.peakRssMB, 100);
      assert.match(cliMemoryTable(report), /show \(whole session\)/);
    } finally {
      tmp.cleanup();
    }
  });
});
