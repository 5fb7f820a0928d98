import { basename } from 'node:path';
import * as vscode from 'vscode';
import { LATEST_WINS, type ContentRef, type HostMessage } from '../../shared/protocol/conversation';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import type { ChangeKind } from '../../shared/protocol/envelope';
import type { RevealView, SessionView, TimelineView } from '../../shared/protocol/conversationViews';
import type { BranchNode, SessionReader } from '../../store';
import { noticeKinds, sameDatabaseState, type DatabaseState } from '../core/changeNotices';
import { itemView, sessionView, tables, turnPage } from './conversationData';
import { randomUUID } from 'node:crypto';
import { failedBeforeWriting, type RunOutcome } from '../../shared/protocol/runEvents';
import { readWhatIfModels, type AgentRunner, type RunTarget } from '../runs/agentRunner';
import { Setting } from '../core/contributions';
import { setting } from '../core/settings';
import { startWhatIf, type StartedWhatIf, type WhatIfRequest, type WhatIfTurn } from '../runs/whatIf';
import type { RunInput } from '../../agents/runOptions';
import { createBranch, deleteBranch, switchBranch } from '../branches/branchActions';
import type { DatabaseChange, DatabaseRegistry } from '../databases/databaseRegistry';
import { sessionKey, type SessionRef } from '../../shared/protocol/sessionRef';
import { describeError, UserFacingError } from '../core/userError';
import { handleRequest, type RequestHandlers } from './requestChecks';
import { searchShownSession } from '../search/viewSearch';
import { copyContent } from '../content/contentCopy';
import { toolsView, withCosts } from '../pricing/pricedTables';
import { choosePricingModel } from '../pricing/pricingChoice';
import type { PricingChange, SessionPricing } from '../pricing/sessionPricing';
import { PanelHost, type ReviewChanges, type TraceChanges } from '../core/panelHost';
import type { BranchReviewsView, CorrectionView, TurnReviewChangeView, TurnReviewView } from '../../shared/protocol/reviewViews';
import type { BranchLatencyView, TurnLatencyView } from '../../shared/protocol/latencyViews';
import { withLatency, type RanTurn } from '../traces/turnLatency';
import { PanelRegistry } from '../core/panelRegistry';
import type { CorrectionBranchRequest } from '../reviews/correctionBranch';
import type { TurnSet } from '../../store/search/reviewTurns';
import type { ReviewQuery } from '../../store/search/searchQuery';

export const CONVERSATION_VIEW_TYPE = 'agentSessions.conversation';

/**
 * What the view's requests need of other features: `activate` wires each to that feature's function, so the panel
 * calls functions rather than command ids, and needs no import of the features that in turn open conversation views.
 */
export interface ConversationActions {
  /** Opens a comparison of the branch with one the user picks; false when cancelled. */
  compareWith(target: SessionRef & { branchId: string }): Promise<boolean>;
  /** Opens a comparison of the given branches (a what-if's original and its retries). */
  compareBranches(targets: CompareTarget[]): void;
  /** Asks for the API key; false when cancelled. */
  setApiKey(): Promise<boolean>;
  /** Exports the session (`branchId` null) or one branch to a file the user picks; false when cancelled. */
  exportConversation(target: SessionRef, branchId: string | null): Promise<boolean>;
  /** Opens a branch, turn or item as JSON in a read-only tab; false when it could not (the user was told why). */
  openAsJson(ref: SessionRef & ContentRef): Promise<boolean>;
  /** A turn's timeline from the trace store (traces/turnTimeline.ts); `reader` reads the turn's times. */
  turnTimeline(target: SessionRef, branchId: string, turn: number, reader: Pick<SessionReader, 'getTurnsPage'>): Promise<TimelineView>;
  /** A branch's turns' latency and p50/p95 (traces/turnLatency.ts). */
  branchLatency(target: SessionRef, branchId: string, reader: SessionReader, branches: readonly BranchNode[]): Promise<BranchLatencyView>;
  /** Some turns' latency, each by the branch that ran it (the Tokens table's rows). */
  turnLatencies(target: SessionRef, turns: RanTurn[], reader: SessionReader): Promise<TurnLatencyView[]>;
  /** Asks which unlinked trace to link to a turn and links it; false when cancelled or there was none. */
  linkTrace(target: SessionRef, branchId: string, turn: number): Promise<boolean>;
  /** The trace store's changes, so latency and open timelines are read again. */
  traces?: TraceChanges;
  /** The reviews of a branch's turns (reviews/turnReviews.ts). */
  branchReviews(target: SessionRef, branchId: string, reader: SessionReader, branches: readonly BranchNode[]): Promise<BranchReviewsView>;
  /** Changes one turn's review (`branchId`: the branch that ran it). */
  setTurnReview(
    target: SessionRef,
    branchId: string,
    turn: number,
    change: TurnReviewChangeView,
    reader: SessionReader,
  ): Promise<TurnReviewView | null>;
  /** Keeps (text null: removes) the correction of an assistant item (`branchId`: the branch that ran the turn). */
  setCorrection(
    target: SessionRef,
    branchId: string,
    turn: number,
    itemIndex: number,
    text: string | null,
    reader: SessionReader,
  ): Promise<CorrectionView | null>;
  /** Makes a branch that continues from a correction (reviews/correctionBranch.ts); undefined when cancelled. */
  branchFromCorrection(target: SessionRef, req: CorrectionBranchRequest, reader: SessionReader): Promise<string | undefined>;
  /** The review data's changes, so the verdicts shown are read again. */
  reviews?: ReviewChanges;
  /** Hands a turn over to the chat (codingAgents/handOver.ts); false when the prompt went to the clipboard. */
  askAboutTurn?(turn: SessionRef & { branchId: string; turn: number }): Promise<boolean>;
  /** The turns a search's review filters (`is:bad`, `tag:`, `reviewed:`) allow in the session store. */
  reviewTurns?(target: SessionRef, review: ReviewQuery): Promise<TurnSet>;
}

