/**
 * The experiment store: a check saved whole in a file of our own and read back (grades, answer, calls, tokens, cost,
 * latency, replay marks); a name saved twice refused unless forced; flips against a baseline in their order; what
 * is too long cut; any file that is not one of ours refused untouched.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDatabaseError } from '../../../../src/store/errors';
import { OutputFileError } from '../../../../src/store/files/outputFileError';
import { ExperimentStoreError } from '../../../../src/store/experiments/experimentErrors';
import { EXPERIMENT_STORE_APPLICATION_ID } from '../../../../src/store/experiments/experimentSchema';
import { ExperimentStore, defaultExperimentsPath } from '../../../../src/store/experiments/experimentStore';
import type { ExperimentCaseResult, ExperimentReport } from '../../../../src/store/experiments/experimentTypes';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import type { ReplaySummary } from '../../../../src/shared/protocol/replay';
import { copyFixture, tempDir } from '../../../support/tempFiles';

const ROOT = join(__dirname, '..', '..', '..', '..');
const KEY = '0123456789abcdef0123456789abcdef';
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

const replay: ReplaySummary = {
  mode: 'replay',
  source: { branchId: 'main', turn: 2 },
  recordedCalls: 1,
  marks: [{ callId: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}', outcome: 'replayed', recordedCallId: 'r1' }],
  hosted: [],
  divergence: null,
  disagreements: [],
};

/** One case of a report: turn `turn` of sess-1/main, with its status and a trajectory grade to match. */
function caseResult(
  turn: number,
  status: ExperimentCaseResult['status'],
  overrides: Partial<ExperimentCaseResult> = {},
): ExperimentCaseResult {
  const pass = status === 'pass';
  return {
    case: { id: `sess-1/main/${turn}`, sessionId: 'sess-1', branchId: 'main', turn, contentKey: KEY, verdict: 'good' },
    status,
    graders:
      status === 'orphaned' || status === 'error'
        ? []
        : [
            {
              grader: 'trajectory',
              pass,
              score: pass ? 1 : 0,
              reason: pass ? '1 tool call as recorded' : `diverged at step 1 (turn ${turn})`,
            },
          ],
    run:
      status === 'orphaned'
        ? null
        : {
            answer: `Sunny on turn ${turn}.`,
            trajectory: [{ name: 'get_weather', arguments: '{"city":"Paris"}', output: 'sunny' }],
            usage: {
              requests: 2,
              inputTokens: 1_000_000,
              outputTokens: 100_000,
              totalTokens: 1_100_000,
              cachedTokens: 0,
              reasoningTokens: 0,
            },
            ms: 300 + turn,
            replay,
            branchId: null,
          },
    error: status === 'error' ? 'The grader command exited with code 3' : null,
    ms: 400 + turn,
    ...overrides,
  };
}

const report = (results: ExperimentCaseResult[]): ExperimentReport => ({
  file: '/work/sessions.db',
  graders: ['trajectory'],
  results,
  startedAt: '2026-12-05T03:00:00.000Z',
  ms: 1234,
});

