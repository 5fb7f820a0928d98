/**
 * The conversation view's state and its loading, without the DOM (docs/webview-protocol.md#change-notices). The
 * view owns the selection (branch, turn, table tab) and asks the host for windows of data: the session's branch
 * list, a window of the selected branch's turns, the selected turn's items, the open table. On a change notice it
 * re-requests only those of them the notice touches, and a reply to a request issued before a newer notice is
 * dropped, so a slow stale reply never overwrites newer data. Every load goes through `refresh()`, which reads what
 * is owed (`owed`): what notices touched and what navigation needs. A load overtaken by a newer notice stops, and
 * what it owed stays owed, so the newer notice's load (which started with it) brings it.
 */
import { errorMessage } from '../../../src/shared/errorMessage';
import { MAX_TURN_REQUEST, USAGE_PAGE, VIEW_TURN_PAGE } from '../../../src/shared/pageSizes';
import { LATEST_WINS, type RequestMethod, type Requests } from '../../../src/shared/protocol/conversation';
import type { ChangeKind, ChangeNotice } from '../../../src/shared/protocol/envelope';
import type { RunEvent } from '../../../src/shared/protocol/runEvents';
import { RunTracker } from './runTracker';
import type { BranchLatencyView, TurnLatencyView } from '../../../src/shared/protocol/latencyViews';
import type { BranchReviewsView, TurnReviewChangeView, TurnReviewView } from '../../../src/shared/protocol/reviewViews';
import type { ReplayMarksView } from '../../../src/shared/protocol/replay';
import { callBadges, type CallBadge } from './replayViews';
import type {
  ItemView,
  RevealView,
  SessionView,
  TablesView,
  ToolsView,
  TurnView,
  UsageSortKey,
  UsageWindow,
} from '../../../src/shared/protocol/conversationViews';

/** The messenger's `request`, passed in so the model runs (and is tested) without a webview. */
/** `onProgress`: told how a long answer advances (the envelope's `progress` messages for this request). */
export type RequestFn = <M extends RequestMethod>(
  method: M,
  params: Requests[M]['params'],
  onProgress?: (done: number, total: number) => void,
) => Promise<Requests[M]['result']>;

/** What the renderer redraws when the model tells it. */
/** `latency`: the branch's turns' latency arrived (the list's figures, the heading's p50/p95); `timeline`: the trace
 * store changed, so an open Timeline reads its turn again; `replay`: the selected turn's calls' replay marks arrived. */
export type ViewPart =
  'session' | 'turns' | 'selection' | 'items' | 'tables' | 'tools' | 'banner' | 'latency' | 'timeline' | 'reviews' | 'replay';

/** Which of the view's windows a notice makes it re-request. */
export interface RefreshPlan {
  session: boolean;
  turns: boolean;
  items: boolean;
  tables: boolean;
  /** The shown branch's turns' latency (`branch/latency`). */
  latency: boolean;
  /** The shown branch's turn reviews (`reviews/get`). */
  reviews: boolean;
  /** The replay marks of the selected turn's calls (`replay/marks` of the branch that ran it). */
  replay: boolean;
}

export function refreshPlan(what: readonly ChangeKind[], tablesOpen: boolean): RefreshPlan {
  const all = what.includes('database');
  const turns = all || what.includes('turns');
  return {
    session: all || what.includes('branches') || what.includes('current-branch'),
    turns,
    items: turns,
    // The tables list own turns without usage, which depends on the turns and on where branches forked; their costs
    // depend on the pricing model.
    // Latency comes from the trace store (`traces`) and is read per branch; the Tokens table shows it per row.
    tables:
      tablesOpen && (turns || what.includes('usage') || what.includes('branches') || what.includes('pricing') || what.includes('traces')),
    latency: turns || what.includes('branches') || what.includes('traces'),
    reviews: turns || what.includes('branches') || what.includes('reviews'),
    // Marks are kept apart from the file: a run records them after it wrote its turn, and says so with its own notice.
    // (Another turn or branch selected reads its branch's marks with its items.)
    replay: all || what.includes('replay'),
  };
}

/**
 * The branch to show once the branch list is known: the wanted one if it still exists, else the current branch, else
 * the first, else `main`. With no branches (an unreadable file, an empty session) nothing can be checked.
 */
