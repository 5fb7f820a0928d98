/**
 * What a search reports (hits, the summary, the options every scan takes) and the one test that turns a decoded item
 * into a hit, shared by the session-file scan (searchDatabase.ts) and the server-store scan (searchRemote.ts).
 */
import { foldForSearch } from '../format/conversationText';
import { itemPreview } from '../../shared/itemText';
import { isOutputItem, itemFacts, matchText, matchesFilters, type ItemFacts, type SearchSnippet } from './itemMatch';
import { reviewOnly, type SearchQuery } from './searchQuery';
import { turnFilter, type TurnSet } from './reviewTurns';
import type { SearchIndexOption } from './toolIndex';

/** One item that matches. */
export interface SearchHit {
  sessionId: string;
  /** The branch that ran the turn (for a shared turn, the branch it was copied from). */
  branchId: string;
  /** `user_turn_number` (0 = before the first user message); for a plain session, the turn as the view counts it. */
  turn: number;
  /** The messages-table row id (a Redis list has none: the item's position). */
  messageId: number;
  /** The item's place on its branch: `sequence_number`, the message id in a plain session, the position on a server. */
  sequenceNumber: number;
  /** The display type (`user`, `assistant`, `function_call`, `function_call_output`, …). */
  itemType: string;
  role: string | null;
  /** The tool the item calls or answers, when known. */
  toolName: string | null;
  /** Why it is a failed tool call (see `failedReason`), or null. */
  failed: string | null;
  snippet: SearchSnippet;
  /** Other branches that share this turn (copied it when they were forked); empty when the turn is not shared. */
  sharedWith: string[];
}

export interface SearchSummary {
  hits: number;
  /**
   * The scan's progress in the units `onProgress` counts (structure row ids passed, then plain sessions' messages): for
   * a progress bar, not a count to show. A file's row ids have gaps (deleted branches) and a one-session search passes
   * every id, so it is not how many items were searched: `itemsSearched` is.
   */
  rowsScanned: number;
  /**
   * The stored items the search covered, each once (a session file's messages of the sessions searched; a server
   * store's rows read), when `countItems` asked for it and the scan ran to the end; null otherwise (not asked, or it
   * stopped first: cancelled, or at `maxHits`).
   */
  itemsSearched: number | null;
  /** Stopped by the signal. */
  cancelled: boolean;
  /** Stopped at `maxHits`. */
  truncated: boolean;
  elapsedMs: number;
}

export interface SearchOptions {
  signal?: AbortSignal;
  /** Called with each batch's hits, in store order (never with an empty list). */
  onHits(hits: SearchHit[]): void;
  /** Stop after this many hits (default 10,000). */
  maxHits?: number;
  /** Only this session (the conversation view's search box); default: every session. */
  sessionId?: string;
  /** Called after each batch with the rows read so far and the total to read (for a progress bar). */
  onProgress?(rowsScanned: number, rowsTotal: number): void;
  /** The turns the query's review filters allow (`reviewTurnSet`); a query with review filters and no set finds nothing. */
  turns?: TurnSet;
  /**
   * Set the summary's `itemsSearched`, for an answer that shows it (the CLI, the query tools): one count of the
   * searched sessions' messages at the end (0.1 ms on the bench's file A, a tenth of a search naming 100 turns there).
   */
  countItems?: boolean;
  /**
   * The folder of the search's indexes of tool items (toolIndex.ts), for `tool:` and `is:failed` on session files:
   * made or brought up to the file's messages first, then used to skip what those filters cannot match. Without it
   * (or when it cannot be used: `onProblem` says why) the scan reads what it reads without one; the hits are the same.
   */
  index?: SearchIndexOption;
}

export const DEFAULT_MAX_HITS = 10_000;

/**
 * A scan's running summary, and the one place that caps hits at `maxHits` and decides when a scan stops (the signal,
 * or the cap reached). The file scan and the server-store scan both report through it.
 */
export class ScanProgress {
  readonly summary: SearchSummary = { hits: 0, rowsScanned: 0, itemsSearched: null, cancelled: false, truncated: false, elapsedMs: 0 };
  private readonly started = performance.now();
  private readonly maxHits: number;

  constructor(private readonly options: SearchOptions) {
    this.maxHits = options.maxHits ?? DEFAULT_MAX_HITS;
  }

  /** Sends `hits` on, cut to what is left under `maxHits` (marking the summary truncated when the cap is reached). */
  emit(hits: SearchHit[]): void {
    if (hits.length === 0) return;
    const room = this.maxHits - this.summary.hits;
    const sent = hits.length > room ? hits.slice(0, room) : hits;
    this.summary.hits += sent.length;
    if (sent.length > 0) this.options.onHits(sent);
    if (this.summary.hits >= this.maxHits) this.summary.truncated = true;
  }

  /** Whether the scan should stop: cancelled (noted in the summary) or the cap reached. */
  stopped(): boolean {
    if (this.options.signal?.aborted) this.summary.cancelled = true;
    return this.summary.cancelled || this.summary.truncated;
  }

