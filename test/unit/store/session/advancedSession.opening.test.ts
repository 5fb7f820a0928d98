/**
 * Opening an AdvancedSQLiteSession (spec §3): table creation, the ownership claim and its errors O1–O5, settings,
 * connection pragmas, custom and quoted table names, and older files without the optional tables (§3.4).
 */
import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { Usage } from '@openai/agents';
import { AdvancedSQLiteSession, InvalidArgumentError, SessionError, TableOwnershipError } from '../../../../src/store';
import { dumpPragmas, inspect } from '../../../support/tableDump';
import { Workspace, captureLogger, execSql, mk, query, rejectsWith, tableNames, tables } from '../../../support/sessionHelpers';

const O1 = (table: string, p: string) =>
  `The \`${table}\` table in ${p} does not record exactly one owner foreign key for each required base-table column. Construct an AdvancedSQLiteSession with create_tables=True to create and claim the structure tables before opening the database without them.`;
const O2 = (p: string) =>
  `The configured base tables in ${p} are missing. Construct an AdvancedSQLiteSession with create_tables=True to initialize and claim the database before opening it without table creation.`;
const O3 = (messages: string, p: string, found: string, sessions: string) =>
  `The configured messages table '${messages}' in ${p} belongs to sessions table '${found}', not to the configured '${sessions}'. Give each sessions_table/messages_table pair its own db_path.`;
const O4 = (table: string, p: string, found: string, configured: string) =>
  `The \`${table}\` table in ${p} already belongs to '${found}', not to the configured '${configured}'. Structure tables are shared per database file, so give each sessions_table/messages_table pair its own db_path.`;

function construct(options: ConstructorParameters<typeof AdvancedSQLiteSession>[0]): () => AdvancedSQLiteSession {
  return () => new AdvancedSQLiteSession(options);
}