export function chooseBranch(session: SessionView, wanted: string | undefined): string {
  const has = (id: string | undefined): id is string => id !== undefined && session.branches.some((b) => b.branchId === id);
  if (session.branches.length === 0) return wanted ?? session.currentBranchId;
  if (has(wanted)) return wanted;
  if (has(session.currentBranchId)) return session.currentBranchId;
  return session.branches[0]?.branchId ?? 'main';
}

/** Where a window that should show `turn` starts: a few turns before it, so it is on the first screen. */
export function startAfterFor(turn: number | null | undefined): number | null {
  return turn !== null && turn !== undefined && turn > 10 ? turn - 10 : null;
}

/**
 * The loaded part of a branch's turns: from after `startAfter` up to `nextAfterTurn` (null: to the end). A window
 * placed by End starts as `'end'` (the branch's last page, read backwards); once read it is an ordinary window from
 * after the turn before its first. `previousBeforeTurn` is the cursor of the page before it (null: it starts at the
 * branch's first turn), so scrolling up loads earlier pages.
 */
interface TurnWindow {
  branchId: string | undefined;
  startAfter: number | null | 'end';
  turns: TurnView[];
  nextAfterTurn: number | null;
  previousBeforeTurn: number | null;
}

const STALE = Symbol('stale');
type Stale = typeof STALE;

const NOTHING: RefreshPlan = { session: false, turns: false, items: false, tables: false, latency: false, reviews: false, replay: false };
const union = (a: RefreshPlan, b: RefreshPlan): RefreshPlan => ({
  session: a.session || b.session,
  turns: a.turns || b.turns,
  items: a.items || b.items,
  tables: a.tables || b.tables,
  latency: a.latency || b.latency,
  reviews: a.reviews || b.reviews,
  replay: a.replay || b.replay,
});

export class ConversationModel {
  /** The newest notice seen; requests issued before it are stale. */
  private seq = 0;
  /** How many requests of each method were issued: an answer to any but the latest of a `LATEST_WINS` method is stale. */
  private readonly issued = new Map<RequestMethod, number>();
  /** What is still to be read: cleared by the newest load when it completes. */
  private owed: RefreshPlan = NOTHING;
  /** Counts loads, so only the newest one clears what is owed. */
  private loads = 0;
  /** Counts explicit navigations, so a branch list requested before one cannot move the view off its target. */
  private nav = 0;
  private started = false;
  private window: TurnWindow = { branchId: undefined, startAfter: null, turns: [], nextAfterTurn: null, previousBeforeTurn: null };
  private selected: number | undefined;
  /** The next window read scrolls the list to the selected turn (after navigation, not after a live update). */
  private scrollNext = false;
  private pageInFlight: Promise<void> | undefined;
  /** The next read of the turns issued from now on selects the last turn (a run ended, or the End key). */
  private selectLastTurn = false;
  /**
   * Counts reads of the turns: only the latest one issued applies its window. Each notice of a run's commits reads the
   * turns again, and one issued before the run's last write could answer after the run ended: applied, it selected
   * its own last turn (not the run's) and, since it replaced the window, made the run's own read look overtaken.
   */
  private turnReads = 0;
  private tablesOpen = false;
  /** The Tools tab is open: it reads its own scope's tool totals (`tools/get`), apart from the Tokens tab's. */
  private toolsOpen = false;
  /** The page of the Tokens table shown: its order and first row; a new object whenever it changes. */
  private usage: Omit<UsageWindow, 'limit'> = { sort: 'turn', descending: false, offset: 0 };
  /** The table scope (branch id, null: session) `usage` belongs to: another scope starts from its first page. */
  private usageScope: string | null | undefined;
  /** The composer's run, from the moment `run/start` answered. */
  private runId: string | undefined;
  /** Every run whose events arrive (the composer's and a what-if's), and the fork shown for one of them. */
  private readonly runs = new RunTracker();