  /**
   * The summary at the end: a cancel that came during the last batch is counted, the time is taken. `countItems` gives
   * `itemsSearched` when the options ask for it and the scan was not stopped (called only then: it reads the store).
   */
  finish(countItems?: () => number): SearchSummary {
    if (!this.stopped() && countItems && this.options.countItems) this.summary.itemsSearched = countItems();
    this.summary.elapsedMs = performance.now() - this.started;
    return this.summary;
  }
}

/** Where a hit is, as the scan that found it knows it. */
export type HitPlace = Pick<SearchHit, 'branchId' | 'turn' | 'sequenceNumber' | 'itemType'>;

/**
 * The exact test of decoded items against one query. It remembers, per session, the call ids of the queried tools'
 * calls, so `tool:NAME` also finds their outputs (which carry only the call id) when they come later in the scan.
 */
export class HitTester {
  private readonly toolCalls = new Map<string, Map<string, string>>();
  private readonly inTurns: (sessionId: string, branchId: string, turn: number) => boolean;
  private readonly usersOnly: boolean;
  /**
   * Why the last `test` found no hit, for a scan that sees an item on several rows (a branch's copies of its parent's
   * turns, spec §8.3) and may skip rows whose item cannot match there either: `item` — no row of this item can match
   * (its text, role or failure, or its own tool name, decided it); `name` — only its tool name failed, and the item
   * names none itself, nor did the row: another row with a stored tool name, or its call (`lastCallId`) learned later,
   * may match; `row` — the row decided it (its stored tool name, its branch and turn for review filters).
   */
  lastRejection: 'item' | 'name' | 'row' = 'row';
  lastCallId: string | null = null;
  /** Called when a call of a queried tool is learned (so its outputs match from now on). */
  onLearn?: (callId: string) => void;

  constructor(
    private readonly query: SearchQuery,
    turns?: TurnSet,
  ) {
    // Review filters without the turns they allow would match every turn: match none instead.
    this.inTurns = turnFilter(query.review && !turns ? { mode: 'only', keys: [] } : turns);
    this.usersOnly = reviewOnly(query);
  }

  /**
   * The hit for `item`, or null. `storedToolName` is the tool name a store recorded beside the item (spec §6), if
   * any; `callName` names the call an output answers, for showing it (asked only for a hit that still has no name).
   */
  test(
    sessionId: string,
    item: unknown,
    messageId: number,
    storedToolName: string | null,
    where: () => HitPlace,
    callName: (callId: string) => string | null,
  ): SearchHit | null {
    const facts: ItemFacts = itemFacts(item);
    const ownName = facts.toolName;
    // A name from the row makes every outcome the row's: another row of the item may carry another name.
    const rowNamed = facts.toolName === null && storedToolName !== null && facts.role === null;
    if (rowNamed) facts.toolName = storedToolName;
    if (facts.callId !== null) {
      // Only an item with a call id asks for its session's calls: a message never does (a session's map looked up for
      // each of a role's 100,000 hits over the bench's file B, 2,000 sessions, was 3 % of the scan).
      const calls = this.callsOf(sessionId);
      if (facts.toolName !== null && !isOutputItem(item)) {
        if (this.query.tools.includes(foldForSearch(facts.toolName))) {
          calls.set(facts.callId, facts.toolName);
          this.onLearn?.(facts.callId);
        }
      } else if (facts.toolName === null) {
        facts.toolName = calls.get(facts.callId) ?? null;
      }
    }
    this.lastCallId = facts.callId;
    const itemDecided = rowNamed ? 'row' : 'item';
    if (!matchesFilters(this.query, facts)) {
      const nameOnly = matchesFilters({ ...this.query, tools: [] }, facts);
      this.lastRejection = !nameOnly || ownName !== null ? itemDecided : rowNamed ? 'row' : 'name';
      return null;
    }
    this.lastRejection = itemDecided;
    if (this.usersOnly && facts.role !== 'user') return null;
    let place: HitPlace | undefined;
    if (this.query.review) {
      place = where();
      if (!this.inTurns(sessionId, place.branchId, place.turn)) {
        this.lastRejection = 'row';
        return null;
      }
    }
    const snippet = matchText(this.query, item, () => itemPreview(item));
    if (snippet === null) return null;
    if (facts.toolName === null && facts.callId !== null) facts.toolName = callName(facts.callId);
    // The place's fields one by one, in the order a spread gave them (`--json` prints them so): a spread copied a
    // second object for each of a hit-heavy query's 100,000 hits.
    const at = place ?? where();
    return {
      sessionId,
      branchId: at.branchId,
      turn: at.turn,
      sequenceNumber: at.sequenceNumber,
      itemType: at.itemType,
      messageId,
      role: facts.role,
      toolName: facts.toolName,
      failed: facts.failed,
      snippet,
      sharedWith: [],
    };
  }

  private callsOf(sessionId: string): Map<string, string> {
    let map = this.toolCalls.get(sessionId);
    if (!map) this.toolCalls.set(sessionId, (map = new Map()));
    return map;
  }
}
