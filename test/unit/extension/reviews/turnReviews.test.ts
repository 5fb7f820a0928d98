/**
 * Turn verdicts as the conversation view gets them, from a real session file and a real review store: a verdict set
 * by turn (its key read from the file, not given), a branch's own and shared turns' reviews, a review whose turn holds
 * other content now shown orphaned, and a turn with no user message refused.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { branchReviews, setCorrection, setTurnReview, turnKey } from '../../../../src/extension/reviews/turnReviews';
import { AdvancedSQLiteSession, openSessionDatabase, type SessionDatabase } from '../../../../src/store';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import { DEFAULT_TAGS } from '../../../../src/store/reviews/reviewTypes';
import type { WorkerReviewStore } from '../../../../src/store/worker/storeClient';
import { UserFacingError } from '../../../../src/extension/core/userError';
import { tempDir } from '../../../support/tempFiles';

describe('turn reviews', () => {
  const tmp = tempDir('asi-turn-reviews-');
  let db: SessionDatabase;
  let store: ReviewStore;
  /** The worker's `call` over the real store, without the thread. */
  let worker: WorkerReviewStore;
  const target = { sessionId: 's', source: 's.db' };

  before(async () => {
    const path = join(tmp.dir, 's.db');
    const s = new AdvancedSQLiteSession({ sessionId: 's', dbPath: path, createTables: true });
    for (const q of ['Weather in Oslo?', 'And tomorrow?', 'Pack an umbrella?']) {
      await s.addItems([{ role: 'user', content: q }, { role: 'assistant', content: `About: ${q}` } as never]);
    }
    await s.createBranchFromTurn(3, 'retry');
    await s.addItems([{ role: 'user', content: 'Should I pack boots?' }]);
    s.close();
    db = openSessionDatabase(path);
    store = ReviewStore.open(join(tmp.dir, 'reviews.db'));
    worker = {
      call: async (method: string, ...args: unknown[]) =>
        (store as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!.apply(store, args),
    } as unknown as WorkerReviewStore;
  });
  after(() => {
    db.close();
    store.close();
    tmp.cleanup();
  });

  it("keys a turn by its user message as stored, and reviews a branch's own and shared turns", async () => {
    assert.equal(await turnKey(db, 's', 'main', 2), contentKey({ role: 'user', content: 'And tomorrow?' }));
    assert.equal(await turnKey(db, 's', 'main', 9), null);
    const saved = await setTurnReview(db, worker, target, 'main', 1, { verdict: 'good', addTags: ['Too slow'] });
    assert.deepEqual([saved?.verdict, saved?.tags], ['good', ['too-slow']]);
    await setTurnReview(db, worker, target, 'main', 3, { verdict: 'bad', note: 'should ask where' });
    await setTurnReview(db, worker, target, 'retry', 3, { verdict: 'good' });
    const tree = db.getBranchTree('s');
    const main = await branchReviews(db, worker, 's', 'main', tree);
    assert.deepEqual(
      main.turns.map((r) => [r.branchId, r.turn, r.verdict, r.tags, r.note]),
      [
        ['main', 1, 'good', ['too-slow'], ''],
        ['main', 3, 'bad', [], 'should ask where'],
      ],
    );
    assert.deepEqual(main.tags.slice(0, DEFAULT_TAGS.length), [...DEFAULT_TAGS]);
    // retry shares turns 1–2 with main (main's review of turn 1 shows there) and has its own turn 3.
    const retry = await branchReviews(db, worker, 's', 'retry', tree);
    assert.deepEqual(
      retry.turns.map((r) => [r.branchId, r.turn, r.verdict]),
      [
        ['main', 1, 'good'],
        ['retry', 3, 'good'],
      ],
    );
    assert.equal(retry.orphaned.length, 0);
  });

  it('shows a review whose turn holds other content now as orphaned, with the reason', async () => {
    store.setTurnReview(
      { sessionId: 's', branchId: 'main', turn: 2, turnKey: contentKey({ role: 'user', content: 'a question no longer here' }) },
      { verdict: 'bad' },
    );
    store.setTurnReview(
      { sessionId: 's', branchId: 'main', turn: 7, turnKey: contentKey({ role: 'user', content: 'gone' }) },
      { tags: ['refused'] },
    );
    const main = await branchReviews(db, worker, 's', 'main', db.getBranchTree('s'));
    assert.deepEqual(
      main.orphaned.map((r) => [r.turn, r.reason]),
      [
        [2, 'content-changed'],
        [7, 'turn-gone'],
      ],
    );
    assert.ok(main.tags.includes('refused'));
  });

  it('refuses to review a turn that has no readable user message', async () => {
    await assert.rejects(setTurnReview(db, worker, target, 'main', 9, { verdict: 'good' }), UserFacingError);
  });

  it("keeps a correction by its item's place in the turn, shows it on branches sharing the turn, and removes it", async () => {
    const saved = await setCorrection(db, worker, target, 'main', 2, 1, 'Tomorrow: sunny, 12 °C.');
    assert.deepEqual([saved?.turn, saved?.itemIndex, saved?.text], [2, 1, 'Tomorrow: sunny, 12 °C.']);
    const onRetry = await branchReviews(db, worker, 's', 'retry', db.getBranchTree('s'));
    assert.deepEqual(
      onRetry.corrections.map((c) => [c.branchId, c.turn, c.itemIndex, c.text]),
      [['main', 2, 1, 'Tomorrow: sunny, 12 °C.']],
    );
    await assert.rejects(setCorrection(db, worker, target, 'main', 2, 0, 'not an answer'), UserFacingError);
    // A correction of an answer that is no longer in the turn is counted, not shown.
    store.setCorrection({
      sessionId: 's',
      branchId: 'main',
      turn: 1,
      turnKey: contentKey({ role: 'user', content: 'Weather in Oslo?' }),
      itemKey: contentKey('gone'),
      text: 'x',
    });
    const main = await branchReviews(db, worker, 's', 'main', db.getBranchTree('s'));
    assert.equal(main.orphanedCorrections, 1);
    assert.equal(await setCorrection(db, worker, target, 'main', 2, 1, null), null);
    assert.equal((await branchReviews(db, worker, 's', 'main', db.getBranchTree('s'))).corrections.length, 0);
  });
});