/** What a panel shows; also its persisted state, so a window reload restores it. */
export interface PanelTarget extends SessionRef {
  branchId?: string;
  turn?: number;
}

/** The selection a target asks for, or null when it names neither a branch nor a turn. */
function revealOf(target: PanelTarget): RevealView | null {
  if (target.branchId === undefined && target.turn === undefined) return null;
  return { branchId: target.branchId ?? null, turn: target.turn ?? null };
}

function isTarget(v: unknown): v is PanelTarget {
  if (typeof v !== 'object' || v === null) return false;
  const t = v as Record<string, unknown>;
  return (
    typeof t.dbPath === 'string' &&
    typeof t.sessionId === 'string' &&
    (t.branchId === undefined || typeof t.branchId === 'string') &&
    (t.turn === undefined || Number.isInteger(t.turn))
  );
}

/**
 * One conversation view (a webview panel) for one session. The host owns the data and the view asks for windows of
 * it: the page starts with `view/ready`, then requests what it shows; after a change the panel sends one small,
 * numbered `session/didChange` notice per burst and the view re-requests only what it shows. The view owns the
 * selected branch and turn; the panel only passes on what a tree command asked to reveal.
 */
class ConversationPanel extends PanelHost<HostMessage> {
  /** What the panel was opened for, until the view's `view/ready` picks it up. */
  private pendingReveal: RevealView | null;
  /** The database as the panel last saw it, to tell a reconnect or a new problem from a plain write. */
  private seenState: DatabaseState;
  /** The branch tree, read at most once per change: `session/get` and `tables/get` both need it. */
  private branchTree: Promise<readonly BranchNode[]> | undefined;

  constructor(
    panel: vscode.WebviewPanel,
    readonly target: PanelTarget,
    private readonly registry: DatabaseRegistry,
    private readonly runner: AgentRunner,
    private readonly extensionUri: vscode.Uri,
    private readonly actions: ConversationActions,
    private readonly pricing?: SessionPricing,
  ) {
    super(
      panel,
      { title: `${target.sessionId} · ${basename(target.dbPath)}`, script: 'dist/webview/main.js', styles: ['dist/webview/style.css'] },
      { extensionUri, registry, pricing, traces: actions.traces, reviews: actions.reviews },
    );
    this.pendingReveal = revealOf(target);
    this.seenState = this.databaseState();
    // The composer's agent picker shows each command's last run: a run from another view or the palette updates it.
    this.subscriptions.push(runner.choices.onDidChange(() => this.post({ kind: 'agents/didChange', view: runner.choices.view() })));
  }

  protected dispatch(method: string, params: unknown): Promise<unknown> {
    return handleRequest(this.handlers, method, params);
  }

