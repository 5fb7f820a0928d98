/**
 * What the model saw in a turn (docs/context.md): each model request's input, item by item with token counts, and the
 * stored items outside the window. **Recorded** when the trace store holds the inputs (our runs write them on each
 * model span; agent commands and OTLP tracers may send them: recordedInput.ts); **reconstructed** otherwise, from the
 * session's own rules: the branch's items before the turn (the last `limit` of them when the session's limit is
 * known, from the last compaction item on, less the calls stored without their outputs), the turn's input, and the
 * turn's items before each model request (a turn that called tools made a request after each batch of outputs). One
 * builder for the view, the CLI and the `turn_context` tool.
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
import { isRecord } from '../../shared/itemText';
import { countedItem, instructionsItem, kindOf, toolsItem, type CountedItem } from './contextItems';
import { olderCompaction } from './olderCompaction';
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
  /** Reconstructed: the older items not read are in its window (false once a compaction item in the turn cut them). */
  older?: boolean;
}

/** A stored item counted: the item itself, for the rules that read its type and call id. */
interface StoredCounted {
  c: CountedItem;
  sequence: number;
  item: unknown;
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

/** The index of a turn's first model output: the turn's input (what the run was given) is everything before it. */
function firstModelOutput(turnItems: readonly CountedItem[]): number {
  const i = turnItems.findIndex(isModelOutput);
  return i < 0 ? turnItems.length : i;
}

/**
 * The turn's items split at its model requests: request k's input holds the turn's items before the k-th response.
 * The run's input (the user message and whatever came with it: `run(agent, [user, system])` stores a system or
 * developer message, or another user message, after it) goes into the first request whole; after that a response's
 * items (reasoning, messages, calls) follow the items sent, and a model output after an item sent (a tool output)
 * starts the next response.
 */
export function requestPrefixes(turnItems: readonly CountedItem[]): number[] {
  const first = firstModelOutput(turnItems);
  const starts = [Math.max(1, first)];
  let sawSent = false;
  for (let i = first + 1; i < turnItems.length; i++) {
    const out = isModelOutput(turnItems[i]!);
    if (out && sawSent) starts.push(i);
    sawSent = !out;
  }
  return starts;
}

/**
 * Each call type whose output must follow it, and that output's type, in the stored (API) shape: the calls both SDKs
 * drop from the history when their output is missing (JS `dropOrphanToolCalls`, Python `drop_orphan_function_calls`).
 * Python also drops a `tool_search_call`; JS keeps it: it is left in, as a hosted search has no output item.
 */
const OUTPUT_OF_CALL: Readonly<Record<string, string>> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  computer_call: 'computer_call_output',
  shell_call: 'shell_call_output',
  local_shell_call: 'local_shell_call_output',
  apply_patch_call: 'apply_patch_call_output',
};
/** The JS SDK's own names of the outputs, for items stored in its shape. */
const OUTPUT_ALIASES: Readonly<Record<string, string>> = {
  function_call_result: 'function_call_output',
  computer_call_result: 'computer_call_output',
};

const callIdOf = (r: Record<string, unknown>): string | null =>
  typeof r.call_id === 'string' ? r.call_id : typeof r.callId === 'string' ? r.callId : null;
const isReasoning = (item: unknown): boolean => isRecord(item) && item.type === 'reasoning';

/**
 * The indexes of the history items the runner leaves out of the input: a call whose output is neither in the history
 * nor in the run's input (a call that needed approval, interrupted and never answered: the next message starts a new
 * run), and the reasoning items just before it (the API refuses reasoning without the item it led to). Both SDKs do
 * it on the history they read, never on the new input. A hosted shell call still running is kept (JS keeps it).
 */
export function orphanCalls(history: readonly unknown[], input: readonly unknown[]): Set<number> {
  const answered = new Set<string>();
  for (const item of [...history, ...input]) {
    if (!isRecord(item) || typeof item.type !== 'string') continue;
    const callId = callIdOf(item);
    if (callId !== null) answered.add(`${OUTPUT_ALIASES[item.type] ?? item.type}\n${callId}`);
  }
  const dropped = new Set<number>();
  history.forEach((item, i) => {
    if (!isRecord(item) || typeof item.type !== 'string') return;
    const output = OUTPUT_OF_CALL[item.type];
    const callId = callIdOf(item);
    // A call without a call id cannot be matched to an output: JS keeps it (Python drops it; the API gives every call one).
    if (!output || callId === null || answered.has(`${output}\n${callId}`)) return;
    if (item.type === 'shell_call' && (item.status === undefined || item.status === 'in_progress')) return;
    dropped.add(i);
  });
  if (dropped.size === 0) return dropped;
  // Reasoning belongs to the next item that is not reasoning: it goes with that item's call.
  const calls = new Set(dropped);
  for (let i = history.length - 1; i >= 0; i--) {
    if (!isReasoning(history[i])) continue;
    let next = i + 1;
    while (next < history.length && isReasoning(history[next])) next++;
    if (calls.has(next)) dropped.add(i);
  }
  return dropped;
}

