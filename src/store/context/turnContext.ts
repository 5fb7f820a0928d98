/**
 * What the model saw in a turn (docs/context.md): each model request's input, item by item with token counts, and the
 * stored items outside the window. **Recorded** when the trace store holds the inputs (our runs write them on each
 * model span; agent commands and OTLP tracers may send them: recordedInput.ts); **reconstructed** otherwise, from the
 * session's own rules: the branch's items before the turn (the last `limit` of them when the session's limit is
 * known), the turn's user message, and the turn's items before each model request (a turn that called tools made a
 * request after each batch of outputs). One builder for the view, the CLI and the `turn_context` tool.
 */
import { turnOrigin } from '../../shared/turnOrigin';
import {
  CONTEXT_MAX_ITEMS,
  CONTEXT_MAX_OUTSIDE,
  CONTEXT_MAX_REQUESTS,
  type ContextItemView,
  type ContextNote,
  type ContextRequestView,
  type KindShare,
  type OutsideItemView,
  type OutsideReason,
  type TurnContextView,
} from '../../shared/protocol/contextViews';
import type { BranchNode, DecodedItemEntry, ItemEntry } from '../inspector/inspectorTypes';
import type { MaybePromise, SessionReader } from '../inspector/sessionReader';
import { InvalidArgumentError } from '../errors';
import { recordedInputOf, type RecordedInput } from '../traces/recordedInput';
import type { StoredSpan, TurnQuery } from '../traces/traceStore';
import { turnWindows } from '../traces/turnWindows';
import { countedItem, instructionsItem, toolsItem, type CountedItem } from './contextItems';
import { encodingFor, estimateTokens, tokenCounter, type TokenCount } from './tokenCounter';

/** What the builder reads of a session store. */
export type ContextReader = Pick<
  SessionReader,
  'getBranchTree' | 'getTurnItems' | 'getItemsPage' | 'getTurnsPage' | 'getTurnUsage' | 'getTurnSummaries'
>;

/** What it reads of a trace store (the CLI's `TraceStore`, or the extension's in its store worker). */
export interface ContextSpanSource {
  spansOfTurn(query: TurnQuery): MaybePromise<StoredSpan[]>;
}

export interface TurnContextArgs {
  sessionId: string;
  branchId: string;
  turn: number;
  /** The session's `limit` (its `SessionSettings`), when known: the file does not record it. */
  limit?: number | null;
  /** The model, when known; else the one the turn's spans name. */
  model?: string | null;
}

/**
 * Characters counted exactly in one answer, newest items first: about 10 ms of tokenizing (30 MB/s). The older rest is
 * estimated (four characters a token) and the answer says so, so a turn deep in a long session answers quickly.
 */
export const EXACT_TOKEN_CHARS = 256 * 1024;
/** Items read per page of the history before the turn. */
const PAGE = 2000;
/**
 * Items of the history read at most beyond what the answer needs (the session's limit and the outside items it
 * lists): older ones are counted, and their tokens estimated from the ones read (docs/context.md, "Limits").
 */
export const HISTORY_READ_ITEMS = 1000;

/** A request's items before they are counted: each with the stored item it is, when it is one. */
interface PendingRequest {
  items: { c: CountedItem; sequence: number | null }[];
  model: string | null;
  inputTokens: number | null;
  cachedTokens: number | null;
  cut: boolean;
}

const decoded = (e: ItemEntry): e is DecodedItemEntry => !e.corrupt;

/** The index of the last compaction item of a list (0 when there is none). */
function lastCompaction(items: readonly { c: CountedItem }[]): number {
  for (let i = items.length - 1; i >= 0; i--) if (items[i]!.c.kind === 'compaction') return i;
  return 0;
}

