/**
 * The replay marks store through the store worker (the extension's way): a run's marks written and read back, and the
 * store's errors rebuilt on this side as the same class with its problem.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { ReplayStoreError } from '../../../../src/store/replay/replayErrors';
import type { ReplaySummary } from '../../../../src/shared/protocol/replay';
import { copyFixture } from '../../../support/tempFiles';
import { useWorkerClient } from '../../../support/workerClient';

const ROOT = join(__dirname, '..', '..', '..', '..');
const summary: ReplaySummary = {
  mode: 'strict',
  source: { branchId: 'main', turn: 2 },
  recordedCalls: 1,
  marks: [{ callId: 'c5', name: 'get_weather', arguments: '{"city":"Paris"}', outcome: 'replayed', recordedCallId: 'c1' }],
  hosted: ['web_search_call'],
  divergence: null,
  disagreements: [],
};

describe('the replay marks store in the store worker', function () {
  this.timeout(30_000);
  const worker = useWorkerClient('asi-replay-worker-');

  it('records a run in the worker and reads its marks and summary back', async () => {
    const store = await worker.client().openReplayStore(join(worker.dir, 'replay.db'));
    await store.call('recordRun', '/x/trips.db', 'trip', 'retry-1', 2, summary, 'run-1', { freshBranch: true }, 42);
    assert.deepEqual(await store.call('runsOfBranch', '/x/trips.db', 'trip', 'retry-1'), [{ runId: 'run-1', turn: 2, summary }]);
    assert.deepEqual(await store.call('marksOfBranch', '/x/trips.db', 'trip', 'retry-1'), [
      { ...summary.marks[0], runId: 'run-1', recordedBranchId: 'main', recordedTurn: 2 },
    ]);
    await store.close();
  });

  it('rejects with ReplayStoreError and its problem: a bad mark, a session file as the store', async () => {
    const store = await worker.client().openReplayStore(join(worker.dir, 'other.db'));
    await assert.rejects(
      store.call('recordRun', '/x/trips.db', 'trip', 'b', 1, { ...summary, mode: 'mock' as never }, 'r'),
      (e: unknown) => e instanceof ReplayStoreError && e.problem === 'invalid',
    );
    await store.close();
    const session = copyFixture(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-basic.db'), worker.dir);
    await assert.rejects(
      worker.client().openReplayStore(session),
      (e: unknown) => e instanceof ReplayStoreError && e.problem === 'not-replay-store',
    );
  });
});