  session: SessionView | undefined;
  items: ItemView[] | string | undefined;
  tables: TablesView | undefined;
  tablesScope: 'branch' | 'session' = 'branch';
  /** The Tools tab's tool totals and scope. */
  tools: ToolsView | undefined;
  toolsScope: 'branch' | 'session' = 'branch';
  /**
   * While the Tools tab's totals are computed for the first time on a big session: its scope and the tool calls counted
   * so far (the host's progress); undefined otherwise.
   */
  toolsProgress: { branchId: string | null; done: number } | undefined;
  /** The shown branch's turns' latency from the trace store; undefined until read, or when it cannot be. */
  latency: BranchLatencyView | undefined;
  /** Why the latency could not be read (the trace store is unavailable), shown in the list's heading. */
  latencyError: string | undefined;
  /** The latency figures by `${turn} ${branch that ran it}`. */
  private latencyByTurn = new Map<string, TurnLatencyView>();
  /** The shown branch's turn reviews; undefined until read, or when they cannot be (`reviewsError` says why). */
  reviews: BranchReviewsView | undefined;
  reviewsError: string | undefined;
  private reviewByTurn = new Map<string, TurnReviewView>();
  /**
   * The replay marks of the branch that ran the selected turn (its own, or a shared turn's `sharedFrom`), and the
   * badge of each of its calls by call id; undefined until read. A store that cannot be read shows no badges.
   */
  replay: { branchId: string; view: ReplayMarksView | undefined; badges: Map<string, CallBadge> } | undefined;
  /** The last request error, shown until the next branch list arrives. */
  error: string | undefined;
  /** Whether the list should scroll to the selected turn. */
  scrollToSelection = false;

  /**
   * @param shownUpTo the index of the last turn the list shows (with its margin); a refresh reads the window up to
   * there, not every page loaded before.
   */
  constructor(
    private readonly request: RequestFn,
    private readonly changed: (part: ViewPart) => void,
    private readonly shownUpTo: () => number = () => Infinity,
  ) {}

  get branchId(): string {
    return this.window.branchId ?? this.session?.currentBranchId ?? 'main';
  }
  get turns(): readonly TurnView[] {
    return this.window.turns;
  }
  get hasMore(): boolean {
    return this.window.nextAfterTurn !== null;
  }
  /** Whether the window starts after the branch's first turn (scrolling up loads earlier pages). */
  get hasEarlier(): boolean {
    return this.window.previousBeforeTurn !== null;
  }

  /** A turn's latency figures, if a trace is linked to it (a shared turn's are its running branch's). */
  latencyOf(turn: TurnView): TurnLatencyView | undefined {
    return this.latencyByTurn.get(`${turn.turn} ${turn.sharedFrom ?? this.branchId}`);
  }

  /** A turn's review, if it has one that matches its content (a shared turn's is its running branch's). */
  reviewOf(turn: TurnView): TurnReviewView | undefined {
    return this.reviewByTurn.get(`${turn.turn} ${turn.sharedFrom ?? this.branchId}`);
  }

  /** The correction kept for the item at `itemIndex` of `turn`, if any. */
  correctionOf(turn: TurnView, itemIndex: number): string | undefined {
    const branchId = turn.sharedFrom ?? this.branchId;
    return this.reviews?.corrections.find((c) => c.branchId === branchId && c.turn === turn.turn && c.itemIndex === itemIndex)?.text;
  }

  /** Keeps (null: removes) the answer the assistant item at `itemIndex` of `turn` should have given. */
  async correct(turn: TurnView, itemIndex: number, text: string | null): Promise<void> {
    const branchId = turn.sharedFrom ?? this.branchId;
    const saved = await this.request('correction/set', { branchId, turn: turn.turn, itemIndex, text });
    if (this.reviews) {
      const others = this.reviews.corrections.filter(
        (c) => !(c.branchId === branchId && c.turn === turn.turn && c.itemIndex === itemIndex),
      );
      this.reviews = { ...this.reviews, corrections: saved ? [...others, saved] : others };
    }
    this.changed('reviews');
  }

  /** Hands `turn` (on the shown branch) over to the chat. */
  async askCopilot(turn: TurnView): Promise<boolean> {
    return (await this.request('turn/askCopilot', { branchId: this.branchId, turn: turn.turn })).opened;
  }

  /** Makes a branch that continues from the correction of `turn`'s item at `itemIndex`, and shows it. */
  async continueFromCorrection(turn: TurnView, itemIndex: number): Promise<void> {
    if (turn.branchTurnNumber === null) return;
    const made = await this.request('correction/branch', {
      fromBranchId: this.branchId,
      branchTurnNumber: turn.branchTurnNumber,
      ranOn: turn.sharedFrom ?? this.branchId,
      turn: turn.turn,
      itemIndex,
    });
    if (made.branchId !== null) await this.showBranch(made.branchId);
  }

  /**
   * Changes the review of `turn` (`change` names only what changes). The answer is shown at once; other windows and
   * views see it through the host's change notice.
   */
  async review(turn: TurnView, change: TurnReviewChangeView): Promise<void> {
    const branchId = turn.sharedFrom ?? this.branchId;
    try {
      const saved = await this.request('review/set', { branchId, turn: turn.turn, change });
      const key = `${turn.turn} ${branchId}`;
      if (saved) this.reviewByTurn.set(key, saved);
      else this.reviewByTurn.delete(key);
      this.reviewsError = undefined;
    } catch (err) {
      this.reviewsError = errorMessage(err);
    }
    this.changed('reviews');
  }

