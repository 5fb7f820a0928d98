/**
 * Review data → dataset records (docs/datasets.md). Each record is built from the session as it is now, the turn found
 * by its review's content key (a review whose turn changed is skipped as orphaned, with the reason), the conversation
 * up to the turn as context:
 *
 * - `sft` (OpenAI supervised fine-tuning, chat): a good turn, its assistant messages the ones learned from (weight 1,
 *   the context's weight 0); a correction, the corrected answer in place of the turn's and nothing after it.
 * - `preference` (OpenAI preference fine-tuning): a pairwise verdict's better and worse answers to the same input (the
 *   same conversation up to the same user message); a correction (better) against the answer it corrects (worse).
 * - `eval`: the user's message with its context, and the reference answer: a correction, a pairwise verdict's better
 *   answer, or a good turn's answer; the turn's tags.
 *
 * A record is checked against its format's rules as it is made, and what cannot be made is reported under its reviewed
 * turn (`report.skipped`). Records come one at a time, in the order of the reviews sorted by session, branch and turn:
 * each group's branches are walked forward a page at a time (`branchTurns.ts`) and a record is made as soon as its
 * turn's items are read, so an export holds no branch, only the context its records carry (`contextTurns` bounds it).
 */
import type { SessionReader } from '../inspector/sessionReader';
import { contentKey } from '../reviews/contentKey';
import type { Correction, ReviewData, TurnRef } from '../reviews/reviewTypes';
import { BranchWalks, type TurnParts } from './branchTurns';
import { chatMessages, emptiedOutputProblem, toolPairingProblem, type ChatMessage } from './chatMessages';
import { RECORD_CHECKS, type DatasetFormat } from './datasetChecks';
import { redactValue } from './redaction';

export { DEFAULT_REDACTIONS } from './redaction';

type Reader = Pick<SessionReader, 'getItemsPage'>;

export interface DatasetFilters {
  sessionId?: string;
  branchId?: string;
  /** Turn reviews with this verdict only (`sft` takes good turns whatever this says: a bad turn is not taught). */
  verdict?: 'good' | 'bad';
  /** Reviews with any of these tags (turn reviews only: pairwise verdicts and corrections carry none). */
  tags?: string[];
  /** Reviews changed at or after this time (ms). */
  sinceMs?: number;
  /**
   * Pairwise verdicts where either side ran on this model (a multi-model retry's columns record it). Turn reviews and
   * corrections are left out with it: the session does not record which model answered a turn.
   */
  model?: string;
}

export interface DatasetOptions extends DatasetFilters {
  format: DatasetFormat;
  /** Function definitions to put in each `sft` / `preference` record's `tools` (the session does not store them). */
  tools?: unknown[];
  /** Text matching these is replaced with `[redacted]` in every string of a record (JSON text decoded: `redaction.ts`). */
  redact?: RegExp[];
  /**
   * How many turns before a record's turn go into its context (the items before the branch's first user message, the
   * agent's instructions when stored, always do). All of them when not given; a bound keeps an export's memory flat.
   */
  contextTurns?: number;
}

/** What was left out and why, for the export's report. */
export interface DatasetReport {
  records: number;
  skipped: { where: string; reason: string }[];
  /** Parts of items with no chat form, and how often they were left out. */
  leftOut: Record<string, number>;
}

const where = (r: { sessionId: string; turn: number }, branchId: string): string => `${r.sessionId} ${branchId} turn ${r.turn}`;

/** Whether two message lists are the same messages (a pairwise verdict's two inputs). */
function sameMessages(a: readonly ChatMessage[], b: readonly ChatMessage[]): boolean {
  return a.length === b.length && a.every((m, i) => m === b[i] || JSON.stringify(m) === JSON.stringify(b[i]));
}

/** The text of the last assistant message of `messages`, when it has text and no tool calls. */
function finalText(messages: readonly ChatMessage[]): string | null {
  const last = messages[messages.length - 1];
  return last?.role === 'assistant' && !last.tool_calls && typeof last.content === 'string' && last.content !== '' ? last.content : null;
}

/**
 * `list` sorted by session, branch (`branch`) and turn, as groups of one session and branch (names the collation
 * holds equal make one group, as one sort by all three would order them): a group's turns come in order, so its
 * branches are walked once. Sorting groups rather than every review keeps 100,000 reviews of one branch cheap.
 */
