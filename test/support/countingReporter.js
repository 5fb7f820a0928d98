// Mocha's spec reporter, plus a JSON line with this run's counts appended to $ASI_TEST_COUNTS (when set), so the
// test orchestrator can print one total over unit, node:sqlite, in-host and UI runs — and the failed tests' names, so
// the end of a long log (all a CI page may keep) still says what failed.
'use strict';
const { appendFileSync } = require('node:fs');
const Mocha = require('mocha');

class CountingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const phase = (options && options.reporterOptions && options.reporterOptions.phase) || process.env.ASI_TEST_PHASE || 'tests';
    const failures = [];
    runner.on('fail', (test, err) => {
      const message = String((err && err.message) || err)
        .split('\n')[0]
        .slice(0, 300);
      failures.push(`${test.fullTitle()}: ${message}`);
    });
    runner.once('end', () => {
      const s = runner.stats || {};
      const line = JSON.stringify({ phase, passed: s.passes || 0, failed: s.failures || 0, skipped: s.pending || 0, failures });
      if (process.env.ASI_TEST_COUNTS) appendFileSync(process.env.ASI_TEST_COUNTS, line + '\n');
    });
  }
}
module.exports = CountingReporter;
