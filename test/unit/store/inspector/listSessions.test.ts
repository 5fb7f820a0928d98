/** listSessions: every session with times, counts and usage totals, sessions known only from other rows included. */
import { strict as assert } from 'node:assert';
import { AdvancedSQLiteSession, openDatabase } from '../../../../src/store';
import { messagesBySessionSql, usageBySessionSql } from '../../../../src/store/inspector/sessionList';
import { TempFolder, mk, sql, usage, writeBranchedFile } from './inspectorFixtures';

describe('SessionDatabase.listSessions', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  it('reports times, stored-item counts, branch counts and usage totals per session', async () => {
    const m = await writeBranchedFile(folder);
    const summaries = folder.inspect().listSessions();
    const byId = new Map(summaries.map((s) => [s.sessionId, s]));
    assert.deepEqual([...byId.keys()].sort(), ['branched', 'other']);

    const rows = sql<{ session_id: string; created_at: string; updated_at: string }>(folder.path(), 'SELECT * FROM agent_sessions');
    for (const r of rows) {
      assert.equal(byId.get(r.session_id)?.createdAt, r.created_at);
      assert.equal(byId.get(r.session_id)?.updatedAt, r.updated_at);
    }

    const branched = byId.get('branched');
    // Messages are stored once however many branches share them: the count is what addItems received.
    assert.equal(branched?.messageCount, m.messageCount);
    assert.equal(branched?.branchCount, m.branches.size);
    assert.equal(branched?.structured, true);
    // Two storeRunUsage calls on main: (1 request, 10 in, 5 out) and (2, 30, 10).
    assert.deepEqual(branched?.usage, { requests: 3, inputTokens: 40, outputTokens: 15, totalTokens: 55, totalTurns: 2 });
    const session = folder.track(new AdvancedSQLiteSession({ sessionId: 'branched', dbPath: folder.path() }));
    assert.deepEqual(branched?.usage, await session.getSessionUsage());

    assert.deepEqual(byId.get('other'), {
      sessionId: 'other',
      createdAt: rows.find((r) => r.session_id === 'other')?.created_at,
      updatedAt: rows.find((r) => r.session_id === 'other')?.updated_at,
      messageCount: 2,
      branchCount: 1,
      structured: true,
      usage: null,
    });
  });

  it('includes sessions known only from usage or message rows, with null times', async () => {
    await writeBranchedFile(folder);
    const path = folder.path();
    sql(
      path,
      `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens)
       VALUES ('ghost', 'main', 1, 3, 4, 5, 9)`,
    );
    sql(path, 'INSERT INTO agent_messages (session_id, message_data) VALUES (\'orphan\', \'{"role": "user", "content": "hi"}\')');
    const byId = new Map(
      folder
        .inspect()
        .listSessions()
        .map((s) => [s.sessionId, s]),
    );
    assert.deepEqual(byId.get('ghost'), {
      sessionId: 'ghost',
      createdAt: null,
      updatedAt: null,
      messageCount: 0,
      branchCount: 0,
      structured: false,
      usage: { requests: 3, inputTokens: 4, outputTokens: 5, totalTokens: 9, totalTurns: 1 },
    });
    // A plain session's rows in an advanced file: one branch (main), not structured.
    assert.deepEqual(byId.get('orphan'), {
      sessionId: 'orphan',
      createdAt: null,
      updatedAt: null,
      messageCount: 1,
      branchCount: 1,
      structured: false,
      usage: null,
    });
  });

  it('orders by updatedAt, newest first, sessions without a sessions row last, ties by id', async () => {
    await writeBranchedFile(folder);
    const path = folder.path();
    const extra = folder.session({ sessionId: 'aaa', dbPath: path });
    await extra.addItems([mk.user('x')]);
    await extra.storeRunUsage(usage(1, 1, 1));
    extra.close();
    sql(path, "UPDATE agent_sessions SET updated_at = '2001-01-01 00:00:00' WHERE session_id = 'other'");
    sql(path, "UPDATE agent_sessions SET updated_at = '2030-01-01 00:00:00' WHERE session_id = 'aaa'");
    sql(path, "INSERT INTO turn_usage (session_id, branch_id, user_turn_number) VALUES ('zzz', 'main', 1), ('yyy', 'main', 1)");
    assert.deepEqual(
      folder
        .inspect()
        .listSessions()
        .map((s) => s.sessionId),
      ['aaa', 'branched', 'other', 'yyy', 'zzz'],
    );
  });

  it('an empty session file lists nothing', () => {
    folder.session({ sessionId: 'unused' }).close();
    assert.deepEqual(folder.inspect().listSessions(), []);
  });

  it('reads the rows past a mark by their rowid range, not by walking a session index', async () => {
    await writeBranchedFile(folder);
    const db = folder.track(openDatabase(folder.path(), { readonly: true }));
    const plan = (text: string, ...params: number[]) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${text}`)
        .all<{ detail: string }>(...params)
        .map((r) => r.detail)
        .join(' | ');
    // The kept list's catch-up after an append (keptTotals.ts): what it reads must be the new rows, whatever the file
    // holds. A plan that scans an index visits every row of the table.
    for (const text of [messagesBySessionSql('agent_messages', true), usageBySessionSql(true)]) {
      const past = plan(text, 3);
      assert.match(past, /SEARCH \w+ USING INTEGER PRIMARY KEY \(rowid>\?\)/, past);
      assert.doesNotMatch(past, /SCAN/, past);
    }
    // The whole list still counts through the covering session index, in session order (no sort).
    const all = plan(messagesBySessionSql('agent_messages', false));
    assert.match(all, /COVERING INDEX idx_agent_messages_session_id/, all);
    assert.doesNotMatch(all, /TEMP B-TREE/, all);
  });

  it('a kept list caught up from rows appended to several sessions equals a fresh list', async () => {
    await writeBranchedFile(folder);
    const kept = folder.inspect(folder.path(), { readonly: true, keepTotals: true });
    kept.listSessions();
    // Rows in two sessions, interleaved by id, so the range past the marks holds both and is grouped by a sort.
    for (const [i, id] of ['other', 'branched', 'other'].entries()) {
      const s = folder.track(new AdvancedSQLiteSession({ sessionId: id, dbPath: folder.path() }));
      await s.addItems([mk.user(`more ${i}`), mk.assistant(`answer ${i}`)]);
      await s.storeRunUsage(usage(1, 4 + i, 2));
      s.close();
    }
    const caughtUp = kept.listSessions();
    assert.deepEqual(caughtUp, folder.inspect().listSessions());
    assert.equal(caughtUp.find((s) => s.sessionId === 'other')?.messageCount, 2 + 4);
  });
});
