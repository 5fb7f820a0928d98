/**
 * A branch's reviewed turns, read forward a page at a time (docs/datasets.md): what a dataset record needs of a turn —
 * the items before its user message (the context), the user message, and the turn's own items after it — without
 * holding the branch. Turns are asked for in increasing order, as the reviews are sorted; a walk reads only as far as
 * the turn asked for (and at most a page beyond), and keeps of what it has passed only the context a later record can
 * still use: the items before the branch's first user message (the agent's instructions, when stored) and the last
 * `contextTurns` turns (all of them when not given, so memory grows only with the context the records carry).
 */
import type { SessionReader } from '../inspector/sessionReader';

type Reader = Pick<SessionReader, 'getItemsPage'>;

/** Items read per page. */
export const ITEM_PAGE = 1000;

/** What a record is built from: the context, the turn's user message and the turn's items after it. */
export interface TurnParts {
  context: unknown[];
  /**
   * The same context as it was passed: the items before the first user message, then each earlier turn's items. The
   * arrays are the walk's own and never change once passed, so a record builder may convert each once and reuse it
   * for every later record whose context holds it.
   */
  contextChunks: readonly (readonly unknown[])[];
  user: unknown;
  answer: unknown[];
}

interface Item {
  turn: number | null;
  item: unknown;
}

/** Whether an item is a user message (what opens a turn). */
export const isUser = (i: unknown): boolean => (i as { role?: unknown } | null)?.role === 'user';

/**
 * One branch's turns in order. Files the SDKs write number a branch's turns in sequence order (docs/session-format.md
 * "Turns"), so a turn is found by walking forward and is gone once a later turn shows; a turn asked for after a later
 * one starts the walk over (the answer is the same, only slower).
 */
export class BranchTurns {
  private after: number | null = null;
  private ended = false;
  /**
   * Where turn numbers come from: the rows (`stored`), or counted from user messages (`counted`) for a plain session,
   * which records none — as the turn list counts them. `unknown` until a row says: a structured branch whose rows so far
   * carry no turn is held (`held`) until one does, and counted at its end if none ever does, as a whole-branch read did.
   */
  private numbering: 'unknown' | 'stored' | 'counted' = 'unknown';
  private counted = 0;
  private held: unknown[] = [];
  /** Items read and not yet passed, from `head` on. */
  private ahead: Item[] = [];
  private head = 0;
  /** Passed items: before the first user message, the last `contextTurns` whole turns, and the turn being passed. */
  private preamble: unknown[] = [];
  private done: unknown[][] = [];
  private current: unknown[] | null = null;
  private last: { turn: number; parts: TurnParts | null } | undefined;

  constructor(
    private readonly reader: Reader,
    readonly sessionId: string,
    readonly branchId: string,
    private readonly contextTurns = Infinity,
  ) {}

  /** Turn `turn`'s parts, or null when the branch has no such turn (or holds no user message for it). */
  async turn(turn: number): Promise<TurnParts | null> {
    if (this.last?.turn === turn) return this.last.parts;
    if (this.last && turn < this.last.turn) this.restart();
    let parts: TurnParts | null = null;
    for (let next = await this.peek(0); next && (next.turn === null || next.turn <= turn); next = await this.peek(0)) {
      if (next.turn !== turn || !isUser(next.item)) {
        this.pass();
        continue;
      }
      // The turn's items: up to the first item of another turn (items without one belong to the turn before them).
      let end = 1;
      for (let i = await this.peek(end); i && (i.turn === turn || i.turn === null); i = await this.peek(end)) end++;
      const answer: unknown[] = [];
      for (let k = 1; k < end; k++) answer.push(this.ahead[this.head + k]!.item);
      const chunks = this.contextChunks();
      parts = { context: chunks.flat(), contextChunks: chunks, user: next.item, answer };
      for (let k = 0; k < end; k++) this.pass();
      break;
    }
    this.last = { turn, parts };
    return parts;
  }