describe('ExperimentStore', () => {
  let tmp: { dir: string; cleanup: () => void };
  let path: string;
  beforeEach(() => {
    tmp = tempDir('asi-experiments-');
    path = join(tmp.dir, 'reviews.experiments.db');
  });
  afterEach(() => tmp.cleanup());

  it('is created on the first save as a file of our own, and keeps per case what the check found', () => {
    const store = ExperimentStore.open(path);
    try {
      const summary = store.saveExperiment(
        'before-prompt-change',
        report([caseResult(2, 'pass'), caseResult(4, 'fail'), caseResult(6, 'orphaned')]),
        {
          model: 'gpt-4o-mini',
          nowMs: 1_000,
        },
      );
      assert.deepEqual(
        { ...summary },
        {
          name: 'before-prompt-change',
          file: '/work/sessions.db',
          graders: ['trajectory'],
          model: 'gpt-4o-mini',
          startedAt: '2026-12-05T03:00:00.000Z',
          ms: 1234,
          savedMs: 1_000,
          cases: 3,
          passed: 1,
          failed: 1,
          errors: 0,
          orphaned: 1,
          totalTokens: 2_200_000,
          // gpt-4o-mini: $0.15 per 1M input, $0.60 per 1M output, for each of the two cases that ran.
          costUsd: 2 * (0.15 + 0.06),
        },
      );
      assert.equal(
        store.db.prepare('PRAGMA application_id').get<{ application_id: number }>()!.application_id,
        EXPERIMENT_STORE_APPLICATION_ID,
      );
      const saved = store.getExperiment('before-prompt-change')!;
      const [pass, fail, orphaned] = saved.cases;
      assert.deepEqual(pass, {
        caseId: 'sess-1/main/2',
        sessionId: 'sess-1',
        branchId: 'main',
        turn: 2,
        contentKey: KEY,
        verdict: 'good',
        status: 'pass',
        grades: [{ grader: 'trajectory', pass: true, score: 1, reason: '1 tool call as recorded' }],
        answer: 'Sunny on turn 2.',
        calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}', output: 'sunny' }],
        usage: { requests: 2, inputTokens: 1_000_000, outputTokens: 100_000, totalTokens: 1_100_000, cachedTokens: 0, reasoningTokens: 0 },
        costUsd: 0.21,
        latencyMs: 302,
        caseMs: 402,
        replay,
        error: null,
        keptBranch: null,
      });
      assert.deepEqual(fail!.grades[0], { grader: 'trajectory', pass: false, score: 0, reason: 'diverged at step 1 (turn 4)' });
      assert.deepEqual(
        [orphaned!.status, orphaned!.answer, orphaned!.calls, orphaned!.usage, orphaned!.latencyMs],
        ['orphaned', null, null, null, null],
      );
    } finally {
      store.close();
    }
  });

  it('has no cost for a model it cannot price, and lists experiments newest first', () => {
    const store = ExperimentStore.open(path);
    try {
      store.saveExperiment('a', report([caseResult(2, 'pass')]), { model: 'my-own-model', nowMs: 1 });
      store.saveExperiment('b', report([caseResult(2, 'fail')]), { nowMs: 2 });
      assert.deepEqual(
        store.listExperiments().map((e) => [e.name, e.costUsd, e.passed, e.failed]),
        [
          ['b', null, 0, 1],
          ['a', null, 1, 0],
        ],
      );
    } finally {
      store.close();
    }
  });

  it('refuses a name saved already, unless forced; a forced save replaces it whole', () => {
    const store = ExperimentStore.open(path);
    try {
      store.saveExperiment('main', report([caseResult(2, 'pass'), caseResult(4, 'pass')]), { nowMs: 1 });
      assert.throws(
        () => store.saveExperiment('main', report([caseResult(2, 'fail')])),
        (e: unknown) =>
          e instanceof ExperimentStoreError &&
          e.problem === 'exists' &&
          /"main" was saved on 1970-01-01T00:00:00\.001Z.*--force/.test(e.message),
      );
      assert.equal(store.getExperiment('main')!.cases.length, 2, 'the refused save changed nothing');
      store.saveExperiment('main', report([caseResult(2, 'fail')]), { force: true, nowMs: 5 });
      const replaced = store.getExperiment('main')!;
      assert.deepEqual(
        replaced.cases.map((c) => [c.caseId, c.status, c.grades.length]),
        [['sess-1/main/2', 'fail', 1]],
      );
      assert.equal(store.listExperiments().length, 1);
      assert.equal(
        store.db.prepare('SELECT COUNT(*) AS n FROM experiment_grades').get<{ n: number }>()!.n,
        1,
        'no grade of the old one is left',
      );
    } finally {
      store.close();
    }
  });

  it('saves all of a report or nothing, and refuses bad names and a case given twice', () => {
    const store = ExperimentStore.open(path);
    try {
      const bad = caseResult(4, 'pass', { case: { ...caseResult(4, 'pass').case, verdict: 'meh' as 'good' } });
      assert.throws(() => store.saveExperiment('half', report([caseResult(2, 'pass'), bad])));
      assert.equal(store.getExperiment('half'), null);
      assert.equal(store.db.prepare('SELECT COUNT(*) AS n FROM experiment_cases').get<{ n: number }>()!.n, 0);
      const isInvalid = (e: unknown) => e instanceof ExperimentStoreError && e.problem === 'invalid';
      assert.throws(() => store.saveExperiment('twice', report([caseResult(2, 'pass'), caseResult(2, 'fail')])), isInvalid);
      for (const name of ['', '   ', 'x'.repeat(101), 'tab\there'])
        assert.throws(() => store.saveExperiment(name, report([])), isInvalid, name);
    } finally {
      store.close();
    }
  });

  it('cuts what passes its bounds, saying how much: a long answer, long call arguments, too many calls', () => {
    const store = ExperimentStore.open(path);
    try {
      const big = caseResult(2, 'pass');
      big.run = {
        ...big.run!,
        answer: 'a'.repeat(150_000),
        trajectory: Array.from({ length: 250 }, (_, i) => ({
          name: 'echo',
          arguments: i === 0 ? 'b'.repeat(20_000) : '{}',
          output: { parts: [i] },
        })),
      };
      store.saveExperiment('big', report([big]));
      const saved = store.getExperiment('big')!.cases[0]!;
      assert.equal(saved.answer!.slice(100_000), '… [50000 more characters cut]');
      assert.equal(saved.calls!.length, 200);
      assert.match(saved.calls![0]!.arguments, /^b{10000}… \[10000 more characters cut\]$/);
      assert.deepEqual(saved.calls![1]!.output, { parts: [1] }, 'a small output stays as it was');
    } finally {
      store.close();
    }
  });

  it('compares with a baseline: regressions first, then fixes, then new and missing cases', () => {
    const store = ExperimentStore.open(path);
    try {
      store.saveExperiment(
        'baseline',
        report([
          caseResult(2, 'pass'),
          caseResult(4, 'fail'),
          caseResult(6, 'pass'),
          caseResult(8, 'pass'),
          caseResult(10, 'error'),
          caseResult(12, 'pass'),
          caseResult(14, 'pass'),
        ]),
      );
      const now = report([
        caseResult(14, 'fail'),
        caseResult(2, 'pass'),
        caseResult(4, 'pass'),
        caseResult(6, 'error'),
        caseResult(10, 'pass'),
        caseResult(12, 'orphaned'),
        caseResult(16, 'fail'),
        // Turn 8 holds another message now: another case.
        caseResult(8, 'pass', { case: { ...caseResult(8, 'pass').case, contentKey: 'f'.repeat(32) } }),
      ]);
      const c = store.compareWithBaseline('baseline', now);
      assert.equal(c.baseline.name, 'baseline');
      assert.deepEqual(
        c.flips.map((f) => [f.kind, f.caseId, f.before, f.after, f.reason]),
        [
          ['regression', 'sess-1/main/6', 'pass', 'error', 'The grader command exited with code 3'],
          ['regression', 'sess-1/main/14', 'pass', 'fail', 'trajectory: diverged at step 1 (turn 14)'],
          ['fix', 'sess-1/main/4', 'fail', 'pass', 'trajectory: diverged at step 1 (turn 4)'],
          ['fix', 'sess-1/main/10', 'error', 'pass', 'The grader command exited with code 3'],
          ['new', 'sess-1/main/8', null, 'pass', ''],
          ['new', 'sess-1/main/16', null, 'fail', 'trajectory: diverged at step 1 (turn 16)'],
          ['missing', 'sess-1/main/8', 'pass', null, ''],
        ],
      );
      // Turn 2 (pass → pass) and turn 12 (orphaned now: it did not run) are not flips.
      assert.equal(c.unchanged, 2);
      assert.throws(
        () => store.compareWithBaseline('nope', now),
        (e: unknown) =>
          e instanceof ExperimentStoreError &&
          e.problem === 'not-found' &&
          /No experiment named "nope" .*\(saved: baseline\)/.test(e.message),
      );
    } finally {
      store.close();
    }
  });

  it('lives beside the review store by default', () => {
    assert.equal(defaultExperimentsPath('/work/team/reviews.db'), join('/work/team', 'reviews.experiments.db'));
    assert.equal(defaultExperimentsPath('/work/team/reviews.sqlite3'), join('/work/team', 'reviews.experiments.db'));
    assert.equal(defaultExperimentsPath('/work/team/notes'), join('/work/team', 'notes.experiments.db'));
  });

  it('refuses, untouched, a session file, the review store, a newer format and files that are not SQLite', () => {
    const session = copyFixture(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-basic.db'), tmp.dir);
    const before = sha(session);
    assert.throws(
      () => ExperimentStore.open(session),
      (e: unknown) =>
        e instanceof ExperimentStoreError && e.problem === 'not-experiment-store' && /never in a session file/.test(e.message),
    );
    assert.equal(sha(session), before);

    const reviews = join(tmp.dir, 'reviews.db');
    ReviewStore.open(reviews).close();
    const reviewsBefore = sha(reviews);
    assert.throws(
      () => ExperimentStore.open(reviews),
      (e: unknown) => e instanceof ExperimentStoreError && e.problem === 'not-experiment-store',
    );
    assert.equal(sha(reviews), reviewsBefore);

    const newer = join(tmp.dir, 'newer.db');
    const raw = ExperimentStore.open(newer);
    raw.db.prepare("UPDATE experiment_meta SET value = '2' WHERE key = 'format'").run();
    raw.close();
    assert.throws(
      () => ExperimentStore.open(newer),
      (e: unknown) => e instanceof ExperimentStoreError && e.problem === 'newer-format' && /format 2/.test(e.message),
    );

    const text = join(tmp.dir, 'text.db');
    writeFileSync(text, 'not a database at all, just text that is long enough to have a header');
    assert.throws(
      () => ExperimentStore.open(text),
      (e: unknown) => e instanceof SessionDatabaseError,
    );
    assert.equal(readFileSync(text, 'utf8'), 'not a database at all, just text that is long enough to have a header');

    const empty = join(tmp.dir, 'empty.db');
    writeFileSync(empty, '');
    assert.throws(
      () => ExperimentStore.open(empty, { readonly: true }),
      (e: unknown) => e instanceof ExperimentStoreError && e.problem === 'not-found' && /has no experiment store yet/.test(e.message),
    );
    assert.equal(readFileSync(empty).length, 0);
  });

  it('refuses, untouched, a file with the experiment store header but other columns, and a symbolic link', () => {
    for (const [what, change] of [
      ['a column renamed', 'ALTER TABLE experiment_cases RENAME COLUMN status TO outcome'],
      ['a table missing', 'DROP TABLE experiment_grades'],
    ] as const) {
      const other = join(tmp.dir, `other-${what.length}.db`);
      const raw = ExperimentStore.open(other);
      raw.db.exec(change);
      raw.close();
      const before = sha(other);
      assert.throws(
        () => ExperimentStore.open(other),
        (e: unknown) =>
          e instanceof ExperimentStoreError &&
          e.problem === 'not-experiment-store' &&
          e.message.includes(what === 'a table missing' ? 'lacks the table experiment_grades' : 'lacks the column experiment_cases.status'),
        what,
      );
      assert.equal(sha(other), before, `${what}: untouched`);
    }
    const target = join(tmp.dir, 'target.db');
    const link = join(tmp.dir, 'link.db');
    symlinkSync(target, link);
    assert.throws(
      () => ExperimentStore.open(link),
      (e: unknown) => e instanceof OutputFileError,
    );
    assert.ok(!existsSync(target), 'nothing was created through the link');
  });
});
