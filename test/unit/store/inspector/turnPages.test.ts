/** getTurnsPage: a branch's user turns with previews and per-turn token totals, a page at a time. */
import { strict as assert } from 'node:assert';
import { AdvancedSQLiteSession, InvalidArgumentError, type SessionDatabase, type TurnEntry } from '../../../../src/store';
import { TempFolder, mk, sql, writeBranchedFile, type SessionModel } from './inspectorFixtures';

function readAllTurns(db: SessionDatabase, sessionId: string, branchId: string, limit: number): TurnEntry[] {
  const out: TurnEntry[] = [];
  let after: number | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const page = db.getTurnsPage(sessionId, branchId, { afterTurn: after, limit });
    out.push(...page.turns);
    if (page.nextAfterTurn === null) return out;
    assert.equal(page.turns.length, limit, 'only the last page is short');
    after = page.nextAfterTurn;
  }
  throw new Error('paging did not end');
}

describe('SessionDatabase.getTurnsPage', () => {
  let folder: TempFolder;
  let m: SessionModel;
  beforeEach(async () => {
    folder = new TempFolder();
    m = await writeBranchedFile(folder);
  });
  afterEach(() => folder.cleanup());

  it('lists the user turns written on each branch with their previews, whatever the page size', () => {
    const db = folder.inspect();
    for (const branch of m.branches.keys()) {
      const users = m.branch(branch).filter((i) => i.type === 'user');
      for (const limit of [1, 2, 10]) {
        const turns = readAllTurns(db, 'branched', branch, limit);
        assert.deepEqual(
          turns.map((t) => [t.turn, t.branchTurnNumber, t.preview, t.error]),
          users.map((u) => [u.turn, u.turn, (u.item as { content: string }).content, null]),
          `${branch}, pages of ${limit}`,
        );
      }
    }
  });

  it("carries each turn's total_tokens from turn_usage (null without a row)", () => {
    const turns = readAllTurns(folder.inspect(), 'branched', 'main', 10);
    // storeRunUsage ran after turn 2 (10 + 5) and after turn 4 (30 + 10), on main only.
    assert.deepEqual(
      turns.map((t) => t.totalTokens),
      [null, 15, null, 40],
    );
    // Branching copies no usage (spec §8.3).
    assert.deepEqual(
      readAllTurns(folder.inspect(), 'branched', 'alt', 10).map((t) => t.totalTokens),
      [null, null, null, null],
    );
  });

  it('agrees with getConversationTurns() (preview, time, structure row)', async () => {
    const path = folder.path();
    const long = 'é'.repeat(150);
    const s = folder.session({ sessionId: 'previews', dbPath: path });
    await s.addItems([mk.user(long), mk.assistant('ok')]);
    await s.addItems([{ role: 'user', content: [{ type: 'input_text', text: 'list content' }] } as never]);
    s.close();
    // An item's two rows are stamped by two statements, each with its own CURRENT_TIMESTAMP (as Python writes them):
    // across a second boundary they differ by one, and the view shows the message's time where getConversationTurns()
    // shows the structure row's, as Python's does (a failure of this test on 2026-12-05, 17:29:04 against :05). The
    // same times here, so what is compared is what each reads, not the clock.
    const raw = folder.raw(path);
    raw.exec(`UPDATE agent_messages SET created_at = (SELECT min(s.created_at) FROM message_structure s WHERE s.message_id = agent_messages.id)
      WHERE session_id = 'previews'`);
    raw.close();
    const db = folder.inspect(path);
    const session = folder.track(new AdvancedSQLiteSession({ sessionId: 'previews', dbPath: path }));
    const expected = await session.getConversationTurns('main');
    const turns = db.getTurnsPage('previews', 'main', { limit: 10 }).turns;
    assert.deepEqual(
      turns.map((t) => [t.turn, t.preview, t.createdAt]),
      expected.map((c) => [c.turn, c.content, c.timestamp]),
    );
    assert.equal(turns[0]?.preview, 'é'.repeat(100) + '...');
    const rows = sql<{ id: number; message_id: number; sequence_number: number }>(
      path,
      "SELECT id, message_id, sequence_number FROM message_structure WHERE session_id = 'previews' AND message_type = 'user' ORDER BY sequence_number",
    );
    assert.deepEqual(
      turns.map((t) => [t.structureId, t.messageId, t.sequenceNumber]),
      rows.map((r) => [r.id, r.message_id, r.sequence_number]),
    );
  });

  it('starts after afterTurn', () => {
    const db = folder.inspect();
    assert.deepEqual(
      db.getTurnsPage('branched', 'main', { afterTurn: 1, limit: 2 }).turns.map((t) => t.turn),
      [2, 3],
    );
    assert.deepEqual(db.getTurnsPage('branched', 'main', { afterTurn: 1, limit: 2 }).nextAfterTurn, 3);
    assert.deepEqual(db.getTurnsPage('branched', 'main', { afterTurn: 4, limit: 2 }), { turns: [], nextAfterTurn: null });
  });

  it('shows a corrupt user message with an error instead of a preview', () => {
    const path = folder.path();
    const db = folder.inspect(path);
    const target = db.getTurnsPage('branched', 'main', { limit: 1 }).turns[0];
    assert.ok(target);
    sql(path, 'UPDATE agent_messages SET message_data = \'{"role": "user", \' WHERE id = ?', target.messageId);
    const [first, second] = db.getTurnsPage('branched', 'main', { limit: 2 }).turns;
    assert.equal(first?.preview, null);
    assert.ok((first?.error ?? '').length > 0);
    assert.equal(first?.turn, 1, 'the turn is still listed');
    assert.equal(second?.preview, 'main turn 2');
  });

  it('unknown branch → empty; bad arguments → InvalidArgumentError', () => {
    const db = folder.inspect();
    assert.deepEqual(db.getTurnsPage('branched', 'nope', { limit: 3 }), { turns: [], nextAfterTurn: null });
    assert.throws(() => db.getTurnsPage('branched', 'main', { limit: 0 }), InvalidArgumentError);
    assert.throws(() => db.getTurnsPage('branched', 'main', { limit: 2, afterTurn: Number.NaN }), InvalidArgumentError);
  });
});