export function inTurnOrder<T extends { sessionId: string; turn: number }>(list: readonly T[], branch: (r: T) => string): T[][] {
  const byName = new Map<string, number[]>();
  list.forEach((r, i) => {
    const key = `${r.sessionId}\u0000${branch(r)}`;
    const group = byName.get(key);
    if (group) group.push(i);
    else byName.set(key, [i]);
  });
  const names = (a: T, b: T): number => a.sessionId.localeCompare(b.sessionId) || branch(a).localeCompare(branch(b));
  const groups: number[][] = [];
  for (const group of [...byName.values()].sort((a, b) => names(list[a[0]!]!, list[b[0]!]!))) {
    const previous = groups[groups.length - 1];
    if (previous && names(list[previous[0]!]!, list[group[0]!]!) === 0) previous.push(...group);
    else groups.push(group);
  }
  // Ties on the turn keep the reviews' order, as the stable sort of the whole list did.
  return groups.map((g) => g.sort((a, b) => list[a]!.turn - list[b]!.turn || a - b).map((i) => list[i]!));
}

function matches(r: { updatedMs: number; sessionId: string }, branchIds: string[], f: DatasetFilters, tags?: string[]): boolean {
  if (f.sessionId !== undefined && r.sessionId !== f.sessionId) return false;
  if (f.branchId !== undefined && !branchIds.includes(f.branchId)) return false;
  if (f.sinceMs !== undefined && r.updatedMs < f.sinceMs) return false;
  if (f.tags?.length && !(tags ?? []).some((t) => f.tags!.includes(t))) return false;
  return true;
}

