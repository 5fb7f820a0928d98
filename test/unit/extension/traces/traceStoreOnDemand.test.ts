/**
 * Reading never writes (issue 46): the extension's trace store is not created by the reads of the conversation view
 * (latency, timelines), the coding agents' tools or linking — each answers what an empty store answers (checked
 * against a real, empty `TraceStore`), and a clear or a prune removes nothing — and the first span stored creates it.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EMPTY_TRACE_ANSWERS, traceStoreOnDemand } from '../../../../src/extension/traces/traceStoreOnDemand';
import { TraceStore } from '../../../../src/store/traces/traceStore';
import { spanRecord } from '../../../support/spanRecords';
import { assertAnswersAsEmpty } from '../../../support/storeOnDemand';
import { useWorkerClient } from '../../../support/workerClient';

describe('the trace store on demand', () => {
  const worker = useWorkerClient('asi-traces-on-demand-');
  const turn = { sessionId: 's', branchId: 'main', turnNumber: 1, window: { startUs: 0, endUs: null } };
  /** Every call a reader makes, and the removals. */
  const READS = [
    ['spansOfTrace', 'a'.repeat(32)],
    ['trace', 'a'.repeat(32)],
    ['tracesOfTurn', turn],
    ['spansOfTurn', turn],
    ['turnLatencies', 's', [turn]],
    ['tracesOfSession', 's'],
    ['unlinkedTraces'],
    ['counts'],
    ['clearSession', 's'],
    ['prune', { maxSpans: 10, maxAgeDays: 1 }],
  ] as const;

  it('answers reads of a store that does not exist as an empty store does, without creating it', async () => {
    const path = join(worker.dir, 'traces.db');
    const store = traceStoreOnDemand(path, () => worker.client().openTraceStore(path));
    // The answers to expect, from the store class itself on an empty file of its own.
    await assertAnswersAsEmpty(store, TraceStore.open(join(worker.dir, 'empty-traces.db')), READS);
    assert.equal(existsSync(path), false, 'reading created no trace store');
    assert.equal(store.isOpen, false);
  });

  it('is created by the first span stored, and read from then on', async () => {
    const path = join(worker.dir, 'written-traces.db');
    const store = traceStoreOnDemand(path, () => worker.client().openTraceStore(path));
    try {
      await store.call('addSpans', [spanRecord()]);
      assert.ok(existsSync(path));
      assert.deepEqual(await store.call('counts'), { traces: 1, spans: 1 });
    } finally {
      await store.close();
    }
  });

  it('has an empty answer only for methods that read or remove', () => {
    assert.deepEqual(Object.keys(EMPTY_TRACE_ANSWERS).sort(), [
      'clearSession',
      'counts',
      'prune',
      'spansOfTrace',
      'spansOfTurn',
      'trace',
      'tracesOfSession',
      'tracesOfTurn',
      'turnLatencies',
      'unlinkedTraces',
    ]);
  });
});
