/** Search over a session file: the query language, the scan, and what it reports (see searchDatabase.ts). */
export { parseSearchQuery, formatSearchQuery, SearchQueryError, type SearchQuery } from './searchQuery';
export { searchDatabase, type SearchHit, type SearchOptions, type SearchSummary } from './searchDatabase';
export { failedReason, type SearchSnippet } from './itemMatch';
export { startWorkerSearch, type WorkerSearch, type WorkerSearchHandlers } from './searchInWorker';
export type { SearchWorkerInput } from './workerProtocol';
