// PostgresSession against a real PostgreSQL server: the schema SQLAlchemySession's create_all makes, the bytes
// Python's json.dumps writes, sessions a Python agent wrote read back, concurrent writers, and each failure class.
import assert from 'node:assert/strict';
import pg from 'pg';
import { freePort, startPostgres, type PostgresServer } from '../../scripts/host/servers.mjs';
import { InvalidArgumentError, SessionClosedError } from '../../src/store/errors';
import { PostgresSession, type PostgresSessionOptions } from '../../src/store/remote/postgresSession';
import { RemoteStoreError } from '../../src/store/remote/remoteErrors';
import { freshPostgresDatabase, sharedPostgres } from '../support/servers';
import { js, label, python, rejection, remoteFailure, sleep, sql, stored, terminateWaiting, withPassword, withPg } from './remoteHelpers';

type Options = Omit<PostgresSessionOptions, 'sessionId' | 'connection'> & {
  sessionId?: string;
  connection?: PostgresSessionOptions['connection'];
};

describe('PostgresSession (real PostgreSQL)', function () {
  const sessions: PostgresSession[] = [];
  /** A session on `url` with a pool of its own, closed after the test. */
  const open = (url: string, options: Options = {}): PostgresSession => {
    const s = new PostgresSession({ sessionId: 's1', connection: { url }, ...options });
    sessions.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
  });

  /** message_data of a session in session order. */
  const messageData = async (url: string, sessionId = 's1', table = 'agent_messages') =>
    (
      await sql<{ message_data: string }>(url, `SELECT message_data FROM "${table}" WHERE session_id = $1 ORDER BY created_at, id`, [
        sessionId,
      ])
    ).map((r) => r.message_data);

  describe('createTables', () => {
    it('creates exactly the tables, columns, keys and index SQLAlchemySession.create_all makes', async () => {
      const url = await freshPostgresDatabase();
      assert.deepEqual(await open(url, { createTables: true }).getItems(), []);

      const columns = await sql(
        url,
        `SELECT table_name, column_name, data_type, is_nullable, column_default, character_maximum_length
           FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
      );
      const col = (table: string, column: string, type: string, def: string | null) => ({
        table_name: table,
        column_name: column,
        data_type: type,
        is_nullable: 'NO',
        column_default: def,
        character_maximum_length: null,
      });
      assert.deepEqual(columns, [
        col('agent_messages', 'id', 'integer', "nextval('agent_messages_id_seq'::regclass)"),
        col('agent_messages', 'session_id', 'character varying', null),
        col('agent_messages', 'message_data', 'text', null),
        col('agent_messages', 'created_at', 'timestamp without time zone', 'CURRENT_TIMESTAMP'),
        col('agent_sessions', 'session_id', 'character varying', null),
        col('agent_sessions', 'created_at', 'timestamp without time zone', 'CURRENT_TIMESTAMP'),
        col('agent_sessions', 'updated_at', 'timestamp without time zone', 'CURRENT_TIMESTAMP'),
      ]);

      // SERIAL: the sequence is owned by the column.
      assert.deepEqual(await sql(url, `SELECT pg_get_serial_sequence('agent_messages', 'id') AS seq`), [
        { seq: 'public.agent_messages_id_seq' },
      ]);

      const constraints = await sql(
        url,
        `SELECT conname, contype, conrelid::regclass::text AS tbl,
                (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(conkey) WITH ORDINALITY k(num, n)
                   JOIN pg_attribute a ON a.attrelid = conrelid AND a.attnum = k.num) AS cols,
                CASE WHEN contype = 'f' THEN confrelid::regclass::text END AS ref_tbl,
                (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(confkey) WITH ORDINALITY k(num, n)
                   JOIN pg_attribute a ON a.attrelid = confrelid AND a.attnum = k.num) AS ref_cols,
                confdeltype, confupdtype
           FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype IN ('p', 'f', 'u', 'c') ORDER BY conname`,
      );
      assert.deepEqual(constraints, [
        {
          conname: 'agent_messages_pkey',
          contype: 'p',
          tbl: 'agent_messages',
          cols: ['id'],
          ref_tbl: null,
          ref_cols: null,
          confdeltype: ' ',
          confupdtype: ' ',
        },
        {
          conname: 'agent_messages_session_id_fkey',
          contype: 'f',
          tbl: 'agent_messages',
          cols: ['session_id'],
          ref_tbl: 'agent_sessions',
          ref_cols: ['session_id'],
          confdeltype: 'c', // ON DELETE CASCADE
          confupdtype: 'a', // ON UPDATE NO ACTION
        },
        {
          conname: 'agent_sessions_pkey',
          contype: 'p',
          tbl: 'agent_sessions',
          cols: ['session_id'],
          ref_tbl: null,
          ref_cols: null,
          confdeltype: ' ',
          confupdtype: ' ',
        },
      ]);

      assert.deepEqual(await sql(url, `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`), [
        { indexname: 'agent_messages_pkey', indexdef: 'CREATE UNIQUE INDEX agent_messages_pkey ON public.agent_messages USING btree (id)' },
        {
          indexname: 'agent_sessions_pkey',
          indexdef: 'CREATE UNIQUE INDEX agent_sessions_pkey ON public.agent_sessions USING btree (session_id)',
        },
        {
          indexname: 'idx_agent_messages_session_time',
          indexdef: 'CREATE INDEX idx_agent_messages_session_time ON public.agent_messages USING btree (session_id, created_at)',
        },
      ]);
      // Nothing else: no extra tables, views, sequences or functions.
      assert.deepEqual(
        await sql(
          url,
          `SELECT relname, relkind::text FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'v', 'S', 'm') ORDER BY relname`,
        ),
        [
          { relname: 'agent_messages', relkind: 'r' },
          { relname: 'agent_messages_id_seq', relkind: 'S' },
          { relname: 'agent_sessions', relkind: 'r' },
        ],
      );
    });

    it('leaves existing tables and their rows alone (a second createTables is a no-op)', async () => {
      const url = await freshPostgresDatabase();
      await open(url, { createTables: true }).addItems([js.user('kept')]);
      const oids = async () =>
        sql(url, `SELECT relname, oid::int AS oid FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY relname`);
      const before = await oids();
      const again = open(url, { createTables: true, sessionId: 's2' });
      await again.addItems([js.user('new')]);
      assert.deepEqual(await oids(), before);
      assert.deepEqual(await messageData(url), [stored.user('kept')]);
      assert.deepEqual(await messageData(url, 's2'), [stored.user('new')]);
    });

    it('lets sessions (separate pools) create the tables concurrently: every one succeeds', async () => {
      const url = await freshPostgresDatabase();
      const racers = [1, 2, 3, 4].map((n) => open(url, { createTables: true, sessionId: n % 2 ? 'odd' : 'even' }));
      await Promise.all(racers.map((s, i) => s.addItems([js.user(`from ${i}`)])));
      assert.deepEqual(await sql(url, `SELECT session_id FROM agent_sessions ORDER BY session_id`), [
        { session_id: 'even' },
        { session_id: 'odd' },
      ]);
      assert.deepEqual(
        (await sql<{ message_data: string }>(url, `SELECT message_data FROM agent_messages ORDER BY message_data`)).map(
          (r) => r.message_data,
        ),
        [0, 1, 2, 3].map((i) => stored.user(`from ${i}`)),
      );
    });

    it('supports custom table names (create, write, read, pop, clear), with the index named after the messages table', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url, { createTables: true, sessionsTable: 'ChatSessions', messagesTable: 'chat_log' });
      await s.addItems([js.user('one'), js.assistant('two'), js.user('three')]);
      assert.deepEqual(
        (
          await sql<{ relname: string }>(
            url,
            `SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'i') ORDER BY relname`,
          )
        ).map((r) => r.relname),
        ['ChatSessions', 'ChatSessions_pkey', 'chat_log', 'chat_log_pkey', 'idx_chat_log_session_time'],
      );
      assert.deepEqual(await sql(url, `SELECT confrelid::regclass::text AS ref, confdeltype FROM pg_constraint WHERE contype = 'f'`), [
        { ref: '"ChatSessions"', confdeltype: 'c' },
      ]);
      assert.deepEqual(await messageData(url, 's1', 'chat_log'), [stored.user('one'), stored.assistant('two'), stored.user('three')]);
      // Another instance, without createTables, reads them.
      const reader = open(url, { sessionsTable: 'ChatSessions', messagesTable: 'chat_log' });
      assert.deepEqual((await reader.getItems()).map(label), ['one', 'assistant:two', 'three']);
      assert.equal(label(await reader.popItem()), 'three');
      await reader.clearSession();
      assert.deepEqual(await sql(url, `SELECT count(*)::int AS n FROM "ChatSessions"`), [{ n: 0 }]);
      assert.deepEqual(await sql(url, `SELECT count(*)::int AS n FROM chat_log`), [{ n: 0 }]);
      // The default names were never created.
      assert.deepEqual(await sql(url, `SELECT to_regclass('agent_sessions') AS s, to_regclass('agent_messages') AS m`), [
        { s: null, m: null },
      ]);
    });
  });

  describe('what addItems writes', () => {
    it('stores each item as Python’s json.dumps(item, ensure_ascii=True, separators=(",", ":")), byte for byte', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url, { createTables: true });
      await s.addItems([
        js.user('café ☕ 😀'),
        js.assistant('Grüße'),
        js.call('c1'),
        js.result('c1', 'Sunny ☀'),
        js.raw({
          type: 'custom_record',
          clé: 'ü',
          data: {
            numbers: [1, 1.5, 1e-5, 2.5e-7, -3.25, 100, 0.1, 123456.789, 0.0001, -0, true, false, null],
            text: 'quote " backslash \\ newline \n tab \t bell \u0007 del \u007f nbsp \u00a0 astral 𝄞',
            nested: { empty: {}, emptyList: [], deeper: [{ a: [1, { b: 'ß' }] }] },
          },
        }),
      ]);
      assert.deepEqual(await messageData(url), [
        String.raw`{"role":"user","content":"caf\u00e9 \u2615 \ud83d\ude00"}`,
        String.raw`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Gr\u00fc\u00dfe","annotations":[]}],"status":"completed"}`,
        String.raw`{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}","status":"completed"}`,
        String.raw`{"type":"function_call_output","call_id":"c1","output":"Sunny \u2600","status":"completed"}`,
        String.raw`{"type":"custom_record","cl\u00e9":"\u00fc","data":{"numbers":[1,1.5,1e-05,2.5e-07,-3.25,100,0.1,123456.789,0.0001,0,true,false,null],"text":"quote \" backslash \\ newline \n tab \t bell \u0007 del \u007f nbsp \u00a0 astral \ud834\udd1e","nested":{"empty":{},"emptyList":[],"deeper":[{"a":[1,{"b":"\u00df"}]}]}}}`,
      ]);
      // Plain ASCII on the wire, whatever the server encoding.
      assert.deepEqual(
        await sql(url, `SELECT bool_and(octet_length(message_data) = char_length(message_data)) AS ascii FROM agent_messages`),
        [{ ascii: true }],
      );
      // And it reads back as it went in.
      assert.deepEqual((await s.getItems()).slice(0, 4).map(label), [
        'café ☕ 😀',
        'assistant:Grüße',
        'function_call:c1',
        'function_call_result:c1',
      ]);
      const back = (await s.getStoredItems()) as Record<string, unknown>[];
      assert.deepEqual(back[0], { role: 'user', content: 'café ☕ 😀' });
      assert.deepEqual(
        (back[4]!.data as { text: string }).text,
        'quote " backslash \\ newline \n tab \t bell \u0007 del \u007f nbsp \u00a0 astral 𝄞',
      );
    });

    it('with ensureAscii: false keeps the text raw (json.dumps(..., ensure_ascii=False))', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url, { createTables: true, ensureAscii: false });
      await s.addItems([js.user('café ☕ 😀'), js.raw({ type: 'x', t: 'del \u007f bell \u0007 "q" ß' })]);
      const rows = await messageData(url);
      assert.deepEqual(rows, ['{"role":"user","content":"café ☕ 😀"}', '{"type":"x","t":"del \u007f bell \\u0007 \\"q\\" ß"}']);
      assert.deepEqual(
        (await sql<{ n: number }>(url, `SELECT octet_length(message_data) AS n FROM agent_messages ORDER BY id`)).map((r) => r.n),
        rows.map((r) => Buffer.byteLength(r, 'utf8')),
      );
      assert.deepEqual(await s.getStoredItems(), [
        { role: 'user', content: 'café ☕ 😀' },
        { type: 'x', t: 'del \u007f bell \u0007 "q" ß' },
      ]);
    });

    it('with ensureAscii: false refuses an item holding half of a character (InvalidArgumentError), writing nothing', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url, { createTables: true, ensureAscii: false });
      await s.getItems();
      // pg sends UTF-8, which would store U+FFFD instead; Python's driver raises UnicodeEncodeError on such a str.
      for (const bad of ['lone \ud800', 'lone \udfff end', 'reversed \ude00\ud83d']) {
        const err = await rejection(s.addItems([js.user('fine'), js.user(bad)]));
        assert.ok(err instanceof InvalidArgumentError, `${err.name}: ${err.message}`);
        assert.match(err.message, /item 1 holds half of a character/);
      }
      await assert.rejects(s.addStoredTexts(['{"t":"\ud800"}']), InvalidArgumentError);
      assert.deepEqual(await sql(url, `SELECT * FROM agent_sessions`), []);
      assert.deepEqual(await sql(url, `SELECT * FROM agent_messages`), []);
      // A whole pair is a character; and the default (ensureAscii) writes a lone half as an escape, as Python does.
      await s.addItems([js.user('pair 😀')]);
      await open(url, { sessionId: 'ascii' }).addItems([js.user('lone \ud800')]);
      assert.deepEqual(await messageData(url), ['{"role":"user","content":"pair 😀"}']);
      assert.deepEqual(await messageData(url, 'ascii'), ['{"role":"user","content":"lone \\ud800"}']);
    });

    it('creates the session row on the first write; later writes (own transactions) advance updated_at only', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url, { createTables: true });
      assert.deepEqual(await s.getItems(), []); // creates the tables, and nothing else
      assert.deepEqual(await sql(url, `SELECT * FROM agent_sessions`), []);
      await s.addItems([js.user('a'), js.assistant('b')]);
      type Times = { created_at: string; updated_at: string };
      const times = async () =>
        (await sql<Times>(url, `SELECT created_at::text, updated_at::text FROM agent_sessions WHERE session_id = 's1'`))[0] as Times;
      const first = await times();
      // One transaction: the session row and both messages carry the same CURRENT_TIMESTAMP, ids in item order.
      assert.equal(first.created_at, first.updated_at);
      const rows1 = await sql<{ id: number; created_at: string }>(url, `SELECT id, created_at::text FROM agent_messages ORDER BY id`);
      assert.deepEqual(
        rows1.map((r) => r.created_at),
        [first.created_at, first.created_at],
      );
      assert.equal(rows1[1]!.id, rows1[0]!.id + 1);

      await sleep(5);
      await s.addItems([js.user('c')]);
      const second = await times();
      assert.equal(second.created_at, first.created_at);
      assert.ok(second.updated_at > first.updated_at, `${second.updated_at} > ${first.updated_at}`);
      assert.deepEqual(await sql(url, `SELECT count(*)::int AS n FROM agent_sessions`), [{ n: 1 }]);
      const newest = await sql<{ created_at: string }>(url, `SELECT created_at::text FROM agent_messages ORDER BY id DESC LIMIT 1`);
      assert.deepEqual(newest, [{ created_at: second.updated_at }]);

      await s.addItems([]); // nothing at all: no transaction, no touch
      assert.deepEqual(await times(), second);
    });

    it('writes a batch in one transaction: a failing row leaves neither the session row nor any message behind', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url, { createTables: true });
      // A NUL cannot be stored in TEXT: the second row fails after the session row and the first row were sent.
      const err = await remoteFailure(s.addStoredTexts(['{"ok":1}', '{"bad":"\u0000"}']), 'server');
      assert.match(err.message, /0x00/);
      assert.deepEqual(await sql(url, `SELECT * FROM agent_sessions`), []);
      assert.deepEqual(await sql(url, `SELECT * FROM agent_messages`), []);
      await s.addItems([js.user('after')]);
      assert.deepEqual(await messageData(url), [stored.user('after')]);
    });
  });

  describe('a session a Python agent wrote', () => {
    /**
     * Rows as SQLAlchemySession leaves them, written with plain SQL: two sessions interleaved; a transaction that
     * started first (earlier created_at) but inserted later (higher ids); rows of one transaction sharing their
     * created_at; a corrupt row in between.
     */
    async function writePythonSessions(url: string): Promise<void> {
      await open(url, { createTables: true, sessionId: 'setup' }).getItems();
      await withPg(url, async (c) => {
        await c.query('BEGIN');
        await c.query(`INSERT INTO agent_sessions (session_id, created_at, updated_at) VALUES
                         ('py', '2025-01-01 10:00:01', '2025-01-01 10:00:09'), ('other', '2025-01-01 10:00:00', '2025-01-01 10:00:00')`);
        const rows: [string, string, string][] = [
          ['py', '2025-01-01 10:00:05', compact(python.user('B1'))], // id 1
          ['py', '2025-01-01 10:00:05', '{"role": "user", "content": '], // id 2: corrupt
          ['other', '2025-01-01 10:00:00', compact(python.user('other'))], // id 3
          ['py', '2025-01-01 10:00:01', compact(python.user('A1'))], // id 4
          ['py', '2025-01-01 10:00:01', compact(python.assistant('msg_1', 'A2'))], // id 5
          ['py', '2025-01-01 10:00:05', compact(python.call('call_1', 'get_weather', '{"city":"Paris"}'))], // id 6
          ['py', '2025-01-01 10:00:09', compact(python.output('call_1', 'Sunny'))], // id 7
        ];
        for (const [sessionId, createdAt, data] of rows)
          await c.query(`INSERT INTO agent_messages (session_id, message_data, created_at) VALUES ($1, $2, $3)`, [
            sessionId,
            data,
            createdAt,
          ]);
        await c.query('COMMIT');
      });
    }
    /** Python's json.dumps(v, separators=(",", ":")) for ASCII-only values (JSON.stringify agrees there). */
    const compact = (v: unknown) => JSON.stringify(v);
    const inOrder = [
      python.user('A1'),
      python.assistant('msg_1', 'A2'),
      python.user('B1'),
      python.call('call_1', 'get_weather', '{"city":"Paris"}'),
      python.output('call_1', 'Sunny'),
    ];

    it('reads it in created_at, id order, skipping the corrupt row, as stored (getStoredItems) and as JS items (getItems)', async () => {
      const url = await freshPostgresDatabase();
      await writePythonSessions(url);
      const s = open(url, { sessionId: 'py' });
      assert.deepEqual(await s.getStoredItems(), inOrder);
      const items = await s.getItems();
      assert.deepEqual(items.map(label), ['A1', 'assistant:A2', 'B1', 'function_call:call_1', 'function_call_result:call_1']);
      assert.equal((items[3] as { arguments?: string }).arguments, '{"city":"Paris"}');
      assert.deepEqual(await open(url, { sessionId: 'other' }).getStoredItems(), [python.user('other')]);
      assert.deepEqual(await open(url, { sessionId: 'nobody' }).getStoredItems(), []);
    });

    it('applies limits: the newest N valid items oldest first, the window growing past corrupt rows; 0 → []; negative → InvalidArgumentError', async () => {
      const url = await freshPostgresDatabase();
      await writePythonSessions(url);
      const s = open(url, { sessionId: 'py' });
      for (const n of [1, 2, 3, 4, 5]) assert.deepEqual(await s.getStoredItems(n), inOrder.slice(5 - n), `limit ${n}`);
      // 3: the newest three rows hold the corrupt one, so the window doubles to reach B1.
      assert.deepEqual((await s.getItems(3)).map(label), ['B1', 'function_call:call_1', 'function_call_result:call_1']);
      assert.deepEqual(await s.getStoredItems(6), inOrder);
      assert.deepEqual(await s.getStoredItems(1000), inOrder);
      assert.deepEqual(await s.getStoredItems(0), []);
      assert.deepEqual(await s.getItems(0), []);
      const err = await rejection(s.getItems(-1));
      assert.ok(err instanceof InvalidArgumentError, err.message);
      // sessionSettings.limit is the default; an explicit limit wins.
      const limited = open(url, { sessionId: 'py', sessionSettings: { limit: 2 } });
      assert.deepEqual(await limited.getStoredItems(), inOrder.slice(3));
      assert.deepEqual(await limited.getStoredItems(4), inOrder.slice(1));
    });

    it('popItem returns the newest item, deletes corrupt rows on the way, leaves updated_at alone, and returns undefined when empty', async () => {
      const url = await freshPostgresDatabase();
      await writePythonSessions(url);
      const s = open(url, { sessionId: 'py' });
      const ids = async () =>
        (await sql<{ id: number }>(url, `SELECT id FROM agent_messages WHERE session_id = 'py' ORDER BY id`)).map((r) => r.id);
      assert.deepEqual(await ids(), [1, 2, 4, 5, 6, 7]);
      const first = await s.popItem();
      assert.equal(label(first), 'function_call_result:call_1');
      assert.equal(label(await s.popItem()), 'function_call:call_1');
      assert.deepEqual(await ids(), [1, 2, 4, 5]);
      // Newest now is id 2 (corrupt, 10:00:05, higher id than B1): deleted on the way to B1.
      assert.equal(label(await s.popItem()), 'B1');
      assert.deepEqual(await ids(), [4, 5]);
      assert.equal(label(await s.popItem()), 'assistant:A2');
      assert.equal(label(await s.popItem()), 'A1');
      assert.equal(await s.popItem(), undefined);
      assert.equal(await s.popItem(), undefined);
      assert.deepEqual(await ids(), []);
      // The session row stays, untouched; the other session too.
      assert.deepEqual(await sql(url, `SELECT session_id, created_at::text, updated_at::text FROM agent_sessions ORDER BY session_id`), [
        { session_id: 'other', created_at: '2025-01-01 10:00:00', updated_at: '2025-01-01 10:00:00' },
        { session_id: 'py', created_at: '2025-01-01 10:00:01', updated_at: '2025-01-01 10:00:09' },
      ]);
      assert.deepEqual(await messageData(url, 'other'), [compact(python.user('other'))]);
    });

    it('clearSession deletes the session’s messages and its session row, nothing of other sessions', async () => {
      const url = await freshPostgresDatabase();
      await writePythonSessions(url);
      await open(url, { sessionId: 'py' }).clearSession();
      assert.deepEqual(await sql(url, `SELECT session_id FROM agent_sessions`), [{ session_id: 'other' }]);
      assert.deepEqual(await sql(url, `SELECT DISTINCT session_id FROM agent_messages`), [{ session_id: 'other' }]);
      // Clearing a session that does not exist is fine.
      await open(url, { sessionId: 'nobody' }).clearSession();
      // A write after clearing starts a new session row.
      const again = open(url, { sessionId: 'py' });
      await again.addItems([js.user('fresh')]);
      assert.deepEqual(await again.getStoredItems(), [{ role: 'user', content: 'fresh' }]);
      assert.deepEqual(await sql(url, `SELECT count(*)::int AS n FROM agent_sessions WHERE session_id = 'py'`), [{ n: 1 }]);
    });
  });

  describe('concurrent writers', () => {
    it('two instances (separate pools) adding 50 batches each in parallel: every batch present, contiguous and in order', async () => {
      const url = await freshPostgresDatabase();
      await open(url, { createTables: true, sessionId: 'setup' }).getItems();
      const writers = ['a', 'b'].map((w) => ({ w, s: open(url, { sessionId: 'shared' }) }));
      const batch = (w: string, n: number) => [js.user(`${w}${n}-0`), js.assistant(`${w}${n}-1`), js.user(`${w}${n}-2`)];
      await Promise.all(writers.flatMap(({ w, s }) => Array.from({ length: 50 }, (_, n) => s.addItems(batch(w, n)))));

      const rows = await sql<{ id: number; message_data: string; created_at: string }>(
        url,
        `SELECT id, message_data, created_at::text FROM agent_messages WHERE session_id = 'shared' ORDER BY created_at, id`,
      );
      assert.equal(rows.length, 300);
      const labels = rows.map((r) => label(JSON.parse(r.message_data)).replace('assistant:', ''));
      const seen = new Set<string>();
      for (let i = 0; i < rows.length; i += 3) {
        const key = labels[i]!.replace(/-0$/, '');
        assert.deepEqual(labels.slice(i, i + 3), [`${key}-0`, `${key}-1`, `${key}-2`], `batch at ${i} is split or out of order`);
        // One transaction's timestamp, ids rising in item order. (Not necessarily consecutive ids: concurrent
        // transactions draw from the one sequence row by row, as Python's executemany does.)
        const ids = rows.slice(i, i + 3).map((r) => r.id);
        assert.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, `ids of ${key}: ${ids.join(', ')}`);
        assert.equal(new Set(rows.slice(i, i + 3).map((r) => r.created_at)).size, 1);
        assert.ok(!seen.has(key), `${key} twice`);
        seen.add(key);
      }
      assert.equal(seen.size, 100);
      assert.deepEqual(await sql(url, `SELECT session_id FROM agent_sessions WHERE session_id = 'shared'`), [{ session_id: 'shared' }]);
      // Both instances read the same 300 items.
      const [a, b] = writers.map(({ s }) => s);
      assert.deepEqual(await a!.getStoredItems(), await b!.getStoredItems());
    });

    it('concurrent popItem calls (two instances) never return the same item and lose none', async () => {
      const url = await freshPostgresDatabase();
      const a = open(url, { createTables: true, sessionId: 'shared' });
      const b = open(url, { sessionId: 'shared' });
      const texts = Array.from({ length: 40 }, (_, i) => `m${i}`);
      await a.addItems(texts.map((t) => js.user(t)));
      const popped = await Promise.all(Array.from({ length: 44 }, (_, i) => (i % 2 ? a : b).popItem()));
      const got = popped.filter((p) => p !== undefined).map(label);
      assert.equal(got.length, 40, `popped ${got.length}`);
      assert.deepEqual([...new Set(got)].sort(), [...texts].sort());
      assert.equal(popped.filter((p) => p === undefined).length, 4);
      assert.deepEqual(await sql(url, `SELECT count(*)::int AS n FROM agent_messages`), [{ n: 0 }]);
    });
  });

  describe('errors', () => {
    it('a wrong password → auth, and the password appears nowhere in the error', async () => {
      const server = await sharedPostgres();
      const secret = 'Wr0ng-pa55word-x9';
      for (const s of [
        open(withPassword(server.url, secret)),
        new PostgresSession({ sessionId: 's1', connection: { url: server.url, password: secret } }),
      ]) {
        sessions.push(s);
        const err = await remoteFailure(s.getItems(), 'auth');
        assert.match(err.message, /password|credentials/i);
        for (const text of [err.message, String(err.stack), String((err.cause as Error | undefined)?.message)]) {
          assert.ok(!text.includes(secret), `the password leaked: ${text}`);
          assert.ok(!text.includes(server.password), `the server password leaked: ${text}`);
        }
        // Writes fail the same way, before anything else.
        await remoteFailure(s.addItems([js.user('x')]), 'auth');
      }
    });

    it('a session id holding half of a character → InvalidArgumentError before anything is sent', async () => {
      const url = await freshPostgresDatabase();
      await open(url, { createTables: true, sessionId: 'setup' }).getItems();
      // pg sends UTF-8, which turns each lone half into U+FFFD: `sid\ud800` and `sid\udbff` would share one session.
      for (const sessionId of ['sid\ud800', 'sid\udbff', '\udc00sid']) {
        assert.throws(
          () => open(url, { sessionId }),
          (err: Error) => {
            assert.ok(err instanceof InvalidArgumentError, `${err.name}: ${err.message}`);
            assert.match(err.message, /sessionId holds half of a character/);
            return true;
          },
        );
      }
      await open(url, { sessionId: 'sid😀' }).addItems([js.user('whole pairs are fine')]);
      assert.deepEqual(await sql(url, `SELECT session_id FROM agent_sessions`), [{ session_id: 'sid😀' }]);
    });

    it('a connection lost in the middle of a write (backend terminated) → connection-lost, nothing written, no crash', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url, { createTables: true });
      await s.addItems([js.user('before')]);
      // pg-pool takes its 'error' listener off a connection it hands out: the loss used to be an unhandled 'error'
      // event, which ends the process (mocha reports it as an uncaught error of this test).
      const uncaught: unknown[] = [];
      const record = (err: unknown) => uncaught.push(err);
      process.on('uncaughtException', record);
      try {
        for (const write of [() => s.addItems([js.user('lost 1'), js.user('lost 2')]), () => s.clearSession()]) {
          await withPg(url, async (locker) => {
            // A lock the write waits for, so it is mid-transaction when its backend goes.
            await locker.query('BEGIN');
            await locker.query('LOCK TABLE agent_messages IN ACCESS EXCLUSIVE MODE');
            const pending = rejection(write);
            await terminateWaiting(url);
            const err = await pending;
            assert.ok(err instanceof RemoteStoreError, `${err.name}: ${err.message}`);
            assert.equal(err.problem, 'connection-lost', err.message);
            assert.match(err.message, /terminating connection due to administrator command/);
            await locker.query('ROLLBACK');
          });
        }
        await sleep(50); // the connection's 'end' comes after the failed statement
        assert.deepEqual(uncaught, []);
      } finally {
        process.removeListener('uncaughtException', record);
      }
      // The server rolled back what the writes had sent; the session goes on with a new connection.
      assert.deepEqual(await messageData(url), [stored.user('before')]);
      assert.deepEqual(await sql(url, `SELECT session_id FROM agent_sessions`), [{ session_id: 's1' }]);
      await s.addItems([js.user('after')]);
      assert.deepEqual((await s.getItems()).map(label), ['before', 'after']);
    });

    it('nothing listening → unreachable', async () => {
      const port = await freePort();
      const url = `postgresql://asi:secret-pw@127.0.0.1:${port}/asi`;
      const s = open(url, { connection: { url, connectTimeoutMs: 5000 } });
      const err = await remoteFailure(s.getItems(), 'unreachable');
      assert.ok(!err.message.includes('secret-pw'), err.message);
      await remoteFailure(s.addItems([js.user('x')]), 'unreachable');
    });

    it('a database that does not exist → missing-database', async () => {
      const server = await sharedPostgres();
      const url = new URL(server.url);
      url.pathname = '/no_such_database_here';
      await remoteFailure(open(url.toString()).getItems(), 'missing-database');
    });

    it('missing tables without createTables → missing-table, for reads and writes, and nothing is created', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url);
      const err = await remoteFailure(s.getItems(), 'missing-table');
      assert.match(err.message, /agent_sessions/);
      await remoteFailure(s.addItems([js.user('x')]), 'missing-table');
      await remoteFailure(s.popItem(), 'missing-table');
      await remoteFailure(s.clearSession(), 'missing-table');
      // Only the messages table missing is just as wrong.
      await sql(
        url,
        `CREATE TABLE agent_sessions (session_id VARCHAR PRIMARY KEY, created_at TIMESTAMP NOT NULL DEFAULT now(), updated_at TIMESTAMP NOT NULL DEFAULT now())`,
      );
      const e2 = await remoteFailure(open(url).getItems(), 'missing-table');
      assert.match(e2.message, /agent_messages/);
      assert.deepEqual(await sql(url, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`), [{ tablename: 'agent_sessions' }]);
      // Once the tables exist, the same instance works (a failed check is not remembered).
      await open(url, { createTables: true, sessionId: 'creator' }).getItems();
      assert.deepEqual(await s.getItems(), []);
    });

    it('tables with the right names but other columns or types → wrong-schema, and nothing is written', async () => {
      const url = await freshPostgresDatabase();
      await sql(url, `CREATE TABLE agent_sessions (session_id VARCHAR PRIMARY KEY, created_at TIMESTAMP, updated_at TIMESTAMP)`);
      await sql(url, `CREATE TABLE agent_messages (id SERIAL PRIMARY KEY, session_id VARCHAR, body TEXT, created_at TIMESTAMP)`);
      const s = open(url);
      const err = await remoteFailure(s.getItems(), 'wrong-schema');
      assert.match(err.message, /message_data/);
      await remoteFailure(s.addItems([js.user('x')]), 'wrong-schema');
      // createTables does not "fix" an existing table either (create_all only creates what is absent).
      await remoteFailure(open(url, { createTables: true }).addItems([js.user('x')]), 'wrong-schema');
      assert.deepEqual(await sql(url, `SELECT count(*)::int AS n FROM agent_sessions`), [{ n: 0 }]);

      const typed = await freshPostgresDatabase();
      await sql(typed, `CREATE TABLE agent_sessions (session_id VARCHAR PRIMARY KEY, created_at TIMESTAMP, updated_at TIMESTAMP)`);
      await sql(typed, `CREATE TABLE agent_messages (id SERIAL PRIMARY KEY, session_id VARCHAR, message_data JSONB, created_at TIMESTAMP)`);
      const e2 = await remoteFailure(open(typed).addItems([js.user('x')]), 'wrong-schema');
      assert.match(e2.message, /message_data.*jsonb/);
      assert.deepEqual(await sql(typed, `SELECT count(*)::int AS n FROM agent_messages`), [{ n: 0 }]);
    });

    it('readOnly: addItems, popItem and clearSession throw read-only and write nothing; reads work', async () => {
      const url = await freshPostgresDatabase();
      await open(url, { createTables: true }).addItems([js.user('a'), js.user('b')]);
      const before = await sql(url, `SELECT * FROM agent_messages ORDER BY id`);
      const sessionsBefore = await sql(url, `SELECT * FROM agent_sessions`);
      const s = open(url, { readOnly: true });
      assert.equal(s.readOnly, true);
      await remoteFailure(s.addItems([js.user('c')]), 'read-only');
      await remoteFailure(s.addStoredTexts(['{}']), 'read-only');
      await remoteFailure(s.popItem(), 'read-only');
      await remoteFailure(s.clearSession(), 'read-only');
      assert.deepEqual((await s.getItems()).map(label), ['a', 'b']);
      assert.deepEqual(await sql(url, `SELECT * FROM agent_messages ORDER BY id`), before);
      assert.deepEqual(await sql(url, `SELECT * FROM agent_sessions`), sessionsBefore);

      // readOnly with createTables creates nothing.
      const empty = await freshPostgresDatabase();
      await remoteFailure(open(empty, { readOnly: true, createTables: true }).getItems(), 'missing-table');
      assert.deepEqual(await sql(empty, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`), []);

      // A read-only connection (default_transaction_read_only) makes the server itself refuse a write.
      const viaServer = new PostgresSession({ sessionId: 's1', connection: { url, readOnly: true } });
      sessions.push(viaServer);
      assert.equal(viaServer.readOnly, false);
      await remoteFailure(viaServer.addItems([js.user('c')]), 'read-only');
      assert.deepEqual(await sql(url, `SELECT * FROM agent_messages ORDER BY id`), before);
    });

    describe('on a private server', () => {
      let server: PostgresServer;
      before(async () => {
        server = await startPostgres();
      });
      after(async () => {
        await server?.stop();
      });

      it('paused with short timeouts → timeout (query and connect); resume() recovers', async function () {
        this.timeout(30_000);
        const s = open(server.url, { createTables: true, connection: { url: server.url, queryTimeoutMs: 300, connectTimeoutMs: 500 } });
        await s.addItems([js.user('before')]);
        server.pause();
        let queryErr: Error, connectErr: Error;
        const t = Date.now();
        try {
          // The pool's idle connection: the client-side query timeout.
          queryErr = await remoteFailure(s.getItems(), 'timeout');
          // A new pool: the connect timeout.
          const fresh = open(server.url, { connection: { url: server.url, queryTimeoutMs: 300, connectTimeoutMs: 500 } });
          connectErr = await remoteFailure(fresh.getItems(), 'timeout');
        } finally {
          server.resume();
        }
        assert.ok(Date.now() - t < 10_000, `took ${Date.now() - t} ms`);
        assert.ok(queryErr.message && connectErr.message);
        assert.deepEqual((await s.getItems()).map(label), ['before']);
        await s.addItems([js.user('after')]);
        assert.deepEqual((await s.getItems()).map(label), ['before', 'after']);
      });

      it('stopped mid-use → unreachable or connection-lost', async () => {
        const s = open(server.url, { createTables: true, connection: { url: server.url, connectTimeoutMs: 3000 } });
        await s.addItems([js.user('x')]);
        await server.stop();
        const read = await rejection(s.getItems());
        const write = await rejection(s.addItems([js.user('y')]));
        for (const err of [read, write]) {
          assert.ok(err instanceof RemoteStoreError, `${err.name}: ${err.message}`);
          assert.ok(['unreachable', 'connection-lost'].includes(err.problem), `${err.problem}: ${err.message}`);
        }
      });
    });
  });

  describe('a schema from migrations without NOT NULL', () => {
    it('skips a NULL message_data as it skips rows that do not decode (getItems, limits, popItem): never a null item', async () => {
      const url = await freshPostgresDatabase();
      await sql(
        url,
        `CREATE TABLE agent_sessions (session_id VARCHAR PRIMARY KEY, created_at TIMESTAMP DEFAULT now(), updated_at TIMESTAMP DEFAULT now())`,
      );
      await sql(
        url,
        `CREATE TABLE agent_messages (id SERIAL PRIMARY KEY, session_id VARCHAR NOT NULL, message_data TEXT, created_at TIMESTAMP DEFAULT now())`,
      );
      await sql(url, `INSERT INTO agent_sessions (session_id) VALUES ('s1')`);
      await sql(url, `INSERT INTO agent_messages (session_id, message_data) VALUES ('s1', $1), ('s1', NULL), ('s1', $2), ('s1', NULL)`, [
        stored.user('a'),
        stored.user('b'),
      ]);
      const s = open(url);
      assert.deepEqual((await s.getItems()).map(label), ['a', 'b']);
      assert.deepEqual((await s.getItems(1)).map(label), ['b']);
      assert.deepEqual((await s.getItems(2)).map(label), ['a', 'b']);
      assert.deepEqual(await s.getStoredItems(3), [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ]);
      // The newest row is NULL: deleted on the way, as a corrupt row is, and the item before it returned.
      assert.equal(label(await s.popItem()), 'b');
      assert.deepEqual(await sql(url, `SELECT count(*)::int AS n FROM agent_messages WHERE message_data IS NULL`), [{ n: 1 }]);
      assert.equal(label(await s.popItem()), 'a');
      assert.equal(await s.popItem(), undefined);
      assert.deepEqual(await sql(url, `SELECT count(*)::int AS n FROM agent_messages`), [{ n: 0 }]);
    });
  });

  describe('close()', () => {
    it('makes later calls throw SessionClosedError and ends the pool it made; closing twice is fine', async () => {
      const url = await freshPostgresDatabase();
      const s = open(url, { createTables: true });
      await s.addItems([js.user('x')]);
      const connections = async () =>
        (
          await sql<{ n: number }>(
            url,
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'agent-session-inspector' AND datname = current_database()`,
          )
        )[0]!.n;
      assert.ok((await connections()) > 0);
      await s.close();
      await s.close();
      for (const call of [() => s.getItems(), () => s.addItems([js.user('y')]), () => s.popItem(), () => s.clearSession()]) {
        const err = await rejection(call);
        assert.ok(err instanceof SessionClosedError, `${err.name}: ${err.message}`);
      }
      for (let i = 0; i < 50 && (await connections()) > 0; i++) await sleep(20);
      assert.equal(await connections(), 0);
      assert.deepEqual(await messageData(url), [stored.user('x')]);
    });

    it('does not end a pool it was given', async () => {
      const url = await freshPostgresDatabase();
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      try {
        const s = new PostgresSession({ sessionId: 's1', pool, createTables: true });
        await s.addItems([js.user('x')]);
        await s.close();
        await assert.rejects(s.getItems(), SessionClosedError);
        assert.deepEqual((await pool.query('SELECT count(*)::int AS n FROM agent_messages')).rows, [{ n: 1 }]);
        // Another session on the same pool still works.
        const other = new PostgresSession({ sessionId: 's2', pool });
        await other.addItems([js.user('y')]);
        assert.deepEqual((await other.getItems()).map(label), ['y']);
        await other.close();
        assert.equal(pool.ended, false);
      } finally {
        await pool.end();
      }
    });
  });
});
