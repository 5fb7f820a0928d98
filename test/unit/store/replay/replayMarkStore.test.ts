/**
 * The replay marks store on a real SQLite file (either driver: the store phases run this on node:sqlite too): a run
 * and its marks written together and read back by branch, the recorded call each mark points at, a fork's branch
 * taking over a deleted branch's name, what it refuses to record (nothing written), deletions, and the files it must
 * refuse untouched (a session file, a newer format, another program's database).
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDatabaseError } from '../../../../src/store/errors';
import { ReplayStoreError } from '../../../../src/store/replay/replayErrors';
import { REPLAY_LIMITS, ReplayMarkStore } from '../../../../src/store/replay/replayMarkStore';
import { REPLAY_STORE_APPLICATION_ID } from '../../../../src/store/replay/replaySchema';
import { REVIEW_STORE_APPLICATION_ID } from '../../../../src/store/reviews/reviewSchema';
import { TRACE_STORE_APPLICATION_ID } from '../../../../src/store/traces/traceSchema';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import type { ReplayMark, ReplaySummary } from '../../../../src/shared/protocol/replay';
import { copyFixture, tempDir } from '../../../support/tempFiles';

const ROOT = join(__dirname, '..', '..', '..', '..');
const KEY = '/work/trips.db';
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const isInvalid = (e: unknown) => e instanceof ReplayStoreError && e.problem === 'invalid';

const mark = (callId: string, name: string, outcome: ReplayMark['outcome'], recordedCallId: string | null): ReplayMark => ({
  callId,
  name,
  arguments: `{"call":"${callId}"}`,
  outcome,
  recordedCallId,
});

/** A re-run of turn 2 of main: two calls got their recorded outputs, one ran live. */
function summary(marks: ReplayMark[], source: ReplaySummary['source'] = { branchId: 'main', turn: 2 }): ReplaySummary {
  return {
    mode: 'replay',
    source,
    recordedCalls: 3,
    marks,
    hosted: [],
    divergence: { step: 3, recorded: { name: 'get_weather', arguments: '{}' }, actual: { name: 'send_email', arguments: '{}' }, diff: [] },
    disagreements: [],
  };
}

