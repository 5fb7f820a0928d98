import { basename } from 'node:path';
import * as vscode from 'vscode';
import { LATEST_WINS, type HostMessage, type Requests } from '../../shared/protocol/conversation';
import type { CompareTarget } from '../../shared/protocol/compareViews';
import type { ChangeKind } from '../../shared/protocol/envelope';
import type { RevealView } from '../../shared/protocol/conversationViews';
import type { BranchNode, SessionReader } from '../../store';
import type { RunInput } from '../../agents/runOptions';
import type { RunOutcome } from '../../shared/protocol/runEvents';
import { sessionKey, type SessionRef } from '../../shared/protocol/sessionRef';
import { PanelHost } from '../core/panelHost';
import { PanelRegistry } from '../core/panelRegistry';
import { dispatchRequest, type HandlersOf } from '../core/requestDispatch';
import { openConfirmedLink } from '../core/confirmedLinks';
import { UserFacingError } from '../core/userError';
import type { ConversationRequestTable, ShownSession } from '../core/viewRequests';
import type { DatabaseChange, DatabaseRegistry } from '../databases/databaseRegistry';
import type { AgentRunner } from '../runs/agentRunner';
import { startViewRun, startViewWhatIf, type RunChoices } from '../runs/viewRuns';
import type { StartedWhatIf, WhatIfRequest, WhatIfTurn } from '../runs/whatIf';
import { noticeKinds, sameDatabaseState, type DatabaseState } from './sessionNotices';

export const CONVERSATION_VIEW_TYPE = 'agentSessions.conversation';

/**
 * What the conversation views read (the open databases), run on (the runner) and hear: the other features' changes
 * as plain events, so the panel imports none of those features. Each says which session changed (undefined: any).
 */
export interface ConversationSources {
  readonly registry: DatabaseRegistry;
  readonly runner: AgentRunner;
  readonly extensionUri: vscode.Uri;
  /** A session's pricing model, the default model or the price table changed: the costs change, the file does not. */
  readonly pricingChanges: vscode.Event<SessionRef | undefined>;
  /** A session's traces changed (or any session's: an OTLP batch): latency and the open Timeline are read again. */
  readonly traceChanges: vscode.Event<string | undefined>;
  /** A session's review data changed in this window. */
  readonly reviewChanges: vscode.Event<string>;
  /** A session's replay marks changed (a run recorded them): its tool cards' marks differ. */
  readonly replayChanges?: vscode.Event<string>;
  /** The history guard recorded (or a restore used) layers of a session: its layers are read again. */
  readonly layerChanges?: vscode.Event<SessionRef>;
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
 * selected branch and turn; the panel only passes on what a tree command asked to reveal. Its requests are answered
 * by the features that own them (core/viewRequests.ts); the panel answers only the handshake.
 */
class ConversationPanel extends PanelHost<HostMessage> implements ShownSession {
  /** What the panel was opened for, until the view's `view/ready` picks it up. */
  private pendingReveal: RevealView | null;
  /** The database as the panel last saw it, to tell a reconnect or a new problem from a plain write. */
  private seenState: DatabaseState;
  /** The branch tree, read at most once per change: `session/get` and `tables/get` both need it. */
  private branchTree: Promise<readonly BranchNode[]> | undefined;
  private readonly registry: DatabaseRegistry;
  private readonly runner: AgentRunner;

  constructor(
    panel: vscode.WebviewPanel,
    readonly target: PanelTarget,
    sources: ConversationSources,
    private readonly requests: ConversationRequestTable,
  ) {
    super(
      panel,
      { title: `${target.sessionId} · ${basename(target.dbPath)}`, script: 'dist/webview/main.js', styles: ['dist/webview/style.css'] },
      sources.extensionUri,
    );
    this.registry = sources.registry;
    this.runner = sources.runner;
    this.pendingReveal = revealOf(target);
    this.seenState = this.databaseState();
    this.listen(sources.registry.onDidChange, (change) => this.changesOf(change));
    // Another pricing model or price table: the costs change, the file does not.
    const priced = (ref: SessionRef | undefined): boolean => !ref || (ref.dbPath === target.dbPath && ref.sessionId === target.sessionId);
    this.listen(sources.pricingChanges, (ref): ChangeKind[] => (priced(ref) ? ['pricing'] : []));
    this.listen(sources.traceChanges, (id): ChangeKind[] => (id === undefined || id === target.sessionId ? ['traces'] : []));
    this.listen(sources.reviewChanges, (sessionId): ChangeKind[] => (sessionId === target.sessionId ? ['reviews'] : []));
    if (sources.replayChanges)
      this.listen(sources.replayChanges, (sessionId): ChangeKind[] => (sessionId === target.sessionId ? ['replay'] : []));
    if (sources.layerChanges)
      this.listen(sources.layerChanges, (ref): ChangeKind[] =>
        ref.dbPath === target.dbPath && ref.sessionId === target.sessionId ? ['layers'] : [],
      );
    // The composer's agent picker shows each command's last run: a run from another view or the palette updates it.
    const choices = sources.runner.choices;
    this.subscriptions.push(choices.onDidChange(() => this.post({ kind: 'agents/didChange', view: choices.view() })));
  }

