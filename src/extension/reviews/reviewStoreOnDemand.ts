/**
 * The review store a session store's reviews go in, created by the first review written to it, not by looking
 * (docs/reviews.md): with `agentSessions.reviews.location` set to `beside-file`, expanding a file in the tree or
 * opening its conversation view used to create `<file>.reviews.db` next to it. Free of `vscode`, so it is unit-tested
 * in Node against the real store in the store worker.
 */
import type { ReviewStore } from '../../store/reviews/reviewStore';
import type { WorkerReviewStore } from '../../store/worker/storeClient';
import type { ReviewMethod } from '../../store/worker/storeWorkerProtocol';
import { StoreOnDemand, type EmptyAnswers } from '../../store/worker/storeOnDemand';

/** What a review store with nothing in it answers: to every read, and to a removal (there is nothing to remove). */
export const EMPTY_REVIEW_ANSWERS: EmptyAnswers<ReviewStore, ReviewMethod> = {
  turnReviews: () => [],
  tagsInUse: () => [],
  pairwiseReviews: () => [],
  corrections: () => [],
  exportData: () => ({ format: 'agent-session-inspector/reviews', version: 1, turnReviews: [], pairwise: [], corrections: [] }),
  counts: () => ({ turnReviews: 0, pairwise: 0, corrections: 0 }),
  deletePairwise: () => false,
  deleteCorrection: () => false,
};

/** The review store at `path`, opened (and created) by `open` on the first write, or the first read once it exists. */
export function reviewStoreOnDemand(path: string, open: () => Promise<WorkerReviewStore>): StoreOnDemand<ReviewStore, ReviewMethod> {
  return new StoreOnDemand<ReviewStore, ReviewMethod>(path, open, EMPTY_REVIEW_ANSWERS);
}