  get selectedTurn(): TurnView | undefined {
    return this.window.turns.find((t) => t.turn === this.selected);
  }
  get selectedIndex(): number {
    return this.window.turns.findIndex((t) => t.turn === this.selected);
  }

  /**
   * The first load: the handshake (which says what the panel was opened for, else `saved`, the view's own state from
   * before its page was recreated), then every window.
   */
  async start(saved: RevealView | null): Promise<void> {
    let reveal: RevealView | null;
    try {
      reveal = (await this.request('view/ready', {})) ?? saved;
    } catch (err) {
      this.fail(err);
      return;
    }
    this.place(reveal?.branchId ?? undefined, startAfterFor(reveal?.turn), reveal?.turn ?? undefined);
    this.started = true;
    await this.refresh(refreshPlan(['database'], this.anyTableOpen));
  }

  /** A change notice from the host: re-request what it touches, unless a newer one was already seen. */
  async noticeReceived(notice: ChangeNotice): Promise<void> {
    if (notice.seq <= this.seq) return;
    this.seq = notice.seq;
    const plan = refreshPlan(notice.what, this.anyTableOpen);
    if (this.started && notice.what.includes('traces')) this.changed('timeline');
    // Before the handshake answers, the first load is still to come and reads everything anyway.
    if (this.started) await this.refresh(plan);
  }

  /** A tree command asked to show a branch (null: the one shown) and turn. */
  async reveal(reveal: RevealView): Promise<void> {
    this.place(reveal.branchId ?? this.branchId, startAfterFor(reveal.turn), reveal.turn ?? undefined);
    await this.refresh({ session: false, turns: true, items: true, tables: true, latency: true, reviews: true, replay: false });
  }

  /** Shows a branch from its first turn, on to `keepTurn` if given (moving between branches at a fork). */
  async showBranch(branchId: string, keepTurn?: number): Promise<void> {
    this.place(branchId, null, keepTurn);
    await this.refresh({ session: false, turns: true, items: true, tables: true, latency: true, reviews: true, replay: false });
  }

  async selectTurn(turn: number, scroll = false): Promise<void> {
    if (!this.window.turns.some((t) => t.turn === turn)) return;
    this.selected = turn;
    this.items = undefined;
    this.scrollToSelection = scroll;
    this.changed('selection');
    await this.refresh({ ...NOTHING, items: true });
  }

  /** Loads the next page of the shown branch; one page at a time, a second caller waits for the page in flight. */
  async loadMore(limit = VIEW_TURN_PAGE): Promise<void> {
    while (this.pageInFlight) await this.pageInFlight;
    const w = this.window;
    if (w.nextAfterTurn === null) return;
    this.pageInFlight = this.appendPage(w, w.nextAfterTurn, limit).finally(() => (this.pageInFlight = undefined));
    await this.pageInFlight;
  }

  /**
   * Loads the page before the window (scrolling up from a window that does not start at the first turn). Scroll
   * events ask again and again: while a page is loading, a call does nothing (the list asks again once it lands).
   */
  async loadEarlier(limit = VIEW_TURN_PAGE): Promise<void> {
    const w = this.window;
    if (this.pageInFlight || w.previousBeforeTurn === null) return;
    this.pageInFlight = this.prependPage(w, w.previousBeforeTurn, limit).finally(() => (this.pageInFlight = undefined));
    await this.pageInFlight;
  }

  /**
   * Selects the branch's last turn (the End key). When the window does not reach it, a new window is placed at the
   * branch's last page, read backwards in one request, rather than walking every page in between.
   */
  async loadToEnd(): Promise<void> {
    if (this.window.nextAfterTurn === null) {
      const last = this.window.turns[this.window.turns.length - 1];
      if (last) await this.selectTurn(last.turn, true);
      return;
    }
    this.place(this.branchId, 'end', undefined);
    this.selectLastTurn = true;
    await this.refresh({ ...NOTHING, turns: true, items: true });
  }

