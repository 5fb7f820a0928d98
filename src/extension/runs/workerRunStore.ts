/**
 * The store worker as a run's store (src/agents/runSession.ts): the run's session, its writes, their waits for
 * another process's lock and the agent command's write checks all happen in the worker, never on the host's thread.
 */
import type { RunStore } from '../../agents/runSession';
import type { StoreClient } from '../../store/worker/storeClient';
import { guardStoreForRuns } from '../guard/runGuardStore';

function guardOption(): { guardStorePath?: string } {
  const path = guardStoreForRuns();
  return path === undefined ? {} : { guardStorePath: path };
}

export function workerRunStore(client: StoreClient): RunStore {
  return {
    openSession: ({ logger, ...options }) =>
      // A run waits for the lock as long as the SDKs' busy timeout would have (5 s by default), but in the worker.
      // Our compaction records what it replaces in the guard store, guarded file or not (docs/history-guard.md).
      client.openSession(
        { ...options, ...guardOption() },
        { logger, ...(options.busyTimeoutMs !== undefined ? { lockWaitMs: options.busyTimeoutMs } : {}) },
      ),
    markWrites: (dbPath, tables) => client.fileCall('markWrites', dbPath, tables),
    writesSince: (dbPath, tables, mark) => client.fileCall('writesSince', dbPath, tables, mark),
    // A check's scratch copies: read and written in the worker, so a big prefix never crosses the host's thread.
    copyBranchPrefix: (sourcePath, targetPath, request, signal, chain) =>
      client.copyBranchPrefix(sourcePath, targetPath, request, signal, chain),
    releasePrefixChains: (folder) => client.releasePrefixChains(folder),
  };
}