/** The branch's items after `afterSequence` (null: from the first) and before `beforeSequence`, in order. */
async function itemsBetween(
  reader: ContextReader,
  sessionId: string,
  branchId: string,
  afterSequence: number | null,
  beforeSequence: number,
): Promise<DecodedItemEntry[]> {
  const out: DecodedItemEntry[] = [];
  let after = afterSequence;
  for (;;) {
    const page = await reader.getItemsPage(sessionId, branchId, { afterSequence: after, limit: PAGE });
    for (const e of page.items) {
      if (e.sequenceNumber >= beforeSequence) return out;
      if (decoded(e)) out.push(e);
    }
    if (page.nextAfterSequence === null) return out;
    after = page.nextAfterSequence;
  }
}

/**
 * The newest items of the history before `turn` (at least `want` of them, whole turns), and how many older ones there
 * are: a turn deep in a long session reads its recent history, not all of it. The older items are counted from the
 * side of the branch with fewer turns: the turns before the ones read, summed, or the branch's row count (kept, not
 * counted) less the turns from `turn` on and the turns read (one range of the branch's index each); a plain session (no
 * structure rows) is read whole.
 */
async function historyTail(
  reader: ContextReader,
  sessionId: string,
  branch: Pick<BranchNode, 'branchId' | 'messageCount' | 'userTurns' | 'userTurnsAtLeast'>,
  turn: number,
  turnRows: number,
  beforeSequence: number,
  want: number,
): Promise<{ items: DecodedItemEntry[]; older: number }> {
  const { branchId } = branch;
  const all = async () => ({ items: await itemsBetween(reader, sessionId, branchId, null, beforeSequence), older: 0 });
  // Each turn holds at least its user message: `want` turns back hold at least `want` items.
  const recent = await reader.getTurnSummaries(sessionId, branchId, Math.max(0, turn - want), turn - 1);
  if (recent.length === 0 || recent[0]!.turn === 0) return all();
  let kept = 0;
  let from = turn - 1;
  for (let i = recent.length - 1; i >= 0 && kept < want; i--) {
    kept += recent[i]!.itemCount;
    from = recent[i]!.turn;
  }
  if (kept < want) return all();
  // The older items' count from whichever side of the branch has fewer turns to sum (a summary is a row per turn:
  // turn 1,000 of a 100,000-turn branch would otherwise read 99,000 of them, 30 MB of rows, to learn one number).
  const sum = (rows: readonly { itemCount: number }[]) => rows.reduce((n, x) => n + x.itemCount, 0);
  let older: number;
  if (!branch.userTurnsAtLeast && from - 1 <= branch.userTurns - turn) {
    older = sum(await reader.getTurnSummaries(sessionId, branchId, 0, from - 1));
  } else {
    const later =
      turn < Number.MAX_SAFE_INTEGER ? await reader.getTurnSummaries(sessionId, branchId, turn + 1, Number.MAX_SAFE_INTEGER) : [];
    older = branch.messageCount - turnRows - sum(later) - kept;
  }
  const start = (await reader.getTurnsPage(sessionId, branchId, { afterTurn: from - 1, limit: 1 })).turns[0];
  if (!start || start.turn !== from || older < 0) return all();
  const items = await itemsBetween(reader, sessionId, branchId, start.sequenceNumber - 1, beforeSequence);
  return { items, older };
}

/** Whether an item is one the model produced (a request's output), not one sent to it (a user message, a tool output). */
function isModelOutput(c: CountedItem): boolean {
  return c.kind === 'assistant' || c.kind === 'tool-call' || c.kind === 'reasoning' || c.kind === 'compaction';
}

/**
 * The turn's items split at its model requests: request k's input holds the turn's items before the k-th response.
 * A response's items (reasoning, messages, calls) follow the items sent; a model output after an item sent starts the
 * next response.
 */
export function requestPrefixes(turnItems: readonly CountedItem[]): number[] {
  const starts = [1];
  let sawSent = false;
  for (let i = 1; i < turnItems.length; i++) {
    const out = isModelOutput(turnItems[i]!);
    if (out && sawSent && i > 1) starts.push(i);
    if (out) sawSent = false;
    else sawSent = true;
  }
  // The first response begins right after the user message (index 1); each later one after the outputs it answered.
  return [...new Set(starts)];
}