  /** Selects the branch's first turn (the Home key), placing a new window at the start when it is not loaded. */
  async loadToStart(): Promise<void> {
    const first = this.window.turns[0];
    if (this.window.previousBeforeTurn === null) {
      if (first) await this.selectTurn(first.turn, true);
      return;
    }
    this.place(this.branchId, null, undefined);
    await this.refresh({ ...NOTHING, turns: true, items: true });
  }

  /** Sorts the Tokens table by a column (again: the other way round), from its first page; the host sorts. */
  async sortUsage(sort: UsageSortKey): Promise<void> {
    const descending = this.usage.sort === sort ? !this.usage.descending : false;
    this.usage = { sort, descending, offset: 0 };
    await this.refresh({ ...NOTHING, tables: true });
  }

  /** Shows the next (1) or previous (-1) page of the Tokens table. */
  async usagePage(step: 1 | -1): Promise<void> {
    const rowCount = this.tables?.usage.rowCount ?? 0;
    const offset = this.usage.offset + step * USAGE_PAGE;
    if (offset < 0 || offset >= rowCount) return;
    this.usage = { ...this.usage, offset };
    await this.refresh({ ...NOTHING, tables: true });
  }

  /** The table tab was opened or closed, or its scope changed. */
  async setTables(open: boolean, scope: 'branch' | 'session' = this.tablesScope): Promise<void> {
    this.tablesOpen = open;
    this.tablesScope = scope;
    if (open) await this.refresh({ ...NOTHING, tables: true });
  }

  /** The Tools tab was opened or closed, or its scope changed (its own: the Tokens tab's scope is another). */
  async setTools(open: boolean, scope: 'branch' | 'session' = this.toolsScope): Promise<void> {
    this.toolsOpen = open;
    this.toolsScope = scope;
    if (open) await this.refresh({ ...NOTHING, tables: true });
  }

  /** Asks the host to choose the session's pricing model; the change notice that follows reloads the costs. */
  async choosePricingModel(): Promise<void> {
    await this.guarded(() => this.request('pricing/choose', {}));
  }

  private get anyTableOpen(): boolean {
    return this.tablesOpen || this.toolsOpen;
  }

  /** Creates a branch at a turn of the shown branch and shows it; returns the error text, or undefined. */
  async createBranch(turn: TurnView, name: string): Promise<string | undefined> {
    try {
      const created = await this.request('branch/create', {
        fromBranchId: this.branchId,
        branchTurnNumber: turn.branchTurnNumber as number,
        name,
      });
      void this.showBranch(created.branchId);
      return undefined;
    } catch (err) {
      return errorMessage(err);
    }
  }

  /** Makes the shown branch the current one; the notice that follows redraws the branch list. */
  async switchBranch(): Promise<void> {
    await this.guarded(() => this.request('branch/switch', { branchId: this.branchId }));
  }

  async deleteBranch(): Promise<void> {
    const branchId = this.branchId;
    await this.guarded(async () => {
      const { deleted } = await this.request('branch/delete', { branchId });
      if (deleted && this.branchId === branchId) await this.showBranch('main');
    });
  }

  /** The branch whose replay marks the selected turn's calls have: the one that ran it. */
  private get replayOwner(): string {
    return this.selectedTurn?.sharedFrom ?? this.branchId;
  }

  /**
   * The replay marks of the selected turn's branch: read again when `force` (a notice, new turns), else only when the
   * selection moved to a turn another branch ran.
   */
  private async reloadReplay(force: boolean): Promise<void | Stale> {
    const owner = this.replayOwner;
    if (!force && this.replay?.branchId === owner) return;
    let view: ReplayMarksView | undefined;
    try {
      const got = await this.fetch('replay/marks', { branchId: owner });
      if (got === STALE) return STALE;
      view = got;
    } catch {
      // The marks are an addition to the cards: a store that cannot be read leaves them unmarked, the turn still shows.
      view = undefined;
    }
    if (this.replayOwner !== owner) return; // the user moved on; that move reads its own
    this.replay = { branchId: owner, view, badges: callBadges(view) };
    this.changed('replay');
  }

  async startRun(input: string, agent?: string): Promise<void> {
    this.runId = (await this.request('run/start', { branchId: this.branchId, input, ...(agent !== undefined ? { agent } : {}) })).runId;
  }

  /** Stops the composer's run, then every run whose events are arriving (a what-if runs several). */
  async stopRuns(): Promise<void> {
    if (this.runId) await this.request('run/stop', { runId: this.runId });
    for (const runId of this.runs.running) await this.request('run/stop', { runId });
  }