/** Builds the records of `options.format` from `reviews` over the session store `reader`; the report fills as they come. */
export async function* datasetRecords(
  reader: Reader,
  reviews: ReviewData,
  options: DatasetOptions,
  report: DatasetReport,
): AsyncGenerator<object> {
  const contextTurns = options.contextTurns ?? Infinity;
  if (contextTurns !== Infinity && !(Number.isInteger(contextTurns) && contextTurns >= 0))
    throw new TypeError(`contextTurns is a number of turns (0 or more), got ${String(options.contextTurns)}`);
  const walks = new BranchWalks(reader, contextTurns);
  const skip = (w: string, reason: string): void => void report.skipped.push({ where: w, reason });
  const count = (leftOut: readonly string[]): void => {
    for (const what of leftOut) report.leftOut[what] = (report.leftOut[what] ?? 0) + 1;
  };
  const convert = (items: readonly unknown[]): ChatMessage[] => {
    const c = chatMessages(items);
    count(c.leftOut);
    return c.messages;
  };
  // Each passed turn converted once, however many records carry it as context (a turn opens with its user message,
  // so no message of one turn merges with the next's: converting turn by turn gives what converting them together
  // would). What each left out is counted again at each use, as converting it again would count it; `counted` false
  // for a conversion no record carries (the worse side's input, compared with the better side's).
  const convertedTurns = new WeakMap<readonly unknown[], ReturnType<typeof chatMessages>>();
  const turnMessages = (parts: Pick<TurnParts, 'contextChunks'>, rest: readonly unknown[], counted: boolean): ChatMessage[] => {
    const messages: ChatMessage[] = [];
    for (const chunk of parts.contextChunks) {
      let c = convertedTurns.get(chunk);
      if (!c) convertedTurns.set(chunk, (c = chatMessages(chunk)));
      if (counted) count(c.leftOut);
      for (const m of c.messages) messages.push(m);
    }
    const c = chatMessages(rest);
    if (counted) count(c.leftOut);
    for (const m of c.messages) messages.push(m);
    return messages;
  };
  const convertTurn = (parts: Pick<TurnParts, 'contextChunks'>, ...rest: unknown[]): ChatMessage[] => turnMessages(parts, rest, true);
  const tools = options.tools?.length ? { tools: options.tools } : {};
  /**
   * The record as written (redacted when asked), or null when it is skipped: reported under `w`, the reviewed turn, as
   * every other skip is. Checked against its format's rules after redaction, as the file will hold it, so a file never
   * holds a record the checker refuses (the builder should make none; this says if it did). `messages`: the record's
   * conversation, which must not hold a tool output left without text.
   */
  const out = (w: string, messages: readonly ChatMessage[], record: object): object | null => {
    const emptied = emptiedOutputProblem(messages);
    if (emptied) return (skip(w, emptied), null);
    const written = options.redact?.length ? redactValue(record, options.redact) : record;
    const problems = RECORD_CHECKS[options.format](written);
    if (problems.length > 0) return (skip(w, `breaks the format's rules: ${problems.join('; ')}`), null);
    report.records++;
    return written;
  };
  /** The turn of a review as it is now, or why it cannot be used. */
  const turnOf = async (r: { sessionId: string; turn: number }, branchId: string, turnKey: string): Promise<TurnParts | string> => {
    const parts = await walks.turn(r.sessionId, branchId, r.turn);
    if (!parts) return 'orphaned: the turn is gone';
    if (contentKey(parts.user) !== turnKey) return 'orphaned: the turn holds another user message now';
    // Left out, the user's message would leave a record with no question (an answer learned from nothing) or an input
    // that does not end with it.
    if (!chatMessages([parts.user]).messages.some((m) => m.role === 'user'))
      return 'the user message has no text (images and other parts with no chat form are left out)';
    return parts;
  };

  /** The groups' reviews one after another, each group's walks let go when the next group starts. */
  function* sorted<T extends { sessionId: string; turn: number }>(list: readonly T[], branch: (r: T) => string): Generator<T> {
    for (const group of inTurnOrder(list, branch)) {
      walks.clear();
      yield* group;
    }
  }
  const turnReviews = sorted(
    reviews.turnReviews.filter(
      (r) =>
        options.model === undefined &&
        matches(r, [r.branchId], options, r.tags) &&
        (options.verdict === undefined || r.verdict === options.verdict),
    ),
    (r) => r.branchId,
  );
  // A correction carries no tags: it has its turn's (the turn review of the same turn), so `--tag` takes the
  // corrections of the turns it takes, and their records are the ones an export without it makes.
  const turnId = (r: TurnRef): string => `${r.sessionId}\u0000${r.branchId}\u0000${r.turn}\u0000${r.turnKey}`;
  const tagsOfTurn = new Map<string, string[]>();
  for (const r of reviews.turnReviews) if (!tagsOfTurn.has(turnId(r))) tagsOfTurn.set(turnId(r), r.tags);
  const chosenCorrections =
    options.verdict === 'good' || options.model !== undefined
      ? []
      : reviews.corrections.filter((c) => matches(c, [c.branchId], options, tagsOfTurn.get(turnId(c))));
  const corrections = sorted(chosenCorrections, (c) => c.branchId);
  const pairwise =
    options.tags?.length || options.verdict
      ? []
      : sorted(
          reviews.pairwise.filter(
            (p) =>
              matches(p, [p.leftBranch, p.rightBranch], options) &&
              (options.model === undefined || p.leftModel === options.model || p.rightModel === options.model),
          ),
          (p) => p.leftBranch,
        );

  /** A correction's turn: the context, the turn's items before the corrected one, and the corrected item's text. */
  const corrected = async (
    c: Correction,
  ): Promise<
    { context: unknown[]; contextChunks: TurnParts['contextChunks']; user: unknown; before: unknown[]; original: unknown } | string
  > => {
    const parts = await turnOf(c, c.branchId, c.turnKey);
    if (typeof parts === 'string') return parts;
    const at = parts.answer.findIndex((i) => contentKey(i) === c.itemKey);
    if (at < 0) return 'orphaned: the corrected answer is no longer in the turn';
    return {
      context: parts.context,
      contextChunks: parts.contextChunks,
      user: parts.user,
      before: parts.answer.slice(0, at),
      original: parts.answer[at],
    };
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
      const context = convertTurn(parts, parts.user).map((m) => (m.role === 'assistant' ? { ...m, weight: 0 as const } : m));
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
      const context = convertTurn(t, t.user, ...t.before).map((m) => (m.role === 'assistant' ? { ...m, weight: 0 as const } : m));
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
      // One input for both answers: the same user message is not enough, as branches that forked at an earlier turn
      // reach it through different conversations (each answer is to its own); the whole input, as the record would
      // carry it, must be the same.
      if (!sameMessages(turnMessages(b, [b.user], false), turnMessages(x, [x.user], false))) {
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
        const input = convertTurn(b, b.user);
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
        const input = convertTurn(t, t.user);
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
  // Looked up by turn rather than searched, so 100,000 reviews do not make 100,000 passes over the others. A turn
  // that is not good has its reference in its correction: the corrections loop below writes it when the filters
  // chose the correction, and otherwise the turn is reported here, never dropped unsaid.
  const correctedTurns = new Set(reviews.corrections.map(turnId));
  const chosenCorrected = new Set(chosenCorrections.map(turnId));
  for (const r of turnReviews) {
    const w = where(r, r.branchId);
    if (r.verdict !== 'good') {
      if (chosenCorrected.has(turnId(r))) continue;
      const what = r.verdict === 'bad' ? 'a bad turn' : 'a turn without a verdict';
      skip(
        w,
        correctedTurns.has(turnId(r))
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
      const record = evalRecord(w, convertTurn(parts, parts.user), reference, r.tags, source, 'good-turn');
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
    const tags = tagsOfTurn.get(turnId(c)) ?? [];
    const source = { sessionId: c.sessionId, branchId: c.branchId, turn: c.turn };
    const record = evalRecord(w, convertTurn(t, t.user), c.text, tags, source, 'correction');
    if (record) yield record;
  }
  for (const p of pairwise) {
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
      const record = evalRecord(w, convertTurn(b, b.user), reference, [], source, 'preferred');
      if (record) yield record;
    }
  }
}
