/**
 * Reading never writes: the replay marks store is not created by the conversation and compare views reading a
 * branch's marks — every read answers what an empty store answers (checked against a real, empty `ReplayMarkStore`)
 * and a removal removes nothing — and the first run recorded creates it, in the store worker.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { replayStoreOnDemand } from '../../../../src/extension/replay/replayStoreOnDemand';
import { ReplayMarkStore } from '../../../../src/store/replay/replayMarkStore';
import type { ReplaySummary } from '../../../../src/shared/protocol/replay';
import { assertAnswersAsEmpty } from '../../../support/storeOnDemand';
import { useWorkerClient } from '../../../support/workerClient';

describe('the replay marks store on demand', () => {
  const worker = useWorkerClient('asi-replay-on-demand-');
  const READS = [
    ['marksOfBranch', '/x/trips.db', 'trip', 'main'],
    ['runsOfBranch', '/x/trips.db', 'trip', 'main'],
    ['deleteBranch', '/x/trips.db', 'trip', 'main'],
    ['deleteSession', '/x/trips.db', 'trip'],
  ] as const;
  const summary: ReplaySummary = {
    mode: 'replay',
    source: { branchId: 'main', turn: 1 },
    recordedCalls: 1,
    marks: [{ callId: 'c2', name: 'get_weather', arguments: '{}', outcome: 'live', recordedCallId: null }],
    hosted: [],
    divergence: null,
    disagreements: [],
  };

  it('answers reads of a store that does not exist as an empty store does, without creating it', async () => {
    const path = join(worker.dir, 'replay.db');
    const store = replayStoreOnDemand(path, () => worker.client().openReplayStore(path));
    await assertAnswersAsEmpty(store, ReplayMarkStore.open(join(worker.dir, 'empty-replay.db')), READS);
    assert.equal(existsSync(path), false, 'reading created no replay marks store');
    assert.equal(store.isOpen, false);
    await store.close();
  });

  it('is created by the first run recorded, and read from then on', async () => {
    const path = join(worker.dir, 'first-run.db');
    const store = replayStoreOnDemand(path, () => worker.client().openReplayStore(path));
    try {
      await store.call('recordRun', '/x/trips.db', 'trip', 'retry-1', 1, summary, 'run-1');
      assert.ok(existsSync(path));
      assert.deepEqual(
        (await store.call('marksOfBranch', '/x/trips.db', 'trip', 'retry-1')).map((m) => [m.callId, m.outcome]),
        [['c2', 'live']],
      );
    } finally {
      await store.close();
    }
  });
});
