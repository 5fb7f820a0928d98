/**
 * The cases of a check from a review store over a session file (src/agents/check/checkCases.ts): good turns and bad
 * turns with a correction become cases, with their recorded calls and the answer to expect; a review whose turn is gone
 * or changed is orphaned; --query narrows by review filters and by what the turns hold.
 */
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { selectCases } from '../../../../src/agents/check/checkCases';
import { openSessionDatabase, type SessionDatabase } from '../../../../src/store/inspector/sessionDatabase';
import { ReviewStore } from '../../../../src/store/reviews/reviewStore';
import type { ReviewData } from '../../../../src/store/reviews/reviewTypes';
import { parseSearchQuery } from '../../../../src/store/search/searchQuery';
import { AdvancedSQLiteSession } from '../../../../src/store';
import { contentKey } from '../../../../src/store/reviews/contentKey';
import { tempDir } from '../../../support/tempFiles';
import { seedCheckSession, seedReviews, turnKey, user } from './checkAgentKit';

describe('check cases from reviews', () => {
  const tmp = tempDir('asi-check-cases-');
  let db: SessionDatabase;
  let reviews: ReviewData;
  let n = 0;

  beforeEach(async () => {
    const file = join(tmp.dir, `conversations-${++n}.db`);
    await seedCheckSession(file);
    const store = join(tmp.dir, `reviews-${n}.db`);
    await seedReviews(store, file);
    const r = ReviewStore.open(store, { readonly: true });
    reviews = r.exportData();
    r.close();
    db = openSessionDatabase(file, { readonly: true });
  });
  afterEach(() => db.close());
  after(() => tmp.cleanup());

  const ids = (list: { id: string }[]) => list.map((c) => c.id);

  it('takes every good turn and every bad turn with a correction, with what to expect of each', async () => {
    const s = await selectCases(db, reviews);
    assert.deepEqual(ids(s.cases), ['s1/main/2', 's1/main/3', 's1/main/4']);
    const [paris, , mail] = s.cases;
    assert.deepEqual(paris, {
      id: 's1/main/2',
      sessionId: 's1',
      branchId: 'main',
      turn: 2,
      contentKey: turnKey('Weather in Paris?'),
      verdict: 'good',
      input: 'Weather in Paris?',
      expected: {
        answer: 'Sunny in Paris, 18°C.',
        trajectory: [{ name: 'get_weather', arguments: '{"city": "Paris"}' }],
        rejected: null,
      },
      note: null,
      tags: ['weather'],
    });
    // A bad turn expects its correction, and no calls: the send_email it recorded was part of the answer rejected.
    assert.equal(mail!.verdict, 'bad');
    assert.equal(mail!.expected.answer, 'I sent Ana the forecast.');
    assert.equal(mail!.expected.trajectory, null);
    // … and carries the answer reviewed as bad, which a run must not give again (graders/notRejected.ts).
    assert.equal(mail!.expected.rejected, 'Done!!');
    // The bad turn without a correction has nothing to expect: counted, not a case.
    assert.equal(s.withoutExpectation, 1);
  });

  it('a review of a turn that is gone is orphaned, and so is one whose turn holds another message now', async () => {
    let s = await selectCases(db, reviews);
    assert.deepEqual(
      s.orphaned.map((o) => [o.case.id, o.reason]),
      [['s1/main/9', 'the turn is gone']],
    );
    // Turn 3 rewritten: the branch now holds another user message there (pop the turn, write another one).
    db.close();
    const file = db.path;
    const w = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file });
    for (let i = 0; i < 8; i++) await w.popItem();
    await w.addItems([user('Weather in Nice?'), { role: 'assistant', content: 'Warm.' }] as never);
    w.close();
    db = openSessionDatabase(file, { readonly: true });
    s = await selectCases(db, reviews);
    assert.deepEqual(ids(s.cases), ['s1/main/2']);
    assert.deepEqual(
      s.orphaned.map((o) => [o.case.id, o.reason]),
      [
        ['s1/main/3', 'the turn holds another user message now'],
        ['s1/main/4', 'the turn is gone'],
        ['s1/main/9', 'the turn is gone'],
      ],
    );
  });

  it('--query narrows by review filters (tag:, is:bad) and by what the turns hold (text, tool:)', async () => {
    const q = async (text: string) => ids((await selectCases(db, reviews, { query: parseSearchQuery(text) })).cases);
    assert.deepEqual(await q('tag:weather'), ['s1/main/2', 's1/main/3']);
    assert.deepEqual(await q('is:bad'), ['s1/main/4']);
    assert.deepEqual(await q('lyon'), ['s1/main/3']);
    assert.deepEqual(await q('tool:send_email'), ['s1/main/4']);
    assert.deepEqual(await q('tag:weather tool:send_email'), []);
    // reviewed:no selects turns without a review: none of them has a verdict to expect.
    assert.deepEqual(await q('reviewed:no'), []);
  });

  it('a bad case rejects the text of the message its correction was made on (not the last answer), or none', async () => {
    const file = join(tmp.dir, `rejected-${n}.db`);
    const w = new AdvancedSQLiteSession({ sessionId: 'r1', dbPath: file, createTables: true });
    await w.addItems([
      user('Do I need an umbrella?'),
      {
        role: 'assistant',
        type: 'message',
        status: 'completed',
        content: [
          { type: 'output_text', text: 'Take an umbrella:' },
          { type: 'output_text', text: 'it is raining.' },
        ],
      },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
      { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Anything else?' }] },
    ] as never);
    const stored = await w.getTurnStoredItems(1);
    w.close();
    const [first, call] = [stored[1], stored[2]];
    const opened = openSessionDatabase(file, { readonly: true });
    try {
      const ref = { sessionId: 'r1', branchId: 'main', turn: 1, turnKey: turnKey('Do I need an umbrella?') };
      const corrected = (itemKey: string): ReviewData => ({
        ...reviews,
        turnReviews: [{ ...reviews.turnReviews.find((r) => r.verdict === 'bad' && r.turn === 4)!, ...ref }],
        corrections: [{ ...reviews.corrections[0]!, ...ref, itemKey, text: 'No umbrella needed: it is sunny.' }],
      });
      // The corrected message's text parts, as the recorded answer is read; the turn's last answer is another.
      let s = await selectCases(opened, corrected(contentKey(first)));
      assert.deepEqual(
        s.cases.map((c) => [c.verdict, c.expected.answer, c.expected.rejected]),
        [['bad', 'No umbrella needed: it is sunny.', 'Take an umbrella: it is raining.']],
      );
      // A correction made on an item that is no assistant message: still a case, with no answer to reject.
      s = await selectCases(opened, corrected(contentKey(call)));
      assert.deepEqual(
        s.cases.map((c) => [c.verdict, c.expected.rejected]),
        [['bad', null]],
      );
    } finally {
      opened.close();
    }
  });

  it("expects every call of the turn: hosted, MCP, shell and computer calls too, in the turn's order", async () => {
    const file = join(tmp.dir, `hosted-${n}.db`);
    const w = new AdvancedSQLiteSession({ sessionId: 'h1', dbPath: file, createTables: true });
    await w.addItems([
      user('Refund order 7'),
      { type: 'function_call', call_id: 'c1', name: 'lookup_order', arguments: '{"id":7}' },
      { type: 'function_call_output', call_id: 'c1', output: 'order 7' },
      { type: 'mcp_call', id: 'mcp_1', server_label: 'billing', name: 'issue_refund', arguments: '{"order":7}', output: 'refunded' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'refund policy' } },
      { type: 'shell_call', call_id: 'sh_1', action: { commands: ['ls'] }, status: 'completed' },
      { type: 'computer_call', call_id: 'cc_1', action: { type: 'click', x: 1, y: 2 }, status: 'completed' },
      { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Refunded.' }] },
    ] as never);
    w.close();
    const hosted = openSessionDatabase(file, { readonly: true });
    try {
      const data: ReviewData = {
        ...reviews,
        turnReviews: [{ ...reviews.turnReviews[1]!, sessionId: 'h1', branchId: 'main', turn: 1, turnKey: turnKey('Refund order 7') }],
        corrections: [],
      };
      const s = await selectCases(hosted, data);
      assert.deepEqual(s.cases[0]!.expected.trajectory, [
        { name: 'lookup_order', arguments: '{"id":7}' },
        { name: 'mcp_call billing.issue_refund', arguments: '{"order":7}' },
        { name: 'web_search_call', arguments: '{"type":"search","query":"refund policy"}' },
        { name: 'shell_call', arguments: '{"commands":["ls"]}' },
        { name: 'computer_call', arguments: '{"type":"click","x":1,"y":2}' },
      ]);
    } finally {
      hosted.close();
    }
  });
});
