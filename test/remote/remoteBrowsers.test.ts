// The read side for the inspector against real servers: PostgresStoreBrowser and RedisStoreBrowser (session pages,
// prefix filters, row pages, change tokens) and RemoteSessionSource (turns derived from the items, paged through a
// turn index built a batch at a time, tool totals, change polling).
import assert from 'node:assert/strict';
import type { AgentInputItem } from '@openai/agents';
import type Redis from 'ioredis';
import pg from 'pg';
import { checkServerStore } from '../../src/store/doctor/server/serverDoctor';
import { openRemoteStore } from '../../src/store/remote/openRemoteStore';
import { createPostgresPool, describePostgresUrl } from '../../src/store/remote/postgresConnection';
import { PostgresStoreBrowser } from '../../src/store/remote/postgresBrowser';
import { PostgresSession } from '../../src/store/remote/postgresSession';
import { RedisStoreBrowser } from '../../src/store/remote/redisBrowser';
import { RedisSession, redisSessionKeys } from '../../src/store/remote/redisSession';
import { REMOTE_BRANCH_ID, RemoteSessionSource, remoteEntry } from '../../src/store/remote/remoteSessionSource';
import type { RemoteSessionSummary, RemoteStoreBrowser } from '../../src/store/remote/remoteStore';
import { parseSearchQuery, searchRemoteStore, type SearchHit } from '../../src/store/search';
import { freshPostgresDatabase, freshRedisPrefix, sharedPostgres, sharedRedis } from '../support/servers';
import { js, rawRedis, remoteFailure, sql, stored } from './remoteHelpers';

/** Every page of `listSessions`, following the cursor. */
async function allPages(browser: RemoteStoreBrowser, limit: number, prefix?: string): Promise<RemoteSessionSummary[][]> {
  const pages: RemoteSessionSummary[][] = [];
  let cursor: string | null = null;
  do {
    const page = await browser.listSessions({ limit, cursor, prefix });
    pages.push(page.sessions);
    cursor = page.nextCursor;
    assert.ok(pages.length < 100, 'the cursor never ends');
  } while (cursor !== null);
  return pages;
}

const ids = (pages: RemoteSessionSummary[][]) => pages.flat().map((s) => s.sessionId);

