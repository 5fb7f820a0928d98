import * as vscode from 'vscode';
import { ViewId } from './core/contributions';
import { registerCommands } from './commands';
import { registerTransferCommands } from './transfer/transferCommands';
import { AgentRunner } from './runs/agentRunner';
import { pushBounded } from './core/boundedList';
import { ConversationPanels } from './conversation/conversationPanel';
import { ComparePanels } from './compare/comparePanel';
import { pickBranchToCompare, registerCompareCommands } from './compare/compareCommands';
import { DatabaseRegistry } from './databases/databaseRegistry';
import { WorkspaceDiscovery } from './databases/workspaceDiscovery';
import { onDidFailCommand, type CommandFailure } from './core/commandTable';
import { SessionTreeProvider } from './tree/sessionTree';
import { SessionPricing } from './pricing/sessionPricing';
import { registerPricingCommands } from './pricing/pricingCommands';
import { registerContentCommands } from './content/contentCommands';
import { JsonDocuments } from './content/jsonDocuments';
import { SessionSearch, registerSearchCommands } from './search/sessionSearch';
import { SqliteDriverCheck } from './databases/sqliteDriverCheck';
import { SessionStatusBar } from './tree/statusBar';
import type { TreeNode } from './tree/treeNodes';
import { errorMessage } from '../shared/errorMessage';
import * as l10n from '@vscode/l10n';

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
}

export function activate(context: vscode.ExtensionContext): AgentSessionsApi {
  // The modules shared with the webview (src/shared) and the host modules unit-tested without VS Code localize with
  // @vscode/l10n; it reads the same bundle vscode.l10n uses (none when the display language is English).
  if (vscode.l10n.bundle) l10n.config({ contents: vscode.l10n.bundle });
  // General log (driver choice, start-up problems); agent runs keep their own channel.
  const log = vscode.window.createOutputChannel('Agent Sessions', { log: true });
  const registry = new DatabaseRegistry(context.workspaceState, new SqliteDriverCheck(log), context.secrets);
  const pricing = new SessionPricing(context.workspaceState, log);
  const tree = new SessionTreeProvider(registry, pricing);
  const treeView = vscode.window.createTreeView(ViewId.sessions, { treeDataProvider: tree, showCollapseAll: true });
  const statusBar = new SessionStatusBar(registry, treeView);
  const discovery = new WorkspaceDiscovery(registry);
  const runner = new AgentRunner(registry, context.secrets);
  const panels = new ConversationPanels(registry, runner, context.extensionUri, pricing);
  const compare = new ComparePanels({
    registry,
    pricing,
    extensionUri: context.extensionUri,
    openTurn: async (t, turn) => {
      const panel = panels.open({ dbPath: t.dbPath, sessionId: t.sessionId, branchId: t.branchId, turn });
      await panels.whenReady(panel);
    },
    pickBranch: (current) => pickBranchToCompare(registry, current, vscode.l10n.t('Compare with {0} instead…', current.branchId)),
  });
  const failures: CommandFailure[] = [];
  const search = new SessionSearch(context.extensionUri, registry, panels);
  const jsonDocuments = new JsonDocuments(registry);
  context.subscriptions.push(
    jsonDocuments,
    search,
    log,
    panels,
    compare,
    runner,
    pricing,
    registry,
    tree,
    treeView,
    statusBar,
    discovery,
    onDidFailCommand((f) => pushBounded(failures, f)),
  );
  registerCommands(context, { registry, tree, treeView, panels, runner });
  registerTransferCommands(context, { registry, tree, treeView, panels, runner });
  registerPricingCommands(context, registry, pricing);
  registerCompareCommands(context, registry, compare);
  registerContentCommands(context, registry, jsonDocuments);
  registerSearchCommands(context, search);
  // Reopening and scanning run after activation returns, so start-up is never held up by file I/O.
  const ready = (async () => {
    await registry.restore();
    await discovery.scan();
  })().catch((err: unknown) => log.error('start-up failed', errorMessage(err, { stack: true })));
  return { registry, tree, treeView, statusBar, panels, compare, runner, pricing, discovery, search, failures, ready };
}

export function deactivate(): void {}