  /**
   * An event of a run (`run/didEvent`): a retry's run shows its new branch when it starts, and a run that ended has
   * written its turn, which is read and selected (runTracker.ts says which).
   */
  async runEvent(e: RunEvent): Promise<void> {
    const step = this.runs.next(e, this.branchId, this.selected);
    if (step.kind === 'show') await this.showBranch(step.branchId);
    if (step.kind === 'ended') {
      if (step.back) return this.showBranch(step.back.branchId, step.back.turn);
      if (step.showFork !== undefined) await this.showBranch(step.showFork);
      if (step.keepSelection) await this.refresh(refreshPlan(['turns'], this.anyTableOpen));
      else await this.runEnded();
    }
  }

  /** A run ended: show its turn (the last one) as soon as the turns are read again. */
  private async runEnded(): Promise<void> {
    this.selectLastTurn = true;
    await this.refresh(refreshPlan(['turns'], this.anyTableOpen));
  }

  // ---- loading ----------------------------------------------------------------------------------------------

  /** Requests through the sequence guard: STALE when a newer notice arrived meanwhile (its load reads again). */
  private async fetch<M extends RequestMethod>(
    method: M,
    params: Requests[M]['params'],
    onProgress?: (done: number, total: number) => void,
  ): Promise<Requests[M]['result'] | Stale> {
    const issuedAt = this.seq;
    const mine = (this.issued.get(method) ?? 0) + 1;
    this.issued.set(method, mine);
    const stale = (): boolean => this.seq !== issuedAt || (LATEST_WINS.has(method) && this.issued.get(method) !== mine);
    try {
      const result = await this.request(method, params, onProgress);
      return stale() ? STALE : result;
    } catch (err) {
      if (stale()) return STALE;
      throw err;
    }
  }

  private async guarded(action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    this.error = errorMessage(err);
    this.changed('banner');
  }

  /**
   * Adds `need` to what is owed and reads all of it, in the order the screen needs it. Stops at a stale reply (a
   * newer notice's load, started after this one, reads what is owed); the newest load clears what it read.
   */
  private async refresh(need: RefreshPlan): Promise<void> {
    this.owed = union(this.owed, need);
    const plan = { ...this.owed };
    const load = ++this.loads;
    const done = await this.guardedRead(plan);
    if (done && load === this.loads) this.owed = NOTHING;
  }

  /** Reads `plan`; false when overtaken. A request error is shown and counts as done (the next change retries). */
  private async guardedRead(plan: RefreshPlan): Promise<boolean> {
    try {
      return await this.read(plan);
    } catch (err) {
      this.fail(err);
      return true;
    }
  }

  private async read(plan: RefreshPlan): Promise<boolean> {
    if (plan.session) {
      const nav = this.nav;
      const session = await this.fetch('session/get', {});
      if (session === STALE) return false;
      this.session = session;
      this.error = undefined;
      this.changed('session');
      this.changed('banner');
      const branchId = chooseBranch(session, this.window.branchId);
      if (this.nav === nav && this.window.branchId === undefined) {
        // The first load without a target: the current branch, and the window as placed.
        this.window.branchId = branchId;
        this.changed('session');
      } else if (this.nav === nav && branchId !== this.window.branchId) {
        // The branch shown is gone: fall back, from its first turn.
        this.place(branchId, null, undefined);
        plan = { ...plan, turns: true, items: true, tables: true, latency: true, reviews: true, replay: false };
      }
    }
    if (plan.turns) {
      const keep = this.window;
      // Whether to select the last turn is decided as the read is issued: a read issued before a run ended holds
      // the turns as they were then, and its last turn is not the run's.
      const selectLast = this.selectLastTurn;
      const mine = ++this.turnReads;
      // Only as far as the list shows (and the selected turn); the list asks for more as it scrolls.
      const count = Math.max(VIEW_TURN_PAGE, Math.min(keep.turns.length, this.shownUpTo() + 1));
      const read = await this.readWindow(keep, count, selectLast ? Infinity : this.selected);
      if (read === STALE) return false;
      if (this.window !== keep) return true; // the user moved on; that navigation loads its own window
      // A newer read of the turns is on its way (it reads what is owed, this load's part included).
      if (mine !== this.turnReads) return false;
      const last = selectLast ? read.turns[read.turns.length - 1]?.turn : undefined;
      if (selectLast) this.selectLastTurn = false;
      this.applyWindow(read, last ?? this.selected, last !== undefined);
    }
    if (plan.latency && (await this.reloadLatency()) === STALE) return false;
    if (plan.reviews && (await this.reloadReviews()) === STALE) return false;
    // Before the items, so the cards are drawn with their badges; a turn of another branch than the marks' reads its own.
    if ((plan.replay || plan.items) && (await this.reloadReplay(plan.replay)) === STALE) return false;
    if (plan.items && (await this.reloadItems()) === STALE) return false;
    if (plan.tables && (await this.reloadTables()) === STALE) return false;
    if (plan.tables && (await this.reloadTools()) === STALE) return false;
    return true;
  }