describe('PostgresStoreBrowser (real PostgreSQL)', () => {
  let url: string;
  let browser: PostgresStoreBrowser;
  const pad = (i: number) => String(i).padStart(3, '0');
  /** 120 sessions: ids team-a/… (every third) or team-b/…, three sharing each updated_at minute, i % 4 messages. */
  const idOf = (i: number) => `${i % 3 === 0 ? 'team-a' : 'team-b'}/${pad(i)}`;

  before(async () => {
    url = await freshPostgresDatabase();
    const setup = new PostgresSession({ sessionId: 'setup', connection: { url }, createTables: true });
    await setup.getItems();
    await setup.close();
    const list = Array.from({ length: 120 }, (_, k) => idOf(k + 1));
    await sql(
      url,
      `INSERT INTO agent_sessions (session_id, created_at, updated_at)
       SELECT id, timestamp '2025-01-01 00:00:00',
              timestamp '2025-01-02 00:00:00' + ((i % 40) * interval '1 minute')
                + CASE WHEN i % 2 = 0 THEN i * interval '1 microsecond' ELSE interval '0' END
         FROM unnest($1::text[]) WITH ORDINALITY AS t(id, i)`,
      [list],
    );
    await sql(
      url,
      `INSERT INTO agent_messages (session_id, message_data, created_at)
       SELECT id, '{"role":"user","content":"m' || j || '"}', timestamp '2025-01-01 00:00:00' + j * interval '1 second'
         FROM unnest($1::text[]) WITH ORDINALITY AS t(id, i), generate_series(1, (i % 4)::int) AS j`,
      [list],
    );
    browser = (await openRemoteStore({ url })) as PostgresStoreBrowser;
  });
  after(async () => {
    await browser?.close();
  });

  it('openRemoteStore gives a PostgreSQL browser labelled without the password', async () => {
    const server = await sharedPostgres();
    assert.ok(browser instanceof PostgresStoreBrowser);
    assert.equal(browser.kind, 'postgres');
    assert.ok(!browser.label.includes(server.password), browser.label);
    assert.match(browser.label, /^asi@127\.0\.0\.1:\d+\/t/);
  });

  it('pages all 120 sessions most recently updated first (keyset cursor): no duplicates, no gaps, ties broken by id', async () => {
    const expected = (
      await sql<{ session_id: string }>(url, `SELECT session_id FROM agent_sessions ORDER BY updated_at DESC, session_id DESC`)
    ).map((r) => r.session_id);
    assert.equal(expected.length, 120);
    const pages = await allPages(browser, 50);
    assert.deepEqual(
      pages.map((p) => p.length),
      [50, 50, 20],
    );
    assert.deepEqual(ids(pages), expected);
    const first = pages[0]![0]!;
    assert.match(first.updatedAt ?? '', /^2025-01-02 00:39:00$/);
    assert.equal(first.createdAt, '2025-01-01 00:00:00');
    for (const s of pages.flat()) assert.equal(s.itemCount, Number(s.sessionId.slice(-3)) % 4, s.sessionId);
    // Exactly one page when it fits; an exact fit has no next page.
    const whole = await browser.listSessions({ limit: 120 });
    assert.equal(whole.sessions.length, 120);
    assert.equal(whole.nextCursor, null);
  });

  it('a session written between pages neither duplicates nor hides the others', async () => {
    const db = await freshPostgresDatabase();
    const writer = new PostgresSession({ sessionId: 'w-000', connection: { url: db }, createTables: true });
    try {
      await writer.getItems(); // creates the tables
      for (let i = 0; i < 7; i++) {
        const s = new PostgresSession({ sessionId: `w-${i}`, connection: { url: db } });
        await s.addItems([js.user('x')]);
        await s.close();
      }
      const b = await PostgresStoreBrowser.open({ url: db });
      try {
        const p1 = await b.listSessions({ limit: 3 });
        await writer.addItems([js.user('newest')]); // a new session, updated after every listed one
        const rest = await allPagesFrom(b, 3, p1.nextCursor);
        const seen = [...p1.sessions, ...rest].map((s) => s.sessionId);
        assert.equal(new Set(seen).size, seen.length, seen.join());
        assert.deepEqual([...seen].sort(), ['w-0', 'w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6']);
        // The next listing from the start has it first.
        assert.equal((await b.listSessions({ limit: 1 })).sessions[0]!.sessionId, 'w-000');
      } finally {
        await b.close();
      }
    } finally {
      await writer.close();
    }
  });

  it('filters by id prefix (literally: no LIKE wildcards), with paging and counts', async () => {
    const teamA = ids(await allPages(browser, 15, 'team-a/'));
    assert.equal(teamA.length, 40);
    assert.ok(teamA.every((id) => id.startsWith('team-a/')));
    assert.equal(await browser.countSessions(), 120);
    assert.equal(await browser.countSessions('team-a/'), 40);
    assert.equal(await browser.countSessions('team-b/'), 80);
    assert.equal(await browser.countSessions('team_a'), 0);
    assert.equal(await browser.countSessions('%'), 0);
    assert.deepEqual(ids(await allPages(browser, 50, 'team-_/')), []);
    assert.deepEqual(ids(await allPages(browser, 50, 'team-a/003')), ['team-a/003']);
  });

  it('getSession and readRows (positions in created_at, id order)', async () => {
    assert.deepEqual(await browser.getSession('team-a/003'), {
      sessionId: 'team-a/003',
      createdAt: '2025-01-01 00:00:00',
      updatedAt: '2025-01-02 00:03:00',
      itemCount: 3,
    });
    assert.equal(await browser.getSession('nobody'), null);
    const rows = await browser.readRows('team-a/003', 0, 10);
    assert.deepEqual(
      rows.map((r) => [r.position, r.text, r.createdAt]),
      [
        [1, '{"role":"user","content":"m1"}', '2025-01-01 00:00:01'],
        [2, '{"role":"user","content":"m2"}', '2025-01-01 00:00:02'],
        [3, '{"role":"user","content":"m3"}', '2025-01-01 00:00:03'],
      ],
    );
    assert.ok(rows.every((r) => typeof r.id === 'number'));
    assert.deepEqual(
      (await browser.readRows('team-a/003', 1, 1)).map((r) => [r.position, r.text]),
      [[2, '{"role":"user","content":"m2"}']],
    );
    assert.deepEqual(await browser.readRows('team-a/003', 3, 5), []);
    // readRowsAfter continues from a row's cursor.
    assert.deepEqual(
      (await browser.readRowsAfter('team-a/003', rows[0]!, 10)).map((r) => [r.position, r.text]),
      [
        [2, '{"role":"user","content":"m2"}'],
        [3, '{"role":"user","content":"m3"}'],
      ],
    );
    assert.deepEqual(await browser.readRowsAfter('team-a/003', rows[2]!, 10), []);
    assert.deepEqual(
      (await browser.readRowsAfter('team-a/003', null, 1)).map((r) => r.position),
      [1],
    );
  });

  it('orders rows by the full created_at timestamp, not the whole-second text shown (rows, rows after, turns)', async () => {
    // A transaction that started earlier (earlier created_at, same second) but inserted later (higher id) comes first.
    await sql(
      url,
      `INSERT INTO agent_messages (session_id, message_data, created_at) VALUES
         ('team-a/006', '{"role":"user","content":"second"}', '2025-01-01 00:00:07.900'),
         ('team-a/006', '{"role":"user","content":"first"}', '2025-01-01 00:00:07.100')`,
    );
    try {
      const texts = (await browser.readRows('team-a/006', 2, 10)).map((r) => [r.text, r.createdAt]);
      assert.deepEqual(texts, [
        ['{"role":"user","content":"first"}', '2025-01-01 00:00:07'],
        ['{"role":"user","content":"second"}', '2025-01-01 00:00:07'],
      ]);
      const [, second] = await browser.readRows('team-a/006', 0, 2);
      assert.deepEqual(
        (await browser.readRowsAfter('team-a/006', second!, 10)).map((r) => [r.position, r.text]),
        [
          [3, '{"role":"user","content":"first"}'],
          [4, '{"role":"user","content":"second"}'],
        ],
      );
      const source = new RemoteSessionSource(browser);
      const turns = await source.getTurnsPage('team-a/006', REMOTE_BRANCH_ID, { limit: 10 });
      assert.deepEqual(
        turns.turns.map((t) => t.preview),
        ['m1', 'm2', 'first', 'second'],
      );
    } finally {
      await sql(url, `DELETE FROM agent_messages WHERE session_id = 'team-a/006' AND created_at > '2025-01-01 00:00:07'`);
    }
  });

  it('sessionToken changes after addItems and after popItem + addItems; storeToken when a session is added', async () => {
    const writer = new PostgresSession({ sessionId: 'team-a/tokens', connection: { url } });
    try {
      const store0 = await browser.storeToken();
      const t0 = await browser.sessionToken('team-a/tokens');
      await writer.addItems([js.user('a'), js.user('b')]);
      const t1 = await browser.sessionToken('team-a/tokens');
      assert.notEqual(t1, t0);
      assert.notEqual(await browser.storeToken(), store0);
      await writer.popItem();
      await writer.addItems([js.user('c')]);
      const t2 = await browser.sessionToken('team-a/tokens');
      assert.notEqual(t2, t1);
      assert.equal(await browser.sessionToken('team-a/tokens'), t2, 'stable while nothing changes');
      await writer.clearSession();
    } finally {
      await writer.close();
    }
  });

  it('is read-only on the server by default, and says what is wrong when it cannot open', async () => {
    await assert.rejects(browser.pool.query(`DELETE FROM agent_messages`), /read-only transaction/);
    const empty = await freshPostgresDatabase();
    await remoteFailure(PostgresStoreBrowser.open({ url: empty }), 'missing-table');
    const u = new URL(url);
    u.password = 'not-the-password';
    const err = await remoteFailure(openRemoteStore({ url: u.toString() }), 'auth');
    assert.ok(!err.message.includes('not-the-password'), err.message);
    // The password apart from the address (as the extension passes it) is used.
    const server = await sharedPostgres();
    u.password = '';
    const viaOption = await openRemoteStore({ url: u.toString(), password: server.password });
    try {
      assert.equal(await viaOption.countSessions(), 120);
    } finally {
      await viaOption.close();
    }
  });

  it('stays read-only on the server when the address carries its own options (which pg lets win over the config’s)', async () => {
    const withOptions = (options: string) => {
      const u = new URL(url);
      u.searchParams.set('options', options);
      return u.toString();
    };
    for (const address of [withOptions('-c search_path=public'), withOptions('-c default_transaction_read_only=off')]) {
      const b = (await openRemoteStore({ url: address })) as PostgresStoreBrowser;
      try {
        await assert.rejects(b.pool.query(`CREATE TABLE written_anyway (x int)`), /read-only transaction/, address);
        assert.deepEqual((await b.pool.query(`SHOW default_transaction_read_only`)).rows, [{ default_transaction_read_only: 'on' }]);
        assert.equal(await b.countSessions(), 120);
      } finally {
        await b.close();
      }
    }
    // The address's own options still apply.
    const b = (await openRemoteStore({ url: withOptions('-c search_path=nowhere,public -c work_mem=8MB') })) as PostgresStoreBrowser;
    try {
      assert.deepEqual((await b.pool.query(`SHOW work_mem`)).rows, [{ work_mem: '8MB' }]);
    } finally {
      await b.close();
    }
    // And a session opened read-only on the connection is refused by the server too.
    const session = new PostgresSession({
      sessionId: 'team-a/ro',
      connection: { url: withOptions('-c search_path=public'), readOnly: true },
    });
    try {
      await remoteFailure(session.addItems([js.user('x')]), 'read-only');
    } finally {
      await session.close();
    }
    assert.deepEqual(
      await sql(url, `SELECT to_regclass('written_anyway') AS t, count(*)::int AS n FROM agent_sessions WHERE session_id = 'team-a/ro'`),
      [{ t: null, n: 0 }],
    );
  });

  it('refuses an address whose password ends it early (/, ? or #) as bad-url, before connecting, the password never shown', async () => {
    // `new URL` reads this as host "app", port 2024 and a path: no password at all, and pg would go to host "app".
    const address = 'postgresql://app:2024/Spring@127.0.0.1:1/agents';
    assert.equal(describePostgresUrl(address), 'app@127.0.0.1:1/agents');
    const refusals = [
      await remoteFailure(openRemoteStore({ url: address }), 'bad-url'),
      await remoteFailure(async () => new PostgresSession({ sessionId: 's', connection: { url: address } }), 'bad-url'),
      await remoteFailure(checkServerStore({ url: address }), 'bad-url'),
    ];
    for (const err of refusals) {
      assert.match(err.message, /postgresql:\/\/app:\*\*\*@127\.0\.0\.1:1\/agents/);
      assert.match(err.message, /percent-encode/);
      assert.doesNotMatch(err.message, /2024|Spring/);
    }
    // Encoded, the same password is fine (nothing listens on port 1: the refusal now comes from the network).
    await remoteFailure(
      openRemoteStore({ url: 'postgresql://app:2024%2FSpring@127.0.0.1:1/agents', connectTimeoutMs: 2_000 }),
      'unreachable',
    );
  });

  it('turns sslmode=require into the TLS setting pg gives it, without pg’s SECURITY WARNING on stderr', async () => {
    const warnings: Error[] = [];
    const record = (w: Error) => warnings.push(w);
    process.on('warning', record);
    try {
      for (const mode of ['prefer', 'require', 'verify-ca']) {
        const pool = createPostgresPool({ url: `postgresql://u:p@127.0.0.1:1/db?sslmode=${mode}&application_name=x` });
        try {
          const config = pool.options as { connectionString: string; ssl?: unknown };
          assert.equal(new URL(config.connectionString).searchParams.get('sslmode'), null);
          assert.equal(new URL(config.connectionString).searchParams.get('application_name'), 'x');
          // What pg makes of it: TLS with certificate checks (verify-full), as pg made of the mode itself.
          const client = new pg.Client(pool.options) as unknown as { connectionParameters: { ssl: unknown } };
          assert.equal(client.connectionParameters.ssl, true, mode);
        } finally {
          await pool.end();
        }
      }
      // With libpq's meaning asked for, the mode stays for pg to read; verify-full and disable were never warned about.
      const compat = createPostgresPool({ url: 'postgresql://u:p@127.0.0.1:1/db?sslmode=require&uselibpqcompat=true' });
      assert.match((compat.options as { connectionString: string }).connectionString, /sslmode=require/);
      await compat.end();
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.map((w) => w.message),
        [],
      );
    } finally {
      process.removeListener('warning', record);
    }
  });

  async function allPagesFrom(b: RemoteStoreBrowser, limit: number, cursor: string | null): Promise<RemoteSessionSummary[]> {
    const out: RemoteSessionSummary[] = [];
    while (cursor !== null) {
      const page = await b.listSessions({ limit, cursor });
      out.push(...page.sessions);
      cursor = page.nextCursor;
    }
    return out;
  }
});