  private databaseState(): DatabaseState {
    const entry = this.registry.get(this.target.dbPath);
    return { connection: entry?.db, readonly: entry?.readonly, problem: entry?.problem };
  }

  protected changesOf(change: DatabaseChange): readonly ChangeKind[] {
    const state = this.databaseState();
    const kinds = noticeKinds(change, this.target, !sameDatabaseState(state, this.seenState));
    this.seenState = state;
    if (kinds.some((k) => k !== 'current-branch')) this.branchTree = undefined;
    return kinds;
  }

  /** Another pricing model or price table: the costs change, the file does not. */
  protected override pricingChangesOf(ref: PricingChange): readonly ChangeKind[] {
    const mine = !ref || (ref.dbPath === this.target.dbPath && ref.sessionId === this.target.sessionId);
    return mine ? ['pricing'] : [];
  }

  /** This session's traces changed (or any session's: an OTLP batch): latency and the open Timeline are read again. */
  protected override traceChangesOf(sessionId: string | undefined): readonly ChangeKind[] {
    return sessionId === undefined || sessionId === this.target.sessionId ? ['traces'] : [];
  }

  protected override reviewChangesOf(sessionId: string): readonly ChangeKind[] {
    return sessionId === this.target.sessionId ? ['reviews'] : [];
  }

  /** Shows another branch or turn in this panel (a tree command opened it again). */
  show(target: PanelTarget): void {
    // A panel in a background tab has no page (no retainContextWhenHidden): VS Code drops what is posted to it, and
    // revealing it loads the page again, which restores its saved selection. So the reveal waits for that page's
    // `view/ready`, whose answer wins over the saved state.
    const hidden = !this.panel.visible;
    this.panel.reveal();
    const reveal = revealOf(target);
    if (!reveal) return;
    if (this.ready && !hidden) this.post({ kind: 'selection/reveal', ...reveal });
    else this.pendingReveal = reveal;
  }

  /**
   * Runs the agent on `branchId` with `input`, streaming every event into the view. Resolves with the outcome (a
   * failure is an outcome, not an exception).
   */
  startRun(
    branchId: string,
    input: RunInput,
    runId: string = randomUUID(),
    options: Pick<RunTarget, 'fork' | 'model' | 'agent'> = {},
  ): { runId: string; outcome: Promise<RunOutcome> } {
    const outcome = this.runner.run(
      { dbPath: this.target.dbPath, sessionId: this.target.sessionId, branchId, ...options },
      input,
      (event) => this.post({ kind: 'run/didEvent', event }),
      runId,
    );
    return { runId, outcome };
  }

  /**
   * `startRun`, with a run that cannot start (a read-only database, …) ending as a `run/failed` outcome, also posted
   * to the view, instead of a rejection: the view always sees the run end.
   */
  startReportedRun(
    branchId: string,
    input: RunInput,
    runId: string,
    options: Pick<RunTarget, 'fork' | 'model' | 'agent'> = {},
  ): Promise<RunOutcome> {
    return this.startRun(branchId, input, runId, options).outcome.catch((err: unknown) => {
      const event = failedBeforeWriting(runId, 'other', describeError(err), vscode.l10n.t('Nothing was written.'));
      this.post({ kind: 'run/didEvent', event });
      return event;
    });
  }

  /** Starts a what-if from a turn of this session; its runs stream into this view (whatIf.ts). */
  startWhatIf(source: WhatIfTurn, request: WhatIfRequest): Promise<StartedWhatIf> {
    return startWhatIf(
      this.registry,
      this.runner,
      source,
      request,
      (input, o) => this.startReportedRun(source.branchId, input, o.runId, { fork: o.fork, model: o.model, agent: o.agent }),
      (targets) => this.actions.compareBranches(targets),
    );
  }

  private db() {
    const entry = this.registry.require(this.target.dbPath);
    if (!entry.db) throw new UserFacingError(entry.problem ?? vscode.l10n.t('The database cannot be read.'));
    return this.scoped(entry.db);
  }

  /**
   * The branch tree, read once per change and shared by the requests that need it; read for the panel, not for the
   * request that happened to ask first (a superseded Tokens request is cancelled, and must not fail the others).
   */
  private branches(db: SessionReader): Promise<readonly BranchNode[]> {
    const tree = (this.branchTree ??= Promise.resolve(this.panelScoped(db).getBranchTree(this.target.sessionId)));
    // A failed read is not kept: the next request reads again.
    tree.catch(() => {
      if (this.branchTree === tree) this.branchTree = undefined;
    });
    return tree;
  }

