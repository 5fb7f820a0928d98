/**
 * The cases of a check (docs/check.md): the reviewed turns that say what the agent should do. By default every turn
 * with a *good* verdict (its recorded answer and calls are what to expect) and every *bad* turn with a correction (the
 * correction is the answer to expect, and the answer it corrects is one a run must not give again; its recorded calls
 * are no reference, so it expects no trajectory); `--query` narrows them with the search box's language
 * (docs/search.md), its review filters read from the review data, its other parts matched against the turns' items by
 * the search scan. Each case is checked against its turn as it is now, as every use of review data is
 * (reviewMatching.ts): a review whose turn is gone or holds another user message now is an *orphaned* case, reported
 * and never run.
 *
 * The session file is only read here, a batch of turns of one branch at a time through their index (never a walk of
 * the branch), so selecting 10 turns of a 1 GB file reads those 10 turns.
 */
import type { SessionDatabase } from '../../store/inspector/sessionDatabase';
import type { ItemEntry } from '../../store/inspector/inspectorTypes';
import { contentKey } from '../../store/reviews/contentKey';
import { turnKeyOf } from '../../store/reviews/reviewMatching';
import type { Correction, ReviewData, TurnReview } from '../../store/reviews/reviewTypes';
import { reviewTurnSet, turnFilter, turnSetKey } from '../../store/search/reviewTurns';
import { searchDatabase } from '../../store/search/searchDatabase';
import type { SearchQuery } from '../../store/search/searchQuery';
import { isMessageItem, messageText } from '../../shared/itemText';
import { userMessageOf, whatIfInput } from '../whatIfInput';
import type { CheckCase } from './checkTypes';
import { trajectorySteps } from './trajectorySteps';

/** Turns read from the session file per request (one read transaction each). */
const TURNS_PER_READ = 200;

/** A case that cannot run, with why (for people). */
export interface OrphanedCase {
  case: CheckCase;
  reason: string;
}

export interface CaseSelection {
  /** In session, branch and turn order. */
  cases: CheckCase[];
  orphaned: OrphanedCase[];
  /** Reviewed turns the query selected that have nothing to expect (a bad turn without a correction, no verdict). */
  withoutExpectation: number;
  /**
   * Reviews not checked because another review of the same turn is (one case per turn, as a case's id names the
   * turn): a review of another user message the turn held before, when the turn's current message is reviewed too,
   * or the older of two such stale reviews. For people, with why.
   */
  superseded: OrphanedCase[];
}

export interface CaseSelectionOptions {
  /** Parsed with `parseSearchQuery` (the caller turns its error into its own). */
  query?: SearchQuery;
  signal?: AbortSignal;
}

type Reader = Pick<SessionDatabase, 'getTurnItemsMany'> & Parameters<typeof searchDatabase>[0];

const caseId = (r: { sessionId: string; branchId: string; turn: number }): string => `${r.sessionId}/${r.branchId}/${r.turn}`;
const turnId = (r: { sessionId: string; branchId: string; turn: number; turnKey: string }): string =>
  `${turnSetKey(r.sessionId, r.branchId, r.turn)}\u0000${r.turnKey}`;

/** A reviewed turn that can be a case: what it expects comes from its verdict, or from its correction. */
interface Candidate {
  review: TurnReview;
  correction: Correction | null;
}

