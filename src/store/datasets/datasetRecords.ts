/**
 * Review data → dataset records (docs/datasets.md). Each record is built from the session as it is now, the turn found
 * by its review's content key (a review whose turn changed is skipped as orphaned, with the reason), the conversation
 * up to the turn as context:
 *
 * - `sft` (OpenAI supervised fine-tuning, chat): a good turn, its assistant messages the ones learned from (weight 1,
 *   the context's weight 0); a correction, the corrected answer in place of the turn's and nothing after it.
 * - `preference` (OpenAI preference fine-tuning): a pairwise verdict's better and worse answers to the same user
 *   message; a correction (better) against the answer it corrects (worse).
 * - `eval`: the user's message with its context, and the reference answer: a correction, a pairwise verdict's better
 *   answer, or a good turn's answer; the turn's tags.
 *
 * Records come one at a time, in the order of the reviews sorted by session, branch and turn: each group's branches are
 * walked forward a page at a time (`branchTurns.ts`) and a record is made as soon as its turn's items are read, so an
 * export holds no branch, only the context its records carry (`contextTurns` bounds it).
 */
import type { SessionReader } from '../inspector/sessionReader';
import { contentKey } from '../reviews/contentKey';
import type { Correction, ReviewData, TurnRef } from '../reviews/reviewTypes';
import { BranchWalks, type TurnParts } from './branchTurns';
import { chatMessages, toolPairingProblem, type ChatMessage } from './chatMessages';
import type { DatasetFormat } from './datasetChecks';

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
  /** Text matching these is replaced with `[redacted]` in every string of a record. */
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

/** API keys and e-mail addresses: what `--redact` replaces when no pattern is given. */
export const DEFAULT_REDACTIONS: readonly RegExp[] = [/\bsk-[A-Za-z0-9_-]{16,}/g, /\b[\w.+-]+@[\w-]+(\.[\w-]+)+\b/g];

const where = (r: { sessionId: string; turn: number }, branchId: string): string => `${r.sessionId} ${branchId} turn ${r.turn}`;

function redactValue<T>(value: T, patterns: readonly RegExp[]): T {
  if (typeof value === 'string') return patterns.reduce<string>((s, p) => s.replace(p, '[redacted]'), value) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, patterns)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, patterns)])) as T;
  return value;
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
  // would). What each left out is counted again at each use, as converting it again would count it.
  const convertedTurns = new WeakMap<readonly unknown[], ReturnType<typeof chatMessages>>();
  const convertTurn = (parts: Pick<TurnParts, 'contextChunks'>, ...rest: unknown[]): ChatMessage[] => {
    const messages: ChatMessage[] = [];
    for (const chunk of parts.contextChunks) {
      let c = convertedTurns.get(chunk);
      if (!c) convertedTurns.set(chunk, (c = chatMessages(chunk)));
      count(c.leftOut);
      for (const m of c.messages) messages.push(m);
    }
    for (const m of convert(rest)) messages.push(m);
    return messages;
  };
  const tools = options.tools?.length ? { tools: options.tools } : {};
  const out = (record: object): object => {
    report.records++;
    return options.redact?.length ? redactValue(record, options.redact) : record;
  };
  /** The turn of a review as it is now, or why it cannot be used. */
  const turnOf = async (r: { sessionId: string; turn: number }, branchId: string, turnKey: string): Promise<TurnParts | string> => {
    const parts = await walks.turn(r.sessionId, branchId, r.turn);
    if (!parts) return 'orphaned: the turn is gone';
    if (contentKey(parts.user) !== turnKey) return 'orphaned: the turn holds another user message now';
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
  const corrections =
    options.tags?.length || options.verdict === 'good' || options.model !== undefined
      ? []
      : sorted(
          reviews.corrections.filter((c) => matches(c, [c.branchId], options)),
          (c) => c.branchId,
        );
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
      else yield out({ messages, ...tools });
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
      else yield out({ messages, ...tools });
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
      const bm = convert(b.answer);
      const xm = convert(x.answer);
      if (bm.some((m) => m.role !== 'assistant' || m.tool_calls) || xm.some((m) => m.role !== 'assistant' || m.tool_calls)) {
        skip(w, 'preference outputs are assistant text, and this turn called tools');
        continue;
      }
      const [bt, xt] = [finalText(bm), finalText(xm)];
      if (!bt || !xt) skip(w, 'a side has no assistant answer');
      else if (bt === xt) skip(w, 'both sides gave the same answer');
      else
        yield out({
          input: { messages: convertTurn(b, b.user), ...tools },
          preferred_output: [{ role: 'assistant', content: bt }],
          non_preferred_output: [{ role: 'assistant', content: xt }],
        });
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
      else
        yield out({
          input: { messages: convertTurn(t, t.user), ...tools },
          preferred_output: [{ role: 'assistant', content: c.text }],
          non_preferred_output: [{ role: 'assistant', content: original }],
        });
    }
    return;
  }

  // eval: the reference answer for the user's message in its context.
  const evalRecord = (
    input: ChatMessage[],
    reference: string,
    tags: string[],
    source: { sessionId: string; branchId: string; turn: number },
    kind: string,
  ) => out({ input, reference, tags, kind, source });
  // Looked up by turn rather than searched, so 100,000 reviews do not make 100,000 passes over the others.
  const turnId = (r: TurnRef): string => `${r.sessionId}\u0000${r.branchId}\u0000${r.turn}\u0000${r.turnKey}`;
  const correctedTurns = new Set(reviews.corrections.map(turnId));
  const tagsOfTurn = new Map<string, string[]>();
  for (const r of reviews.turnReviews) if (!tagsOfTurn.has(turnId(r))) tagsOfTurn.set(turnId(r), r.tags);
  for (const r of turnReviews) {
    const w = where(r, r.branchId);
    if (r.verdict !== 'good') {
      if (!correctedTurns.has(turnId(r)))
        skip(
          w,
          r.verdict === 'bad'
            ? 'a bad turn without a correction has no reference answer'
            : 'a turn without a verdict has no reference answer',
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
    else
      yield evalRecord(
        convertTurn(parts, parts.user),
        reference,
        r.tags,
        { sessionId: r.sessionId, branchId: r.branchId, turn: r.turn },
        'good-turn',
      );
  }
  for (const c of corrections) {
    const t = await corrected(c);
    if (typeof t === 'string') {
      skip(where(c, c.branchId), t);
      continue;
    }
    const tags = tagsOfTurn.get(turnId(c)) ?? [];
    yield evalRecord(convertTurn(t, t.user), c.text, tags, { sessionId: c.sessionId, branchId: c.branchId, turn: c.turn }, 'correction');
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
    else yield evalRecord(convertTurn(b, b.user), reference, [], { sessionId: p.sessionId, branchId: better, turn: p.turn }, 'preferred');
  }
}
