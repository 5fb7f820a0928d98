/** The read-only query surface over session stores (docs/mcp.md): the CLI's MCP server and the VS Code tools use it. */
export { QueryError, type QueryProblem } from './queryErrors';
export { sessionUri, sourceLine, type AnswerSource, type QueryAnswer } from './queryAnswer';
export { fileQueryStore, serverQueryStore, type QueryStore } from './queryStore';
export { StoreSet, type OpenedStore, type StoreOpener } from './storeSet';
export { listSessions, branchTree, type ListSessionsArgs, type BranchTreeArgs } from './sessionQueries';
export { readTurns, type ReadTurnsArgs } from './turnQueries';
export { searchSessions, type SearchArgs } from './searchQueries';
export { tokenUsage, type UsageArgs } from './usageQueries';
export { compareBranches, type CompareArgs } from './branchComparison';
export { turnTimeline, type TimelineArgs } from './turnTimeline';
export { sessionOverview } from './sessionOverview';
export {
  QUERY_TOOLS,
  queryTool,
  runQueryTool,
  toolInputSchema,
  type QueryTool,
  type QueryToolHost,
  type ToolParameter,
} from './queryTools';
export * from './queryLimits';