describe('PostgresStoreBrowser on schemas from migrations (real PostgreSQL)', () => {
  /** SQLAlchemySession's columns as a migration may leave them: BIGSERIAL ids, and no NOT NULL on the data or times. */
  async function migratedSchema(url: string): Promise<void> {
    await sql(
      url,
      `CREATE TABLE agent_sessions (session_id VARCHAR PRIMARY KEY, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                                    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`,
    );
    await sql(
      url,
      `CREATE TABLE agent_messages (id BIGSERIAL PRIMARY KEY, session_id VARCHAR NOT NULL REFERENCES agent_sessions ON DELETE CASCADE,
                                    message_data TEXT, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`,
    );
    await sql(url, `CREATE INDEX idx_agent_messages_session_time ON agent_messages (session_id, created_at)`);
  }
  const browsers: RemoteStoreBrowser[] = [];
  const browse = async (url: string) => {
    const b = await openRemoteStore({ url });
    browsers.push(b);
    return b;
  };
  afterEach(async () => {
    await Promise.all(browsers.splice(0).map((b) => b.close()));
  });

  it('reads BIGSERIAL ids above 2^31: rows after a row, turns, search', async () => {
    const url = await freshPostgresDatabase();
    await migratedSchema(url);
    await sql(url, `ALTER SEQUENCE agent_messages_id_seq RESTART WITH 3000000000`);
    const writer = new PostgresSession({ sessionId: 'big-ids', connection: { url } });
    try {
      // 600 rows: search reads 500 a page, so its second page starts after a row's cursor too.
      const items = Array.from({ length: 300 }, (_, t) => [js.user(`q${t + 1}`), js.assistant(`a${t + 1}`)]).flat();
      await writer.addItems(items);
    } finally {
      await writer.close();
    }
    const b = await browse(url);
    const [first] = await b.readRows('big-ids', 0, 1);
    assert.equal(first!.id, 3000000000);
    assert.deepEqual(
      (await b.readRowsAfter('big-ids', first!, 2)).map((r) => [r.position, r.id, r.text]),
      [
        [2, 3000000001, stored.assistant('a1')],
        [3, 3000000002, stored.user('q2')],
      ],
    );
    const source = new RemoteSessionSource(b);
    assert.deepEqual(
      (await source.getTurnItems('big-ids', REMOTE_BRANCH_ID, 3)).map((e) => [e.sequenceNumber, e.messageId, e.type]),
      [
        [5, 3000000004, 'user'],
        [6, 3000000005, 'assistant'],
      ],
    );
    const hits: SearchHit[] = [];
    await searchRemoteStore(b, parseSearchQuery('q300'), { onHits: (h) => hits.push(...h) });
    assert.deepEqual(
      hits.map((h) => [h.turn, h.sequenceNumber]),
      [[300, 599]],
    );
  });

  it('shows a NULL message_data as a corrupt row that says so, not as bytes that are not UTF-8', async () => {
    const url = await freshPostgresDatabase();
    await migratedSchema(url);
    await sql(url, `INSERT INTO agent_sessions (session_id) VALUES ('nulls')`);
    await sql(url, `INSERT INTO agent_messages (session_id, message_data) VALUES ('nulls', $1), ('nulls', NULL), ('nulls', $2)`, [
      stored.user('q1'),
      stored.assistant('a1'),
    ]);
    const b = await browse(url);
    const rows = await b.readRows('nulls', 0, 10);
    assert.deepEqual(
      rows.map((r) => [r.position, r.text === null, r.textIsNull ?? false]),
      [
        [1, false, false],
        [2, true, true],
        [3, false, false],
      ],
    );
    const entry = remoteEntry(rows[1]!);
    assert.ok(entry.corrupt);
    assert.equal(entry.error, 'message_data is NULL: there is no stored text');
    const turn = await new RemoteSessionSource(b).getTurnItems('nulls', REMOTE_BRANCH_ID, 1);
    assert.deepEqual(
      turn.map((e) => [e.sequenceNumber, e.corrupt]),
      [
        [1, false],
        [2, true],
        [3, false],
      ],
    );
  });

  it('keeps rows and sessions without a time in the SDK’s order: turns after them, every session listed once', async () => {
    const url = await freshPostgresDatabase();
    await migratedSchema(url);
    await sql(url, `INSERT INTO agent_sessions (session_id, updated_at) VALUES ('timed', '2025-01-01 10:00:00')`);
    // Rows without a time come last in created_at, id order (PostgreSQL sorts NULLs last, and the SDK reads so).
    await sql(
      url,
      `INSERT INTO agent_messages (session_id, message_data, created_at) VALUES
         ('timed', $1, '2025-01-01 10:00:01'), ('timed', $2, NULL), ('timed', $3, '2025-01-01 10:00:02'),
         ('timed', $4, NULL), ('timed', $5, NULL), ('timed', $6, '2025-01-01 10:00:03')`,
      [stored.user('q1'), stored.user('q3'), stored.assistant('a1'), stored.assistant('a3'), stored.user('q4'), stored.user('q2')],
    );
    const b = await browse(url);
    const all = await b.readRows('timed', 0, 10);
    assert.deepEqual(
      all.map((r) => r.text),
      ['q1', 'a1', 'q2', 'q3', 'a3', 'q4'].map((t) => (t.startsWith('q') ? stored.user(t) : stored.assistant(t))),
    );
    // Rows after each row, one at a time: the same order, from a row with a time and from one without.
    const stepped = [all[0]!];
    for (let r = all[0]!; ;) {
      const [next] = await b.readRowsAfter('timed', r, 1);
      if (!next) break;
      stepped.push(next);
      r = next;
    }
    assert.deepEqual(
      stepped.map((r) => [r.position, r.text]),
      all.map((r) => [r.position, r.text]),
    );
    // The turns the list shows are the turns one can open.
    const source = new RemoteSessionSource(b);
    const page = await source.getTurnsPage('timed', REMOTE_BRANCH_ID, { limit: 10 });
    assert.deepEqual(
      page.turns.map((t) => [t.turn, t.preview]),
      [
        [1, 'q1'],
        [2, 'q2'],
        [3, 'q3'],
        [4, 'q4'],
      ],
    );
    for (const [turn, texts] of [
      [2, ['q2']],
      [3, ['q3', 'a3']],
      [4, ['q4']],
    ] as const) {
      const got = await source.getTurnItems('timed', REMOTE_BRANCH_ID, turn);
      assert.deepEqual(
        got.map((e) => (e.corrupt ? null : (e.item as { content: unknown }).content)),
        texts.map((t) => (t.startsWith('q') ? t : [{ type: 'output_text', text: t, annotations: [] }])),
        `turn ${turn}`,
      );
    }

    // Sessions without updated_at come first (DESC puts NULLs first), then the rest: each once, whatever the page size.
    await sql(
      url,
      `INSERT INTO agent_sessions (session_id, updated_at) VALUES ('n1', NULL), ('n2', NULL), ('n3', NULL), ('later', '2025-01-02 00:00:00')`,
    );
    for (const limit of [1, 2, 3, 10]) {
      const pages = await allPages(b, limit);
      assert.deepEqual(ids(pages), ['n3', 'n2', 'n1', 'later', 'timed'], `pages of ${limit}`);
    }
  });
});

