import * as l10n from '@vscode/l10n';
import * as vscode from 'vscode';
import { errorMessage } from '../shared/errorMessage';
import { pickBranchToCompare } from './compare/compareCommands';
import { ComparePanels } from './compare/comparePanel';
import { JsonDocuments } from './content/jsonDocuments';
import { ConversationPanels } from './conversation/conversationPanel';
import { pushBounded } from './core/boundedList';
import { onDidFailCommand, registerCommandTable, type CommandFailure } from './core/commandTable';
import { ViewId } from './core/contributions';
import { commandTable, requestTable } from './featureTables';
import type { Services } from './services';
import { workspaceTrust } from './core/settings';
import { DatabaseRegistry } from './databases/databaseRegistry';
import { StoreClient } from '../store/worker/storeClient';
import {
  endKeptSearchWorker,
  releaseSearchFiles,
  useKeptSearchConnections,
  useSearchIndexFolder,
  useSearchWorkerCodeCache,
} from '../store/search/searchInWorker';
import { SqliteDriverCheck } from './databases/sqliteDriverCheck';
import { WorkspaceDiscovery } from './databases/workspaceDiscovery';
import { SessionPricing } from './pricing/sessionPricing';
import { AgentChoices } from './runs/agentChoices';
import { AgentRunner } from './runs/agentRunner';
import { SessionSearch } from './search/sessionSearch';
import { SessionTreeProvider } from './tree/sessionTree';
import { ExpandedNodes } from './tree/expandedNodes';
import { SessionStatusBar } from './tree/statusBar';
import type { TreeNode } from './core/treeNodes';
import { TraceService } from './traces/traceService';
import { branchLatency, turnLatencies } from './traces/turnLatency';
import { ReviewService } from './reviews/reviewService';
import { ReviewQueue } from './reviews/reviewQueue';
import { startCodingAgents, type CodingAgents } from './codingAgents/codingAgents';
import { ReplayService } from './replay/replayService';
import { GuardService } from './guard/guardService';

/** What `activate` returns: used by the integration tests to read the tree and follow failures. */
export interface AgentSessionsApi {
  registry: DatabaseRegistry;
  tree: SessionTreeProvider;
  treeView: vscode.TreeView<TreeNode>;
  statusBar: SessionStatusBar;
  panels: ConversationPanels;
  /** The open compare views. */
  compare: ComparePanels;
  runner: AgentRunner;
  /** The pricing model of each session and the price table in force. */
  pricing: SessionPricing;
  discovery: WorkspaceDiscovery;
  /** The newest command failures (at most 200), oldest first. */
  failures: CommandFailure[];
  /** Search Sessions… and its results view. */
  search: SessionSearch;
  /** Resolves when remembered databases are reopened and the workspace scanned. */
  ready: Promise<void>;
  /** The trace store and the OTLP receiver. */
  traces: TraceService;
  /** The review stores. */
  reviews: ReviewService;
  /** *Review Next*'s queue. */
  reviewQueue: ReviewQueue;
  /** The Language Model tools, the MCP server definition provider and the hand-over to the chat. */
  codingAgents: CodingAgents;
  /** The replay marks store (docs/replay.md). */
  replay: ReplayService;
  /** The history guard (docs/history-guard.md). */
  guard: GuardService;
  /** The workspace's trust as every check reads it (the in-host tests simulate an untrusted workspace through it). */
  trust: typeof workspaceTrust;
}

