/**
 * The search worker: runs `searchDatabase` off the extension host's thread, so a scan of a large file never blocks the
 * host (a synchronous SQLite read of a batch would otherwise hold its event loop). It opens its own read-only
 * connection per file (SQLite connections cannot be shared across threads), on the driver the host uses, and closes
 * them before it says it is idle, unless the search says the files are held open elsewhere (`keepOpen`: the
 * extension's, which its store worker holds): then it keeps them for the next search, with what they keep between
 * searches (statements, pages, branch trees), until the host releases them or the worker ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSessionDatabase, type SessionDatabase } from '../inspector/sessionDatabase';
import { errorMessage } from '../../shared/errorMessage';
import { searchDatabase } from './searchDatabase';
import { DEFAULT_MAX_HITS } from './searchHits';
import type { SearchWorkerCommand, SearchWorkerEvent, SearchWorkerInput, SearchWorkerStart } from './workerProtocol';

/** Progress messages at most this often, so a fast scan does not flood the host with them. */
const PROGRESS_MS = 100;

/** Connections kept for the next search (`keepOpen`), by path. */
const kept = new Map<string, SessionDatabase>();

/**
 * The connection a search of `path` reads through: the kept one while it is open and the path still names its file,
 * else a new one (a kept one whose file was replaced or deleted is closed).
 */
function connect(path: string, input: SearchWorkerInput): SessionDatabase {
  const old = kept.get(path);
  if (old) {
    kept.delete(path);
    if (old.isOpen && old.fileState() === 'ok' && (input.driver === undefined || input.driver === 'auto' || input.driver === old.driver))
      return old;
    old.close();
  }
  return openSessionDatabase(path, { readonly: true, driver: input.driver ?? 'auto' });
}

/** Closes the kept connections to `paths` (every one when undefined). */
function release(paths: readonly string[] | undefined): void {
  for (const path of paths ?? [...kept.keys()]) {
    kept.get(path)?.close();
    kept.delete(path);
  }
}

async function run(input: SearchWorkerInput, post: (e: SearchWorkerEvent) => void, signal: AbortSignal): Promise<void> {
  let maxHits = input.maxHits ?? DEFAULT_MAX_HITS;
  let capped = false;
  const notSearched: string[] = [];
  // Indexes far behind their files (a file's first tool: search) catch up once everything is posted, on the files'
  // connections, kept open until then.
  const later: { db: SessionDatabase; task: () => void }[] = [];
  // Connections this search is done with: kept for the next one, or closed once the later tasks ran (as is one whose
  // search failed: the next search opens the file again).
  const done: { path: string; db: SessionDatabase; ok: boolean }[] = [];
  for (const path of input.paths) {
    if (signal.aborted) break;
    if (capped) {
      notSearched.push(path);
      continue;
    }
    let db: SessionDatabase | undefined;
    let ok = false;
    try {
      const opened = connect(path, input);
      db = opened;
      let lastProgress = 0;
      const summary = await searchDatabase(db, input.query, {
        signal,
        maxHits,
        sessionId: input.sessionId,
        countItems: input.countItems === true,
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
      ok = true;
    } catch (err) {
      post({ type: 'error', path, message: errorMessage(err) });
    } finally {
      if (db) done.push({ path, db, ok });
    }
  }
  post({ type: 'finished', cancelled: signal.aborted, capped, notSearched });
  for (const { task } of later) {
    try {
      task();
    } catch {
      // The index's own problems were posted as notices; the connection is dealt with below as any other.
    }
  }
  for (const { path, db, ok } of done) {
    if (!input.keepOpen || !ok || !db.isOpen) {
      db.close();
      continue;
    }
    // A path searched twice in one search keeps one connection, the last.
    kept.get(path)?.close();
    kept.set(path, db);
  }
}

if (parentPort) {
  const port = parentPort;
  // One search at a time: the host sends another only after `idle`. A cancel names its search, so one sent late (its
  // search had ended) never stops the next.
  let current: { searchId: number; controller: AbortController } | undefined;
  // Releases that came during a search: applied when it is over (its connections are in use until then).
  const releasing: (readonly string[] | undefined)[] = [];
  const search = (searchId: number, input: SearchWorkerInput): void => {
    const controller = new AbortController();
    current = { searchId, controller };
    void run(input, (e) => port.postMessage(e), controller.signal).finally(() => {
      current = undefined;
      for (const paths of releasing.splice(0)) release(paths);
      port.postMessage({ type: 'idle' } satisfies SearchWorkerEvent);
    });
  };
  port.on('message', (m: SearchWorkerCommand) => {
    if (m.type === 'cancel' && current?.searchId === m.searchId) current.controller.abort();
    else if (m.type === 'search') search(m.searchId, m.input);
    else if (m.type === 'release') {
      if (current === undefined) release(m.paths);
      else releasing.push(m.paths);
    } else if (m.type === 'end' && current === undefined) {
      release(undefined);
      port.close();
    }
  });
  const { searchId, ...input } = workerData as SearchWorkerStart;
  search(searchId, input);
}
