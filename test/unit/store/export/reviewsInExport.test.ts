/**
 * Review data in the exports (docs/reviews.md): a Markdown transcript shows each turn's verdict, tags, note,
 * corrections and pairwise verdicts under the turn it was made on, lists the reviews it could not place, and a JSON
 * export carries the session's review data as its `reviews` field, which the import reads past. JSONL never has it.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { AdvancedSQLiteSession, importSessionFile, openSessionDatabase } from '../../../../src/store';
import { exportSessionToFile } from '../../../../src/store/export/sessionExport';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import type { ReviewData } from '../../../../src/store/reviews/reviewTypes';
import { tempDir } from '../../../support/tempFiles';
import { exportText } from './exportFixtures';
import { readFileSync } from 'node:fs';

describe('review data in the exports', () => {
  const tmp = tempDir();
  let path: string;
  let reviews: ReviewData;
  const user1 = { role: 'user' as const, content: 'Weather in Oslo?' };
  const answer1 = { role: 'assistant', content: 'Rain, 7 °C.' };
  const user2 = { role: 'user' as const, content: 'Umbrella?' };
  const answer2 = { role: 'assistant', content: 'No.' };
  const user2b = { role: 'user' as const, content: 'Raincoat?' };

  before(async () => {
    path = join(tmp.dir, 'reviewed.db');
    const s = new AdvancedSQLiteSession({ sessionId: 'trip', dbPath: path, createTables: true });
    await s.addItems([user1, answer1 as never]);
    await s.addItems([user2, answer2 as never]);
    await s.createBranchFromTurn(2, 'coat');
    await s.addItems([user2b, { role: 'assistant', content: 'Yes.' } as never]);
    s.close();
    const store = ReviewStore.open(join(tmp.dir, 'reviews.db'));
    const ref = (branchId: string, turn: number, user: unknown) => ({ sessionId: 'trip', branchId, turn, turnKey: contentKey(user) });
    store.setTurnReview(ref('main', 1, user1), { verdict: 'good', tags: ['weather'], note: 'Short and right.\nKeep it.' });
    store.setTurnReview(ref('main', 2, user2), { verdict: 'bad', tags: ['wrong-tool'] });
    // Made on content the turn no longer holds: orphaned.
    store.setTurnReview(ref('coat', 2, { role: 'user', content: 'Something else' }), { verdict: 'good' });
    store.setCorrection({ ...ref('main', 2, user2), itemKey: contentKey(answer2), text: 'Yes: rain all day.' });
    store.setPairwise({
      sessionId: 'trip',
      leftBranch: 'main',
      rightBranch: 'coat',
      turn: 2,
      leftKey: contentKey(user2),
      rightKey: contentKey(user2b),
      outcome: 'right',
      reason: 'answers the real question',
      leftModel: null,
      rightModel: null,
    });
    store.setTurnReview({ sessionId: 'other', branchId: 'main', turn: 1, turnKey: contentKey(user1) }, { verdict: 'bad' });
    reviews = store.exportData();
    store.close();
  });
  after(() => tmp.cleanup());

  it('Markdown: under each turn its review, note, correction and pairwise verdict; the unplaced ones at the end', async () => {
    const md = await exportText(path, 'md', { sessionId: 'trip', reviews });
    const turn1 = md.slice(md.indexOf('### Turn 1'), md.indexOf('### Turn 2'));
    assert.match(turn1, /\*\*Review:\*\* ✓ good · `weather`\n\n> Short and right\.\n> Keep it\.\n/);
    const main2 = md.slice(md.indexOf('### Turn 2'), md.indexOf('## Branch `coat`'));
    assert.match(main2, /\*\*Review:\*\* ✗ bad · `wrong-tool`/);
    assert.match(main2, /\*\*Correction\*\* of item 2 \(the answer it should have given\):\n\n> Yes: rain all day\./);
    assert.match(main2, /\*\*Compared with `coat`:\*\* worse — answers the real question/);
    const coat = md.slice(md.indexOf('## Branch `coat`'));
    assert.match(coat, /\*\*Compared with `main`:\*\* better — answers the real question/);
    assert.match(md, /## Reviews not shown above\n\n.*\n\n- coat turn 2: \*\*Review:\*\* ✓ good\n$/);
    assert.equal(md.match(/✗ bad/g)?.length, 1, "another session's reviews stay out");
    // One branch exported: its shared turn shows the review made on the branch that ran it.
    const coatOnly = await exportText(path, 'md', { sessionId: 'trip', branchId: 'coat', reviews });
    assert.match(coatOnly.slice(coatOnly.indexOf('## Turn 1'), coatOnly.indexOf('## Turn 2')), /✓ good · `weather`/);
    // Without review data the transcript is as before.
    assert.doesNotMatch(await exportText(path, 'md', { sessionId: 'trip' }), /Review/);
  });

  it('JSON carries the session review data, which the import reads past; JSONL never has it', async () => {
    const out = join(tmp.dir, 'trip.json');
    await exportSessionToFile(path, out, 'json', { sessionId: 'trip', reviews });
    const doc = JSON.parse(readFileSync(out, 'utf8')) as { reviews: ReviewData; messages: unknown[] };
    assert.deepEqual(
      doc.reviews.turnReviews.map((r) => [r.branchId, r.turn, r.verdict]),
      [
        ['coat', 2, 'good'],
        ['main', 1, 'good'],
        ['main', 2, 'bad'],
      ],
    );
    assert.equal(doc.reviews.corrections.length, 1);
    assert.equal(doc.reviews.pairwise.length, 1);
    assert.equal(doc.messages.length, 6);
    const copy = join(tmp.dir, 'copy.db');
    const imported = await importSessionFile(copy, out, { sessionId: 'trip-copy', createTables: true });
    assert.equal(imported.items, 6);
    const db = openSessionDatabase(copy, { readonly: true });
    assert.deepEqual(
      db.getBranchTree('trip-copy').map((b) => b.branchId),
      ['main', 'coat'],
    );
    db.close();
    assert.doesNotMatch(await exportText(path, 'jsonl', { sessionId: 'trip', reviews }), /wrong-tool|Review/);
  });
});
