/**
 * The messages between a search worker (`searchWorker.ts`, bundled as dist/searchWorker.js) and whoever started it.
 * The worker searches the given files one after another, each on its own read-only connection, and streams hits; then
 * it waits for another search until the host ends it.
 */
import type { DriverName } from '../sqlite/sqliteDatabase';
import type { SearchQuery } from './searchQuery';
import type { TurnSet } from './reviewTurns';
import type { SearchHit, SearchSummary } from './searchHits';
import type { WorkerCodeCache } from '../files/workerCodeCache';

/** `workerData` of the worker; the code cache's fields are its loader's (searchWorkerLoader.ts). */
export interface SearchWorkerInput extends WorkerCodeCache {
  /** The files to search, in order. */
  paths: string[];
  query: SearchQuery;
  /** The driver the host uses (the worker loads the same one); default: better-sqlite3, else node:sqlite. */
  driver?: DriverName | 'auto';
  maxHits?: number;
  /** Only this session (every file is searched for it). */
  sessionId?: string;
  /** Each file's summary counts the items searched (`SearchOptions.countItems`). */
  countItems?: boolean;
  /** Per file, the turns the query's review filters allow (read by the host from each file's review store). */
  turns?: Record<string, TurnSet>;
  /** The folder of the search's indexes of tool items (toolIndex.ts); none: every file is scanned without one. */
  indexDir?: string;
  /**
   * The files are held open elsewhere (the extension's registry): the worker keeps its connections to them for the
   * next search instead of closing them, until the host releases them (`release`) or ends the worker.
   */
  keepOpen?: boolean;
}

/**
 * `workerData` of a worker: the first search's input and its id (a worker is kept for later searches, see
 * `searchInWorker.ts`).
 */
export interface SearchWorkerStart extends SearchWorkerInput {
  searchId: number;
}

/**
 * Host → worker: another search, for a worker that said it is `idle`; the cancelling of a search by its id; the
 * closing of the connections kept to `paths` (every one without), at once or when the running search is over; the end
 * of an idle worker (it closes its connections and its port and ends as a thread does, writing its code cache if it
 * has not yet).
 */
export type SearchWorkerCommand =
  | { type: 'search'; searchId: number; input: SearchWorkerInput }
  | { type: 'cancel'; searchId: number }
  | { type: 'release'; paths?: string[] }
  | { type: 'end' };

/** Worker → host. `done` comes once per file (with its summary) and `finished` once at the end. */
export type SearchWorkerEvent =
  | { type: 'hits'; path: string; hits: SearchHit[] }
  | { type: 'progress'; path: string; rowsScanned: number; rowsTotal: number }
  | { type: 'done'; path: string; summary: SearchSummary }
  | { type: 'error'; path: string; message: string }
  /** Something the user may want to know that did not stop the search (an index that could not be used). */
  | { type: 'notice'; path: string; message: string }
  /**
   * `capped`: the search stopped at `maxHits`, so there may be more hits in the file it stopped in and in `notSearched`
   * (the files after it, never opened).
   */
  | { type: 'finished'; cancelled: boolean; capped: boolean; notSearched: string[] }
  /** After `finished` and whatever it did after it (an index brought up to date): ready for another search. */
  | { type: 'idle' };