/** The cases `reviews` give over the session file `db` (read-only). */
export async function selectCases(db: Reader, reviews: ReviewData, options: CaseSelectionOptions = {}): Promise<CaseSelection> {
  const corrections = latestCorrections(reviews.corrections);
  let withoutExpectation = 0;
  const query = options.query;
  const allowed = query?.review ? turnFilter(reviewTurnSet(query.review, reviews.turnReviews)) : () => true;
  let candidates: Candidate[] = [];
  for (const review of reviews.turnReviews) {
    if (!allowed(review.sessionId, review.branchId, review.turn)) continue;
    const correction = corrections.get(turnId(review)) ?? null;
    if (review.verdict === 'good') candidates.push({ review, correction: null });
    else if (review.verdict === 'bad' && correction) candidates.push({ review, correction });
    else withoutExpectation++;
  }
  if (query && hasItemFilters(query)) candidates = await withMatchingItems(db, query, candidates, options.signal);

  candidates.sort(
    (a, b) =>
      compare(a.review.sessionId, b.review.sessionId) || compare(a.review.branchId, b.review.branchId) || a.review.turn - b.review.turn,
  );
  const made: { made: CheckCase | OrphanedCase; updatedMs: number }[] = [];
  for (const group of byBranch(candidates)) {
    for (let at = 0; at < group.length; at += TURNS_PER_READ) {
      options.signal?.throwIfAborted();
      const slice = group.slice(at, at + TURNS_PER_READ);
      const { sessionId, branchId } = slice[0]!.review;
      const turns = await db.getTurnItemsMany(
        sessionId,
        branchId,
        slice.map((c) => c.review.turn),
      );
      slice.forEach((c, i) => made.push({ made: caseOf(c, turns[i]!), updatedMs: c.review.updatedMs }));
    }
  }
  return { ...onePerTurn(made), withoutExpectation };
}

/**
 * One case per turn. Reviews are kept per turn *and* user message, so a turn whose message changed can hold a stale
 * review beside the current one; both named one case id, and the experiment store (rightly) refuses a report that
 * holds an id twice — after every case had run. The review of the turn's current message wins (the stale one could
 * only be orphaned); of stale reviews alone, the newest is the orphan reported.
 */
function onePerTurn(list: readonly { made: CheckCase | OrphanedCase; updatedMs: number }[]): {
  cases: CheckCase[];
  orphaned: OrphanedCase[];
  superseded: OrphanedCase[];
} {
  const best = new Map<string, { made: CheckCase | OrphanedCase; updatedMs: number }>();
  const rank = (e: { made: CheckCase | OrphanedCase; updatedMs: number }) => ['reason' in e.made ? 0 : 1, e.updatedMs] as const;
  for (const e of list) {
    const id = 'reason' in e.made ? e.made.case.id : e.made.id;
    const had = best.get(id);
    const [a, b] = [rank(e), had ? rank(had) : null];
    if (!b || a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])) best.set(id, e);
  }
  const winners = new Set([...best.values()]);
  const cases: CheckCase[] = [];
  const orphaned: OrphanedCase[] = [];
  const superseded: OrphanedCase[] = [];
  for (const e of list) {
    const m = e.made;
    if (winners.has(e)) {
      if ('reason' in m) orphaned.push(m);
      else cases.push(m);
      continue;
    }
    const winner = best.get('reason' in m ? m.case.id : m.id)!.made;
    const c = 'reason' in m ? m.case : m;
    superseded.push({
      case: c,
      reason:
        'reason' in winner
          ? 'a newer review of the same turn is reported instead'
          : 'a review of another message the turn held before; the review of its current message is checked',
    });
  }
  return { cases, orphaned, superseded };
}

/** Whether the query asks anything of the items (text, tool, role, failed), beyond the review filters. */
function hasItemFilters(q: SearchQuery): boolean {
  return q.text !== '' || q.tools.length > 0 || q.roles.length > 0 || q.failed;
}

/**
 * The candidates whose turn holds an item the query matches: one scan of the file by the search core, limited to the
 * candidates' turns (and naming a shared turn by the branch that ran it, as reviews do).
 */
async function withMatchingItems(db: Reader, query: SearchQuery, candidates: Candidate[], signal?: AbortSignal): Promise<Candidate[]> {
  if (candidates.length === 0) return candidates;
  const hit = new Set<string>();
  await searchDatabase(
    db,
    { ...query, review: query.review ?? { verdicts: [], tags: [], reviewed: null } },
    {
      signal,
      maxHits: Number.MAX_SAFE_INTEGER,
      turns: { mode: 'only', keys: candidates.map((c) => turnSetKey(c.review.sessionId, c.review.branchId, c.review.turn)) },
      onHits: (hits) => {
        for (const h of hits) hit.add(turnSetKey(h.sessionId, h.branchId, h.turn));
      },
    },
  );
  signal?.throwIfAborted();
  return candidates.filter((c) => hit.has(turnSetKey(c.review.sessionId, c.review.branchId, c.review.turn)));
}