describe('ReplayMarkStore', () => {
  const tmp = tempDir('asi-replay-');
  let store: ReplayMarkStore;
  let n = 0;
  beforeEach(() => {
    store = ReplayMarkStore.open(join(tmp.dir, `m${++n}.db`));
  });
  afterEach(() => store.close());
  after(() => tmp.cleanup());

  it('has an application id of its own, not the review or trace store', () => {
    assert.equal(
      Number(store.db.prepare('PRAGMA application_id').get<{ application_id: number }>()?.application_id),
      REPLAY_STORE_APPLICATION_ID,
    );
    assert.notEqual(REPLAY_STORE_APPLICATION_ID, REVIEW_STORE_APPLICATION_ID);
    assert.notEqual(REPLAY_STORE_APPLICATION_ID, TRACE_STORE_APPLICATION_ID);
    assert.equal(String(store.db.prepare('PRAGMA journal_mode').get<{ journal_mode: string }>()?.journal_mode).toLowerCase(), 'wal');
  });

  it('keeps a run and its marks, read back by branch with the recorded call each points at', () => {
    const s = summary([
      mark('c9', 'get_weather', 'replayed', 'c1'),
      mark('c10', 'get_weather', 'replayed', 'c2'),
      mark('c11', 'send_email', 'live', null),
    ]);
    store.recordRun(KEY, 'trip', 'retry-1', 2, s, 'run-1', {}, 1000);
    assert.deepEqual(store.runsOfBranch(KEY, 'trip', 'retry-1'), [{ runId: 'run-1', turn: 2, summary: s }]);
    assert.deepEqual(
      store
        .marksOfBranch(KEY, 'trip', 'retry-1')
        .map((m) => [m.callId, m.name, m.outcome, m.recordedCallId, m.recordedBranchId, m.recordedTurn, m.runId]),
      [
        ['c9', 'get_weather', 'replayed', 'c1', 'main', 2, 'run-1'],
        ['c10', 'get_weather', 'replayed', 'c2', 'main', 2, 'run-1'],
        ['c11', 'send_email', 'live', null, null, null, 'run-1'],
      ],
    );
    assert.equal(store.marksOfBranch(KEY, 'trip', 'retry-1')[0]?.arguments, '{"call":"c9"}');
    // Keyed by the session store, session and branch: nothing of another file, session or branch.
    assert.deepEqual(store.marksOfBranch('/work/other.db', 'trip', 'retry-1'), []);
    assert.deepEqual(store.marksOfBranch(KEY, 'other', 'retry-1'), []);
    assert.deepEqual(store.runsOfBranch(KEY, 'trip', 'main'), []);
  });

  it('keeps an agent command report that disagrees, and a later run on the branch beside the first (oldest first)', () => {
    store.recordRun(
      KEY,
      'trip',
      'retry-1',
      2,
      summary([{ ...mark('c1', 'refund', 'live', null), reported: 'replayed' }]),
      'run-1',
      {},
      1000,
    );
    store.recordRun(
      KEY,
      'trip',
      'retry-1',
      3,
      { ...summary([mark('c2', 'refund', 'live', null)], null), mode: 'live', divergence: null },
      'run-2',
      {},
      2000,
    );
    assert.deepEqual(
      store.runsOfBranch(KEY, 'trip', 'retry-1').map((r) => [r.runId, r.turn, r.summary.mode]),
      [
        ['run-1', 2, 'replay'],
        ['run-2', 3, 'live'],
      ],
    );
    const marks = store.marksOfBranch(KEY, 'trip', 'retry-1');
    assert.deepEqual(
      marks.map((m) => [m.callId, m.reported ?? null]),
      [
        ['c2', null],
        ['c1', 'replayed'],
      ],
    );
    assert.equal('reported' in marks[0]!, false, 'no report: no field');
  });

  it("a fork's run replaces what a deleted branch of the same name left", () => {
    store.recordRun(KEY, 'trip', 'retry-1', 2, summary([mark('c1', 'get_weather', 'replayed', 'c1')]), 'old-run', {}, 1000);
    store.recordRun(KEY, 'trip', 'retry-1', 2, summary([mark('c7', 'get_weather', 'live', null)]), 'new-run', { freshBranch: true }, 2000);
    assert.deepEqual(
      store.runsOfBranch(KEY, 'trip', 'retry-1').map((r) => r.runId),
      ['new-run'],
    );
    assert.deepEqual(
      store.marksOfBranch(KEY, 'trip', 'retry-1').map((m) => m.callId),
      ['c7'],
    );
  });

  it('refuses what is not a run to record with a typed error, and writes nothing', () => {
    const ok = summary([mark('c1', 'get_weather', 'replayed', 'c1')]);
    const cases: [string, () => void][] = [
      ['empty run id', () => store.recordRun(KEY, 'trip', 'b', 1, ok, '')],
      ['empty store key', () => store.recordRun('', 'trip', 'b', 1, ok, 'r')],
      ['turn 0', () => store.recordRun(KEY, 'trip', 'b', 0, ok, 'r')],
      ['mode off', () => store.recordRun(KEY, 'trip', 'b', 1, { ...ok, mode: 'off' as never }, 'r')],
      // Past 2^53 a turn is no longer the number it was written as.
      ['turn past 2^53', () => store.recordRun(KEY, 'trip', 'b', 2 ** 60, ok, 'r')],
      ['outcome', () => store.recordRun(KEY, 'trip', 'b', 1, summary([mark('c1', 'x', 'faked' as never, null)]), 'r')],
      ['no call id', () => store.recordRun(KEY, 'trip', 'b', 1, summary([mark('', 'x', 'live', null)]), 'r')],
      [
        'huge call id',
        () => store.recordRun(KEY, 'trip', 'b', 1, summary([mark('c'.repeat(REPLAY_LIMITS.idChars + 1), 'x', 'live', null)]), 'r'),
      ],
      [
        'arguments not text',
        () => store.recordRun(KEY, 'trip', 'b', 1, summary([{ ...mark('c1', 'x', 'live', null), arguments: {} as never }]), 'r'),
      ],
      [
        'report',
        () => store.recordRun(KEY, 'trip', 'b', 1, summary([{ ...mark('c1', 'x', 'live', null), reported: 'maybe' as never }]), 'r'),
      ],
      [
        'too many marks',
        () =>
          store.recordRun(
            KEY,
            'trip',
            'b',
            1,
            summary(Array.from({ length: REPLAY_LIMITS.marksPerRun + 1 }, (_, i) => mark(`c${i}`, 'x', 'live', null))),
            'r',
          ),
      ],
    ];
    for (const [what, write] of cases) assert.throws(write, isInvalid, what);
    assert.deepEqual(store.runsOfBranch(KEY, 'trip', 'b'), []);
    assert.deepEqual(store.marksOfBranch(KEY, 'trip', 'b'), []);
  });

  it("deletes a branch's or a session's runs and marks, and only those", () => {
    store.recordRun(KEY, 'trip', 'retry-1', 2, summary([mark('c1', 'a', 'live', null)]), 'r1');
    store.recordRun(KEY, 'trip', 'retry-2', 2, summary([mark('c2', 'a', 'live', null)]), 'r2');
    store.recordRun(KEY, 'other', 'retry-1', 2, summary([mark('c3', 'a', 'live', null)]), 'r3');
    assert.equal(store.deleteBranch(KEY, 'trip', 'retry-1'), 2);
    assert.deepEqual(store.marksOfBranch(KEY, 'trip', 'retry-1'), []);
    assert.equal(store.marksOfBranch(KEY, 'trip', 'retry-2').length, 1);
    assert.equal(store.deleteSession(KEY, 'trip'), 2);
    assert.deepEqual(store.runsOfBranch(KEY, 'trip', 'retry-2'), []);
    assert.equal(store.runsOfBranch(KEY, 'other', 'retry-1').length, 1);
  });

  it('is created only when opened to write; read-only, a missing store is not made', () => {
    const path = join(tmp.dir, `missing${n}.db`);
    assert.throws(
      () => ReplayMarkStore.open(path, { readonly: true }),
      (e: unknown) => e instanceof SessionDatabaseError || e instanceof ReplayStoreError,
    );
    assert.equal(existsSync(path), false);
  });

  it('refuses a session file, a review store and a store of a newer format, untouched', () => {
    const session = copyFixture(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-basic.db'), tmp.dir);
    const before = sha(session);
    assert.throws(
      () => ReplayMarkStore.open(session),
      (e: unknown) => e instanceof ReplayStoreError && e.problem === 'not-replay-store' && /never in a session file/.test(e.message),
    );
    assert.equal(sha(session), before);
    const reviews = join(tmp.dir, `reviews${n}.db`);
    ReviewStore.open(reviews).close();
    const reviewsBefore = sha(reviews);
    assert.throws(
      () => ReplayMarkStore.open(reviews),
      (e: unknown) => e instanceof ReplayStoreError && e.problem === 'not-replay-store',
    );
    assert.equal(sha(reviews), reviewsBefore);
    const newer = join(tmp.dir, `newer${n}.db`);
    const raw = ReplayMarkStore.open(newer);
    raw.db.prepare("UPDATE replay_meta SET value = '2' WHERE key = 'format'").run();
    raw.close();
    assert.throws(
      () => ReplayMarkStore.open(newer),
      (e: unknown) => e instanceof ReplayStoreError && e.problem === 'newer-format',
    );
    const notSqlite = join(tmp.dir, `text${n}.db`);
    writeFileSync(notSqlite, 'not a database at all, just text that is long enough to have a header');
    assert.throws(
      () => ReplayMarkStore.open(notSqlite),
      (e: unknown) => e instanceof SessionDatabaseError,
    );
  });
});