  /** Starts a new window (navigation): nothing loaded yet, so the screen clears at once. */
  private place(branchId: string | undefined, startAfter: TurnWindow['startAfter'], turn: number | undefined): void {
    this.nav++;
    if (branchId !== this.window.branchId) {
      // Another branch's figures and verdicts would be drawn against this branch's turns until its own arrive.
      this.latency = undefined;
      this.latencyByTurn = new Map();
      this.reviews = undefined;
      this.reviewByTurn = new Map();
    }
    this.window = { branchId, startAfter, turns: [], nextAfterTurn: null, previousBeforeTurn: null };
    this.selected = turn;
    this.items = undefined;
    this.scrollNext = true;
    this.changed('session');
    this.changed('turns');
    this.changed('selection');
  }

  /**
   * Reads a window again from its start: at least `count` turns, and on until turn `until` is in it (Infinity: to
   * the end). A new window object, so loads into the old one can tell they were overtaken. A window placed at the
   * end is its last `count` turns, one request whatever the branch's length.
   */
  private async readWindow(w: TurnWindow, count: number, until: number | undefined): Promise<TurnWindow | Stale> {
    const branchId = w.branchId ?? this.branchId;
    if (w.startAfter === 'end') {
      const limit = Math.min(MAX_TURN_REQUEST, Math.max(VIEW_TURN_PAGE, count));
      const page = await this.fetch('turns/get', { branchId, afterTurn: null, beforeTurn: null, limit });
      if (page === STALE) return STALE;
      const first = page.turns[0];
      const startAfter = page.previousBeforeTurn !== null && first ? first.turn - 1 : null;
      return { branchId, startAfter, turns: page.turns, nextAfterTurn: null, previousBeforeTurn: page.previousBeforeTurn };
    }
    const turns: TurnView[] = [];
    const startAfter = w.startAfter;
    let after = startAfter;
    for (;;) {
      const limit = Math.min(MAX_TURN_REQUEST, Math.max(VIEW_TURN_PAGE, count - turns.length));
      const page = await this.fetch('turns/get', { branchId, afterTurn: after, limit });
      if (page === STALE) return STALE;
      turns.push(...page.turns);
      after = page.nextAfterTurn;
      const last = turns[turns.length - 1];
      const short = turns.length < count;
      const beforeUntil = until !== undefined && (last === undefined || last.turn < until);
      if (after === null || (!short && !beforeUntil)) break;
    }
    // A window from a cursor may have turns before it: its first turn is the cursor of the page before.
    const previousBeforeTurn = startAfter === null ? null : (turns[0]?.turn ?? startAfter + 1);
    return { branchId, startAfter, turns, nextAfterTurn: after, previousBeforeTurn };
  }

  private applyWindow(w: TurnWindow, wanted: number | undefined, scroll: boolean): void {
    this.window = w;
    const keep = wanted !== undefined && w.turns.some((t) => t.turn === wanted);
    const selected = keep ? wanted : w.turns[0]?.turn;
    if (selected !== this.selected) this.items = undefined;
    // A live update keeps the list where the user scrolled it, unless the selected turn is gone.
    this.scrollToSelection = scroll || this.scrollNext || !keep;
    this.scrollNext = false;
    this.selected = selected;
    this.changed('turns');
    this.changed('selection');
  }

  private async appendPage(w: TurnWindow, afterTurn: number, limit: number): Promise<void> {
    await this.guarded(async () => {
      const page = await this.fetch('turns/get', { branchId: w.branchId ?? this.branchId, afterTurn, limit });
      // Overtaken by a newer notice or a new window: the list redraws from that, and asks again if it needs more.
      if (page === STALE || this.window !== w || w.nextAfterTurn !== afterTurn) return;
      w.turns = w.turns.concat(page.turns);
      w.nextAfterTurn = page.nextAfterTurn;
      this.changed('turns');
    });
  }

