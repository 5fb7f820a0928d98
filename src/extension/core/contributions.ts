/** Every command the extension contributes (package.json lists the same ids; test/unit/manifest.test.ts checks). */
export const CommandId = {
  openDatabase: 'agentSessions.openDatabase',
  closeDatabase: 'agentSessions.closeDatabase',
  refresh: 'agentSessions.refresh',
  branchFromTurn: 'agentSessions.branchFromTurn',
  branchFromContent: 'agentSessions.branchFromContent',
  switchBranch: 'agentSessions.switchBranch',
  deleteBranch: 'agentSessions.deleteBranch',
  copyItemJson: 'agentSessions.copyItemJson',
  openConversationView: 'agentSessions.openConversationView',
  revealInConversationView: 'agentSessions.revealInConversationView',
  toggleReadOnly: 'agentSessions.toggleReadOnly',
  sendMessage: 'agentSessions.sendMessage',
  setApiKey: 'agentSessions.setApiKey',
  openStore: 'agentSessions.openStore',
  filterSessions: 'agentSessions.filterSessions',
  copySessionToLocal: 'agentSessions.copySessionToLocal',
  deleteRemoteSession: 'agentSessions.deleteRemoteSession',
  retryFromHere: 'agentSessions.retryFromHere',
  editAndResend: 'agentSessions.editAndResend',
  retryWithModels: 'agentSessions.retryWithModels',
  setPricingModel: 'agentSessions.setPricingModel',
  compareWith: 'agentSessions.compareWith',
  compareBranches: 'agentSessions.compareBranches',
  openAsJson: 'agentSessions.openAsJson',
  copyTurnAsMarkdown: 'agentSessions.copyTurnAsMarkdown',
  searchSessions: 'agentSessions.searchSessions',
  cancelSearch: 'agentSessions.cancelSearch',
  clearSearchResults: 'agentSessions.clearSearchResults',
  openSearchHit: 'agentSessions.openSearchHit',
  exportBranch: 'agentSessions.exportBranch',
  exportSession: 'agentSessions.exportSession',
  importConversation: 'agentSessions.importConversation',
  startTraceReceiver: 'agentSessions.startTraceReceiver',
  stopTraceReceiver: 'agentSessions.stopTraceReceiver',
  importTraces: 'agentSessions.importTraces',
  clearSessionTraces: 'agentSessions.clearSessionTraces',
  exportSessionTraces: 'agentSessions.exportSessionTraces',
  exportDataset: 'agentSessions.exportDataset',
  reviewNext: 'agentSessions.reviewNext',
  stopReviewQueue: 'agentSessions.stopReviewQueue',
  askAboutTurn: 'agentSessions.askAboutTurn',
  askAboutComparison: 'agentSessions.askAboutComparison',
  explainFailure: 'agentSessions.explainFailure',
  checkAgent: 'agentSessions.checkAgent',
  rerunFailedCases: 'agentSessions.rerunFailedCases',
  showCheckFailuresOnly: 'agentSessions.showCheckFailuresOnly',
  showAllCheckCases: 'agentSessions.showAllCheckCases',
  openCheckCaseAsComparison: 'agentSessions.openCheckCaseAsComparison',
  saveCheckExperiment: 'agentSessions.saveCheckExperiment',
  compareCheckWithExperiment: 'agentSessions.compareCheckWithExperiment',
  checkSessionStore: 'agentSessions.checkSessionStore',
  repairFinding: 'agentSessions.repairFinding',
  guardHistory: 'agentSessions.guardHistory',
  stopGuardingHistory: 'agentSessions.stopGuardingHistory',
  showHistoryLayers: 'agentSessions.showHistoryLayers',
} as const;

export type CommandIdValue = (typeof CommandId)[keyof typeof CommandId];

/** The view and container ids. */
export const ViewId = {
  container: 'agentSessions',
  sessions: 'agentSessions.sessions',
  searchResults: 'agentSessions.searchResults',
  checkResults: 'agentSessions.checkResults',
} as const;

/** Setting keys under the `agentSessions` section (package.json contributes each; read them with `setting()` in settings.ts). */
export const Setting = {
  section: 'agentSessions',
  discoveryGlobs: 'discoveryGlobs',
  openReadOnly: 'openReadOnly',
  /** The group of the agent settings below (for change events). */
  agent: 'agent',
  agentModel: 'agent.model',
  agentModels: 'agent.models',
  agentInstructions: 'agent.instructions',
  agentBaseUrl: 'agent.baseUrl',
  agentMcpServers: 'agent.mcpServers',
  agentModule: 'agent.module',
  agentMaxRetries: 'agent.maxRetries',
  agentRequestTimeoutSeconds: 'agent.requestTimeoutSeconds',
  /** The user's own agent as a command line, or named command lines (docs/agent-command.md). */
  agentCommand: 'agent.command',
  agentUrl: 'agent.url',
  agentCommandTimeoutSeconds: 'agent.commandTimeoutSeconds',
  /** Prices that replace or extend the built-in table (src/shared/pricing.ts). */
  pricingPrices: 'pricing.prices',
  /** The trace store and the OTLP receiver (docs/traces.md). */
  tracesRecordRuns: 'traces.recordRuns',
  tracesSendToOpenAI: 'traces.sendToOpenAI',
  tracesMaxSpans: 'traces.maxSpans',
  tracesMaxAgeDays: 'traces.maxAgeDays',
  tracesReceiverEnabled: 'traces.receiver.enabled',
  tracesReceiverPort: 'traces.receiver.port',
  tracesReceiverHost: 'traces.receiver.host',
  /** Where review data is kept (docs/reviews.md): the extension's storage, or a file beside each session file. */
  reviewsLocation: 'reviews.location',
  /** What a re-run of a recorded turn does with its tool calls (docs/replay.md): replay, strict or live. */
  replayMode: 'replay.mode',
  /** Tools whose calls match a recorded call by name alone (arguments that carry a timestamp or a random id). */
  replayMatchNameOnly: 'replay.matchNameOnly',
  /** Session files the history guard watches (docs/history-guard.md): absolute paths. */
  historyGuardFiles: 'historyGuard.files',
} as const;
