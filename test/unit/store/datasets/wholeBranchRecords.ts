/**
 * The oracle of the streaming dataset builder: the whole-branch implementation it replaced (src/store/datasets/
 * datasetRecords.ts before issue 26's streaming export), kept as it was but for the rules fixed since, each added here
 * in the whole-branch way: the format check and the report naming the reviewed turn, a pairwise verdict's two inputs
 * compared whole, a turn whose user message has no text skipped, a tool output left without text skipped, `--tag`
 * taking the corrections of the turns it takes, a bad turn never dropped unsaid. It reads a branch's items whole and
 * finds each turn in them, and sorts every review; by default the streaming builder must give the same records, byte
 * for byte, and the same report. (Redaction is `redaction.ts`'s, tested on its own.)
 */
import type { SessionReader } from '../../../../src/store/inspector/sessionReader';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import type { Correction, PairwiseReview, ReviewData, TurnReview } from '../../../../src/store/reviews/reviewTypes';
import { chatMessages, emptiedOutputProblem, toolPairingProblem, type ChatMessage } from '../../../../src/store/datasets/chatMessages';
import { RECORD_CHECKS } from '../../../../src/store/datasets/datasetChecks';
import type { DatasetFilters, DatasetOptions, DatasetReport } from '../../../../src/store/datasets/datasetRecords';
import { redactValue } from '../../../../src/store/datasets/redaction';

type Reader = Pick<SessionReader, 'getItemsPage'>;

interface Item {
  turn: number | null;
  item: unknown;
}

const where = (r: { sessionId: string; turn: number }, branchId: string): string => `${r.sessionId} ${branchId} turn ${r.turn}`;
const isUser = (i: unknown): boolean => (i as { role?: unknown } | null)?.role === 'user';

/** A branch's decoded items, read once and kept while records of that branch are built. */
class BranchItems {
  private key = '';
  private items: Item[] = [];
  constructor(private readonly reader: Reader) {}

  async of(sessionId: string, branchId: string): Promise<Item[]> {
    const key = `${sessionId}\u0000${branchId}`;
    if (key === this.key) return this.items;
    const items: Item[] = [];
    let after: number | null = null;
    for (;;) {
      const page = await this.reader.getItemsPage(sessionId, branchId, { afterSequence: after, limit: 1000 });
      for (const e of page.items) if (!e.corrupt) items.push({ turn: e.userTurnNumber, item: e.item });
      if (page.nextAfterSequence === null) break;
      after = page.nextAfterSequence;
    }
    // A plain session records no turns: they are counted from its user messages, as the turn list counts them.
    if (items.length > 0 && items.every((i) => i.turn === null)) {
      let turn = 0;
      for (const i of items) i.turn = isUser(i.item) ? ++turn : turn === 0 ? null : turn;
    }
    this.key = key;
    this.items = items;
    return items;
  }
}

/** The items up to the turn's user message (context), and the turn's own items after it; null when the turn is gone. */
function turnParts(items: readonly Item[], turn: number): { context: unknown[]; user: unknown; answer: unknown[] } | null {
  const start = items.findIndex((i) => i.turn === turn && isUser(i.item));
  if (start < 0) return null;
  let end = start + 1;
  while (end < items.length && (items[end]!.turn === turn || items[end]!.turn === null)) end++;
  return {
    context: items.slice(0, start).map((i) => i.item),
    user: items[start]!.item,
    answer: items.slice(start + 1, end).map((i) => i.item),
  };
}

/** The text of the last assistant message of `messages`, when it has text and no tool calls. */
function finalText(messages: readonly ChatMessage[]): string | null {
  const last = messages[messages.length - 1];
  return last?.role === 'assistant' && !last.tool_calls && typeof last.content === 'string' && last.content !== '' ? last.content : null;
}

function matches(r: { updatedMs: number; sessionId: string }, branchIds: string[], f: DatasetFilters, tags?: string[]): boolean {
  if (f.sessionId !== undefined && r.sessionId !== f.sessionId) return false;
  if (f.branchId !== undefined && !branchIds.includes(f.branchId)) return false;
  if (f.sinceMs !== undefined && r.updatedMs < f.sinceMs) return false;
  if (f.tags?.length && !(tags ?? []).some((t) => f.tags!.includes(t))) return false;
  return true;
}

