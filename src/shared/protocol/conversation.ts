/**
 * The conversation view's part of the protocol: its `Requests` map (parameter and result types flow from the key),
 * the types those requests carry, and the two notifications only this view receives. The messages that carry them
 * (request, response, change notice) are the envelope every view shares (envelope.ts).
 */
import type { EnvelopeMessage } from './envelope';
import type { BranchLatencyView } from './latencyViews';
import type { BranchReviewsView, CorrectionView, TurnReviewChangeView, TurnReviewView } from './reviewViews';
import type { ReplayMarksView, ReplayTableView, ToolsMode } from './replay';
import type { RunEvent } from './runEvents';
import type { TurnContextView } from './contextViews';
import type { HistoryLayerView, LayerItemsView } from './layerViews';
import type { AgentChoicesView } from '../agentChoices';
import type { WhatIfModelsView, WhatIfStartedView } from '../whatIfModels';
import type {
  ItemView,
  RevealView,
  SessionView,
  TablesView,
  TimelineView,
  ToolsView,
  TurnPageView,
  UsageWindow,
} from './conversationViews';

/** Requests the webview makes, with their parameters and results. */
export interface Requests {
  /** The handshake: the view's page has started. Answers with what the panel was opened to show, once. */
  'view/ready': { params: Record<string, never>; result: RevealView | null };
  /** The session's header and branch list. */
  'session/get': { params: Record<string, never>; result: SessionView };
  /**
   * A page of a branch's turns after `afterTurn` (null: from the first), or, when `beforeTurn` is given, the page
   * before `beforeTurn` (null: the branch's last page; `afterTurn` must then be null).
   */
  'turns/get': { params: { branchId: string; afterTurn: number | null; beforeTurn?: number | null; limit: number }; result: TurnPageView };
  'turn/items': { params: { branchId: string; turn: number }; result: ItemView[] };
  /**
   * Where a turn's time went: the spans of the traces linked to it (docs/traces.md). `branchId` is the branch that ran
   * the turn (a shared turn's `sharedFrom`).
   */
  'turn/timeline': { params: { branchId: string; turn: number }; result: TimelineView };
  /**
   * What the model saw in a turn (docs/context.md): each model request's input with token counts, the items outside
   * the window, recorded or reconstructed. `branchId` is the shown branch (the builder finds the branch that ran it).
   */
  'turn/context': { params: { branchId: string; turn: number }; result: TurnContextView };
  /**
   * The latency of the shown branch's traced turns (its shared turns' from the branches that ran them) and its p50/p95
   * (docs/traces.md); read again on a `traces` change notice.
   */
  'branch/latency': { params: { branchId: string }; result: BranchLatencyView };
  /**
   * Links a trace no session claims to a turn by hand: the host lists the unlinked traces in a quick pick. `branchId`
   * is the branch that ran the turn. `linked` is false when the user cancelled or there was none to link.
   */
  'trace/link': { params: { branchId: string; turn: number }; result: { linked: boolean } };
  /**
   * The reviews of the shown branch's turns (its shared turns' too), matched to the turns as they are now, the orphaned
   * ones, and the tags to offer (docs/reviews.md); read again on a `reviews` change notice.
   */
  'reviews/get': { params: { branchId: string }; result: BranchReviewsView };
  /** Changes one turn's review; `branchId` is the branch that ran the turn. The review as stored, null when emptied. */
  'review/set': { params: { branchId: string; turn: number; change: TurnReviewChangeView }; result: TurnReviewView | null };
  /**
   * Keeps (or, `text` null, removes) the answer the assistant item at `itemIndex` of the turn should have given;
   * `branchId` is the branch that ran the turn. The history is not rewritten.
   */
  'correction/set': { params: { branchId: string; turn: number; itemIndex: number; text: string | null }; result: CorrectionView | null };
  /**
   * Hands the turn (on `branchId`, the branch shown) over to the chat with a prompt naming it and the read tool;
   * `opened` false when no chat could take it (the prompt is then on the clipboard, and the host says so).
   */
  'turn/askCopilot': { params: { branchId: string; turn: number }; result: { opened: boolean } };
  /**
   * Makes a branch that forks before the turn at `branchTurnNumber` of `fromBranchId` and holds that turn again, ending
   * with the correction kept for its item at `itemIndex` (`ranOn`: the branch that ran the turn). The host asks for the
   * name unless `name` is given (tests, scripts); `branchId` null when the user cancelled.
   */
  'correction/branch': {
    params: { fromBranchId: string; branchTurnNumber: number; ranOn: string; turn: number; itemIndex: number; name?: string };
    result: { branchId: string | null };
  };
  /** The tables of a branch (null: the session): one page of usage rows as `usage` asks, totals, tool totals. */
  'tables/get': { params: { branchId: string | null; usage: UsageWindow }; result: TablesView };
  /** The tool totals of a branch (null: the session), for the Tools tab, whose scope is its own. */
  'tools/get': { params: { branchId: string | null }; result: ToolsView };
  /** Asks the user for the model to price this session as (a quick pick); `model` null when they cancelled. */
  'pricing/choose': { params: Record<string, never>; result: { model: string | null } };
  'branch/create': { params: { fromBranchId: string; branchTurnNumber: number; name: string }; result: { branchId: string } };
  'branch/switch': { params: { branchId: string }; result: { branchId: string } };
  /** The host asks for confirmation; `deleted` is false when the user declined. */
  'branch/delete': { params: { branchId: string }; result: { deleted: boolean } };
  /** Starts an agent run on a branch; its events arrive as `run/didEvent`. Resolves once the run has started. */
  /**
   * `agent`: an id of `agents/get`'s choices (default: the one chosen last in this workspace). `tools`: how the run
   * treats its tool calls (docs/replay.md); a run that continues past the recording has nothing to replay, so it is live.
   */
  'run/start': { params: { branchId: string; input: string; agent?: string; tools?: ToolsMode }; result: { runId: string } };
  'run/stop': { params: { runId: string }; result: { stopped: boolean } };
  /** *Compare with…* on the shown branch: the host asks which branch to compare it with and opens the comparison. */
  'branch/compare': { params: { branchId: string }; result: { opened: boolean } };
  /** The models a what-if can run on: the configured one first, then `agentSessions.agent.models`. */
  'whatIf/models': { params: Record<string, never>; result: WhatIfModelsView };
  /**
   * Forks one new branch per model before `turn` of `branchId` and sends its user message again (`editedText`: that
   * text instead; null: as stored), in parallel. Resolves once the runs started; the comparison opens when they end.
   * `tools`: how the runs treat the recorded turn's tool calls (default: `agentSessions.replay.mode`; docs/replay.md).
   */
  'whatIf/start': {
    params: {
      branchId: string;
      turn: number;
      branchTurnNumber: number;
      editedText: string | null;
      models: string[];
      agent?: string;
      tools?: ToolsMode;
    };
    result: WhatIfStartedView;
  };
  /**
   * The recorded function calls of `turn` (run on `branchId`: a shared turn's `sharedFrom`) with their outputs, the
   * hosted calls no re-run can replay, and the default tools mode: what the what-if form previews (docs/replay.md).
   */
  'replay/table': { params: { branchId: string; turn: number }; result: ReplayTableView };
  /**
   * The replay marks of the calls on `branchId` (every run recorded on it) and its runs' summaries, from the replay
   * marks store (never the session file); read again on a `replay` change notice.
   */
  'replay/marks': { params: { branchId: string }; result: ReplayMarksView };
  /** Copies part of the shown session to the clipboard, read again from the store (never the view's copy of it). */
  'content/copy': { params: { ref: ContentRef; part: CopyPart }; result: { copied: boolean } };
  /** The agents a run can use (built-in, the user's commands, the URL), the last choice, each command's last run. */
  'agents/get': { params: Record<string, never>; result: AgentChoicesView };
  /** Remembers the choice for this workspace (the composer's and the what-if form's picker). */
  'agents/select': { params: { id: string }; result: AgentChoicesView };
  /** Runs *Set API Key* (a run failed for want of a key); `set` is false when the user cancelled. */
  'apiKey/set': { params: Record<string, never>; result: { set: boolean } };
  /** *Export Branch…* (`branchId`) or *Export Session…* (null) from the header's menu: the host asks format and file. */
  'branch/export': { params: { branchId: string | null }; result: { exported: boolean } };
  /** Opens an item, a turn or a branch as JSON in a read-only editor tab (src/extension/content/jsonDocuments.ts). */
  'content/openJson': { params: { ref: ContentRef }; result: { opened: boolean } };
  /**
   * Finds `query` (the search syntax: text, tool:, is:failed, role:) in the shown session, off the host's thread: every
   * branch's hits, each item once. Those on `branchId`'s turns (turns it shares with its parent included) come first,
   * in turn order, under `branchId`; then the other branches', each under the branch that ran its turn.
   */
  'search/session': { params: { query: string; branchId: string }; result: SessionSearchView };
  /**
   * The history guard's layers of the shown session, newest first (at most `GUARD_LIMITS.layersRead`); read again on a
   * `layers` change notice (docs/history-guard.md).
   */
  'layers/get': { params: Record<string, never>; result: HistoryLayerView[] };
  /** A layer's items, read-only, from the guard store (never the session file). */
  'layer/items': { params: { layerId: number }; result: LayerItemsView };
  /** Opens the compare view with the layer (read from the guard store, nothing restored) beside its branch as it is now. */
  'layer/compare': { params: { layerId: number }; result: { opened: boolean } };
  /**
   * *Restore as Branch*: the layer's items as a new ordinary branch of the session file; the host asks the name unless
   * `name` is given (tests). `branchId` null when the user cancelled.
   */
  'layer/restore': { params: { layerId: number; name?: string }; result: { branchId: string | null } };
}
export type RequestMethod = keyof Requests;

