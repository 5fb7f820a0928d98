/**
 * The extension's trace store (docs/traces.md), created by the first span stored or linked, not by looking: the
 * conversation view reads turns' latency and timelines from it on every open, which used to create `traces.db` in the
 * extension's storage before anything was traced. Free of `vscode`, so it is unit-tested in Node.
 */
import type { TraceStore } from '../../store/traces/traceStore';
import type { WorkerTraceStore } from '../../store/worker/storeClient';
import type { TraceMethod } from '../../store/worker/storeWorkerProtocol';
import { StoreOnDemand, type EmptyAnswers } from '../../store/worker/storeOnDemand';

/** What a trace store with nothing in it answers: to every read, and to a clear or a prune (nothing to remove). */
export const EMPTY_TRACE_ANSWERS: EmptyAnswers<TraceStore, TraceMethod> = {
  spansOfTrace: () => [],
  trace: () => undefined,
  tracesOfTurn: () => [],
  spansOfTurn: () => [],
  turnLatencies: () => [],
  tracesOfSession: () => [],
  unlinkedTraces: () => [],
  counts: () => ({ traces: 0, spans: 0 }),
  clearSession: () => 0,
  prune: () => 0,
};

/** The trace store at `path`, opened (and created) by `open` on the first write, or the first read once it exists. */
export function traceStoreOnDemand(path: string, open: () => Promise<WorkerTraceStore>): StoreOnDemand<TraceStore, TraceMethod> {
  return new StoreOnDemand<TraceStore, TraceMethod>(path, open, EMPTY_TRACE_ANSWERS);
}