/** Builds the records of `options.format` from `reviews` over the session store `reader`; the report fills as they come. */
export async function* wholeBranchRecords(
  reader: Reader,
  reviews: ReviewData,
  options: DatasetOptions,
  report: DatasetReport,
): AsyncGenerator<object> {
  const branches = new BranchItems(reader);
  const skip = (w: string, reason: string): void => void report.skipped.push({ where: w, reason });
  const convert = (items: readonly unknown[]): ChatMessage[] => {
    const c = chatMessages(items);
    for (const what of c.leftOut) report.leftOut[what] = (report.leftOut[what] ?? 0) + 1;
    return c.messages;
  };
  const tools = options.tools?.length ? { tools: options.tools } : {};
  const out = (w: string, messages: ChatMessage[], record: object): object | null => {
    const emptied = emptiedOutputProblem(messages);
    if (emptied) return (skip(w, emptied), null);
    const written = options.redact?.length ? redactValue(record, options.redact) : record;
    const problems = RECORD_CHECKS[options.format](written);
    if (problems.length > 0) return (skip(w, `breaks the format's rules: ${problems.join('; ')}`), null);
    report.records++;
    return written;
  };
  /** The turn of a review as it is now, or why it cannot be used. */
  const turnOf = async (
    r: { sessionId: string; turn: number },
    branchId: string,
    turnKey: string,
  ): Promise<NonNullable<ReturnType<typeof turnParts>> | string> => {
    const parts = turnParts(await branches.of(r.sessionId, branchId), r.turn);
    if (!parts) return 'orphaned: the turn is gone';
    if (contentKey(parts.user) !== turnKey) return 'orphaned: the turn holds another user message now';
    if (!chatMessages([parts.user]).messages.some((m) => m.role === 'user'))
      return 'the user message has no text (images and other parts with no chat form are left out)';
    return parts;
  };

  const sorted = <T extends { sessionId: string; turn: number }>(list: readonly T[], branch: (r: T) => string): T[] =>
    [...list].sort((a, b) => a.sessionId.localeCompare(b.sessionId) || branch(a).localeCompare(branch(b)) || a.turn - b.turn);
  const turnReviews = sorted(
    reviews.turnReviews.filter(
      (r) => matches(r, [r.branchId], options, r.tags) && (options.verdict === undefined || r.verdict === options.verdict),
    ),
    (r) => r.branchId,
  );
  const sameTurn = (a: Correction, r: TurnReview): boolean =>
    a.sessionId === r.sessionId && a.branchId === r.branchId && a.turn === r.turn && a.turnKey === r.turnKey;
  const tagsOf = (c: Correction): string[] | undefined => reviews.turnReviews.find((r) => sameTurn(c, r))?.tags;
  const corrections =
    options.verdict === 'good'
      ? []
      : sorted(
          reviews.corrections.filter((c) => matches(c, [c.branchId], options, tagsOf(c))),
          (c) => c.branchId,
        );
  const pairwise =
    options.tags?.length || options.verdict
      ? []
      : sorted(
          reviews.pairwise.filter((p) => matches(p, [p.leftBranch, p.rightBranch], options)),
          (p) => p.leftBranch,
        );

  /** A correction's turn: the context, the turn's items before the corrected one, and the corrected item's text. */
  const corrected = async (
    c: Correction,
  ): Promise<{ context: unknown[]; user: unknown; before: unknown[]; original: unknown } | string> => {
    const parts = await turnOf(c, c.branchId, c.turnKey);
    if (typeof parts === 'string') return parts;
    const at = parts.answer.findIndex((i) => contentKey(i) === c.itemKey);
    if (at < 0) return 'orphaned: the corrected answer is no longer in the turn';
    return { context: parts.context, user: parts.user, before: parts.answer.slice(0, at), original: parts.answer[at] };
  };

  if (options.format === 'sft') {
    for (const r of turnReviews) {
      const w = where(r, r.branchId);
      if (r.verdict !== 'good') continue;
      const parts = await turnOf(r, r.branchId, r.turnKey);
      if (typeof parts === 'string') {
        skip(w, parts);
        continue;
      }
      const context = convert([...parts.context, parts.user]).map((m) => (m.role === 'assistant' ? { ...m, weight: 0 as const } : m));
      const answer = convert(parts.answer).map((m) => (m.role === 'assistant' ? { ...m, weight: 1 as const } : m));
      const messages = [...context, ...answer];
      const problem = toolPairingProblem(messages);
      if (problem) skip(w, problem);
      else if (!answer.some((m) => m.role === 'assistant')) skip(w, 'the turn has no assistant answer');
      else if (messages[messages.length - 1]?.role !== 'assistant') skip(w, 'the turn does not end with an assistant answer');
      else {
        const record = out(w, messages, { messages, ...tools });
        if (record) yield record;
      }
    }
    for (const c of corrections) {
      const w = where(c, c.branchId);
      const t = await corrected(c);
      if (typeof t === 'string') {
        skip(w, t);
        continue;
      }
      const context = convert([...t.context, t.user, ...t.before]).map((m) => (m.role === 'assistant' ? { ...m, weight: 0 as const } : m));
      const messages: ChatMessage[] = [...context, { role: 'assistant', content: c.text, weight: 1 }];
      const problem = toolPairingProblem(messages);
      if (problem) skip(w, problem);
      else {
        const record = out(w, messages, { messages, ...tools });
        if (record) yield record;
      }
    }
    return;
  }

  if (options.format === 'preference') {
    for (const p of pairwise) {
      const w = `${p.sessionId} ${p.leftBranch}/${p.rightBranch} turn ${p.turn}`;
      if (p.outcome === 'tie' || p.outcome === 'both-bad') {
        skip(w, `a ${p.outcome} verdict prefers neither side`);
        continue;
      }
      if (p.leftKey !== p.rightKey) {
        skip(w, 'the two sides answer different user messages (an edited message): no one input to prefer an answer to');
        continue;
      }
      const [better, worse] = p.outcome === 'left' ? [p.leftBranch, p.rightBranch] : [p.rightBranch, p.leftBranch];
      const b = await turnOf(p, better, p.leftKey);
      const x = typeof b === 'string' ? b : await turnOf(p, worse, p.leftKey);
      if (typeof b === 'string' || typeof x === 'string') {
        skip(w, typeof b === 'string' ? b : (x as string));
        continue;
      }
      const inputOf = (t: { context: unknown[]; user: unknown }) => JSON.stringify(chatMessages([...t.context, t.user]).messages);
      if (inputOf(b) !== inputOf(x)) {
        skip(w, 'the two sides reach the user message through different conversations: no one input to prefer an answer to');
        continue;
      }
      const bm = convert(b.answer);
      const xm = convert(x.answer);
      if (bm.some((m) => m.role !== 'assistant' || m.tool_calls) || xm.some((m) => m.role !== 'assistant' || m.tool_calls)) {
        skip(w, 'preference outputs are assistant text, and this turn called tools');
        continue;
      }
      const [bt, xt] = [finalText(bm), finalText(xm)];
      if (!bt || !xt) skip(w, 'a side has no assistant answer');
      else if (bt === xt) skip(w, 'both sides gave the same answer');
      else {
        const input = convert([...b.context, b.user]);
        const record = out(w, input, {
          input: { messages: input, ...tools },
          preferred_output: [{ role: 'assistant', content: bt }],
          non_preferred_output: [{ role: 'assistant', content: xt }],
        });
        if (record) yield record;
      }
    }
    for (const c of corrections) {
      const w = where(c, c.branchId);
      const t = await corrected(c);
      if (typeof t === 'string') {
        skip(w, t);
        continue;
      }
      if (t.before.length > 0) {
        skip(w, 'preference inputs end with the user message, and the corrected answer came after tool calls');
        continue;
      }
      const original = finalText(convert([t.original]));
      if (!original) skip(w, 'the corrected item is not assistant text');
      else if (original === c.text) skip(w, 'the correction is the same as the answer');
      else {
        const input = convert([...t.context, t.user]);
        const record = out(w, input, {
          input: { messages: input, ...tools },
          preferred_output: [{ role: 'assistant', content: c.text }],
          non_preferred_output: [{ role: 'assistant', content: original }],
        });
        if (record) yield record;
      }
    }
    return;
  }

  // eval: the reference answer for the user's message in its context.
  const evalRecord = (
    w: string,
    input: ChatMessage[],
    reference: string,
    tags: string[],
    source: { sessionId: string; branchId: string; turn: number },
    kind: string,
  ) => out(w, input, { input, reference, tags, kind, source });
  for (const r of turnReviews as TurnReview[]) {
    const w = where(r, r.branchId);
    if (r.verdict !== 'good') {
      if (corrections.some((c) => sameTurn(c, r))) continue;
      const what = r.verdict === 'bad' ? 'a bad turn' : 'a turn without a verdict';
      skip(
        w,
        reviews.corrections.some((c) => sameTurn(c, r))
          ? `${what} has no reference answer but its correction, which the filters leave out`
          : `${what} without a correction has no reference answer`,
      );
      continue;
    }
    const parts = await turnOf(r, r.branchId, r.turnKey);
    if (typeof parts === 'string') {
      skip(w, parts);
      continue;
    }
    const reference = finalText(convert(parts.answer));
    if (!reference) skip(w, 'the turn does not end with assistant text');
    else {
      const source = { sessionId: r.sessionId, branchId: r.branchId, turn: r.turn };
      const record = evalRecord(w, convert([...parts.context, parts.user]), reference, r.tags, source, 'good-turn');
      if (record) yield record;
    }
  }
  for (const c of corrections) {
    const w = where(c, c.branchId);
    const t = await corrected(c);
    if (typeof t === 'string') {
      skip(w, t);
      continue;
    }
    const source = { sessionId: c.sessionId, branchId: c.branchId, turn: c.turn };
    const record = evalRecord(w, convert([...t.context, t.user]), c.text, tagsOf(c) ?? [], source, 'correction');
    if (record) yield record;
  }
  for (const p of pairwise as PairwiseReview[]) {
    const w = `${p.sessionId} ${p.leftBranch}/${p.rightBranch} turn ${p.turn}`;
    if (p.outcome !== 'left' && p.outcome !== 'right') {
      skip(w, `a ${p.outcome} verdict prefers neither side`);
      continue;
    }
    const better = p.outcome === 'left' ? p.leftBranch : p.rightBranch;
    const b = await turnOf(p, better, p.outcome === 'left' ? p.leftKey : p.rightKey);
    if (typeof b === 'string') {
      skip(w, b);
      continue;
    }
    const reference = finalText(convert(b.answer));
    if (!reference) skip(w, 'the better side does not end with assistant text');
    else {
      const source = { sessionId: p.sessionId, branchId: better, turn: p.turn };
      const record = evalRecord(w, convert([...b.context, b.user]), reference, [], source, 'preferred');
      if (record) yield record;
    }
  }
}