/** One hit of the view's search: the branch to show it on, where it is there, and its snippet with the match ranges. */
export interface SessionSearchHitView {
  /** The searched (shown) branch when the turn is on it, shared or not; else the branch that ran the turn. */
  branchId: string;
  turn: number;
  /** On `branchId` (a shared turn's copy on the shown branch has its own number, which the view marks). */
  sequenceNumber: number;
  itemType: string;
  snippet: { text: string; ranges: [number, number][] };
}

/** The hits of `search/session`; `truncated` when there were more than the view is given. */
export interface SessionSearchView {
  hits: SessionSearchHitView[];
  truncated: boolean;
}

/**
 * What a copy or *Open as JSON* refers to in the shown session: one item (`sequenceNumber` set), one turn (`turn` set,
 * `sequenceNumber` null) or the whole branch (both null).
 */
export interface ContentRef {
  branchId: string;
  turn: number | null;
  sequenceNumber: number | null;
}

/**
 * Which text a copy takes: a message's `text`, a call's `arguments`, a tool's `output`, the stored item as `json`, or
 * the turn (or item) as a Markdown transcript.
 */
export const COPY_PARTS = ['text', 'arguments', 'output', 'json', 'markdown'] as const;
export type CopyPart = (typeof COPY_PARTS)[number];

/**
 * Requests whose newer call makes an older one useless (the view moved to another scope, branch or page): the host
 * cancels the older one, in the store worker too (PanelHost's `latestWins`), and the view takes its answer, whatever
 * it is, as stale.
 */
export const LATEST_WINS: ReadonlySet<RequestMethod> = new Set<RequestMethod>(['tools/get', 'tables/get']);

/** host → webview: the envelope's answers and notices, and the conversation view's own notifications. */
export type HostMessage =
  | EnvelopeMessage
  /** Show this branch (and turn): a tree command opened the panel for it. The view owns the selection from then on. */
  | ({ kind: 'selection/reveal' } & RevealView)
  | { kind: 'run/didEvent'; event: RunEvent }
  /** The agent choices changed (settings, trust, a command's run ended). */
  | { kind: 'agents/didChange'; view: AgentChoicesView };
