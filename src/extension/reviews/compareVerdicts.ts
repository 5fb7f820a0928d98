/**
 * Pairwise verdicts in the compare view (docs/reviews.md): per aligned turn, which of the baseline's and a column's
 * answers was better, kept in the review store as a pairwise review of the two branches (sorted there, turned back
 * here). Verdicts need one session: the review store keys them by session.
 */
import type { SessionReader } from '../../store/inspector/sessionReader';
import type { PairwiseReview, TurnReview } from '../../store/reviews/reviewTypes';
import { turnOrigin, type ForkFacts } from '../../shared/turnOrigin';
import type { WorkerReviewStore } from '../../store/worker/storeClient';
import type {
  CompareTarget,
  CompareTurnMark,
  CompareVerdictTally,
  CompareVerdictView,
  CompareVerdictsView,
} from '../../shared/protocol/compareViews';
import type { PairwiseOutcome } from '../../shared/reviewVocabulary';
import { UserFacingError } from '../core/userError';
import { turnKey } from './turnReviews';
import * as l10n from '@vscode/l10n';

/** Why the columns cannot hold verdicts, or null. */
export function verdictsUnavailable(columns: readonly CompareTarget[]): string | null {
  const first = columns[0];
  return first && columns.every((c) => c.dbPath === first.dbPath && c.sessionId === first.sessionId)
    ? null
    : l10n.t('Verdicts are kept for branches of one session; these columns come from different sessions.');
}

/** A stored verdict as the baseline sees it: `left` is the baseline. */
function fromBaseline(r: PairwiseReview, baseline: string): PairwiseOutcome {
  if (r.leftBranch === baseline || (r.outcome !== 'left' && r.outcome !== 'right')) return r.outcome;
  return r.outcome === 'left' ? 'right' : 'left';
}

/**
 * Each column's turn verdicts, as the conversation view's turn list shows them: a turn is reviewed on the branch that
 * ran it, so a column's shared turns show their parent's review. Columns of another file than the first have none here
 * (their reviews may live in another review store).
 */
async function turnMarks(
  columns: readonly CompareTarget[],
  store: WorkerReviewStore,
  reader?: Pick<SessionReader, 'getBranchTree'>,
): Promise<CompareTurnMark[]> {
  const first = columns[0];
  if (!first) return [];
  const marks: CompareTurnMark[] = [];
  const bySession = new Map<string, Promise<{ reviews: TurnReview[]; tree: ForkFacts[] }>>();
  for (let column = 0; column < columns.length; column++) {
    const c = columns[column]!;
    if (c.dbPath !== first.dbPath) continue;
    let got = bySession.get(c.sessionId);
    if (!got) {
      got = Promise.all([store.call('turnReviews', c.sessionId), reader ? reader.getBranchTree(c.sessionId) : []]).then(
        ([reviews, tree]) => ({ reviews, tree }),
      );
      bySession.set(c.sessionId, got);
    }
    const { reviews, tree } = await got;
    for (const r of reviews) {
      // The review's turn is this column's when the column's branch ran it or shares it from there.
      if (turnOrigin(tree, c.branchId, r.turn) !== r.branchId) continue;
      marks.push({ column, turn: r.turn, verdict: r.verdict, tags: r.tags });
    }
  }
  return marks;
}

export async function compareVerdicts(
  columns: readonly CompareTarget[],
  store: WorkerReviewStore,
  reader?: Pick<SessionReader, 'getBranchTree'>,
): Promise<CompareVerdictsView> {
  const marks = await turnMarks(columns, store, reader).catch(() => []);
  const reason = verdictsUnavailable(columns);
  if (reason) return { available: false, reason, verdicts: [], tallies: [], marks };
  const base = columns[0]!;
  const verdicts: CompareVerdictView[] = [];
  const tallies: CompareVerdictTally[] = [];
  for (let column = 1; column < columns.length; column++) {
    const c = columns[column]!;
    const tally: CompareVerdictTally = {
      column,
      label: c.label ?? c.branchId,
      model: c.model ?? null,
      better: 0,
      worse: 0,
      ties: 0,
      bothBad: 0,
    };
    if (c.branchId !== base.branchId) {
      for (const r of await store.call('pairwiseReviews', base.sessionId, [base.branchId, c.branchId])) {
        const outcome = fromBaseline(r, base.branchId);
        verdicts.push({ column, turn: r.turn, outcome, reason: r.reason });
        if (outcome === 'right') tally.better++;
        else if (outcome === 'left') tally.worse++;
        else if (outcome === 'tie') tally.ties++;
        else tally.bothBad++;
      }
    }
    tallies.push(tally);
  }
  return { available: true, reason: null, verdicts, tallies, marks };
}

/** Sets (or, `outcome` null, removes) the verdict on `turn` between the baseline and `column`. */
export async function setCompareVerdict(
  columns: readonly CompareTarget[],
  column: number,
  turn: number,
  outcome: PairwiseOutcome | null,
  reason: string,
  reader: Pick<SessionReader, 'getTurnItems'>,
  store: WorkerReviewStore,
  source: string,
): Promise<void> {
  const unavailable = verdictsUnavailable(columns);
  if (unavailable) throw new UserFacingError(unavailable);
  const base = columns[0]!;
  const c = columns[column];
  if (!c || column === 0) throw new UserFacingError(l10n.t('There is no column {0} to compare with the baseline.', column + 1));
  const [leftKey, rightKey] = await Promise.all([
    turnKey(reader, base.sessionId, base.branchId, turn),
    turnKey(reader, c.sessionId, c.branchId, turn),
  ]);
  if (!leftKey || !rightKey)
    throw new UserFacingError(l10n.t('Turn {0} is not on both branches: there is nothing to judge between.', turn));
  const pair = { sessionId: base.sessionId, leftBranch: base.branchId, rightBranch: c.branchId, turn, leftKey, rightKey };
  if (outcome === null) await store.call('deletePairwise', pair);
  else
    await store.call('setPairwise', { ...pair, outcome, reason, leftModel: base.model ?? null, rightModel: c.model ?? null }, { source });
}
