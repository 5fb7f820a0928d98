/**
 * The conversation view's state and its loading, without the DOM (docs/webview-protocol.md#change-notices). The
 * view owns the selection (branch, turn, table tab) and asks the host for windows of data: the session's branch
 * list, a window of the selected branch's turns, the selected turn's items, the open table. On a change notice it
 * re-requests only those of them the notice touches, and a reply to a request issued before a newer notice is
 * dropped, so a slow stale reply never overwrites newer data (the newer notice's own requests bring it).
 */
import { errorMessage } from '../../src/shared/errorMessage';
import { MAX_TURN_REQUEST, VIEW_TURN_PAGE } from '../../src/shared/pageSizes';
import type { ChangeKind, ChangeNotice, RequestMethod, Requests } from '../../src/shared/protocol';
import type { ItemView, RevealView, SessionView, TablesView, TurnView } from '../../src/shared/viewModels';

/** The messenger's `request`, passed in so the model runs (and is tested) without a webview. */
export type RequestFn = <M extends RequestMethod>(method: M, params: Requests[M]['params']) => Promise<Requests[M]['result']>;

/** What the renderer redraws when the model tells it. */
export type ViewPart = 'session' | 'turns' | 'selection' | 'items' | 'tables' | 'banner';

/** Which of the view's windows a notice makes it re-request. */
export interface RefreshPlan {
  session: boolean;
  turns: boolean;
  items: boolean;
  tables: boolean;
}

