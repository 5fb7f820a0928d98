// The real servers the remote store suites run against (scripts/host/servers.mjs): that password auth is real, that
// stop() really stops, that servers do not share ports or data, and that pause() makes a client time out.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import Redis, { type RedisOptions } from 'ioredis';
import pg from 'pg';
import { startPostgres, startRedis } from '../../scripts/host/servers.mjs';
import { freshPostgresDatabase, freshRedisPrefix, sharedPostgres, sharedRedis } from '../support/servers';

/** What a rejected promise was rejected with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  assert.fail('expected a rejection');
}

async function withClient<T>(config: string | pg.ClientConfig, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** No reconnects, no offline queue: every failure reaches the test at once. */
const strict: RedisOptions = { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, enableOfflineQueue: false };

describe('test servers: PostgreSQL', () => {
  it('accepts its user with the right password and runs queries as that user', async () => {
    const server = await sharedPostgres();
    const row = await withClient(
      server.url,
      async (c) => (await c.query('SELECT current_user AS u, current_database() AS d, 6 * 7 AS n')).rows[0],
    );
    assert.deepEqual(row, { u: server.user, d: server.database, n: 42 });
  });

  it('rejects a wrong password with a real authentication error (28P01)', async () => {
    const server = await sharedPostgres();
    const client = new pg.Client({ host: server.host, port: server.port, user: server.user, database: server.database, password: 'wrong' });
    const err = await rejection(client.connect());
    await client.end().catch(() => undefined);
    assert.equal(err.code, '28P01', err.message);
    assert.match(err.message, /password authentication failed/);
  });

  it('does not let the superuser in over TCP with the user’s password', async () => {
    const server = await sharedPostgres();
    const client = new pg.Client({
      host: server.host,
      port: server.port,
      user: 'postgres',
      database: 'postgres',
      password: server.password,
    });
    const err = await rejection(client.connect());
    await client.end().catch(() => undefined);
    assert.equal(err.code, '28P01', err.message);
  });

  it('gives each spec a fresh database that does not see the others’ tables', async () => {
    const a = await freshPostgresDatabase();
    const b = await freshPostgresDatabase();
    assert.notEqual(a, b);
    await withClient(a, (c) => c.query('CREATE TABLE only_in_a (id int)'));
    const tables = await withClient(
      b,
      async (c) => (await c.query(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'only_in_a'`)).rows[0],
    );
    assert.deepEqual(tables, { n: 0 });
  });

  it('starts independent servers on different ports and data directories, and stop() really stops them', async () => {
    const [one, two] = await Promise.all([startPostgres({ password: 'one' }), startPostgres({ user: 'other', database: 'otherdb' })]);
    try {
      assert.notEqual(one.port, two.port);
      assert.notEqual(one.dataDir, two.dataDir);
      assert.equal(one.url, `postgresql://asi:one@127.0.0.1:${one.port}/asi`);
      await withClient(one.url, (c) => c.query('CREATE TABLE t (id int)'));
      const seen = await withClient(
        two.url,
        async (c) => (await c.query(`SELECT to_regclass('public.t') AS t, current_user AS u`)).rows[0],
      );
      assert.deepEqual(seen, { t: null, u: 'other' });
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
    for (const server of [one, two]) {
      const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 5000 });
      const err = await rejection(client.connect());
      await client.end().catch(() => undefined);
      assert.equal(err.code, 'ECONNREFUSED', err.message);
      assert.equal(existsSync(server.dataDir), false, `${server.dataDir} was not removed`);
    }
  });

  it('pause() makes a query time out on the client; resume() recovers', async () => {
    const server = await sharedPostgres();
    const client = new pg.Client({ connectionString: server.url, query_timeout: 300 });
    await client.connect();
    try {
      server.pause();
      const t = Date.now();
      let err: Error;
      try {
        err = await rejection(client.query('SELECT 1'));
      } finally {
        server.resume();
      }
      assert.match(err.message, /timeout/i);
      assert.ok(Date.now() - t < 3000, `timed out only after ${Date.now() - t} ms`);
      // The same connection answers again, and so does a new one.
      assert.deepEqual((await client.query('SELECT 2 AS n')).rows, [{ n: 2 }]);
      assert.deepEqual(await withClient(server.url, async (c) => (await c.query('SELECT 3 AS n')).rows), [{ n: 3 }]);
    } finally {
      await client.end().catch(() => undefined);
    }
  });
});

describe('test servers: Redis', () => {
  const clients: Redis[] = [];
  const client = (options: RedisOptions) => {
    const c = new Redis({ ...strict, ...options });
    c.on('error', () => undefined); // rejections reach the test; the error events would only be logged
    clients.push(c);
    return c;
  };
  afterEach(() => {
    for (const c of clients.splice(0)) c.disconnect();
  });

  it('with requirepass, refuses commands without AUTH (NOAUTH) and a wrong password (WRONGPASS), accepts the right one', async () => {
    const server = await sharedRedis();
    assert.ok(server.password);
    const c = client({ host: server.host, port: server.port, enableReadyCheck: false });
    await c.connect();
    assert.match((await rejection(c.get('x'))).message, /^NOAUTH/);
    assert.match((await rejection(c.auth('wrong'))).message, /^WRONGPASS/);
    assert.equal(await c.auth(server.password), 'OK');
    assert.equal(await c.ping(), 'PONG');

    const wrong = client({ host: server.host, port: server.port, password: 'wrong' });
    const errors: string[] = [];
    wrong.on('error', (e: Error) => errors.push(e.message));
    await rejection(wrong.connect());
    assert.ok(
      errors.some((m) => /^WRONGPASS/.test(m)),
      errors.join(' | '),
    );
  });

  it('serves keys under a fresh prefix through its URL', async () => {
    const server = await sharedRedis();
    const prefix = freshRedisPrefix();
    assert.notEqual(prefix, freshRedisPrefix());
    const viaUrl = new Redis(server.url, strict);
    clients.push(viaUrl);
    await viaUrl.connect();
    await viaUrl.set(`${prefix}k`, 'v');
    assert.equal(await viaUrl.get(`${prefix}k`), 'v');
    assert.deepEqual(await viaUrl.keys(`${prefix}*`), [`${prefix}k`]);
  });

  it('pause() makes a command time out on the client; resume() recovers', async () => {
    const server = await sharedRedis();
    const c = new Redis(server.url, { ...strict, commandTimeout: 300 });
    clients.push(c);
    await c.connect();
    server.pause();
    const t = Date.now();
    let err: Error;
    try {
      err = await rejection(c.ping());
    } finally {
      server.resume();
    }
    assert.match(err.message, /timed out/i);
    assert.ok(Date.now() - t < 3000, `timed out only after ${Date.now() - t} ms`);
    assert.equal(await c.ping(), 'PONG');
  });

  it('starts independent servers, without a password when none is given, and stop() really stops them', async () => {
    const [one, two] = await Promise.all([startRedis(), startRedis({ password: 'p w"\\' })]);
    try {
      assert.notEqual(one.port, two.port);
      assert.equal(one.url, `redis://127.0.0.1:${one.port}/0`);
      assert.equal(two.url, `redis://:p%20w%22%5C@127.0.0.1:${two.port}/0`);
      const a = new Redis(one.url, strict);
      const b = new Redis(two.url, strict);
      clients.push(a, b);
      await Promise.all([a.connect(), b.connect()]);
      await a.set('k', 'one');
      assert.equal(await b.get('k'), null);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
    for (const server of [one, two]) {
      const c = client({ host: server.host, port: server.port });
      const errors: string[] = [];
      c.on('error', (e: Error & { code?: string }) => errors.push(`${e.code} ${e.message}`));
      await rejection(c.connect());
      assert.ok(
        errors.some((m) => m.startsWith('ECONNREFUSED')),
        errors.join(' | '),
      );
      assert.equal(existsSync(server.dir), false, `${server.dir} was not removed`);
    }
  });
});
