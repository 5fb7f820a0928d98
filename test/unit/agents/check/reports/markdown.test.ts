/**
 * The Markdown summary for a pull-request comment: totals, the cases that did not pass with their reasons, flips vs a
 * baseline regressions first; untrusted text that cannot break the table, open code, make HTML or mention anyone.
 */
import { strict as assert } from 'node:assert';
import MarkdownIt from 'markdown-it';
import type { CaseResult, CheckReport } from '../../../../../src/agents/check/checkTypes';
import { MAX_ROWS, escapeMarkdown, markdownReport } from '../../../../../src/agents/check/reports/markdown';
import type { BaselineComparison } from '../../../../../src/store/experiments/experimentTypes';
import { weatherCase, weatherRun } from '../checkKit';

function result(turn: number, status: CaseResult['status'], reason = 'diverged at step 1: search_web instead of get_weather'): CaseResult {
  return {
    case: weatherCase({ id: `sess-1/main/${turn}`, turn }),
    status,
    graders:
      status === 'pass' || status === 'fail'
        ? [{ grader: 'trajectory', pass: status === 'pass', score: status === 'pass' ? 1 : 0, reason }]
        : [],
    run: status === 'orphaned' ? null : weatherRun(),
    error: status === 'error' ? reason : null,
    ms: 100,
  };
}

const report = (results: CaseResult[]): CheckReport => ({
  file: '/work/demo.db',
  graders: ['trajectory'],
  results,
  startedAt: '2026-12-05T03:00:00.000Z',
  ms: 2500,
});

const NASTY = 'a | b `code` <img src=x onerror=alert(1)> **bold** [link](http://x) @octocat\nnext';

describe('Markdown report', () => {
  it('opens with the totals line and the graders, then the cases that did not pass', () => {
    const md = markdownReport(
      report([result(2, 'pass'), result(4, 'fail'), result(6, 'error', 'The grader command exited with code 1'), result(8, 'orphaned')]),
    );
    const lines = md.split('\n');
    assert.equal(lines[0], '### ❌ Agent check: 1 passed, 1 failed, 1 error, 1 orphaned');
    assert.equal(lines[2], '4 cases in 2.5 s · graders: trajectory');
    assert.ok(
      md.includes('| sess\\-1/main turn 4 | good | ❌ fail | trajectory: diverged at step 1: search\\_web instead of get\\_weather |'),
    );
    assert.ok(md.includes('| sess\\-1/main turn 6 | good | ⚠️ error | The grader command exited with code 1 |'));
    assert.ok(md.includes('| sess\\-1/main turn 8 | good | ⏭️ orphaned |'));
    const orphanFirst = markdownReport(report([result(8, 'orphaned'), result(4, 'fail')]));
    assert.ok(orphanFirst.indexOf('turn 4 |') < orphanFirst.indexOf('turn 8 |'), 'the orphan after the failure');
    assert.ok(!md.includes('turn 2 |'), 'a passing case is not listed');
    assert.equal(markdownReport(report([result(2, 'pass')])).split('\n')[0], '### ✅ Agent check: 1 passed, 0 failed');
  });

  it('an interrupted check says so at the top and is never green, whatever finished passed', () => {
    const md = markdownReport(report([result(2, 'pass'), result(4, 'pass')]), { interrupted: { finished: 2, total: 3 } });
    const lines = md.split('\n');
    assert.equal(lines[0], '### ⏹️ Agent check (interrupted): 2 passed, 0 failed');
    assert.equal(lines[2], '**Not a complete check:** the check was interrupted: 1 of 3 cases did not finish.');
    assert.ok(!md.includes('✅'));
  });

  it('a check in which no case ran (every case orphaned) is never green: it exits 1', () => {
    const md = markdownReport(report([result(2, 'orphaned'), result(4, 'orphaned')]));
    const lines = md.split('\n');
    assert.equal(lines[0], '### ❌ Agent check: 0 passed, 0 failed, 2 orphaned');
    assert.match(lines[2]!, /^\*\*Nothing was checked:\*\* no case ran: all 2 cases are orphaned/);
    assert.ok(!md.includes('✅'));
  });

  it('escapes untrusted text: one cell, no code, no HTML, no link, no mention', () => {
    const md = markdownReport(report([result(4, 'fail', NASTY)]));
    const html = new MarkdownIt({ html: true }).render(md);
    const row = /<tr>\s*<td>sess-1\/main turn 4<\/td>[\s\S]*?<\/tr>/.exec(html)![0];
    assert.equal((row.match(/<td>/g) ?? []).length, 4, 'the pipe did not add a cell');
    assert.ok(!/<code>|<img|<strong>|<a /.test(html), html);
    assert.ok(
      row.includes('trajectory: a | b `code` &lt;img src=x onerror=alert(1)&gt; **bold** [link](http://x) @\u200boctocat next'),
      row,
    );
  });

  it('bounds a cell and the rows of a table', () => {
    assert.equal(escapeMarkdown('x'.repeat(1000)).length, 400);
    const many = Array.from({ length: MAX_ROWS + 7 }, (_, i) => result(i + 1, 'fail'));
    const md = markdownReport(report(many));
    assert.equal((md.match(/❌ fail/g) ?? []).length, MAX_ROWS);
    assert.ok(md.includes('… and 7 more.'));
  });

  it('lists flips against a baseline, regressions first', () => {
    const comparison: BaselineComparison = {
      baseline: {
        name: 'main|`x`',
        file: '/work/demo.db',
        graders: ['trajectory'],
        model: null,
        startedAt: '',
        ms: 0,
        savedMs: 0,
        cases: 3,
        passed: 2,
        failed: 1,
        errors: 0,
        orphaned: 0,
        totalTokens: 0,
        costUsd: null,
      },
      flips: [
        { kind: 'regression', caseId: 'sess-1/main/4', before: 'pass', after: 'fail', reason: 'trajectory: diverged' },
        { kind: 'fix', caseId: 'sess-1/main/6', before: 'fail', after: 'pass', reason: 'answer:exact: differs' },
        { kind: 'new', caseId: 'sess-1/main/8', before: null, after: 'pass', reason: '' },
      ],
      unchanged: 5,
    };
    const md = markdownReport(report([result(4, 'fail'), result(6, 'pass'), result(8, 'pass')]), { comparison });
    const at = (s: string) => md.indexOf(s);
    assert.ok(md.includes('#### Compared with main\\|\\`x\\`'));
    assert.ok(md.includes('1 regression, 1 fix, 5 unchanged.'));
    assert.ok(at('**Regressions (passed, now fail): 1**') < at('**Fixes (failed, now pass): 1**'));
    assert.ok(at('**Fixes (failed, now pass): 1**') < at('**New cases: 1**'));
    assert.ok(md.includes('| sess\\-1/main/4 | pass | fail | trajectory: diverged |'));
    assert.ok(md.includes('| sess\\-1/main/8 | – | pass |  |'));
    const none = markdownReport(report([result(2, 'pass')]), { comparison: { ...comparison, flips: [], unchanged: 1 } });
    assert.ok(none.includes('No flips: 1 case as in the baseline.'));
  });
});
