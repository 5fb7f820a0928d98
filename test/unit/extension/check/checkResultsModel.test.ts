/**
 * The check results view's model (src/extension/check/checkResultsModel.ts): totals while cases stream in, the
 * failures-only filter, which cases Re-run Failed Cases runs and what it keeps, and the flips' order.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { CaseResult, CaseStatus, CheckCase } from '../../../../src/agents/check/checkTypes';
import { CheckResultsModel } from '../../../../src/extension/check/checkResultsModel';
import { ExperimentStore } from '../../../../src/store/experiments/experimentStore';
import type { BaselineComparison, ExperimentFlip } from '../../../../src/store/experiments/experimentTypes';
import { tempDir } from '../../../support/tempFiles';

function aCase(turn: number, branchId = 'main', sessionId = 's1'): CheckCase {
  return {
    id: `${sessionId}/${branchId}/${turn}`,
    sessionId,
    branchId,
    turn,
    contentKey: `k${turn}`,
    verdict: 'good',
    input: `question ${turn}`,
    expected: { answer: `answer ${turn}`, trajectory: [] },
    note: null,
    tags: [],
  };
}

function result(c: CheckCase, status: CaseStatus, reason = ''): CaseResult {
  return {
    case: c,
    status,
    graders:
      status === 'pass' || status === 'fail'
        ? [{ grader: 'trajectory', pass: status === 'pass', score: status === 'pass' ? 1 : 0, reason }]
        : [],
    run: status === 'pass' || status === 'fail' ? { answer: 'a', trajectory: [], usage: null, ms: 5, replay: null, branchId: null } : null,
    error: status === 'error' ? 'the agent exited with code 3' : status === 'orphaned' ? 'the turn is gone' : null,
    ms: 10,
  };
}

const scope = { dbPath: '/w/demo.db', sessionId: null, graders: ['trajectory'] };

describe('CheckResultsModel', () => {
  it('counts the cases as they finish, the rest pending, and lists them in case order', () => {
    const m = new CheckResultsModel();
    m.start(scope, 4);
    assert.equal(m.running, true);
    m.add(result(aCase(3), 'fail', 'diverged at step 1'));
    m.add(result(aCase(1), 'pass'));
    assert.deepEqual(m.totals(), { cases: 2, passed: 1, failed: 1, errors: 0, orphaned: 0, pending: 2 });
    m.add(result(aCase(2, 'alt'), 'error'));
    m.add(result(aCase(9), 'orphaned'));
    m.finish(false, 1234);
    assert.deepEqual(m.totals(), { cases: 4, passed: 1, failed: 1, errors: 1, orphaned: 1, pending: 0 });
    assert.deepEqual(
      m.results().map((r) => r.case.id),
      ['s1/alt/2', 's1/main/1', 's1/main/3', 's1/main/9'],
    );
    assert.equal(m.running, false);
    assert.equal(m.report().ms, 1234);
    assert.equal(m.report().file, '/w/demo.db');
  });

  it('shows only the failed and errored cases with the filter on, every case with it off', () => {
    const m = new CheckResultsModel();
    m.start(scope, 4);
    for (const [t, s] of [
      [1, 'pass'],
      [2, 'fail'],
      [3, 'error'],
      [4, 'orphaned'],
    ] as const)
      m.add(result(aCase(t), s));
    m.finish(false, 0);
    m.failuresOnly = true;
    assert.deepEqual(
      m.visible().map((r) => r.status),
      ['fail', 'error'],
    );
    m.failuresOnly = false;
    assert.equal(m.visible().length, 4);
  });

  it('re-runs the failed and errored cases only, keeping the others and replacing theirs', () => {
    const m = new CheckResultsModel();
    m.start(scope, 4);
    m.add(result(aCase(1), 'pass'));
    m.add(result(aCase(2), 'fail', 'diverged'));
    m.add(result(aCase(3), 'error'));
    m.add(result(aCase(4), 'orphaned'));
    m.finish(false, 100);
    const failed = m.failedCases();
    assert.deepEqual(
      failed.map((c) => c.id),
      ['s1/main/2', 's1/main/3'],
    );
    m.restart(failed);
    assert.deepEqual(m.totals(), { cases: 2, passed: 1, failed: 0, errors: 0, orphaned: 1, pending: 2 });
    m.add(result(aCase(2), 'pass'));
    m.add(result(aCase(3), 'fail', 'still wrong'));
    m.finish(false, 50);
    assert.deepEqual(m.totals(), { cases: 4, passed: 2, failed: 1, errors: 0, orphaned: 1, pending: 0 });
    assert.equal(m.result('s1/main/3')?.graders[0]?.reason, 'still wrong');
    assert.equal(m.report().ms, 150);
  });

  it('drops the results and the comparison of an earlier check when a new one starts', () => {
    const m = new CheckResultsModel();
    m.start(scope, 1);
    m.add(result(aCase(1), 'fail'));
    m.finish(false, 0);
    m.comparison = comparison([]);
    m.start({ ...scope, dbPath: '/w/other.db' }, 2);
    assert.equal(m.hasResults, false);
    assert.equal(m.comparison, null);
    assert.deepEqual(m.totals(), { cases: 0, passed: 0, failed: 0, errors: 0, orphaned: 0, pending: 2 });
  });

  it('keeps what finished of a stopped check, with nothing pending', () => {
    const m = new CheckResultsModel();
    m.start(scope, 5);
    m.add(result(aCase(1), 'pass'));
    m.finish(true, 10);
    assert.equal(m.interrupted, true);
    assert.deepEqual(m.totals(), { cases: 1, passed: 1, failed: 0, errors: 0, orphaned: 0, pending: 0 });
  });

  it('lists the flips regressions first, then fixes, new and missing cases', () => {
    const m = new CheckResultsModel();
    const flip = (kind: ExperimentFlip['kind'], caseId: string): ExperimentFlip => ({
      kind,
      caseId,
      before: null,
      after: null,
      reason: '',
    });
    m.comparison = comparison([
      flip('new', 's1/main/7'),
      flip('fix', 's1/main/2'),
      flip('missing', 's1/main/8'),
      flip('regression', 's1/main/5'),
      flip('fix', 's1/main/1'),
      flip('regression', 's1/main/3'),
    ]);
    assert.deepEqual(
      m.flips().map((f) => `${f.kind} ${f.caseId}`),
      ['regression s1/main/5', 'regression s1/main/3', 'fix s1/main/2', 'fix s1/main/1', 'new s1/main/7', 'missing s1/main/8'],
    );
  });
});

describe('CheckResultsModel with the experiment store', () => {
  it('saves what it shows, and after a re-run lists the flips against it: the regression first', () => {
    const dir = tempDir();
    const store = ExperimentStore.open(join(dir.dir, 'reviews.experiments.db'));
    try {
      const m = new CheckResultsModel();
      m.start(scope, 3);
      m.add(result(aCase(1), 'pass'));
      m.add(result(aCase(2), 'pass'));
      m.add(result(aCase(3), 'fail', 'diverged at step 1'));
      m.finish(false, 30);
      store.saveExperiment('v1', m.report());
      // The agent changed: case 3 is fixed, case 2 broke.
      m.start(scope, 3);
      m.add(result(aCase(3), 'pass'));
      m.add(result(aCase(2), 'fail', 'the answer does not contain "sunny"'));
      m.add(result(aCase(1), 'pass'));
      m.finish(false, 30);
      m.comparison = store.compareWithBaseline('v1', m.report());
      assert.deepEqual(
        m.flips().map((f) => [f.kind, f.caseId, f.before, f.after]),
        [
          ['regression', 's1/main/2', 'pass', 'fail'],
          ['fix', 's1/main/3', 'fail', 'pass'],
        ],
      );
      assert.match(m.flips()[0]!.reason, /does not contain "sunny"/);
      assert.equal(m.comparison.unchanged, 1);
    } finally {
      store.close();
      dir.cleanup();
    }
  });
});

function comparison(flips: ExperimentFlip[]): BaselineComparison {
  return {
    baseline: {
      name: 'v1',
      file: '/w/demo.db',
      graders: ['trajectory'],
      model: null,
      startedAt: '2026-12-05T00:00:00.000Z',
      ms: 1,
      savedMs: 0,
      cases: 0,
      passed: 0,
      failed: 0,
      errors: 0,
      orphaned: 0,
      totalTokens: 0,
      costUsd: null,
    },
    flips,
    unchanged: 0,
  };
}