  private contextChunks(): (readonly unknown[])[] {
    const out: (readonly unknown[])[] = this.preamble.length > 0 ? [this.preamble] : [];
    const turns = this.done.length + (this.current ? 1 : 0);
    for (let t = Math.max(0, turns - this.contextTurns); t < turns; t++) out.push(t < this.done.length ? this.done[t]! : this.current!);
    return out;
  }

  private restart(): void {
    this.after = null;
    this.ended = false;
    this.numbering = 'unknown';
    this.counted = 0;
    this.held = [];
    this.ahead = [];
    this.head = 0;
    this.preamble = [];
    this.done = [];
    this.current = null;
    this.last = undefined;
  }

  /** The `i`th item not yet passed, reading pages as needed; undefined past the branch's end. */
  private async peek(i: number): Promise<Item | undefined> {
    while (this.head + i >= this.ahead.length && (await this.read()));
    return this.ahead[this.head + i];
  }

  /** Moves the next item into what has been passed, dropping the turns no context can reach any more. */
  private pass(): void {
    const { item } = this.ahead[this.head++]!;
    if (isUser(item)) {
      if (this.current) this.done.push(this.current);
      while (this.done.length > this.contextTurns) this.done.shift();
      this.current = [item];
    } else if (this.current) this.current.push(item);
    else this.preamble.push(item);
    // The passed part of the queue is dropped now and then, not item by item (which would copy the queue each time).
    if (this.head >= ITEM_PAGE && this.head * 2 >= this.ahead.length) {
      this.ahead = this.ahead.slice(this.head);
      this.head = 0;
    }
  }

  private count(item: unknown): number | null {
    return isUser(item) ? ++this.counted : this.counted === 0 ? null : this.counted;
  }

  /** Reads the next page; false when the branch has ended. */
  private async read(): Promise<boolean> {
    if (this.ended) return false;
    const page = await this.reader.getItemsPage(this.sessionId, this.branchId, { afterSequence: this.after, limit: ITEM_PAGE });
    for (const e of page.items) {
      // A plain session's rows have no structure row: nothing to wait for, its turns are counted.
      if (this.numbering === 'unknown' && e.structureId === null) this.numbering = 'counted';
      if (e.corrupt) continue;
      if (this.numbering === 'counted') this.ahead.push({ turn: this.count(e.item), item: e.item });
      else if (this.numbering === 'stored') this.ahead.push({ turn: e.userTurnNumber, item: e.item });
      else if (e.userTurnNumber === null) this.held.push(e.item);
      else {
        this.numbering = 'stored';
        for (const item of this.held) this.ahead.push({ turn: null, item });
        this.held = [];
        this.ahead.push({ turn: e.userTurnNumber, item: e.item });
      }
    }
    if (page.nextAfterSequence !== null) this.after = page.nextAfterSequence;
    else {
      this.ended = true;
      if (this.numbering === 'unknown') {
        this.numbering = 'counted';
        for (const item of this.held) this.ahead.push({ turn: this.count(item), item });
        this.held = [];
      }
    }
    return true;
  }
}

/**
 * The walks of the branches one group of reviews reads (one branch's reviews; a pairwise verdict's two branches), one
 * per branch. `clear` between groups, so a finished group's context is let go.
 */
export class BranchWalks {
  private readonly walks = new Map<string, BranchTurns>();

  constructor(
    private readonly reader: Reader,
    private readonly contextTurns = Infinity,
  ) {}

  turn(sessionId: string, branchId: string, turn: number): Promise<TurnParts | null> {
    const key = `${sessionId}\u0000${branchId}`;
    let walk = this.walks.get(key);
    if (!walk) this.walks.set(key, (walk = new BranchTurns(this.reader, sessionId, branchId, this.contextTurns)));
    return walk.turn(turn);
  }

  clear(): void {
    this.walks.clear();
  }
}
