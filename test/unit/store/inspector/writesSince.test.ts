/**
 * markWrites / writesSince: what other programs wrote between two moments, by session and branch (how an agent
 * command's run is checked, docs/agent-command.md §3), and that the check reads only the rows written since the mark,
 * however long the session: its queries are rowid ranges, never a walk of a session index.
 */
import { strict as assert } from 'node:assert';
import { AdvancedSQLiteSession, SQLiteSession, markWrites, openDatabase, writesSince, type TableNames } from '../../../../src/store';
import { writesSinceSql } from '../../../../src/store/inspector/writesSince';
import { TempFolder, mk } from './inspectorFixtures';

const TABLES: TableNames = { sessions: 'agent_sessions', messages: 'agent_messages' };

describe('writesSince', () => {
  let folder: TempFolder;
  beforeEach(() => (folder = new TempFolder()));
  afterEach(() => folder.cleanup());

  it('counts the new messages of each branch, not the rows a new branch copies', async () => {
    const s = folder.session();
    await s.addItems([mk.user('one'), mk.assistant('a1'), mk.user('two'), mk.assistant('a2')]);
    const other = folder.session({ sessionId: 's2' });
    await other.addItems([mk.user('elsewhere')]);
    const mark = markWrites(folder.path(), TABLES);
    // A branch from turn 2 copies turn 1's structure rows: they point at old messages, so they are no write.
    await s.createBranchFromTurn(2, 'side');
    await s.addItems([mk.user('three'), mk.assistant('a3')]);
    await other.addItems([mk.assistant('more'), mk.user('again')]);
    assert.deepEqual(writesSince(folder.path(), TABLES, mark), [
      { sessionId: 's1', branchId: 'side', items: 2, lastUserTurn: 2 },
      { sessionId: 's2', branchId: 'main', items: 2, lastUserTurn: 2 },
    ]);
    assert.deepEqual(writesSince(folder.path(), TABLES, markWrites(folder.path(), TABLES)), []);
  });

  it('reports the messages of a plain session, which have no structure rows, without a branch', async () => {
    const plain = folder.track(new SQLiteSession({ sessionId: 'p1', dbPath: folder.path('plain.db') }));
    await plain.addItems([mk.user('one')]);
    const mark = markWrites(folder.path('plain.db'), TABLES);
    await plain.addItems([mk.assistant('a1'), mk.user('two')]);
    assert.deepEqual(writesSince(folder.path('plain.db'), TABLES, mark), [
      { sessionId: 'p1', branchId: null, items: 2, lastUserTurn: null },
    ]);
  });

  it('reads only the rows past the mark: a rowid range, never a walk of the session indexes', async () => {
    // Enough rows that SQLite would rather walk the session index in order than sort the groups (its choice without
    // NOT INDEXED, measured 10–20 ms on a 400,000-item branch).
    const s = folder.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: folder.path(), createTables: true }));
    for (let turn = 0; turn < 20; turn++) await s.addItems([mk.user(`q${turn}`), mk.assistant(`a${turn}`)]);
    const db = folder.track(openDatabase(folder.path(), { readonly: true }));
    const sql = writesSinceSql(TABLES.messages);
    const plan = (text: string, ...params: number[]) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${text}`)
        .all<{ detail: string }>(...params)
        .map((r) => r.detail)
        .join(' | ');
    for (const [text, params] of [
      [sql.perSession, [30]],
      [sql.perBranch, [30, 30]],
    ] as const) {
      const shown = plan(text, ...params);
      assert.match(shown, /SEARCH (agent_messages|message_structure) USING INTEGER PRIMARY KEY \(rowid>\?\)/, shown);
      assert.doesNotMatch(shown, /SCAN/, shown);
    }
  });
});
