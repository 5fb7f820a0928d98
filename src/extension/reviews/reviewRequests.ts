import type { RequestsOf } from '../core/viewRequests';
import type { Services } from '../services';
import { branchFromCorrection } from './correctionBranch';
import { branchReviews, setCorrection, setTurnReview } from './turnReviews';

/** The conversation view's requests about review data: a branch's reviews, a verdict, a correction and its branch. */
export function reviewRequests(s: Services): RequestsOf<'reviews/get' | 'review/set' | 'correction/set' | 'correction/branch'> {
  const { registry, reviews, reviewQueue } = s;
  return {
    'reviews/get': async (p, view) => {
      const db = view.db();
      const branches = await view.branches(db);
      return branchReviews(db, await reviews.storeFor(view.target.dbPath), view.target.sessionId, p.branchId, branches);
    },
    'review/set': async (p, view) => {
      const reader = view.db();
      const saved = await reviews.write(view.target, (store, origin) => setTurnReview(reader, store, origin, p.branchId, p.turn, p.change));
      // A verdict on Review Next's turn goes on to the next one: one keystroke per turn.
      if (p.change.verdict) void reviewQueue.verdictGiven({ ...view.target, branchId: p.branchId, turn: p.turn }).catch(() => undefined);
      return saved;
    },
    'correction/set': (p, view) => {
      const reader = view.db();
      return reviews.write(view.target, (store, origin) => setCorrection(reader, store, origin, p.branchId, p.turn, p.itemIndex, p.text));
    },
    'correction/branch': async (p, view) => {
      const reader = view.db();
      const store = await reviews.storeFor(view.target.dbPath);
      return { branchId: (await branchFromCorrection(registry, reader, store, view.target, p)) ?? null };
    },
  };
}
