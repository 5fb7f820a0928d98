// Mocha's spec reporter, plus a JSON line with this run's counts appended to $ASI_TEST_COUNTS (when set), so the
// test orchestrator can print one total over unit, node:sqlite, in-host and UI runs — and the failed tests' names, so
// the end of a long log (all a CI page may keep) still says what failed.
'use strict';
const { appendFileSync } = require('node:fs');
const Mocha = require('mocha');
const { inspect } = require('node:util');

/**
 * One line that says what failed and where: the error's first line; for an assertion, what it got and expected (its
 * message alone, "Expected values to be strictly equal:" or the test's own words, does not say); and the first frame
 * in a test file. A cut CI log
 * keeps only the summary, so this line is all there may be to go on.
 */
function describeFailure(err) {
  let line = String((err && err.message) || err).split('\n')[0];
  if (err && err.code === 'ERR_ASSERTION' && err.operator !== 'fail' && 'actual' in err) {
    const show = (v) => inspect(v, { depth: 2, breakLength: Infinity }).slice(0, 160);
    line += ` got ${show(err.actual)}, expected ${show(err.expected)}`;
  }
  const frame = String((err && err.stack) || '')
    .split('\n')
    .find((l) => /\btest[\\/]/.test(l) && !/node_modules|[\\/]support[\\/]/.test(l));
  const at = frame && /\(?((?:file:\/\/)?[^()]*?\btest[\\/][^():]+:\d+)(?::\d+)?\)?\s*$/.exec(frame);
  if (at) line += ` (at ${at[1].replace(/^.*?\btest[\\/]/, 'test/')})`;
  return line.slice(0, 400);
}

class CountingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const phase = (options && options.reporterOptions && options.reporterOptions.phase) || process.env.ASI_TEST_PHASE || 'tests';
    const failures = [];
    runner.on('fail', (test, err) => {
      failures.push(`${test.fullTitle()}: ${describeFailure(err)}`);
    });
    runner.once('end', () => {
      const s = runner.stats || {};
      const line = JSON.stringify({ phase, passed: s.passes || 0, failed: s.failures || 0, skipped: s.pending || 0, failures });
      if (process.env.ASI_TEST_COUNTS) appendFileSync(process.env.ASI_TEST_COUNTS, line + '\n');
    });
  }
}
module.exports = CountingReporter;