/**
 * The stored item each recorded input item is (its index in `stored`, or null), matched as the run sent them: the
 * input is the tail of the history and the turn, so it is aligned from its end, each item with the newest stored one
 * of its key older than the one matched after it. Matching by the first equal key would take an older identical
 * message ("yes" asked twice) for the one sent, and call the items after it not sent.
 */
function alignFromEnd(positions: ReadonlyMap<string, readonly number[]>, keys: readonly string[], end: number): (number | null)[] {
  const at: (number | null)[] = keys.map(() => null);
  let bound = end;
  for (let j = keys.length - 1; j >= 0; j--) {
    const list = positions.get(keys[j]!);
    if (!list) continue;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]! < bound) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) continue;
    bound = list[lo - 1]!;
    at[j] = bound;
  }
  return at;
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
  let history = node
    ? await historyTail(reader, sessionId, node, turn, turnRows, turnEntries[0]!.sequenceNumber, want)
    : { items: await itemsBetween(reader, sessionId, branchId, null, turnEntries[0]!.sequenceNumber), older: 0 };
  /** Reconstructed: unread items between an older compaction item and the history read, in the window. */
  let gap = 0;
  // The runner sends the history from the last compaction item on, however far back: without a limit (which cuts the
  // history before a compaction item can matter) and without one among the items read, the unread older items are
  // searched for one (by the structure rows' type, no item read), and the read reaches back to it.
  if (
    recorded.length === 0 &&
    limit === null &&
    history.older > 0 &&
    history.items.length > 0 &&
    !history.items.some((e) => kindOf(e.item) === 'compaction')
  ) {
    const readFrom = history.items[0]!.sequenceNumber;
    const found = await olderCompaction(reader, sessionId, branchId, readFrom, CONTEXT_MAX_OUTSIDE);
    if (found) {
      // The unread rows are those before the compaction item, the item, and the ones between it and the read.
      const before = Math.max(0, history.older - found.between - 1);
      const listed = found.listFrom === null ? 0 : Math.min(CONTEXT_MAX_OUTSIDE, before);
      const start = (found.listFrom ?? found.sequence) - 1;
      // A near one is read through to the history read, counted exactly; a far one alone (with the items listed
      // before it), the items after it counted in the window by an estimate, as the unread history is otherwise.
      const near = found.between <= HISTORY_READ_ITEMS;
      const more = await itemsBetween(reader, sessionId, branchId, start, near ? readFrom : found.sequence + 1);
      history = { items: [...more, ...history.items], older: before - listed };
      if (!near) gap = found.between;
    }
  }

  const notes: ContextNote[] = [];
  if (unreadable > 0) notes.push({ code: 'recorded-unreadable', requests: unreadable });
  const historyCounted: StoredCounted[] = history.items.map((e) => ({
    c: countedItem(e.item, e.toolName),
    sequence: e.sequenceNumber,
    item: e.item,
  }));
  const turnCounted: StoredCounted[] = turnEntries.map((e) => ({
    c: countedItem(e.item, e.toolName),
    sequence: e.sequenceNumber,
    item: e.item,
  }));
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
    // Each recorded item is matched to the stored item it is (aligned from the end: `alignFromEnd`), for the view's
    // links and to tell the stored items sent from the ones outside.
    const stored = [...historyCounted, ...turnCounted];
    const positions = new Map<string, number[]>();
    stored.forEach((x, i) => {
      const list = positions.get(x.c.key);
      if (list) list.push(i);
      else positions.set(x.c.key, [i]);
    });
    const sent = new Set<number>();
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
      const counted = input.items.map((raw) => {
        const callId = (raw as { call_id?: unknown }).call_id;
        return countedItem(raw, typeof callId === 'string' ? (names.get(callId) ?? null) : null);
      });
      const at = alignFromEnd(
        positions,
        counted.map((c) => c.key),
        stored.length,
      );
      counted.forEach((c, j) => {
        const sequence = at[j] != null ? stored[at[j]!]!.sequence : null;
        if (sequence !== null) sent.add(sequence);
        items.push({ c, sequence });
      });
      return { items, model: span.model, inputTokens: span.inputTokens, cachedTokens: span.cachedTokens, cut: input.cut };
    });
    const firstSent = historyCounted.find((x) => sent.has(x.sequence))?.sequence ?? Number.POSITIVE_INFINITY;
    const lastCompaction = Math.max(
      -1,
      ...historyCounted.filter((x) => x.c.kind === 'compaction' && sent.has(x.sequence)).map((x) => x.sequence),
    );
    // An input cut when it was recorded says nothing of the items older than what it kept: they are not called outside.
    const cut = recorded.some((r) => r.input.cut);
    outside = historyCounted
      .filter((x) => !sent.has(x.sequence) && !(cut && x.sequence < firstSent))
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
    // item, otherwise in the window, their tokens estimated. Those between a far compaction item and the history
    // read (`gap`) are in the window.
    if (limit !== null || compactionAt > 0 || limited[0]?.c.kind === 'compaction') outsideOlder = history.older;
    else olderInWindow = history.older;
    olderInWindow += gap;
    const prefixes = requestPrefixes(turnCounted.map((x) => x.c));
    // Calls the history holds without their outputs are not sent (`orphanCalls`); the run's input can answer one.
    const runInput = turnCounted.slice(0, prefixes[0]).map((x) => x.item);
    const orphans = orphanCalls(
      windowItems.map((x) => x.item),
      runInput,
    );
    const sentWindow = windowItems.filter((_, i) => !orphans.has(i));
    outside = [
      ...historyCounted.slice(0, from).map((x) => ({ ...x, reason: 'limit' as OutsideReason })),
      ...limited.slice(0, compactionAt).map((x) => ({ ...x, reason: 'compaction' as OutsideReason })),
      ...windowItems.filter((_, i) => orphans.has(i)).map((x) => ({ ...x, reason: 'not-sent' as OutsideReason })),
    ];
    pending = prefixes.map((n) => {
      // A compaction item produced within the turn (the server compacted mid-turn) cuts the later requests' input too.
      const items = [...sentWindow, ...turnCounted.slice(0, n)];
      const at = lastCompaction(items);
      return { items: items.slice(at), model: null, inputTokens: null, cachedTokens: null, cut: false, older: at === 0 };
    });
    // Any difference says something the items do not show: a request whose output was not stored (more), or a run
    // whose input the store split into turns, or a row counted otherwise (fewer). A row of 0 requests knows none.
    if (usageRow?.requests != null && usageRow.requests > 0 && usageRow.requests !== pending.length)
      notes.push({ code: 'requests-differ', usageRequests: usageRow.requests, shown: pending.length });
  }
  if (pending.some((r) => r.items.some((x) => x.c.kind === 'compaction'))) notes.push({ code: 'compaction' });
  // A turn of more requests than are listed keeps its last ones (the fullest inputs, and the request the tool lists
  // by default), each with its own number: the first listed one's index says how many came before it.
  const skippedRequests = Math.max(0, pending.length - CONTEXT_MAX_REQUESTS);
  pending = pending.slice(skippedRequests);

  const count = await countsFor(encoding, pending, outside);
  const estimatedItems = count.estimated + olderInWindow;
  if (estimatedItems > 0) notes.push({ code: 'estimated', items: estimatedItems });
  // An image, a file or audio counts only as its placeholder: the model's tokens for it are not known.
  // Each item once, however many requests hold it (a recorded item has no sequence number: each counts).
  const media = new Set(
    [...pending.flatMap((r) => r.items), ...outside].filter((x) => x.c.approximate === true).map((x) => x.sequence ?? x),
  );
  const uncounted = media.size > 0;
  if (uncounted) notes.push({ code: 'media-uncounted', items: media.size });
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
    const older = r.older === false ? 0 : olderInWindow;
    if (older > 0 && total > 0) {
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
      index: skippedRequests + i + 1,
      items,
      omittedItems: r.items.length + older - listed.length,
      itemCount: r.items.length + older,
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
    approximate: guessed || estimatedItems > 0 || uncounted,
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
