/**
 * The extension's long-lived objects, made once by `activate` and handed to every feature's commands and view
 * requests. Beside the composition root, not in core/, because it names every feature's classes and core/ imports
 * no feature. Only command and request modules (`…/…Commands.ts`, `…/…Requests.ts`) and `extension.ts` import this
 * type: the classes it names take what they need in their constructors, so the import graph stays free of cycles
 * (test/unit/layout.test.ts checks).
 */
import type * as vscode from 'vscode';
import type { ComparePanels } from './compare/comparePanel';
import type { JsonDocuments } from './content/jsonDocuments';
import type { ConversationPanels } from './conversation/conversationPanel';
import type { DatabaseRegistry } from './databases/databaseRegistry';
import type { SessionPricing } from './pricing/sessionPricing';
import type { AgentRunner } from './runs/agentRunner';
import type { SessionSearch } from './search/sessionSearch';
import type { SessionTreeProvider } from './tree/sessionTree';
import type { TreeNode } from './core/treeNodes';
import type { TraceService } from './traces/traceService';
import type { ReviewService } from './reviews/reviewService';
import type { ReviewQueue } from './reviews/reviewQueue';
import type { CodingAgents } from './codingAgents/codingAgents';
import type { ReplayService } from './replay/replayService';
import type { GuardService } from './guard/guardService';

export interface Services {
  readonly context: vscode.ExtensionContext;
  /** The general log (driver choice, start-up problems); agent runs keep their own channel. */
  readonly log: vscode.LogOutputChannel;
  /** The open databases and stores, and each session's current branch. */
  readonly registry: DatabaseRegistry;
  readonly pricing: SessionPricing;
  readonly runner: AgentRunner;
  readonly tree: SessionTreeProvider;
  readonly treeView: vscode.TreeView<TreeNode>;
  readonly panels: ConversationPanels;
  readonly compare: ComparePanels;
  readonly search: SessionSearch;
  readonly jsonDocuments: JsonDocuments;
  /** The trace store, our runs' tracing and the OTLP receiver. */
  readonly traces: TraceService;
  /** The review stores (docs/reviews.md). */
  readonly reviews: ReviewService;
  /** *Review Next*'s queue of turns to review. */
  readonly reviewQueue: ReviewQueue;
  /** The Language Model tools, the MCP server definition and the hand-over to the chat (docs/mcp.md). */
  readonly codingAgents: CodingAgents;
  /** The replay marks store: what re-runs did with their tool calls (docs/replay.md). */
  readonly replay: ReplayService;
  /** The history guard: guarded files, layers, *Restore as Branch* (docs/history-guard.md). */
  readonly guard: GuardService;
}