export async function buildTurnContext(
  reader: ContextReader,
  traces: ContextSpanSource | undefined,
  args: TurnContextArgs,
): Promise<TurnContextView> {
  const { sessionId, branchId, turn } = args;
  if (!Number.isInteger(turn) || turn < 1) throw new InvalidArgumentError(`turn must be a whole number from 1, got ${String(turn)}`);
  const tree = await reader.getBranchTree(sessionId);
  const ranOn = turnOrigin(tree, branchId, turn);
  const turnRowEntries = await reader.getTurnItems(sessionId, branchId, turn);
  const turnRows = turnRowEntries.length;
  const turnEntries = turnRowEntries.filter(decoded);
  if (turnEntries.length === 0) throw new InvalidArgumentError(`branch '${branchId}' of session '${sessionId}' has no turn ${turn}`);
  const page = await reader.getTurnsPage(sessionId, ranOn, { afterTurn: turn > 1 ? turn - 1 : null, limit: 2 });
  const window = turnWindows(page.turns).get(turn);
  const spans = traces ? await traces.spansOfTurn({ sessionId, branchId: ranOn, turnNumber: turn, ...(window ? { window } : {}) }) : [];
  const usageRow = (await reader.getTurnUsage(sessionId, ranOn, turn, turn)).find((r) => r.turn === turn) ?? null;
  const modelSpans = spans.filter((s) => s.kind === 'model').sort((a, b) => a.startUs - b.startUs);
  const recorded: { span: StoredSpan; input: RecordedInput }[] = [];
  let unreadable = 0;
  for (const span of modelSpans) {
    const input = recordedInputOf(span.attributes, span.truncated);
    if (input === 'unreadable') unreadable++;
    else if (input) recorded.push({ span, input });
  }
  // The history the answer needs: what a recorded input can match, or the window and the outside items listed.
  const limit = args.limit ?? null;
  const want =
    recorded.length > 0
      ? Math.max(HISTORY_READ_ITEMS, ...recorded.map((r) => r.input.items.length + CONTEXT_MAX_OUTSIDE))
      : limit !== null
        ? limit + CONTEXT_MAX_OUTSIDE
        : HISTORY_READ_ITEMS;
  const node = tree.find((b) => b.branchId === branchId);
  const history = node
    ? await historyTail(reader, sessionId, node, turn, turnRows, turnEntries[0]!.sequenceNumber, want)
    : { items: await itemsBetween(reader, sessionId, branchId, null, turnEntries[0]!.sequenceNumber), older: 0 };

  const notes: ContextNote[] = [];
  if (unreadable > 0) notes.push({ code: 'recorded-unreadable', requests: unreadable });
  const historyCounted = history.items.map((e) => ({ c: countedItem(e.item, e.toolName), sequence: e.sequenceNumber }));
  const turnCounted = turnEntries.map((e) => ({ c: countedItem(e.item, e.toolName), sequence: e.sequenceNumber }));
  /** Older items not read: counted outside (`outsideOlder`), or in every request's window (`olderInWindow`). */
  let outsideOlder = 0;
  let olderInWindow = 0;
  const model = args.model ?? modelSpans.find((s) => s.model)?.model ?? null;
  const { encoding, approximate: guessed } = encodingFor(model);
  if (guessed) notes.push({ code: 'unknown-model', model });

  let pending: PendingRequest[];
  let outside: { c: CountedItem; sequence: number; reason: OutsideReason }[];
  const source: TurnContextView['source'] = recorded.length > 0 ? 'recorded' : 'reconstructed';
  if (source === 'recorded') {
    // Each recorded item is matched to the stored item it is (the newest stored one with its key), for the view's links.
    const stored = new Map<string, number>();
    for (const x of [...historyCounted, ...turnCounted]) stored.set(x.c.key, x.sequence);
    const sentKeys = new Set<string>();
    pending = recorded.map(({ span, input }) => {
      const items: PendingRequest['items'] = [];
      if (input.instructions) items.push({ c: instructionsItem(input.instructions), sequence: null });
      if (input.tools && input.tools.length > 0) items.push({ c: toolsItem(input.tools), sequence: null });
      // An output names no tool: its call, earlier in the same input, does.
      const names = new Map<string, string>();
      for (const raw of input.items) {
        const r = raw as { call_id?: unknown; name?: unknown };
        if (typeof r.call_id === 'string' && typeof r.name === 'string') names.set(r.call_id, r.name);
      }
      for (const raw of input.items) {
        const callId = (raw as { call_id?: unknown }).call_id;
        const c = countedItem(raw, typeof callId === 'string' ? (names.get(callId) ?? null) : null);
        sentKeys.add(c.key);
        items.push({ c, sequence: stored.get(c.key) ?? null });
      }
      return { items, model: span.model, inputTokens: span.inputTokens, cachedTokens: span.cachedTokens, cut: input.cut };
    });
    const firstSent = historyCounted.find((x) => sentKeys.has(x.c.key))?.sequence ?? Number.POSITIVE_INFINITY;
    const lastCompaction = Math.max(
      -1,
      ...historyCounted.filter((x) => x.c.kind === 'compaction' && sentKeys.has(x.c.key)).map((x) => x.sequence),
    );
    // An input cut when it was recorded says nothing of the items older than what it kept: they are not called outside.
    const cut = recorded.some((r) => r.input.cut);
    outside = historyCounted
      .filter((x) => !sentKeys.has(x.c.key) && !(cut && x.sequence < firstSent))
      .map((x) => ({
        ...x,
        reason: (x.sequence < lastCompaction ? 'compaction' : x.sequence < firstSent ? 'limit' : 'not-sent') as OutsideReason,
      }));
    // The items older than those read were not sent either (the read covers every recorded item).
    if (!cut) outsideOlder = history.older;
  } else {
    notes.push({ code: 'no-instructions' });
    // The SDKs read the session once at the turn's start (`getItems()`, the last `limit` items), then add the turn's
    // items in memory: the limit cuts the history, never the turn.
    const from = limit !== null && limit > 0 ? Math.max(0, historyCounted.length - limit) : limit === 0 ? historyCounted.length : 0;
    if (limit !== null) notes.push({ code: 'limit', limit });
    const limited = historyCounted.slice(from);
    // A compaction item stands for everything before it: the runner sends the history from the last one on (what the
    // loopback server receives: test/unit/store/context/turnContext.loopback.test.ts).
    const compactionAt = lastCompaction(limited);
    const windowItems = limited.slice(compactionAt);
    // The items not read are older than every one read: outside with a limit (which the read covers) or a compaction
    // item, otherwise in the window, their tokens estimated.
    if (limit !== null || compactionAt > 0 || limited[0]?.c.kind === 'compaction') outsideOlder = history.older;
    else olderInWindow = history.older;
    outside = [
      ...historyCounted.slice(0, from).map((x) => ({ ...x, reason: 'limit' as OutsideReason })),
      ...limited.slice(0, compactionAt).map((x) => ({ ...x, reason: 'compaction' as OutsideReason })),
    ];
    const prefixes = requestPrefixes(turnCounted.map((x) => x.c));
    pending = prefixes.map((n) => {
      // A compaction item produced within the turn (the server compacted mid-turn) cuts the later requests' input too.
      const items = [...windowItems, ...turnCounted.slice(0, n)];
      return { items: items.slice(lastCompaction(items)), model: null, inputTokens: null, cachedTokens: null, cut: false };
    });
    if (usageRow?.requests != null && usageRow.requests > pending.length)
      notes.push({ code: 'requests-differ', usageRequests: usageRow.requests, shown: pending.length });
  }
  if (pending.some((r) => r.items.some((x) => x.c.kind === 'compaction'))) notes.push({ code: 'compaction' });
  pending = pending.slice(0, CONTEXT_MAX_REQUESTS);

  const count = await countsFor(encoding, pending, outside);
  const estimatedItems = count.estimated + olderInWindow;
  if (estimatedItems > 0) notes.push({ code: 'estimated', items: estimatedItems });
  // The unread older items' tokens: the history read's average per item, shared among the kinds as theirs is.
  const readTokens = historyCounted.reduce((n, x) => n + count.of(x.c.text), 0);
  const olderTokens = historyCounted.length > 0 ? Math.round((readTokens / historyCounted.length) * olderInWindow) : 0;
  const requests: ContextRequestView[] = pending.map((r, i) => {
    const shares = new Map<string, KindShare>();
    let total = 0;
    for (const x of r.items) {
      const t = count.of(x.c.text);
      total += t;
      const s = shares.get(x.c.kind) ?? { kind: x.c.kind, tokens: 0, items: 0 };
      s.tokens += t;
      s.items++;
      shares.set(x.c.kind, s);
    }
    if (olderInWindow > 0 && total > 0) {
      const scale = olderTokens / total;
      for (const s of shares.values()) s.tokens += Math.round(s.tokens * scale);
      total += olderTokens;
    }
    const listed = r.items.slice(-CONTEXT_MAX_ITEMS);
    const items: ContextItemView[] = listed.map((x) => ({
      kind: x.c.kind,
      ...x.c.describe(),
      tokens: count.of(x.c.text),
      sequence: x.sequence,
    }));
    return {
      index: i + 1,
      items,
      omittedItems: r.items.length + olderInWindow - listed.length,
      itemCount: r.items.length + olderInWindow,
      totalTokens: total,
      shares: [...shares.values()].sort((a, b) => b.tokens - a.tokens),
      model: r.model,
      inputTokens: r.inputTokens,
      cachedTokens: r.cachedTokens,
      cut: r.cut,
    };
  });
  const outsideViews: OutsideItemView[] = outside.slice(-CONTEXT_MAX_OUTSIDE).map((x) => ({
    kind: x.c.kind,
    ...x.c.describe(),
    tokens: count.of(x.c.text),
    sequence: x.sequence,
    reason: x.reason,
  }));
  return {
    source,
    sessionId,
    branchId,
    ranOn,
    turn,
    requests,
    outside: outsideViews,
    outsideCount: outside.length + outsideOlder,
    encoding,
    model,
    approximate: guessed || estimatedItems > 0,
    usage: usageRow ? { requests: usageRow.requests, inputTokens: usageRow.inputTokens, cachedTokens: usageRow.cachedTokens } : null,
    notes,
  };
}