/** Per turn, its newest correction (a turn corrected twice expects the later text). */
function latestCorrections(list: readonly Correction[]): Map<string, Correction> {
  const out = new Map<string, Correction>();
  for (const c of list) {
    const had = out.get(turnId(c));
    if (!had || c.updatedMs > had.updatedMs) out.set(turnId(c), c);
  }
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function* byBranch(sorted: readonly Candidate[]): Generator<Candidate[]> {
  let group: Candidate[] = [];
  for (const c of sorted) {
    const last = group[group.length - 1];
    if (last && (last.review.sessionId !== c.review.sessionId || last.review.branchId !== c.review.branchId)) {
      yield group;
      group = [];
    }
    group.push(c);
  }
  if (group.length > 0) yield group;
}

/** The text of a turn's last assistant message, or null when it ends otherwise (a call, nothing). */
export function recordedAnswer(items: readonly unknown[]): string | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (isMessageItem(item) && item.role === 'assistant') return messageText(item.content);
  }
  return null;
}

/**
 * The answer a correction rejects: the text of the turn's item it was made on (`itemKey`), read as `recordedAnswer`
 * reads an answer; null when that item is no assistant message or holds no text.
 */
function rejectedAnswer(item: unknown): string | null {
  if (!isMessageItem(item) || item.role !== 'assistant') return null;
  const text = messageText(item.content);
  return text.trim() === '' ? null : text;
}

/** The case of a candidate given its turn's items now, or the orphan with its reason. */
function caseOf(c: Candidate, entries: readonly ItemEntry[]): CheckCase | OrphanedCase {
  const r = c.review;
  const items = entries.filter((e) => !e.corrupt).map((e) => (e as { item: unknown }).item);
  const user = userMessageOf(items);
  const base: CheckCase = {
    id: caseId(r),
    sessionId: r.sessionId,
    branchId: r.branchId,
    turn: r.turn,
    contentKey: r.turnKey,
    verdict: r.verdict === 'bad' ? 'bad' : 'good',
    input: '',
    expected: { answer: c.correction?.text ?? null, trajectory: r.verdict === 'bad' ? null : [], rejected: null },
    note: r.note === '' ? null : r.note,
    tags: r.tags,
  };
  if (!user) return { case: base, reason: 'the turn is gone' };
  if (turnKeyOf(user) !== r.turnKey) return { case: base, reason: 'the turn holds another user message now' };
  if (entries.some((e) => e.corrupt)) return { case: base, reason: 'an item of the turn cannot be read' };
  const corrected = c.correction ? items.find((i) => contentKey(i) === c.correction!.itemKey) : undefined;
  if (c.correction && corrected === undefined) return { case: base, reason: 'the corrected answer is no longer in the turn' };
  return {
    ...base,
    input: whatIfInput(user) as string | unknown[],
    expected: {
      answer: c.correction ? c.correction.text : recordedAnswer(items),
      // A good turn's every call, hosted and MCP ones too (trajectorySteps.ts). A bad turn's calls are nothing to
      // expect: they were part of the answer its reviewer rejected (a wrong call makes a wrong answer), and a fixed
      // agent that calls otherwise must not fail on them.
      trajectory: r.verdict === 'bad' ? null : trajectorySteps(items).map((step) => ({ name: step.name, arguments: step.arguments })),
      // A bad turn's answer as recorded: a run that gives it again fails (graders/notRejected.ts).
      rejected: corrected === undefined ? null : rejectedAnswer(corrected),
    },
  };
}
