/**
 * The review store through the store worker (the extension's way): a verdict written and read back, the whole file's
 * data exported, and the review errors rebuilt on this side as the same class with its problem.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { ReviewStoreError } from '../../../../src/store/reviews/reviewErrors';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import { copyFixture } from '../../../support/tempFiles';
import { useWorkerClient } from '../../../support/workerClient';

const ROOT = join(__dirname, '..', '..', '..', '..');

describe('the review store in the store worker', function () {
  this.timeout(30_000);
  const worker = useWorkerClient('asi-review-worker-');
  const tmp = { dir: worker.dir };

  it('stores a verdict in the worker and reads it back', async () => {
    const store = await worker.client().openReviewStore(join(tmp.dir, 'reviews.db'));
    const ref = { sessionId: 's', branchId: 'main', turn: 2, turnKey: contentKey({ role: 'user', content: 'hi' }) };
    const saved = await store.call('setTurnReview', ref, { verdict: 'bad', addTags: ['too-slow'] }, { reviewer: 'ana' }, 42);
    assert.deepEqual([saved?.verdict, saved?.tags, saved?.updatedMs], ['bad', ['too-slow'], 42]);
    const [read] = await store.call('turnReviews', 's', 'main');
    assert.deepEqual(read, saved);
    assert.equal((await store.call('exportData')).turnReviews.length, 1);
    await store.close();
  });

  it('rejects with ReviewStoreError and its problem: a bad verdict, a session file as the store', async () => {
    const store = await worker.client().openReviewStore(join(tmp.dir, 'other.db'));
    await assert.rejects(
      store.call('setTurnReview', { sessionId: 's', branchId: 'main', turn: 1, turnKey: 'x' }, { verdict: 'good' }),
      (e: unknown) => e instanceof ReviewStoreError && e.problem === 'invalid',
    );
    await store.close();
    const session = copyFixture(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-basic.db'), tmp.dir);
    await assert.rejects(
      worker.client().openReviewStore(session),
      (e: unknown) => e instanceof ReviewStoreError && e.problem === 'not-review-store',
    );
  });
});
