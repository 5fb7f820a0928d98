/**
 * Review data in the Markdown and JSON exports (docs/reviews.md): a transcript shows each turn's verdict, tags, note,
 * corrections and pairwise verdicts under the turn; a JSON export carries the session's review data as one header
 * field (`reviews`, the shape `agent-sessions review export` writes), which the import reads past. A review is shown
 * only on the turn whose content it was made on (reviewMatching.ts); the rest are listed at the end as orphaned, never
 * dropped.
 */
import type { ItemEntry } from '../inspector/inspectorTypes';
import { contentKey } from '../reviews/contentKey';
import { turnKeyOf } from '../reviews/reviewMatching';
import type { PairwiseReview, ReviewData, TurnReview } from '../reviews/reviewTypes';

/** The review data of one session, out of a store's or a file's. */
export function sessionReviewData(data: ReviewData, sessionId: string): ReviewData {
  return {
    format: data.format,
    version: data.version,
    turnReviews: data.turnReviews.filter((r) => r.sessionId === sessionId),
    pairwise: data.pairwise.filter((r) => r.sessionId === sessionId),
    corrections: data.corrections.filter((r) => r.sessionId === sessionId),
  };
}

export function hasReviews(data: ReviewData | undefined): data is ReviewData {
  return !!data && data.turnReviews.length + data.pairwise.length + data.corrections.length > 0;
}

const quote = (text: string): string =>
  text
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n');

/** Which reviews a transcript has shown, so the ones it never reached can be listed as orphaned. */
export class ReviewsForTranscript {
  private readonly shown = new Set<object>();

  constructor(private readonly data: ReviewData) {}

  /**
   * The review block of a turn as it is now (`ranOn`: the branch that ran it), or '' without reviews. `items` are
   * the turn's items as exported, the user message first.
   */
  turnBlock(ranOn: string, turn: number, items: readonly ItemEntry[]): string {
    const user = items.find((e) => !e.corrupt && e.type === 'user');
    if (!user || user.corrupt || turn < 1) return '';
    const key = turnKeyOf(user.item);
    const here = <R extends { branchId: string; turn: number; turnKey: string }>(r: R): boolean =>
      r.branchId === ranOn && r.turn === turn && r.turnKey === key;
    const lines: string[] = [];
    const review = this.data.turnReviews.find(here);
    if (review) {
      this.shown.add(review);
      lines.push(verdictLine(review));
      if (review.note) lines.push(quote(review.note));
    }
    for (const c of this.data.corrections.filter(here)) {
      const index = items.findIndex((e) => !e.corrupt && contentKey(e.item) === c.itemKey);
      if (index < 0) continue;
      this.shown.add(c);
      lines.push(`**Correction** of item ${index + 1} (the answer it should have given):`, quote(c.text));
    }
    for (const p of this.data.pairwise) {
      const side =
        p.turn !== turn
          ? null
          : p.leftBranch === ranOn && p.leftKey === key
            ? 'left'
            : p.rightBranch === ranOn && p.rightKey === key
              ? 'right'
              : null;
      if (!side) continue;
      this.shown.add(p);
      lines.push(pairwiseLine(p, side));
    }
    return lines.length === 0 ? '' : `\n${lines.join('\n\n')}\n`;
  }

  /** The reviews no shown turn matched (their turn is gone, holds other content, or was not exported). */
  notShown(): string {
    const rest = [
      ...this.data.turnReviews.filter((r) => !this.shown.has(r)).map((r) => `- ${r.branchId} turn ${r.turn}: ${verdictLine(r)}`),
      ...this.data.corrections.filter((c) => !this.shown.has(c)).map((c) => `- ${c.branchId} turn ${c.turn}: a correction`),
      ...this.data.pairwise
        .filter((p) => !this.shown.has(p))
        .map((p) => `- ${p.leftBranch} / ${p.rightBranch} turn ${p.turn}: ${p.outcome.replace(/-/g, ' ')}`),
    ];
    return rest.length === 0
      ? ''
      : `\n## Reviews not shown above\n\n_Their turns are not in this export, or hold other content now._\n\n${rest.join('\n')}\n`;
  }
}

function verdictLine(r: Pick<TurnReview, 'verdict' | 'tags' | 'reviewer'>): string {
  const verdict = r.verdict === 'good' ? '✓ good' : r.verdict === 'bad' ? '✗ bad' : 'no verdict';
  const tags = r.tags.map((t) => `\`${t}\``).join(' ');
  return `**Review:** ${verdict}${tags ? ` · ${tags}` : ''}${r.reviewer ? ` · by ${r.reviewer}` : ''}`;
}

function pairwiseLine(p: PairwiseReview, side: 'left' | 'right'): string {
  const other = side === 'left' ? p.rightBranch : p.leftBranch;
  const outcome =
    p.outcome === 'tie' || p.outcome === 'both-bad'
      ? p.outcome === 'tie'
        ? 'a tie'
        : 'both bad'
      : (p.outcome === 'left') === (side === 'left')
        ? 'better'
        : 'worse';
  return `**Compared with \`${other}\`:** ${outcome}${p.reason ? ` — ${p.reason.replace(/\s+/g, ' ')}` : ''}`;
}