export function activate(context: vscode.ExtensionContext): AgentSessionsApi {
  // The modules shared with the webview (src/shared) and the host modules unit-tested without VS Code localize with
  // @vscode/l10n; it reads the same bundle vscode.l10n uses (none when the display language is English).
  if (vscode.l10n.bundle) l10n.config({ contents: vscode.l10n.bundle });
  // General log (driver choice, start-up problems); agent runs keep their own channel.
  const log = vscode.window.createOutputChannel('Agent Sessions', { log: true });
  // Every SQLite connection lives in this worker, so no query, lock wait or huge row runs on the host's thread.
  // The workers load themselves through V8's code cache, beside the extension's own (extensionLoader.ts).
  const codeCacheDir = vscode.Uri.joinPath(context.globalStorageUri, 'code-cache').fsPath;
  const store = new StoreClient(vscode.Uri.joinPath(context.extensionUri, 'dist', 'storeWorker.js').fsPath, { codeCacheDir });
  useSearchWorkerCodeCache(codeCacheDir);
  // `tool:` and `is:failed` keep an index of each file's tool items here, never in or beside the session file.
  useSearchIndexFolder(vscode.Uri.joinPath(context.globalStorageUri, 'search-index').fsPath, (message) => log.warn(message));
  context.subscriptions.push({ dispose: () => void store.dispose() });
  const registry = new DatabaseRegistry(context.workspaceState, new SqliteDriverCheck(log), store, context.secrets);
  // Every search here is of files the store worker holds open: the search worker keeps its connections to them for the
  // next search, and lets a file go once the registry closed it or dropped its connection (docs/search.md).
  useKeptSearchConnections(true);
  context.subscriptions.push(
    registry.onDidChange((change) => {
      if (change.kind === 'list' || change.kind === 'state') releaseSearchFiles((path) => !registry.get(path)?.db);
    }),
  );
  const pricing = new SessionPricing(context.workspaceState, log);
  // Review data too: in the global storage unless the user keeps it beside each file (docs/reviews.md).
  const reviews = new ReviewService(store, context.globalStorageUri.fsPath, (dbPath) => !!registry.get(dbPath)?.remote);
  const tree = new SessionTreeProvider(registry, pricing, reviews, new ExpandedNodes(context.workspaceState));
  const treeView = vscode.window.createTreeView(ViewId.sessions, { treeDataProvider: tree, showCollapseAll: true });
  context.subscriptions.push(tree.watchExpansion(treeView));
  const statusBar = new SessionStatusBar(registry, treeView);
  const discovery = new WorkspaceDiscovery(registry);
  const choices = new AgentChoices(context.workspaceState);
  // Traces live in a store of our own in the global storage, never in a session file (docs/traces.md).
  const traces = new TraceService(store, context.globalStorageUri.fsPath, log, context.globalState);
  // What re-runs did with their tool calls, in a store of our own (docs/replay.md); the runner records, the views read.
  const replay = new ReplayService(
    store,
    context.globalStorageUri.fsPath,
    (dbPath) => !!registry.get(dbPath)?.remote,
    (line) => log.info(line),
  );
  // What writers removed from guarded files, and what our compaction replaced, in a store of our own (docs/history-guard.md).
  const guard = new GuardService(registry, context.globalStorageUri.fsPath, (line) => log.info(line));
  const runner = new AgentRunner(registry, context.secrets, choices, () => traces.runTracing(), replay);
  stopRuns = () => runner.stopAll();
  const jsonDocuments = new JsonDocuments(registry);
  const panels = new ConversationPanels({
    registry,
    runner,
    extensionUri: context.extensionUri,
    pricingChanges: pricing.onDidChange,
    traceChanges: traces.onDidChange,
    reviewChanges: reviews.onDidChange,
    replayChanges: replay.onDidChange,
    layerChanges: guard.onDidChangeLayers,
  });
  const compare = new ComparePanels({
    registry,
    pricing,
    extensionUri: context.extensionUri,
    openTurn: async (t, turn) => {
      // A layer's turns are counted in the layer, not on the branch as it is now: the branch is opened, not a turn.
      const panel = panels.open({
        dbPath: t.dbPath,
        sessionId: t.sessionId,
        branchId: t.branchId,
        ...(t.layerId === undefined ? { turn } : {}),
      });
      await panels.whenReady(panel);
    },
    pickBranch: (current) => pickBranchToCompare(registry, current, vscode.l10n.t('Compare with {0} instead…', current.branchId)),
    latency: {
      turns: (sessionId, turns, reader) => turnLatencies(reader, traces, sessionId, turns),
      branch: (sessionId, branchId, tree, reader) => branchLatency(reader, traces, sessionId, branchId, tree),
    },
    traces,
    reviewStore: (t) => reviews.storeFor(t.dbPath),
    reviewChanged: (sessionId) => reviews.changed(sessionId),
    reviews,
    replay,
    layerEntries: async (layerId) => guard.layerEntries(await guard.layer(layerId)),
  });
  const search = new SessionSearch(context.extensionUri, registry, panels, reviews);
  const reviewQueue = new ReviewQueue(search, panels);
  // Coding agents read the open stores through Language Model tools and an MCP server (docs/mcp.md, "In VS Code").
  const codingAgents = startCodingAgents(context, registry, traces, log);
  const services: Services = {
    context,
    log,
    registry,
    pricing,
    runner,
    tree,
    treeView,
    panels,
    compare,
    search,
    jsonDocuments,
    traces,
    reviews,
    reviewQueue,
    codingAgents,
    replay,
    guard,
  };

  const failures: CommandFailure[] = [];
  context.subscriptions.push(
    guard,
    replay,
    codingAgents,
    traces,
    reviews,
    reviewQueue,
    jsonDocuments,
    search,
    log,
    panels,
    compare,
    runner,
    choices,
    pricing,
    registry,
    tree,
    treeView,
    statusBar,
    discovery,
    onDidFailCommand((f) => pushBounded(failures, f)),
  );
  // Every feature contributes its part of the command table and of the view's request table (featureTables.ts).
  registerCommandTable(context, commandTable(services));
  panels.answerWith(requestTable(services));
  // Reopening and scanning run after activation returns, so start-up is never held up by file I/O.
  const ready = (async () => {
    await registry.restore();
    await discovery.scan();
    // The receiver only when the user enabled it (off by default: nothing listens unasked).
    await traces.applyReceiverSetting();
  })().catch((err: unknown) => log.error('start-up failed', errorMessage(err, { stack: true })));
  return {
    registry,
    tree,
    treeView,
    statusBar,
    panels,
    compare,
    runner,
    pricing,
    discovery,
    search,
    failures,
    ready,
    traces,
    reviews,
    reviewQueue,
    codingAgents,
    replay,
    guard,
    trust: workspaceTrust,
  };
}

/** Set by `activate`: stops the agent runs, so no agent command outlives the extension. */
let stopRuns: (() => Promise<void>) | undefined;

/** VS Code awaits this (a few seconds at most) before it ends the extension host. */
export async function deactivate(): Promise<void> {
  await Promise.all([stopRuns?.(), endKeptSearchWorker()]);
}