  private async session(): Promise<SessionView> {
    const { dbPath, sessionId } = this.target;
    const entry = this.registry.get(dbPath);
    const db = this.scoped(entry?.db);
    try {
      return await sessionView({
        db,
        dbPath,
        dbName: entry?.remote ? dbPath : undefined,
        sessionId,
        readonly: entry?.readonly ?? true,
        currentBranch: this.registry.currentBranch(dbPath, sessionId),
        branchTree: async () => (db ? this.branches(db) : []),
        problem: entry ? entry.problem : vscode.l10n.t('{0} is not open.', dbPath),
      });
    } catch (err) {
      // The file became unreadable under us: record it (its change event tells the view) and say why now.
      this.registry.reportProblem(dbPath, err);
      throw err;
    }
  }

  /** A newer Tools or Tokens request (another scope, branch or page) cancels the older one, in the store worker too. */
  protected override readonly latestWins: ReadonlySet<string> = LATEST_WINS;

  /** The answer to each request of the view, with its parameters already checked (requestChecks.ts). */
  private readonly handlers: RequestHandlers = {
    'view/ready': () => {
      this.markReady();
      const reveal = this.pendingReveal;
      this.pendingReveal = null;
      return reveal;
    },
    'session/get': () => this.session(),
    'turns/get': async (p) => {
      const db = this.db();
      return turnPage(db, this.target.sessionId, p, await this.branches(db));
    },
    'turn/items': async (p) => (await this.db().getTurnItems(this.target.sessionId, p.branchId, p.turn)).map(itemView),
    'turn/timeline': (p) => this.actions.turnTimeline(this.target, p.branchId, p.turn, this.db()),
    'branch/latency': async (p) => {
      const db = this.db();
      return this.actions.branchLatency(this.target, p.branchId, db, await this.branches(db));
    },
    'trace/link': async (p) => ({ linked: await this.actions.linkTrace(this.target, p.branchId, p.turn) }),
    'reviews/get': async (p) => {
      const db = this.db();
      return this.actions.branchReviews(this.target, p.branchId, db, await this.branches(db));
    },
    'review/set': (p) => this.actions.setTurnReview(this.target, p.branchId, p.turn, p.change, this.db()),
    'turn/askCopilot': async (p) => ({
      opened: this.actions.askAboutTurn ? await this.actions.askAboutTurn({ ...this.target, branchId: p.branchId, turn: p.turn }) : false,
    }),
    'correction/branch': async (p) => ({ branchId: (await this.actions.branchFromCorrection(this.target, p, this.db())) ?? null }),
    'correction/set': (p) => this.actions.setCorrection(this.target, p.branchId, p.turn, p.itemIndex, p.text, this.db()),
    'tables/get': async (p) => {
      const db = this.db();
      const view = await tables(db, this.target.sessionId, p.branchId, await this.branches(db), p.usage);
      const priced = this.pricing ? withCosts(view, this.pricing.pricingFor(this.target)) : view;
      return withLatency(priced, (turns) => this.actions.turnLatencies(this.target, turns, db));
    },
    'tools/get': (p) => toolsView(this.db(), this.target.sessionId, p.branchId),
    'pricing/choose': async () => {
      if (!this.pricing) throw new UserFacingError(vscode.l10n.t('Pricing is not available.'));
      const model = await choosePricingModel(this.pricing, this.target);
      return { model: model === undefined ? null : model };
    },
    'branch/create': async (p) => ({
      branchId: await createBranch(this.registry, this.target, p.fromBranchId, { turn: p.branchTurnNumber }, p.name),
    }),
    'branch/switch': async (p) => {
      await switchBranch(this.registry, this.target, p.branchId);
      return { branchId: p.branchId };
    },
    'branch/delete': async (p) => ({ deleted: await deleteBranch(this.registry, this.target, p.branchId) }),
    'run/start': async (p) => {
      // What is knowable before the run (a key, a writable file) is refused here, as the request's error: the view
      // shows it under the composer and nothing starts. Later failures reach the view as run/failed events.
      await this.runner.checkCanStart(this.target.dbPath, p.agent);
      const runId = randomUUID();
      void this.startReportedRun(p.branchId, p.input, runId, p.agent !== undefined ? { agent: p.agent } : {});
      return { runId };
    },
    'run/stop': (p) => ({ stopped: this.runner.stop(p.runId) }),
    'branch/compare': async (p) => ({ opened: await this.actions.compareWith({ ...this.target, branchId: p.branchId }) }),
    'apiKey/set': async () => ({ set: await this.actions.setApiKey() }),
    'whatIf/models': () => ({ configured: setting(Setting.agentModel), choices: readWhatIfModels() }),
    'whatIf/start': async (p) => {
      const { runs, done } = await this.startWhatIf(
        { ...this.target, branchId: p.branchId, turn: p.turn, branchTurnNumber: p.branchTurnNumber },
        {
          kind: p.editedText === null ? 'retry' : 'edit',
          editedText: p.editedText ?? undefined,
          models: p.models,
          ...(p.agent !== undefined ? { agent: p.agent } : {}),
        },
      );
      void done;
      return { runs };
    },
    'agents/get': () => this.runner.choices.view(),
    'agents/select': async (p) => {
      await this.runner.choices.select(p.id);
      return this.runner.choices.view();
    },
    'content/copy': async (p) => {
      await copyContent(this.registry, this.target, p.ref, p.part);
      return { copied: true };
    },
    // The export reports its own failures and cancellations; the answer only says whether a file was written.
    'branch/export': async (p) => ({ exported: await this.actions.exportConversation(this.target, p.branchId) }),
    'content/openJson': async (p) => ({ opened: await this.actions.openAsJson({ ...this.target, ...p.ref }) }),
    'search/session': (p) =>
      searchShownSession(this.extensionUri, this.registry, this.target, p.branchId, p.query, (review) =>
        this.actions.reviewTurns ? this.actions.reviewTurns(this.target, review) : Promise.resolve({ mode: 'only', keys: [] }),
      ),
  };