describe('AdvancedSQLiteSession opening (spec §3)', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace()));
  afterEach(() => ws.cleanup());

  describe('createTables: true', () => {
    it('creates the schema in the §4.3 rowid order on an empty file', () => {
      ws.open();
      const names = query<{ name: string }>(ws.path(), 'SELECT name FROM sqlite_master ORDER BY rowid').map((r) => r.name);
      assert.deepEqual(names, [
        'agent_sessions',
        'sqlite_autoindex_agent_sessions_1',
        'agent_messages',
        'sqlite_sequence',
        'idx_agent_messages_session_id',
        'message_structure',
        'turn_usage',
        'sqlite_autoindex_turn_usage_1',
        'branch_reservations',
        'sqlite_autoindex_branch_reservations_1',
        'session_clear_generations',
        'sqlite_autoindex_session_clear_generations_1',
        'idx_structure_session_seq',
        'idx_structure_branch',
        'idx_structure_turn',
        'idx_structure_branch_seq',
        'idx_turn_usage_session_turn',
      ]);
    });

    it('writes exactly one row at construction: the generation row (quirk 1)', () => {
      ws.open({ sessionId: 'abc' });
      const t = tables(ws.path());
      assert.deepEqual(t.session_clear_generations?.rows, [{ session_id: 'abc', generation: 0 }]);
      for (const name of ['agent_sessions', 'agent_messages', 'message_structure', 'turn_usage', 'branch_reservations']) {
        assert.deepEqual(t[name]?.rows, [], `${name} should be empty`);
      }
    });

    it('persists journal_mode=wal (header bytes 18-19 = 2, 2) and the produced file has the §4.3 pragmas', () => {
      ws.open().close();
      const header = readFileSync(ws.path()).subarray(18, 20);
      assert.deepEqual([...header], [2, 2]);
      assert.deepEqual(inspect(ws.path(), dumpPragmas), {
        journal_mode: 'wal',
        encoding: 'UTF-8',
        user_version: 0,
        application_id: 0,
        auto_vacuum: 0,
        page_size: 4096,
        foreign_keys: 0,
      });
    });

    it('runs with foreign keys off: usage is stored for a session whose sessions row is gone', async () => {
      const s = ws.open();
      await s.addItems([mk.user('hi')]);
      execSql(ws.path(), "DELETE FROM agent_sessions WHERE session_id = 's1'");
      const logger = captureLogger();
      const s2 = ws.open({ createTables: false, logger });
      await s2.storeRunUsage({ state: { usage: new Usage({ requests: 1, input_tokens: 5, output_tokens: 2, total_tokens: 7 }) } });
      assert.deepEqual(logger.errors, []);
      assert.deepEqual(query(ws.path(), 'SELECT user_turn_number, requests, total_tokens FROM turn_usage'), [
        { user_turn_number: 1, requests: 1, total_tokens: 7 },
      ]);
    });

    it('can be constructed again on an initialised file without changing it', () => {
      const s = ws.open();
      s.close();
      const before = tables(ws.path());
      ws.open().close();
      assert.deepEqual(tables(ws.path()), before);
    });
  });

  describe('createTables: false (default)', () => {
    it('fails on an empty file with O1 for message_structure, leaving only an empty WAL file', () => {
      const p = ws.path('empty.db');
      const err = assert.throws(construct({ sessionId: 's1', dbPath: p }), (e: unknown) => {
        assert.ok(e instanceof TableOwnershipError);
        assert.ok(e instanceof SessionError);
        assert.equal(e.pythonType, 'ValueError');
        assert.equal(e.message, O1('message_structure', p));
        return true;
      });
      void err;
      assert.ok(existsSync(p), 'the empty WAL file stays behind');
      assert.deepEqual(tableNames(p), []);
    });

    it('fails on :memory: (explicit and by default) with O1 naming :memory:', () => {
      assert.throws(construct({ sessionId: 's1', dbPath: ':memory:' }), {
        name: 'TableOwnershipError',
        message: O1('message_structure', ':memory:'),
      });
      assert.throws(construct({ sessionId: 's1' }), { name: 'TableOwnershipError', message: O1('message_structure', ':memory:') });
      assert.throws(construct({ sessionId: 's1', createTables: false }), TableOwnershipError);
    });

    it('works on :memory: with createTables: true, and each :memory: instance is private', async () => {
      const a = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', createTables: true }));
      const b = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: ':memory:', createTables: true }));
      await a.addItems([mk.user('only in a')]);
      assert.deepEqual(await a.getItems(), [{ role: 'user', content: 'only in a' }]);
      assert.deepEqual(await b.getItems(), []);
    });

    it('opens a file a createTables: true instance initialised, writing no rows', async () => {
      const s = ws.open();
      await s.addItems([mk.user('hello')]);
      const before = tables(ws.path());
      const reader = ws.open({ createTables: false });
      assert.deepEqual(await reader.getItems(), [{ role: 'user', content: 'hello' }]);
      assert.deepEqual(tables(ws.path()), before);
    });

    it('reports O1 for turn_usage when only message_structure records its owners', () => {
      ws.open().close();
      execSql(ws.path(), 'DROP TABLE turn_usage');
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path() }), {
        name: 'TableOwnershipError',
        message: O1('turn_usage', ws.path()),
      });
    });

    it('uses the path exactly as passed in messages', () => {
      const rel = `${ws.path('x.db')}`.replace(/\/([^/]+)$/, '/./$1');
      assert.throws(construct({ sessionId: 's1', dbPath: rel }), { message: O1('message_structure', rel) });
    });
  });

  describe('ownership errors', () => {
    it('O2: the configured base tables are missing', () => {
      ws.open().close();
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path(), sessionsTable: 'other_sessions' }), {
        name: 'TableOwnershipError',
        message: O2(ws.path()),
      });
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path(), messagesTable: 'other_messages' }), {
        name: 'TableOwnershipError',
        message: O2(ws.path()),
      });
    });

    it('O2: base tables dropped from a claimed file', () => {
      ws.open().close();
      execSql(ws.path(), 'DROP TABLE agent_messages; DROP TABLE agent_sessions;');
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path() }), { name: 'TableOwnershipError', message: O2(ws.path()) });
      // Nothing was created by the failed open.
      assert.ok(!tableNames(ws.path()).includes('agent_sessions'));
    });

    it('O2: names fold ASCII-only (ßsessions is not sssessions)', () => {
      ws.open({ sessionsTable: 'sssessions', messagesTable: 'ss_messages' }).close();
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path(), sessionsTable: 'ßsessions', messagesTable: 'ss_messages' }), {
        name: 'TableOwnershipError',
        message: O2(ws.path()),
      });
    });

    it('O3: the messages table belongs to another sessions table', () => {
      ws.open({ sessionsTable: 's_one', messagesTable: 'm_one' }).close();
      execSql(ws.path(), 'CREATE TABLE s_two (session_id TEXT PRIMARY KEY)');
      const before = tables(ws.path());
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path(), sessionsTable: 's_two', messagesTable: 'm_one' }), {
        name: 'TableOwnershipError',
        message: O3('m_one', ws.path(), 's_one', 's_two'),
      });
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path(), sessionsTable: 's_two', messagesTable: 'm_one', createTables: true }), {
        name: 'TableOwnershipError',
        message: O3('m_one', ws.path(), 's_one', 's_two'),
      });
      assert.deepEqual(tables(ws.path()), before);
    });

    it('O4: a second (sessions, messages) pair in the same file, everything rolled back', () => {
      ws.open({ sessionsTable: 'first_sessions', messagesTable: 'first_messages' }).close();
      const before = tables(ws.path());
      const schemaBefore = query(ws.path(), 'SELECT name, sql FROM sqlite_master ORDER BY rowid');
      assert.throws(
        construct({
          sessionId: 's1',
          dbPath: ws.path(),
          sessionsTable: 'second_sessions',
          messagesTable: 'second_messages',
          createTables: true,
        }),
        {
          name: 'TableOwnershipError',
          message: O4('message_structure', ws.path(), 'first_sessions(session_id)/first_messages(id)', 'second_sessions/second_messages'),
        },
      );
      assert.deepEqual(tables(ws.path()), before);
      assert.deepEqual(query(ws.path(), 'SELECT name, sql FROM sqlite_master ORDER BY rowid'), schemaBefore);
    });

    it('O4: the default pair opening a file claimed by a custom pair', () => {
      ws.open({ sessionsTable: 'first_sessions', messagesTable: 'first_messages' }).close();
      execSql(ws.path(), baseTablesSql('agent_sessions', 'agent_messages'));
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path() }), {
        name: 'TableOwnershipError',
        message: O4('message_structure', ws.path(), 'first_sessions(session_id)/first_messages(id)', 'agent_sessions/agent_messages'),
      });
    });

    it('O4 for turn_usage: sessions only in found and configured', () => {
      ws.open().close();
      execSql(
        ws.path(),
        `CREATE TABLE x_sessions (session_id TEXT PRIMARY KEY);
         DROP TABLE turn_usage;
         CREATE TABLE turn_usage (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
           branch_id TEXT NOT NULL DEFAULT 'main', user_turn_number INTEGER NOT NULL, requests INTEGER DEFAULT 0,
           input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, total_tokens INTEGER DEFAULT 0,
           input_tokens_details JSON, output_tokens_details JSON, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
           FOREIGN KEY (session_id) REFERENCES x_sessions(session_id) ON DELETE CASCADE,
           UNIQUE(session_id, branch_id, user_turn_number));`,
      );
      assert.throws(construct({ sessionId: 's1', dbPath: ws.path() }), {
        name: 'TableOwnershipError',
        message: O4('turn_usage', ws.path(), 'x_sessions(session_id)', 'agent_sessions'),
      });
    });
  });

  describe('custom and quoted table names (§3.3, §3.4)', () => {
    it('writes custom names into the DDL, the index name and the REFERENCES', () => {
      ws.open({ sessionsTable: 'my_sessions', messagesTable: 'my_messages' }).close();
      const rows = query<{ name: string; sql: string | null }>(ws.path(), 'SELECT name, sql FROM sqlite_master ORDER BY rowid');
      const names = rows.map((r) => r.name);
      assert.ok(names.includes('my_sessions') && names.includes('my_messages') && names.includes('idx_my_messages_session_id'));
      assert.ok(!names.includes('agent_sessions') && !names.includes('agent_messages'));
      const sql = (n: string) => rows.find((r) => r.name === n)?.sql ?? '';
      assert.match(sql('my_messages'), /REFERENCES my_sessions \(session_id\)/);
      assert.match(sql('message_structure'), /REFERENCES my_sessions\(session_id\)/);
      assert.match(sql('message_structure'), /REFERENCES my_messages\(id\)/);
      assert.match(sql('turn_usage'), /REFERENCES my_sessions\(session_id\)/);
    });

    it('resolves a quoted sessions table name ASCII case-insensitively', async () => {
      const a = ws.open({ sessionsTable: '"Quoted_Sessions"', messagesTable: 'q_messages' });
      await a.addItems([mk.user('hello')]);
      a.close();
      assert.ok(tableNames(ws.path()).includes('Quoted_Sessions'));
      for (const sessionsTable of ['"quoted_sessions"', 'QUOTED_SESSIONS', 'Quoted_Sessions', '"Quoted_Sessions"']) {
        const b = ws.open({ sessionsTable, messagesTable: 'q_messages', createTables: false });
        assert.deepEqual((await b.getItems())[0], { role: 'user', content: 'hello' }, sessionsTable);
        await b.addItems([mk.assistant(sessionsTable)]);
        b.close();
      }
      assert.deepEqual(query(ws.path(), 'SELECT session_id FROM "Quoted_Sessions"'), [{ session_id: 's1' }]);
      assert.equal(query(ws.path(), 'SELECT * FROM q_messages').length, 5);
    });

    it('FooSessions = foosessions (ASCII folding)', async () => {
      ws.open({ sessionsTable: 'FooSessions', messagesTable: 'FooMessages' }).close();
      const s = ws.open({ sessionsTable: 'foosessions', messagesTable: 'foomessages', createTables: false });
      await s.addItems([mk.user('x')]);
      assert.deepEqual(await s.getItems(), [{ role: 'user', content: 'x' }]);
    });
  });

  describe('sessionSettings', () => {
    it('rejects unknown keys, sorted and joined by ", "', () => {
      for (const createTables of [true, false]) {
        assert.throws(
          construct({ sessionId: 's1', dbPath: ws.path(), createTables, sessionSettings: { zeta: 1, limit: 2, alpha: 3 } as never }),
          (e: unknown) => {
            assert.ok(e instanceof InvalidArgumentError);
            assert.equal(e.pythonType, 'TypeError');
            assert.equal(e.message, 'Unknown session settings: alpha, zeta');
            return true;
          },
        );
      }
    });

    it('accepts limit, null and an empty object', () => {
      assert.equal(ws.open({ sessionSettings: { limit: 3 } }).sessionSettings.limit, 3);
      assert.equal(ws.open({ sessionSettings: null }).sessionSettings.limit ?? null, null);
      assert.equal(ws.open({ sessionSettings: {} }).sessionSettings.limit ?? null, null);
    });
  });
});