  /** The handshake is the panel's; every other request goes to the feature that answers it, parameters checked first. */
  protected async dispatch(method: string, params: unknown): Promise<unknown> {
    const handlers: HandlersOf<Requests, ShownSession> = { ...this.requests, 'view/ready': () => this.viewReady() };
    // The checks are zod's: loaded with a view's first request, not at activation (issue 43: a light start).
    const { requestParams } = await import('./requestChecks');
    return dispatchRequest(requestParams, handlers, method, params, this);
  }

  /** The page has started: notices flow from now on, and it gets what the panel was opened to show, once. */
  private viewReady(): RevealView | null {
    this.markReady();
    const reveal = this.pendingReveal;
    this.pendingReveal = null;
    return reveal;
  }

  private databaseState(): DatabaseState {
    const entry = this.registry.get(this.target.dbPath);
    return { connection: entry?.db, readonly: entry?.readonly, problem: entry?.problem };
  }

  private changesOf(change: DatabaseChange): readonly ChangeKind[] {
    const state = this.databaseState();
    const kinds = noticeKinds(change, this.target, !sameDatabaseState(state, this.seenState));
    this.seenState = state;
    if (kinds.some((k) => k !== 'current-branch')) this.branchTree = undefined;
    return kinds;
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

  /** Runs the agent on `branchId` with `input`, streaming every event into the view (runs/viewRuns.ts). */
  startRun(branchId: string, input: RunInput, runId?: string, options: RunChoices = {}): { runId: string; outcome: Promise<RunOutcome> } {
    return startViewRun(this.runner, this, branchId, input, runId, options);
  }

  /** Starts a what-if from a turn of this session; its runs stream into this view, `compare` opens the comparison. */
  startWhatIf(source: WhatIfTurn, request: WhatIfRequest, compare: (targets: CompareTarget[]) => void): Promise<StartedWhatIf> {
    return startViewWhatIf(this.registry, this.runner, this, source, request, compare);
  }

  db(): SessionReader {
    const entry = this.registry.require(this.target.dbPath);
    if (!entry.db) throw new UserFacingError(entry.problem ?? vscode.l10n.t('The database cannot be read.'));
    return this.scoped(entry.db);
  }

  reader(): SessionReader | undefined {
    return this.scoped(this.registry.get(this.target.dbPath)?.db);
  }

  /**
   * The branch tree, read once per change and shared by the requests that need it; read for the panel, not for the
   * request that happened to ask first (a superseded Tokens request is cancelled, and must not fail the others).
   */
  branches(db: SessionReader): Promise<readonly BranchNode[]> {
    const tree = (this.branchTree ??= Promise.resolve(this.panelScoped(db).getBranchTree(this.target.sessionId)));
    // A failed read is not kept: the next request reads again.
    tree.catch(() => {
      if (this.branchTree === tree) this.branchTree = undefined;
    });
    return tree;
  }

  /** A newer Tools or Tokens request (another scope, branch or page) cancels the older one, in the store worker too. */
  protected override readonly latestWins: ReadonlySet<string> = LATEST_WINS;

  /** Links come from database text: only http(s), and only after the user confirms the exact address. */
  protected override openLink(url: string): Promise<void> {
    return openConfirmedLink(url);
  }
}

/** All conversation views, one per session, restored after a window reload. */
export class ConversationPanels extends PanelRegistry<ConversationPanel> {
  /** Every request's handler, from the features that answer them (`answerWith`). */
  private requests: ConversationRequestTable | undefined;

  constructor(private readonly sources: ConversationSources) {
    super(CONVERSATION_VIEW_TYPE);
    const { registry } = sources;
    this.restoreWith(async (panel, state) => {
      if (!isTarget(state)) return undefined;
      if (!registry.get(state.dbPath)) await registry.open(state.dbPath, { quiet: true });
      return this.create(panel, state);
    });
  }

  /**
   * Takes the request table, once, as `activate` registers the command table: after every service exists, since the
   * features' handlers open comparisons and move Review Next's queue, which in turn open conversation views. VS Code
   * creates or restores no panel before `activate` has returned.
   */
  answerWith(requests: ConversationRequestTable): void {
    if (this.requests) throw new Error('The conversation view already has its request table.');
    this.requests = requests;
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
    if (!this.requests) throw new Error('The conversation view has no request table yet.');
    return new ConversationPanel(panel, target, this.sources, this.requests);
  }
}