  /** Links come from database text: only http(s), and only after the user confirms the exact address. */
  protected override async openLink(url: string): Promise<void> {
    let parsed: vscode.Uri;
    try {
      parsed = vscode.Uri.parse(url, true);
    } catch {
      return;
    }
    if (parsed.scheme !== 'http' && parsed.scheme !== 'https') {
      void vscode.window.showWarningMessage(vscode.l10n.t('Links of this kind are not opened from session data: {0}', url.slice(0, 200)));
      return;
    }
    const open = vscode.l10n.t('Open');
    const answer = await vscode.window.showWarningMessage(
      vscode.l10n.t('Open this link from the session data?'),
      { modal: true, detail: url.slice(0, 2000) },
      open,
    );
    if (answer === open) await vscode.env.openExternal(parsed);
  }
}

/** All conversation views, one per session, restored after a window reload. */
export class ConversationPanels extends PanelRegistry<ConversationPanel> {
  constructor(
    private readonly registry: DatabaseRegistry,
    private readonly runner: AgentRunner,
    private readonly extensionUri: vscode.Uri,
    private readonly actions: ConversationActions,
    private readonly pricing?: SessionPricing,
  ) {
    super(CONVERSATION_VIEW_TYPE);
    this.restoreWith(async (panel, state) => {
      if (!isTarget(state)) return undefined;
      if (!registry.get(state.dbPath)) await registry.open(state.dbPath, { quiet: true });
      return this.create(panel, state);
    });
  }

  protected keyOf(panel: ConversationPanel): string {
    return sessionKey(panel.target.dbPath, panel.target.sessionId);
  }

  /** Opens (or reveals) the view of a session, on a branch and optionally at a turn. */
  open(target: PanelTarget): ConversationPanel {
    return this.showOrCreate(
      sessionKey(target.dbPath, target.sessionId),
      target.sessionId,
      (panel) => this.create(panel, target),
      (existing) => existing.show(target),
    );
  }

  /** Resolves once the view of the target has said `ready` (for commands that drive it). */
  async whenReady(panel: ConversationPanel, timeoutMs = 20_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new UserFacingError(vscode.l10n.t('The conversation view did not start.'))), timeoutMs);
    });
    try {
      await Promise.race([panel.whenReady, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  get(dbPath: string, sessionId: string): ConversationPanel | undefined {
    return this.find(sessionKey(dbPath, sessionId));
  }

  private create(panel: vscode.WebviewPanel, target: PanelTarget): ConversationPanel {
    return new ConversationPanel(panel, target, this.registry, this.runner, this.extensionUri, this.actions, this.pricing);
  }
}
