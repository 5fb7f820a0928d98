/**
 * The replay marks store, created by the first run that records marks, not by looking (docs/replay.md): opening a
 * conversation or compare view reads the marks of its branches, which must add no file to the extension's storage.
 * Free of `vscode`, so it is unit-tested in Node against the real store in the store worker.
 */
import type { ReplayMarkStore } from '../../store/replay/replayMarkStore';
import type { WorkerReplayStore } from '../../store/worker/storeClient';
import type { ReplayMethod } from '../../store/worker/storeWorkerProtocol';
import { StoreOnDemand, type EmptyAnswers } from '../../store/worker/storeOnDemand';

/** What a replay marks store with nothing in it answers: to every read, and to a removal (there is nothing to remove). */
export const EMPTY_REPLAY_ANSWERS: EmptyAnswers<ReplayMarkStore, ReplayMethod> = {
  marksOfBranch: () => [],
  runsOfBranch: () => [],
  deleteBranch: () => 0,
  deleteSession: () => 0,
};

/** The replay marks store at `path`, opened (and created) by `open` on the first run recorded, or the first read once it exists. */
export function replayStoreOnDemand(path: string, open: () => Promise<WorkerReplayStore>): StoreOnDemand<ReplayMarkStore, ReplayMethod> {
  return new StoreOnDemand<ReplayMarkStore, ReplayMethod>(path, open, EMPTY_REPLAY_ANSWERS);
}