export function refreshPlan(what: readonly ChangeKind[], tablesOpen: boolean): RefreshPlan {
  const all = what.includes('database');
  const turns = all || what.includes('turns');
  return {
    session: all || what.includes('branches') || what.includes('current-branch'),
    turns,
    items: turns,
    // The tables list own turns without usage, which depends on the turns and on where branches forked.
    tables: tablesOpen && (turns || what.includes('usage') || what.includes('branches')),
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

/** The loaded part of a branch's turns: from after `startAfter` up to `nextAfterTurn` (null: to the end). */
interface TurnWindow {
  branchId: string | undefined;
  startAfter: number | null;
  turns: TurnView[];
  nextAfterTurn: number | null;
}

const STALE = Symbol('stale');
type Stale = typeof STALE;

export class ConversationModel {
  /** The newest notice seen; requests issued before it are stale. */
  private seq = 0;
  /** Counts explicit navigations, so a branch list requested before one cannot move the view off its target. */
  private nav = 0;
  private started = false;
  private window: TurnWindow = { branchId: undefined, startAfter: null, turns: [], nextAfterTurn: null };
  private selected: number | undefined;
  private pageInFlight: Promise<void> | undefined;
  private selectLastTurn = false;
  private tablesOpen = false;
  private runId: string | undefined;

  session: SessionView | undefined;
  items: ItemView[] | string | undefined;
  tables: TablesView | undefined;
  tablesScope: 'branch' | 'session' = 'branch';
  /** The last request error, shown until the next branch list arrives. */
  error: string | undefined;
  /** Whether the list should scroll to the selected turn (after navigation, not after a live update). */
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
    this.place(reveal?.branchId ?? undefined, reveal?.turn ?? null);
    this.started = true;
    await this.refresh(['database']);
  }

  /** A change notice from the host: re-request what it touches, unless a newer one was already seen. */
  async noticeReceived(notice: ChangeNotice): Promise<void> {
    if (notice.seq <= this.seq) return;
    this.seq = notice.seq;
    // Before the handshake answers, the first load is still to come and reads everything anyway.
    if (this.started) await this.refresh(notice.what);
  }

  /** A tree command asked to show a branch (null: the one shown) and turn. */
  async reveal(reveal: RevealView): Promise<void> {
    this.place(reveal.branchId ?? this.branchId, reveal.turn);
    await this.loadPlaced(reveal.turn ?? undefined);
  }

  /** Shows a branch from its first turn, or from the start up to `keepTurn` (moving between branches at a fork). */
  async showBranch(branchId: string, keepTurn?: number): Promise<void> {
    this.place(branchId, null);
    await this.loadPlaced(keepTurn);
  }

  async selectTurn(turn: number, scroll = false): Promise<void> {
    if (!this.window.turns.some((t) => t.turn === turn)) return;
    this.selected = turn;
    this.items = undefined;
    this.scrollToSelection = scroll;
    this.changed('selection');
    await this.reloadItems();
  }

  /** Loads the next page of the shown branch; one page at a time, a second caller waits for the page in flight. */
  async loadMore(limit = VIEW_TURN_PAGE): Promise<void> {
    while (this.pageInFlight) await this.pageInFlight;
    const w = this.window;
    if (w.nextAfterTurn === null) return;
    this.pageInFlight = this.appendPage(w, w.nextAfterTurn, limit).finally(() => (this.pageInFlight = undefined));
    await this.pageInFlight;
  }

  /** Loads the rest of the branch and selects its last turn (the End key). */
  async loadToEnd(): Promise<void> {
    const w = this.window;
    while (this.window === w && w.nextAfterTurn !== null) await this.loadMore(MAX_TURN_REQUEST);
    const last = this.window.turns[this.window.turns.length - 1];
    if (last) await this.selectTurn(last.turn, true);
  }

  /** The table tab was opened or closed, or its scope changed. */
  async setTables(open: boolean, scope: 'branch' | 'session' = this.tablesScope): Promise<void> {
    this.tablesOpen = open;
    this.tablesScope = scope;
    await this.guarded(() => this.reloadTables());
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

  async startRun(input: string): Promise<void> {
    this.runId = (await this.request('run/start', { branchId: this.branchId, input })).runId;
  }

  async stopRun(): Promise<void> {
    if (this.runId) await this.request('run/stop', { runId: this.runId });
  }

  /** A run ended: show its turn (the last one) as soon as the turns are read again. */
  async runEnded(): Promise<void> {
    this.selectLastTurn = true;
    await this.refresh(['turns']);
  }

  // ---- loading ----------------------------------------------------------------------------------------------

  /** Requests through the sequence guard: STALE when a newer notice arrived meanwhile (its refresh reads again). */
  private async fetch<M extends RequestMethod>(method: M, params: Requests[M]['params']): Promise<Requests[M]['result'] | Stale> {
    const issuedAt = this.seq;
    try {
      const result = await this.request(method, params);
      return this.seq === issuedAt ? result : STALE;
    } catch (err) {
      if (this.seq !== issuedAt) return STALE;
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

  /** Re-requests the windows `what` touches, in the order the screen needs them. */
  private async refresh(what: readonly ChangeKind[]): Promise<void> {
    const plan = refreshPlan(what, this.tablesOpen);
    await this.guarded(async () => {
      let moved = false;
      if (plan.session) {
        const nav = this.nav;
        const session = await this.fetch('session/get', {});
        if (session === STALE) return;
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
          this.place(branchId, null);
          moved = true;
        }
      }
      if (plan.turns || moved) {
        const keep = this.window;
        // Only as far as the list shows (and the selected turn); the list asks for more as it scrolls.
        const count = Math.max(VIEW_TURN_PAGE, Math.min(keep.turns.length, this.shownUpTo() + 1));
        const read = await this.readWindow(keep, count, this.selectLastTurn ? Infinity : this.selected);
        if (read === STALE || this.window !== keep) return;
        const last = this.selectLastTurn ? read.turns[read.turns.length - 1]?.turn : undefined;
        this.selectLastTurn = false;
        this.applyWindow(read, last ?? this.selected, last !== undefined);
      }
      if (plan.items || moved) if ((await this.reloadItems()) === STALE) return;
      if (plan.tables || moved) await this.reloadTables();
    });
  }

  /** Starts a new window (navigation): nothing loaded yet, so the screen clears at once. */
  private place(branchId: string | undefined, turn: number | null): void {
    this.nav++;
    this.window = { branchId, startAfter: startAfterFor(turn), turns: [], nextAfterTurn: null };
    this.selected = turn ?? undefined;
    this.items = undefined;
    this.changed('session');
    this.changed('turns');
    this.changed('selection');
  }

  /** Loads the placed window (until `turn` is in it), selects `turn` or the first turn, then its items and tables. */
  private async loadPlaced(turn: number | undefined): Promise<void> {
    const placed = this.window;
    await this.guarded(async () => {
      const read = await this.readWindow(placed, VIEW_TURN_PAGE, turn);
      if (read === STALE || this.window !== placed) return;
      this.applyWindow(read, turn, true);
      if ((await this.reloadItems()) === STALE) return;
      await this.reloadTables();
    });
  }

  /**
   * Reads a window again from its start: at least `count` turns, and on until turn `until` is in it (Infinity: to
   * the end). A new window object, so loads into the old one can tell they were overtaken.
   */
  private async readWindow(w: TurnWindow, count: number, until: number | undefined): Promise<TurnWindow | Stale> {
    const branchId = w.branchId ?? this.branchId;
    const turns: TurnView[] = [];
    let after = w.startAfter;
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
    return { branchId, startAfter: w.startAfter, turns, nextAfterTurn: after };
  }

  private applyWindow(w: TurnWindow, wanted: number | undefined, scroll: boolean): void {
    this.window = w;
    const keep = wanted !== undefined && w.turns.some((t) => t.turn === wanted);
    const selected = keep ? wanted : w.turns[0]?.turn;
    if (selected !== this.selected) this.items = undefined;
    // A live update keeps the list where the user scrolled it, unless the selected turn is gone.
    this.scrollToSelection = scroll || !keep;
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

  private async reloadTables(): Promise<void> {
    if (!this.tablesOpen) return;
    const branchId = this.tablesScope === 'session' ? null : this.branchId;
    const tables = await this.fetch('tables/get', { branchId });
    if (tables === STALE || !this.tablesOpen) return;
    if ((this.tablesScope === 'session' ? null : this.branchId) !== branchId) return;
    this.tables = tables;
    this.changed('tables');
  }
}
