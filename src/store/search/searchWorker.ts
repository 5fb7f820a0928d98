/**
 * The search worker: runs `searchDatabase` off the extension host's thread, so a scan of a large file never blocks the
 * host (a synchronous SQLite read of a batch would otherwise hold its event loop). It opens its own read-only
 * connection per file (SQLite connections cannot be shared across threads), on the driver the host uses, and closes
 * them before it says it is idle: a worker kept for the next search holds no file open.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSessionDatabase, type SessionDatabase } from '../inspector/sessionDatabase';
import { errorMessage } from '../../shared/errorMessage';
import { searchDatabase } from './searchDatabase';
import { DEFAULT_MAX_HITS } from './searchHits';
import type { SearchWorkerCommand, SearchWorkerEvent, SearchWorkerInput, SearchWorkerStart } from './workerProtocol';

/** Progress messages at most this often, so a fast scan does not flood the host with them. */
const PROGRESS_MS = 100;

async function run(input: SearchWorkerInput, post: (e: SearchWorkerEvent) => void, signal: AbortSignal): Promise<void> {
  let maxHits = input.maxHits ?? DEFAULT_MAX_HITS;
  let capped = false;
  const notSearched: string[] = [];
  // Indexes far behind their files (a file's first tool: search) catch up once everything is posted, on the files'
  // connections, kept open until then.
  const later: { db: SessionDatabase; task: () => void }[] = [];
  for (const path of input.paths) {
    if (signal.aborted) break;
    if (capped) {
      notSearched.push(path);
      continue;
    }
    let db: SessionDatabase | undefined;
    try {
      const opened = openSessionDatabase(path, { readonly: true, driver: input.driver ?? 'auto' });
      db = opened;
      let lastProgress = 0;
      const summary = await searchDatabase(db, input.query, {
        signal,
        maxHits,
        sessionId: input.sessionId,
        turns: input.turns?.[path],
        index:
          input.indexDir === undefined
            ? undefined
            : {
                dir: input.indexDir,
                onProblem: (message) => post({ type: 'notice', path, message }),
                later: (task) => later.push({ db: opened, task }),
              },
        onHits: (hits) => post({ type: 'hits', path, hits }),
        onProgress: (rowsScanned, rowsTotal) => {
          const now = performance.now();
          if (now - lastProgress < PROGRESS_MS) return;
          lastProgress = now;
          post({ type: 'progress', path, rowsScanned, rowsTotal });
        },
      });
      maxHits -= summary.hits;
      capped = summary.truncated;
      post({ type: 'done', path, summary });
    } catch (err) {
      post({ type: 'error', path, message: errorMessage(err) });
    } finally {
      if (!later.some((l) => l.db === db)) db?.close();
    }
  }
  post({ type: 'finished', cancelled: signal.aborted, capped, notSearched });
  for (const { db, task } of later) {
    try {
      task();
    } finally {
      db.close();
    }
  }
}

if (parentPort) {
  const port = parentPort;
  // One search at a time: the host sends another only after `idle`. A cancel names its search, so one sent late (its
  // search had ended) never stops the next.
  let current: { searchId: number; controller: AbortController } | undefined;
  const search = (searchId: number, input: SearchWorkerInput): void => {
    const controller = new AbortController();
    current = { searchId, controller };
    void run(input, (e) => port.postMessage(e), controller.signal).finally(() => {
      current = undefined;
      port.postMessage({ type: 'idle' } satisfies SearchWorkerEvent);
    });
  };
  port.on('message', (m: SearchWorkerCommand) => {
    if (m.type === 'cancel' && current?.searchId === m.searchId) current.controller.abort();
    else if (m.type === 'search') search(m.searchId, m.input);
    else if (m.type === 'end' && current === undefined) port.close();
  });
  const { searchId, ...input } = workerData as SearchWorkerStart;
  search(searchId, input);
}