describe('older files without branch_reservations / session_clear_generations (spec §3.4)', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace()));
  afterEach(() => ws.cleanup());

  const OPTIONAL = ['branch_reservations', 'session_clear_generations'];
  const optionalTables = (p: string) => tableNames(p).filter((n) => OPTIONAL.includes(n));

  /** A file with main (turns 1, 2) and branch alt (from turn 2), then the two optional tables dropped. */
  async function oldFile(): Promise<string> {
    const s = ws.open({ clock: () => 1700000000 });
    await s.addItems([mk.user('one'), mk.assistant('a1'), mk.user('two'), mk.assistant('a2')]);
    await s.createBranchFromTurn(2, 'alt');
    await s.addItems([mk.user('alt two')]);
    s.close();
    execSql(ws.path(), 'DROP TABLE branch_reservations; DROP TABLE session_clear_generations;');
    assert.deepEqual(optionalTables(ws.path()), []);
    return ws.path();
  }

  it('createTables: false construction and every read create neither table', async () => {
    const p = await oldFile();
    const before = tables(p);
    const s = ws.open({ createTables: false });
    await s.getItems();
    await s.getItems(1);
    await s.getItems(undefined, 'alt');
    await s.listBranches();
    await s.getConversationTurns();
    await s.getConversationByTurns();
    await s.findTurnsByContent('two');
    await s.getToolUsage();
    await s.getSessionUsage();
    await s.getTurnUsage();
    await s.getTurnUsage(1);
    assert.deepEqual(optionalTables(p), []);
    assert.deepEqual(tables(p), before);
  });

  it('storeRunUsage creates neither table nor a generation row', async () => {
    const p = await oldFile();
    const logger = captureLogger();
    const s = ws.open({ createTables: false, logger });
    await s.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 } } });
    assert.deepEqual(logger.errors, []);
    assert.deepEqual(optionalTables(p), []);
    assert.equal(query(p, 'SELECT * FROM turn_usage').length, 1);
  });

  it('addItems creates session_clear_generations only, with this session at generation 0', async () => {
    const p = await oldFile();
    const s = ws.open({ createTables: false });
    await s.addItems([mk.user('three')]);
    assert.deepEqual(optionalTables(p), ['session_clear_generations']);
    assert.deepEqual(query(p, 'SELECT * FROM session_clear_generations'), [{ session_id: 's1', generation: 0 }]);
  });

  it('switchToBranch creates session_clear_generations only', async () => {
    const p = await oldFile();
    const s = ws.open({ createTables: false });
    await s.switchToBranch('alt');
    assert.deepEqual(optionalTables(p), ['session_clear_generations']);
    assert.equal(s.getCurrentBranchId(), 'alt');
  });

  it('popItem creates session_clear_generations, then branch_reservations (backfilled: alt, main)', async () => {
    const p = await oldFile();
    const s = ws.open({ createTables: false });
    assert.deepEqual(await s.popItem(), mk.assistant('a2'));
    assert.deepEqual(optionalTables(p), ['session_clear_generations', 'branch_reservations']);
    assert.deepEqual(query(p, 'SELECT session_id, branch_id FROM branch_reservations ORDER BY rowid'), [
      { session_id: 's1', branch_id: 'alt' },
      { session_id: 's1', branch_id: 'main' },
    ]);
  });

  it('clearSession creates branch_reservations, then session_clear_generations (generation 1)', async () => {
    const p = await oldFile();
    const s = ws.open({ createTables: false });
    await s.clearSession();
    assert.deepEqual(optionalTables(p), ['branch_reservations', 'session_clear_generations']);
    assert.deepEqual(query(p, 'SELECT * FROM session_clear_generations'), [{ session_id: 's1', generation: 1 }]);
    assert.equal(query(p, 'SELECT * FROM branch_reservations').length, 2);
  });

  it('branch creation creates branch_reservations, then session_clear_generations; reserved ids are refused', async () => {
    const p = await oldFile();
    const s = ws.open({ createTables: false });
    assert.equal(await s.createBranchFromTurn(1, 'b2'), 'b2');
    assert.deepEqual(optionalTables(p), ['branch_reservations', 'session_clear_generations']);
    await s.switchToBranch('main');
    await rejectsWith(() => s.createBranchFromTurn(1, 'alt'), Error, "Branch ID 'alt' has already been used. Choose a new branch ID.");
  });

  it('createBranchFromContent creates both tables too', async () => {
    const p = await oldFile();
    const s = ws.open({ createTables: false, clock: () => 1700000000 });
    assert.equal(await s.createBranchFromContent('two'), 'branch_from_turn_2_1700000000');
    assert.deepEqual(optionalTables(p), ['branch_reservations', 'session_clear_generations']);
  });

  it('deleteBranch creates branch_reservations only', async () => {
    const p = await oldFile();
    const s = ws.open({ createTables: false });
    await s.deleteBranch('alt');
    assert.deepEqual(optionalTables(p), ['branch_reservations']);
    assert.deepEqual(query(p, 'SELECT branch_id FROM branch_reservations ORDER BY rowid'), [{ branch_id: 'alt' }, { branch_id: 'main' }]);
  });

  it('createTables: true construction creates both and backfills', async () => {
    const p = await oldFile();
    ws.open();
    assert.deepEqual(optionalTables(p), ['branch_reservations', 'session_clear_generations']);
    assert.equal(query(p, 'SELECT * FROM branch_reservations').length, 2);
    assert.deepEqual(query(p, 'SELECT * FROM session_clear_generations'), [{ session_id: 's1', generation: 0 }]);
  });

  it('a failing call creates no table (rolled back with the call)', async () => {
    const p = await oldFile();
    const before = tables(p);
    // A fresh instance per call, so each failure is judged on its own.
    const fresh = () => ws.open({ createTables: false });
    await rejectsWith(() => fresh().switchToBranch('nope'), Error, "Branch 'nope' does not exist");
    await rejectsWith(() => fresh().createBranchFromTurn(9, 'x'), Error, "Turn 9 does not contain a user message in branch 'main'");
    await rejectsWith(
      () => fresh().createBranchFromTurn(1, 'alt'),
      Error,
      "Branch ID 'alt' has already been used. Choose a new branch ID.",
    );
    await rejectsWith(() => fresh().deleteBranch('nope'), Error, "Branch 'nope' does not exist");
    await rejectsWith(() => fresh().createBranchFromContent('no such text'), Error, "No user turns found containing 'no such text'");
    assert.deepEqual(optionalTables(p), []);
    assert.deepEqual(tables(p), before);
  });

  it('after a failing call that rolled back a table creation, reads and writes still work', async () => {
    const p = await oldFile();
    const s = ws.open({ createTables: false });
    await rejectsWith(() => s.switchToBranch('nope'), Error, "Branch 'nope' does not exist");
    await rejectsWith(() => s.createBranchFromTurn(9, 'x'), Error, "Turn 9 does not contain a user message in branch 'main'");
    assert.deepEqual(optionalTables(p), []);
    // Reads must still see the file as it is (no table → generation 0).
    assert.equal((await s.getItems()).length, 4);
    assert.deepEqual((await s.listBranches()).map((b) => b.branchId).sort(), ['alt', 'main']);
    // Writes must create the tables again.
    await s.addItems([mk.user('three')]);
    assert.equal(await s.createBranchFromTurn(1, 'x'), 'x');
    assert.deepEqual(optionalTables(p).sort(), ['branch_reservations', 'session_clear_generations']);
  });
});

function baseTablesSql(sessions: string, messages: string): string {
  return `CREATE TABLE ${sessions} (session_id TEXT PRIMARY KEY, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
    CREATE TABLE ${messages} (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, message_data TEXT NOT NULL,
      created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, FOREIGN KEY (session_id) REFERENCES ${sessions} (session_id) ON DELETE CASCADE);`;
}
