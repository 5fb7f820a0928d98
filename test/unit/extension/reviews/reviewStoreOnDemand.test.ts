/**
 * Reading never writes (issue 46): the review store a session file's reviews go in "beside the file" is not created
 * by reading — every read the tree, the conversation and compare views, search and export make answers what an
 * empty store answers (checked against a real, empty `ReviewStore`), and a removal removes nothing — and the first
 * verdict creates it, in the store worker, where the extension keeps it.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EMPTY_REVIEW_ANSWERS, reviewStoreOnDemand } from '../../../../src/extension/reviews/reviewStoreOnDemand';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import { assertAnswersAsEmpty } from '../../../support/storeOnDemand';
import { useWorkerClient } from '../../../support/workerClient';

describe('the review store on demand', () => {
  const worker = useWorkerClient('asi-reviews-on-demand-');
  const key = contentKey({ role: 'user', content: 'Weather in Oslo?' });
  const ref = { sessionId: 'trip', branchId: 'main', turn: 1, turnKey: key };
  const pair = { sessionId: 'trip', leftBranch: 'main', rightBranch: 'retry', turn: 1, leftKey: key, rightKey: key };
  /** Every call a reader makes, and the removals. */
  const READS = [
    ['turnReviews', null],
    ['turnReviews', 'trip'],
    ['turnReviews', 'trip', 'main'],
    ['tagsInUse'],
    ['pairwiseReviews', 'trip'],
    ['pairwiseReviews', 'trip', ['main', 'retry']],
    ['corrections', 'trip'],
    ['corrections', 'trip', 'main'],
    ['exportData'],
    ['exportData', 'trip'],
    ['counts'],
    ['deletePairwise', pair],
    ['deleteCorrection', { ...ref, itemKey: key }],
  ] as const;

  it('answers reads of a store that does not exist as an empty store does, without creating it', async () => {
    const path = join(worker.dir, 'reviewed.db.reviews.db');
    const store = reviewStoreOnDemand(path, () => worker.client().openReviewStore(path));
    // The answers to expect, from the store class itself on an empty file of its own.
    await assertAnswersAsEmpty(store, ReviewStore.open(join(worker.dir, 'empty.reviews.db')), READS);
    assert.equal(existsSync(path), false, 'reading created no review store');
    assert.equal(store.isOpen, false);
    await store.close();
  });

  it('is created by the first verdict, and read from then on', async () => {
    const path = join(worker.dir, 'verdict.db.reviews.db');
    const store = reviewStoreOnDemand(path, () => worker.client().openReviewStore(path));
    try {
      await store.call('setTurnReview', ref, { verdict: 'good' });
      assert.ok(existsSync(path));
      assert.deepEqual(
        (await store.call('turnReviews', 'trip')).map((r) => [r.turn, r.verdict]),
        [[1, 'good']],
      );
      // A second window's stand-in finds the store there and reads it.
      const other = reviewStoreOnDemand(path, () => worker.client().openReviewStore(path));
      assert.equal((await other.call('counts')).turnReviews, 1);
      await other.close();
    } finally {
      await store.close();
    }
  });

  it('has an empty answer only for methods that read or remove', () => {
    assert.deepEqual(Object.keys(EMPTY_REVIEW_ANSWERS).sort(), [
      'corrections',
      'counts',
      'deleteCorrection',
      'deletePairwise',
      'exportData',
      'pairwiseReviews',
      'tagsInUse',
      'turnReviews',
    ]);
  });
});
