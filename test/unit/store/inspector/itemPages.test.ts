/**
 * getItemsPage and getTurnItems: paging in sequence order by index, structure metadata, and rows that cannot be
 * decoded reported as corrupt instead of skipped.
 */
import { strict as assert } from 'node:assert';
import {
  AdvancedSQLiteSession,
  InvalidArgumentError,
  SQLiteSession,
  openDatabase,
  toStoredItem,
  type ItemEntry,
  type SessionDatabase,
} from '../../../../src/store';
import { itemPageSql, turnItemsSql } from '../../../../src/store/inspector/itemPages';
import { turnPageSql } from '../../../../src/store/inspector/turnPages';
import { TempFolder, sql, writeBranchedFile, type SessionModel } from './inspectorFixtures';

/** Reads a whole branch page by page, checking the cursor protocol on the way. */
function readAll(db: SessionDatabase, sessionId: string, branchId: string, limit: number): ItemEntry[] {
  const out: ItemEntry[] = [];
  let after: number | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const page = db.getItemsPage(sessionId, branchId, { afterSequence: after, limit });
    assert.ok(page.items.length <= limit);
    out.push(...page.items);
    if (page.nextAfterSequence === null) return out;
    assert.equal(page.items.length, limit, 'only the last page is short');
    assert.equal(page.nextAfterSequence, page.items[page.items.length - 1]?.sequenceNumber);
    after = page.nextAfterSequence;
  }
  throw new Error('paging did not end');
}

/** What a page shows as an item's tool name: the stored one, or for an output the name of its call (same call_id). */
function pagedToolName(entry: { item: unknown; type: string; toolName: string | null }, all: { item: unknown; toolName: string | null }[]) {
  if (entry.type !== 'function_call_output') return entry.toolName;
  const callId = (entry.item as { call_id?: string }).call_id;
  return all.find((i) => i.toolName !== null && (i.item as { call_id?: string }).call_id === callId)?.toolName ?? null;
}

const decoded = (entries: ItemEntry[]) => entries.map((e) => (e.corrupt ? { corrupt: e.raw } : e.item));

