/** Search over session files and server stores: the query language, the scans, and what they report. */
export { parseSearchQuery, formatSearchQuery, SearchQueryError, type SearchQuery } from './searchQuery';
export { searchDatabase } from './searchDatabase';
export { searchRemoteStore } from './searchRemote';
export type { SearchHit, SearchOptions, SearchSummary } from './searchHits';
export { failedReason, type SearchSnippet } from './itemMatch';
export { startWorkerSearch, type WorkerSearch, type WorkerSearchHandlers } from './searchInWorker';
export type { SearchWorkerInput } from './workerProtocol';
