/** Search over session files and server stores: the query language, the scans, and what they report. */
export { parseSearchQuery, formatSearchQuery, reviewOnly, SearchQueryError, type SearchQuery, type ReviewQuery } from './searchQuery';
export { reviewTurnSet, turnSetKey, type TurnSet } from './reviewTurns';
export { searchDatabase } from './searchDatabase';
export { searchRemoteStore } from './searchRemote';
export { DEFAULT_MAX_HITS, type SearchHit, type SearchOptions, type SearchSummary } from './searchHits';
export { failedReason, type SearchSnippet } from './itemMatch';
export {
  startWorkerSearch,
  useSearchWorkerCodeCache,
  useSearchIndexFolder,
  type WorkerSearch,
  type WorkerSearchEnd,
  type WorkerSearchHandlers,
} from './searchInWorker';
export type { SearchWorkerInput } from './workerProtocol';
export { CATCH_UP_FIRST, type SearchIndexOption } from './toolIndex';