describe('RedisStoreBrowser (real Redis)', () => {
  let raw: Redis;
  let prefix: string;
  let browser: RedisStoreBrowser;
  const idOf = (i: number) => `${i % 3 === 0 ? 'team-a' : 'team-b'}/${String(i).padStart(3, '0')}`;

  before(async () => {
    const server = await sharedRedis();
    raw = await rawRedis(server.url);
    prefix = freshRedisPrefix().replace(/:$/, '');
    // 120 sessions as Python writes them (i % 4 messages; three sharing each updated_at), and 3,000 other keys under
    // the prefix so that SCAN needs several calls.
    const pipe = raw.pipeline();
    for (let i = 1; i <= 120; i++) {
      const k = redisSessionKeys(prefix, idOf(i));
      pipe.hset(k.session, 'session_id', idOf(i), 'created_at', '1700000000', 'updated_at', String(1700000000 + (i % 40) * 60));
      for (let j = 1; j <= i % 4; j++) pipe.rpush(k.messages, stored.user(`m${j}`));
    }
    for (let n = 0; n < 3000; n++) pipe.set(`${prefix}:filler:${n}`, 'x');
    // Hashes that are not sessions: no session_id and no messages.
    pipe.hset(`${prefix}:junk`, 'foo', 'bar');
    pipe.hset(`${prefix}:team-a/junk`, 'created_at', '1700000000');
    await pipe.exec();
    browser = (await openRemoteStore({ url: server.url, keyPrefix: prefix })) as RedisStoreBrowser;
  });
  after(async () => {
    await browser?.close();
    raw?.disconnect();
  });

  it('openRemoteStore gives a Redis browser labelled without the password', async () => {
    const server = await sharedRedis();
    assert.ok(browser instanceof RedisStoreBrowser);
    assert.equal(browser.kind, 'redis');
    assert.ok(!browser.label.includes(server.password!), browser.label);
    assert.equal(browser.label, `127.0.0.1:${server.port}/0`);
  });

  it('finds every session exactly once across the pages, each page newest first; non-session hashes are ignored', async () => {
    const pages = await allPages(browser, 50);
    assert.ok(pages.length >= 2, `${pages.length} page(s)`);
    const found = ids(pages);
    assert.equal(new Set(found).size, found.length, 'a session came twice');
    assert.deepEqual([...found].sort(), Array.from({ length: 120 }, (_, k) => idOf(k + 1)).sort());
    for (const page of pages) {
      const times = page.map((s) => s.updatedAt ?? '');
      assert.deepEqual(times, [...times].sort().reverse(), 'a page is not sorted newest first');
    }
    const s3 = pages.flat().find((s) => s.sessionId === 'team-a/003')!;
    assert.deepEqual(s3, { sessionId: 'team-a/003', createdAt: '2023-11-14 22:13:20', updatedAt: '2023-11-14 22:16:20', itemCount: 3 });
    assert.equal(await browser.countSessions(), null);
  });

  it('filters by id prefix, glob characters taken literally', async () => {
    const teamA = ids(await allPages(browser, 10, 'team-a/'));
    assert.deepEqual([...teamA].sort(), Array.from({ length: 40 }, (_, k) => idOf(3 * (k + 1))).sort());
    const star = redisSessionKeys(prefix, 'a*1');
    const plain = redisSessionKeys(prefix, 'ab1');
    await raw.hset(star.session, 'session_id', 'a*1', 'created_at', '1', 'updated_at', '1');
    await raw.hset(plain.session, 'session_id', 'ab1', 'created_at', '1', 'updated_at', '1');
    try {
      assert.deepEqual(ids(await allPages(browser, 50, 'a*')), ['a*1']);
      assert.deepEqual(ids(await allPages(browser, 50, 'team-?/')), []);
    } finally {
      await raw.del(star.session, plain.session);
    }
  });

  it('getSession and readRows (list positions; null text for bytes that are not UTF-8)', async () => {
    assert.equal((await browser.getSession('team-a/003'))?.itemCount, 3);
    assert.equal(await browser.getSession('nobody'), null);
    const k = redisSessionKeys(prefix, 'rows');
    await raw.rpush(k.messages, stored.user('r1'), Buffer.from([0xff, 0x7b]), stored.user('r3'), stored.user('r4'));
    assert.deepEqual(
      (await browser.readRows('rows', 0, 10)).map((r) => [r.position, r.id, r.text, r.createdAt]),
      [
        [1, null, stored.user('r1'), null],
        [2, null, null, null],
        [3, null, stored.user('r3'), null],
        [4, null, stored.user('r4'), null],
      ],
    );
    assert.deepEqual(
      (await browser.readRows('rows', 2, 1)).map((r) => [r.position, r.text]),
      [[3, stored.user('r3')]],
    );
    assert.deepEqual(await browser.readRows('rows', 4, 5), []);
    const [first] = await browser.readRows('rows', 0, 1);
    assert.deepEqual(
      (await browser.readRowsAfter('rows', first!, 2)).map((r) => r.position),
      [2, 3],
    );
    await raw.del(k.messages);
  });

  it("readRows keeps a leading UTF-8 byte order mark, so the entry shows as corrupt (Python's json.loads refuses it)", async () => {
    const k = redisSessionKeys(prefix, 'bom');
    await raw.rpush(k.messages, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(stored.user('b1'))]), stored.user('b2'));
    try {
      const rows = await browser.readRows('bom', 0, 10);
      assert.deepEqual(
        rows.map((r) => r.text),
        ['\ufeff' + stored.user('b1'), stored.user('b2')],
      );
      assert.deepEqual(
        rows.map((r) => remoteEntry(r).corrupt),
        [true, false],
      );
    } finally {
      await raw.del(k.messages);
    }
  });

  it('sessionToken changes after addItems and after popItem + addItems within the same second; storeToken when a session is added', async () => {
    const server = await sharedRedis();
    const writer = new RedisSession({ sessionId: 'tokens', connection: { url: server.url }, keyPrefix: prefix });
    const k = redisSessionKeys(prefix, 'tokens');
    try {
      const store0 = await browser.storeToken();
      const t0 = await browser.sessionToken('tokens');
      await writer.addItems([js.user('a'), js.user('b')]);
      const t1 = await browser.sessionToken('tokens');
      assert.notEqual(t1, t0);
      assert.notEqual(await browser.storeToken(), store0);
      // Same length and the same updated_at second afterwards: only the newest entry differs.
      await raw.hset(k.session, 'updated_at', '1700000000');
      const before = await browser.sessionToken('tokens');
      await writer.popItem();
      await writer.addItems([js.user('c')]);
      await raw.hset(k.session, 'updated_at', '1700000000');
      const after = await browser.sessionToken('tokens');
      assert.notEqual(after, before);
      assert.equal(await browser.sessionToken('tokens'), after, 'stable while nothing changes');
    } finally {
      await writer.clearSession();
      await writer.close();
    }
  });

  it('says what is wrong when it cannot open', async () => {
    const server = await sharedRedis();
    const u = new URL(server.url);
    u.password = 'not-the-password';
    const err = await remoteFailure(openRemoteStore({ url: u.toString(), keyPrefix: prefix }), 'auth');
    assert.ok(!err.message.includes('not-the-password'), err.message);
    await remoteFailure(openRemoteStore({ url: 'mysql://127.0.0.1/x' }), 'bad-url');
    // A database the server does not have is not listed as database 0; one that is not a number is refused unsent.
    await remoteFailure(openRemoteStore({ url: server.url.replace(/\/0$/, '/99'), keyPrefix: prefix }), 'missing-database');
    await remoteFailure(openRemoteStore({ url: server.url.replace(/\/0$/, '/abc'), keyPrefix: prefix }), 'bad-url');
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// RemoteSessionSource on both stores

/**
 * 2,500 items: 3 before the first user item (turn 0), then 624 turns of [user, call, output, assistant] (every third
 * turn calls `lookup`, the others `get_weather`), and one more assistant item in the last turn. Turn k starts at
 * position 4k, so turn 250 (1000–1003) straddles the index's 1,000-row batches.
 */
function bigSession(): AgentInputItem[] {
  const items: AgentInputItem[] = [js.assistant('welcome'), js.call('c0', 'setup'), js.result('c0', 'ready', 'setup')];
  for (let t = 1; t <= 624; t++) {
    const tool = t % 3 === 0 ? 'lookup' : 'get_weather';
    items.push(js.user(`q${t}`), js.call(`c${t}`, tool), js.result(`c${t}`, `r${t}`, tool), js.assistant(`a${t}`));
  }
  items.push(js.assistant('tail'));
  return items;
}

interface Backend {
  kind: 'postgres' | 'redis';
  /** A browser on a store holding session `big` (bigSession) and `small`, and a writer for `big`. */
  setup(): Promise<{ browser: RemoteStoreBrowser; writer: PostgresSession | RedisSession; cleanup(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    kind: 'postgres',
    async setup() {
      const url = await freshPostgresDatabase();
      const writer = new PostgresSession({ sessionId: 'big', connection: { url }, createTables: true });
      const items = bigSession();
      for (let i = 0; i < items.length; i += 500) await writer.addItems(items.slice(i, i + 500));
      const small = new PostgresSession({ sessionId: 'small', connection: { url } });
      await small.addItems([js.user('only')]);
      await small.close();
      const browser = await PostgresStoreBrowser.open({ url });
      return { browser, writer, cleanup: async () => void (await writer.close()) };
    },
  },
  {
    kind: 'redis',
    async setup() {
      const server = await sharedRedis();
      const keyPrefix = freshRedisPrefix().replace(/:$/, '');
      const writer = new RedisSession({ sessionId: 'big', connection: { url: server.url }, keyPrefix });
      const items = bigSession();
      for (let i = 0; i < items.length; i += 500) await writer.addItems(items.slice(i, i + 500));
      const small = new RedisSession({ sessionId: 'small', connection: { url: server.url }, keyPrefix });
      await small.addItems([js.user('only')]);
      await small.close();
      const browser = await RedisStoreBrowser.open({ url: server.url, keyPrefix });
      return {
        browser,
        writer,
        cleanup: async () => {
          await writer.clearSession();
          await writer.close();
        },
      };
    },
  },
];

for (const backend of backends) {
  describe(`RemoteSessionSource on ${backend.kind}`, () => {
    let source: RemoteSessionSource;
    let writer: PostgresSession | RedisSession;
    let cleanup: () => Promise<void>;
    const main = REMOTE_BRANCH_ID;

    beforeEach(async () => {
      const made = await backend.setup();
      source = new RemoteSessionSource(made.browser);
      writer = made.writer;
      cleanup = made.cleanup;
    });
    afterEach(async () => {
      await cleanup?.();
      await source?.close();
    });

    it('one branch, main: the store’s item count, the user turns as a lower bound until the index covers the session', async () => {
      const [branch, ...more] = await source.getBranchTree('big');
      assert.deepEqual(more, []);
      const common = { branchId: 'main', messageCount: 2500, createdAt: null, parentBranchId: null, forkTurn: null, sharedItemCount: 0 };
      // Only the first 1,000-row batch is read: turns 1–250 start in it.
      assert.deepEqual({ ...branch!, createdAt: null }, { ...common, userTurns: 250, userTurnsAtLeast: true });
      if (backend.kind === 'postgres') assert.match(branch!.createdAt ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      // Once something read the whole session (tool totals do), the count is exact.
      await source.getToolTotals('big');
      const [exact] = await source.getBranchTree('big');
      assert.deepEqual({ ...exact!, createdAt: null }, { ...common, userTurns: 624 });
      assert.deepEqual((await source.getBranchTree('small'))[0]?.userTurns, 1);
      assert.equal((await source.getBranchTree('small'))[0]?.userTurnsAtLeast, undefined);
      assert.deepEqual(await source.getBranchTree('nobody'), []);
      assert.deepEqual(await source.usedBranchIds(), ['main']);
      await assert.rejects(source.getTurnsPage('big', 'other', { limit: 5 }), /main/);
    });

    it('pages turns forward (getTurnsPage) across the 1,000-row index batches', async () => {
      const seen: number[] = [];
      let after: number | null = null;
      let pages = 0;
      do {
        const page = await source.getTurnsPage('big', main, { afterTurn: after, limit: 100 });
        pages++;
        for (const t of page.turns) {
          seen.push(t.turn);
          assert.equal(t.preview, `q${t.turn}`);
          assert.equal(t.sequenceNumber, 4 * t.turn, `turn ${t.turn} starts at ${t.sequenceNumber}`);
          assert.equal(t.error, null);
        }
        after = page.nextAfterTurn;
      } while (after !== null && pages < 20);
      assert.equal(pages, 7);
      assert.deepEqual(
        seen,
        Array.from({ length: 624 }, (_, i) => i + 1),
      );
      // A page starting right at the batch boundary.
      const page = await source.getTurnsPage('big', main, { afterTurn: 249, limit: 2 });
      assert.deepEqual(
        page.turns.map((t) => [t.turn, t.sequenceNumber]),
        [
          [250, 1000],
          [251, 1004],
        ],
      );
      assert.equal(page.nextAfterTurn, 251);
    });

    it('pages turns backward (getTurnsPageBefore) from the newest', async () => {
      const seen: number[] = [];
      let before: number | null = null;
      let pages = 0;
      do {
        const page = await source.getTurnsPageBefore('big', main, { beforeTurn: before, limit: 100 });
        pages++;
        assert.ok(page.turns.length > 0);
        seen.unshift(...page.turns.map((t) => t.turn));
        before = page.previousBeforeTurn;
      } while (before !== null && pages < 20);
      assert.equal(pages, 7);
      assert.deepEqual(
        seen,
        Array.from({ length: 624 }, (_, i) => i + 1),
      );
      const newest = await source.getTurnsPageBefore('big', main, { limit: 3 });
      assert.deepEqual(
        newest.turns.map((t) => t.turn),
        [622, 623, 624],
      );
      assert.equal(newest.previousBeforeTurn, 622);
      const oldest = await source.getTurnsPageBefore('big', main, { beforeTurn: 3, limit: 10 });
      assert.deepEqual(
        oldest.turns.map((t) => t.turn),
        [1, 2],
      );
      assert.equal(oldest.previousBeforeTurn, null);
    });

    it('getTurnItems: turn 0 is what precedes the first user item; a turn runs to the next user item', async () => {
      const turn0 = await source.getTurnItems('big', main, 0);
      assert.deepEqual(
        turn0.map((e) => [e.sequenceNumber, e.type, e.toolName]),
        [
          [1, 'assistant', null],
          [2, 'function_call', 'setup'],
          [3, 'function_call_output', null],
        ],
      );
      const straddling = await source.getTurnItems('big', main, 250);
      assert.deepEqual(
        straddling.map((e) => [e.sequenceNumber, e.type, e.toolName, e.corrupt]),
        [
          [1000, 'user', null, false],
          [1001, 'function_call', 'get_weather', false],
          [1002, 'function_call_output', null, false],
          [1003, 'assistant', null, false],
        ],
      );
      const item = straddling[0]!;
      assert.ok(!item.corrupt);
      assert.deepEqual(item.item, { role: 'user', content: 'q250' });
      const last = await source.getTurnItems('big', main, 624);
      assert.deepEqual(
        last.map((e) => e.sequenceNumber),
        [2496, 2497, 2498, 2499, 2500],
      );
      assert.deepEqual(await source.getTurnItems('big', main, 625), []);
      // Turn 0's summary (the view lists it as "Before the first turn"), and the tools it called.
      assert.deepEqual(await source.getTurnSummaries('big', main, 0, 1), [
        { turn: 0, itemCount: 3, tools: ['setup'] },
        { turn: 1, itemCount: 4, tools: ['get_weather'] },
      ]);
      assert.deepEqual(await source.getTurnSummaries('big', main, 1, 1), [{ turn: 1, itemCount: 4, tools: ['get_weather'] }]);
      // A session that starts with a user item has no turn 0.
      assert.deepEqual(await source.getTurnItems('small', main, 0), []);
      assert.deepEqual(await source.getTurnSummaries('small', main, 0, 0), []);
      assert.deepEqual(
        (await source.getTurnItems('small', main, 1)).map((e) => e.sequenceNumber),
        [1],
      );
    });

    it('getToolTotals counts the calls per tool over every turn', async () => {
      const totals = await source.getToolTotals('big');
      const byName = Object.fromEntries(totals.map((t) => [t.toolName, t]));
      assert.equal(byName.get_weather?.calls, 416);
      assert.equal(byName.get_weather?.turnCount, 416);
      assert.equal(byName.lookup?.calls, 208);
      assert.equal(byName.lookup?.turnCount, 208);
      assert.deepEqual(byName.lookup?.turns.slice(0, 3), [3, 6, 9]);
      assert.deepEqual(byName.get_weather?.turns.slice(0, 3), [1, 2, 4]);
    });

    it('pollChanges reports a session written since the last poll and drops its index, so new turns appear', async () => {
      const tail = async () => (await source.getTurnsPage('big', main, { afterTurn: 620, limit: 50 })).turns.map((t) => t.turn);
      assert.deepEqual(await tail(), [621, 622, 623, 624]);
      assert.deepEqual(await source.pollChanges(), { list: false, sessions: [] });
      assert.deepEqual(await source.pollChanges(), { list: false, sessions: [] });
      await writer.addItems([js.user('q625'), js.assistant('a625'), js.user('q626')]);
      // Until polled, the index is what it was.
      assert.deepEqual(await tail(), [621, 622, 623, 624]);
      const changes = await source.pollChanges();
      assert.deepEqual(changes.sessions, ['big']);
      assert.equal(changes.list, true);
      assert.deepEqual(await tail(), [621, 622, 623, 624, 625, 626]);
      assert.deepEqual((await source.getBranchTree('big'))[0]?.userTurns, 626);
      assert.deepEqual(await source.pollChanges(), { list: false, sessions: [] });
    });

    it('lists sessions as the tree shows them', async () => {
      const page = await source.listSessionsPage({ limit: 10 });
      const big = page.sessions.find((s) => s.sessionId === 'big');
      assert.equal(big?.messageCount, 2500);
      assert.equal(big?.branchCount, 1);
      assert.equal((await source.getSession('small'))?.messageCount, 1);
      assert.equal(await source.getSession('nobody'), null);
    });
  });
}