  private async prependPage(w: TurnWindow, beforeTurn: number, limit: number): Promise<void> {
    await this.guarded(async () => {
      const page = await this.fetch('turns/get', { branchId: w.branchId ?? this.branchId, afterTurn: null, beforeTurn, limit });
      if (page === STALE || this.window !== w || w.previousBeforeTurn !== beforeTurn) return;
      w.turns = page.turns.concat(w.turns);
      w.previousBeforeTurn = page.previousBeforeTurn;
      // A refresh reads the window again from its new start.
      const first = w.turns[0];
      w.startAfter = page.previousBeforeTurn !== null && first ? first.turn - 1 : null;
      this.changed('turns');
    });
  }

  private async reloadItems(): Promise<void | Stale> {
    const turn = this.selected;
    const branchId = this.branchId;
    if (turn === undefined) {
      this.items = undefined;
      this.changed('items');
      return;
    }
    let items: ItemView[] | string | Stale;
    try {
      items = await this.fetch('turn/items', { branchId, turn });
    } catch (err) {
      items = errorMessage(err);
    }
    if (items === STALE) return STALE;
    if (this.selected !== turn || this.branchId !== branchId) return;
    this.items = items;
    this.changed('items');
  }

  private async reloadTools(): Promise<void | Stale> {
    if (!this.toolsOpen) return;
    const branchId = this.toolsScope === 'session' ? null : this.branchId;
    let tools: ToolsView | Stale;
    try {
      tools = await this.fetch('tools/get', { branchId }, (done) => {
        this.toolsProgress = { branchId, done };
        this.changed('tools');
      });
    } finally {
      if (this.toolsProgress?.branchId === branchId) {
        this.toolsProgress = undefined;
        this.changed('tools');
      }
    }
    if (tools === STALE) return STALE;
    // The user moved on (another scope or branch): that move loads its own totals.
    if (!this.toolsOpen || (this.toolsScope === 'session' ? null : this.branchId) !== branchId) return;
    this.tools = tools;
    this.changed('tools');
  }

  /**
   * The shown branch's latency. A trace store that cannot be read does not fail the view: the list shows no figures
   * and its heading says why.
   */
  private async reloadLatency(): Promise<void | Stale> {
    const branchId = this.branchId;
    let view: BranchLatencyView | undefined;
    try {
      const got = await this.fetch('branch/latency', { branchId });
      if (got === STALE) return STALE;
      view = got;
      this.latencyError = undefined;
    } catch (err) {
      this.latencyError = errorMessage(err);
    }
    if (this.branchId !== branchId) return; // the user moved on; that navigation reads its own
    this.latency = view;
    this.latencyByTurn = new Map((view?.turns ?? []).map((l) => [`${l.turn} ${l.branchId}`, l]));
    this.changed('latency');
  }

  /** The shown branch's reviews; a review store that cannot be read does not fail the view (`reviewsError`). */
  private async reloadReviews(): Promise<void | Stale> {
    const branchId = this.branchId;
    let view: BranchReviewsView | undefined;
    try {
      const got = await this.fetch('reviews/get', { branchId });
      if (got === STALE) return STALE;
      view = got;
      this.reviewsError = undefined;
    } catch (err) {
      this.reviewsError = errorMessage(err);
    }
    if (this.branchId !== branchId) return;
    this.reviews = view;
    this.reviewByTurn = new Map((view?.turns ?? []).map((r) => [`${r.turn} ${r.branchId}`, r]));
    this.changed('reviews');
  }

  private async reloadTables(): Promise<void | Stale> {
    if (!this.tablesOpen) return;
    const branchId = this.tablesScope === 'session' ? null : this.branchId;
    // Another branch or scope: its own first page, in the order the table was sorted by.
    if (branchId !== this.usageScope) {
      this.usageScope = branchId;
      if (this.usage.offset !== 0) this.usage = { ...this.usage, offset: 0 };
    }
    const usage = this.usage;
    const tables = await this.fetch('tables/get', { branchId, usage: { ...usage, limit: USAGE_PAGE } });
    if (tables === STALE) return STALE;
    // The user moved on (another scope, branch, page or order): that move loads its own page.
    if (!this.tablesOpen || (this.tablesScope === 'session' ? null : this.branchId) !== branchId || this.usage !== usage) return;
    // The host moves a page past the end (rows went away) back to the last one.
    if (tables.usage.offset !== usage.offset) this.usage = { ...usage, offset: tables.usage.offset };
    this.tables = tables;
    this.changed('tables');
  }
}