describe('SessionDatabase.getItemsPage / getTurnItems', () => {
  let folder: TempFolder;
  let m: SessionModel;
  beforeEach(async () => {
    folder = new TempFolder();
    m = await writeBranchedFile(folder);
  });
  afterEach(() => folder.cleanup());

  it('pages through every branch in sequence order, whatever the page size, with the written items and metadata', () => {
    const db = folder.inspect();
    for (const branch of m.branches.keys()) {
      const expected = m.branch(branch);
      for (const limit of [1, 3, 100]) {
        const entries = readAll(db, 'branched', branch, limit);
        assert.deepEqual(
          decoded(entries),
          expected.map((i) => toStoredItem(i.item)),
          `${branch}, pages of ${limit}`,
        );
        assert.deepEqual(
          entries.map((e) => [e.type, e.toolName, e.userTurnNumber, e.branchTurnNumber]),
          expected.map((i) => [i.type, pagedToolName(i, expected), i.turn, i.turn]),
        );
        for (let i = 1; i < entries.length; i++) {
          assert.ok((entries[i]?.sequenceNumber ?? 0) > (entries[i - 1]?.sequenceNumber ?? 0), 'sequence numbers rise');
        }
        for (const e of entries) {
          assert.equal(typeof e.structureId, 'number');
          assert.match(e.createdAt ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
        }
      }
    }
  });

  it('matches the structure rows and getItems() of the session class', async () => {
    const db = folder.inspect();
    const session = folder.track(new AdvancedSQLiteSession({ sessionId: 'branched', dbPath: folder.path() }));
    for (const branch of m.branches.keys()) {
      const entries = readAll(db, 'branched', branch, 4);
      assert.deepEqual(decoded(entries), await session.getStoredItems(undefined, branch));
      const rows = sql<{ id: number; message_id: number; sequence_number: number }>(
        folder.path(),
        "SELECT id, message_id, sequence_number FROM message_structure WHERE session_id = 'branched' AND branch_id = ? ORDER BY sequence_number",
        branch,
      );
      assert.deepEqual(
        entries.map((e) => [e.structureId, e.messageId, e.sequenceNumber]),
        rows.map((r) => [r.id, r.message_id, r.sequence_number]),
      );
    }
  });

  it("a branch's copied prefix holds the parent's message ids", () => {
    const db = folder.inspect();
    const main = readAll(db, 'branched', 'main', 50);
    const alt = readAll(db, 'branched', 'alt', 50);
    const copied = m.branch('main').filter((i) => i.turn < 3).length;
    assert.deepEqual(
      alt.slice(0, copied).map((e) => e.messageId),
      main.slice(0, copied).map((e) => e.messageId),
    );
    assert.ok(!main.some((e) => e.messageId === alt[copied]?.messageId), "alt's own items are its own");
  });

  it('starts after afterSequence; a cursor at or past the end gives an empty last page', () => {
    const db = folder.inspect();
    const all = readAll(db, 'branched', 'main', 100);
    const third = all[2]?.sequenceNumber ?? -1;
    const page = db.getItemsPage('branched', 'main', { afterSequence: third, limit: 2 });
    assert.deepEqual(
      page.items.map((e) => e.sequenceNumber),
      all.slice(3, 5).map((e) => e.sequenceNumber),
    );
    // A cursor between two sequence numbers (branches' numbers are gappy) starts at the next one.
    const gap = db.getItemsPage('branched', 'alt', { afterSequence: 0.5, limit: 1 });
    assert.equal(gap.items[0]?.sequenceNumber, readAll(db, 'branched', 'alt', 100)[0]?.sequenceNumber);
    const last = all[all.length - 1]?.sequenceNumber ?? 0;
    assert.deepEqual(db.getItemsPage('branched', 'main', { afterSequence: last, limit: 5 }), { items: [], nextAfterSequence: null });
    assert.deepEqual(db.getItemsPage('branched', 'main', { afterSequence: last + 1000, limit: 5 }), { items: [], nextAfterSequence: null });
    // Exactly one page's worth: no next page promised.
    const exact = db.getItemsPage('branched', 'main', { limit: all.length });
    assert.equal(exact.items.length, all.length);
    assert.equal(exact.nextAfterSequence, null);
  });

  it('unknown session or branch → an empty page; bad arguments → InvalidArgumentError', () => {
    const db = folder.inspect();
    assert.deepEqual(db.getItemsPage('branched', 'nope', { limit: 5 }), { items: [], nextAfterSequence: null });
    assert.deepEqual(db.getItemsPage('nobody', 'main', { limit: 5 }), { items: [], nextAfterSequence: null });
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => db.getItemsPage('branched', 'main', { limit }), InvalidArgumentError);
    }
    assert.throws(() => db.getItemsPage('branched', 'main', { limit: 1, afterSequence: Number.POSITIVE_INFINITY }), InvalidArgumentError);
    assert.throws(() => db.getTurnItems('branched', 'main', 1.5), InvalidArgumentError);
  });

  it('reports a row whose message_data is not JSON as corrupt, with its raw text and the parse error', async () => {
    const path = folder.path();
    const db = folder.inspect(path);
    const before = readAll(db, 'branched', 'main', 100);
    // main's turn-2 tool call; alt, sub and late share it.
    const target = before.find((e) => e.type === 'function_call');
    assert.ok(target);
    sql(path, "UPDATE agent_messages SET message_data = '{broken' WHERE id = ?", target.messageId);

    for (const branch of ['main', 'alt', 'sub']) {
      const entries = readAll(db, 'branched', branch, 2);
      assert.equal(entries.length, m.branch(branch).length, 'nothing is skipped');
      const bad = entries.filter((e) => e.corrupt);
      assert.equal(bad.length, 1, branch);
      const [entry] = bad;
      assert.ok(entry?.corrupt);
      assert.equal(entry.raw, '{broken');
      assert.ok(entry.error.length > 0);
      assert.equal(entry.messageId, target.messageId);
      assert.equal(entry.type, 'function_call', 'structure metadata is still there');
      assert.equal(entry.toolName, 'get_weather');
    }
    // The session API skips it, as Python does.
    const session = folder.track(new AdvancedSQLiteSession({ sessionId: 'branched', dbPath: path }));
    assert.equal((await session.getItems(undefined, 'main')).length, m.branch('main').length - 1);
  });

  it("names a plain session's output by its call across a row that is not JSON, on a later page", async () => {
    const path = folder.path('plain-bad.db');
    const s = folder.track(new SQLiteSession({ sessionId: 'p', dbPath: path }));
    await s.addItems([
      { role: 'user', content: 'weather?' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{}' },
    ] as never);
    sql(path, "INSERT INTO agent_messages (session_id, message_data) VALUES ('p', 'not json {')");
    await s.addItems([{ type: 'function_call_output', call_id: 'c1', output: 'rain' }] as never);
    const entries = readAll(folder.inspect(path), 'p', 'main', 1);
    assert.deepEqual(
      entries.map((e) => (e.corrupt ? 'corrupt' : `${e.type} ${e.toolName ?? '-'}`)),
      ['user -', 'function_call get_weather', 'corrupt', 'function_call_output get_weather'],
    );
  });

  it('reports a structure row whose message row is gone as corrupt with raw null', () => {
    const path = folder.path();
    const db = folder.inspect(path);
    const target = readAll(db, 'branched', 'fresh', 10)[1];
    assert.ok(target);
    sql(path, 'DELETE FROM agent_messages WHERE id = ?', target.messageId);
    const entry = readAll(db, 'branched', 'fresh', 10)[1];
    assert.ok(entry?.corrupt);
    assert.equal(entry.raw, null);
    assert.match(entry.error, new RegExp(`message ${target.messageId}\\b`));
  });

  it('getTurnItems returns one turn, as written; unknown turn → []', () => {
    const db = folder.inspect();
    for (const branch of ['main', 'alt', 'sub']) {
      for (let turn = 1; turn <= 4; turn++) {
        const entries = db.getTurnItems('branched', branch, turn);
        assert.deepEqual(
          decoded(entries),
          m
            .branch(branch)
            .filter((i) => i.turn === turn)
            .map((i) => toStoredItem(i.item)),
          `${branch} turn ${turn}`,
        );
      }
    }
    assert.deepEqual(db.getTurnItems('branched', 'main', 0), []);
    assert.deepEqual(db.getTurnItems('branched', 'main', 99), []);
    assert.deepEqual(db.getTurnItems('branched', 'nope', 1), []);
  });

  it('getTurnItemsMany reads several turns in the order asked, as getTurnItems reads each', () => {
    const db = folder.inspect();
    for (const branch of ['main', 'alt', 'sub']) {
      const turns = [3, 1, 99, 2, 1];
      assert.deepEqual(
        db.getTurnItemsMany('branched', branch, turns),
        turns.map((t) => db.getTurnItems('branched', branch, t)),
        branch,
      );
    }
    assert.throws(() => db.getTurnItemsMany('branched', 'main', [1.5]), /turns must be a list of integers/);
  });

  it('reads pages by index: SQLite seeks to the cursor and never sorts the branch', () => {
    const db = openDatabase(folder.path(), { readonly: true });
    folder.track(db);
    const plan = (text: string, ...params: (string | number)[]) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${text}`)
        .all<{ detail: string }>(...params)
        .map((r) => r.detail)
        .join(' | ');
    const page = plan(itemPageSql('agent_messages', true), 'branched', 'main', 3, 10);
    assert.match(page, /SEARCH s USING INDEX idx_structure_branch_seq \(session_id=\? AND branch_id=\? AND sequence_number>\?\)/);
    assert.doesNotMatch(page, /TEMP B-TREE/);
    const first = plan(itemPageSql('agent_messages', false), 'branched', 'main', 10);
    assert.match(first, /idx_structure_branch_seq/);
    assert.doesNotMatch(first, /TEMP B-TREE/);
    // One turn is found by its own index entries, not by walking the branch.
    assert.match(
      plan(turnItemsSql('agent_messages'), 'branched', 'main', 2),
      /SEARCH s USING INDEX idx_structure_turn \(session_id=\? AND branch_id=\? AND user_turn_number=\?\)/,
    );
    const turns = plan(turnPageSql('agent_messages', true, true), 'branched', 'main', 1, 10);
    assert.match(turns, /SEARCH s USING INDEX idx_structure_turn \(session_id=\? AND branch_id=\? AND user_turn_number>\?\)/);
  });
});