/**
 * The token counts of every text the answer shows, exact for the newest `EXACT_TOKEN_CHARS` characters (the last
 * request's items from its end, then the outside items from the newest), estimated for the rest.
 */
async function countsFor(
  encoding: Parameters<typeof tokenCounter>[0],
  requests: readonly PendingRequest[],
  outside: readonly { c: CountedItem }[],
): Promise<{ of: (text: string) => number; estimated: number }> {
  const counts = new Map<string, number>();
  const order: string[] = [];
  for (let r = requests.length - 1; r >= 0; r--) {
    const items = requests[r]!.items;
    for (let i = items.length - 1; i >= 0; i--) order.push(items[i]!.c.text);
  }
  for (let i = outside.length - 1; i >= 0; i--) order.push(outside[i]!.c.text);
  let budget = EXACT_TOKEN_CHARS;
  let estimated = 0;
  let counter: TokenCount | undefined;
  for (const text of order) {
    if (counts.has(text)) continue;
    if (budget > 0 || text.length === 0) {
      counter ??= await tokenCounter(encoding);
      counts.set(text, counter(text));
      budget -= text.length;
    } else {
      counts.set(text, estimateTokens(text));
      estimated++;
    }
  }
  return { of: (text) => counts.get(text) ?? estimateTokens(text), estimated };
}
