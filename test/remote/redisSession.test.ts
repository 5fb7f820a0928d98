// RedisSession against a real Redis server: the keys, fields and list entries Python's RedisSession writes (byte
// for byte), TTLs, wrong key types, sessions a Python agent wrote read back, concurrent writers, and failures.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import type Redis from 'ioredis';
import { freePort, startRedis, type RedisServer } from '../../scripts/host/servers.mjs';
import { InvalidArgumentError, SessionClosedError } from '../../src/store/errors';
import { describeRedisUrl } from '../../src/store/remote/redisConnection';
import { RedisSession, redisSessionKeys, type RedisSessionOptions } from '../../src/store/remote/redisSession';
import { RemoteStoreError } from '../../src/store/remote/remoteErrors';
import { freshRedisPrefix, sharedRedis } from '../support/servers';
import { js, label, python, rawRedis, rejection, remoteFailure, stored, withPassword } from './remoteHelpers';

type Options = Partial<RedisSessionOptions>;

describe('RedisSession (real Redis)', () => {
  let server: RedisServer;
  let raw: Redis;
  let prefix: string;
  const sessions: RedisSession[] = [];
  const clients: Redis[] = [];

  before(async () => {
    server = await sharedRedis();
    raw = await rawRedis(server.url);
  });
  after(() => raw?.disconnect());
  beforeEach(() => {
    // "asi-test:3-1a2b3c:" → "asi-test:3-1a2b3c": the store joins prefix and id with ':' itself.
    prefix = freshRedisPrefix().replace(/:$/, '');
  });
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
    for (const c of clients.splice(0)) c.disconnect();
  });

  /** A session with a client of its own on the shared server, under this test's prefix. */
  const open = (options: Options = {}): RedisSession => {
    const s = new RedisSession({ sessionId: 's1', connection: { url: server.url }, keyPrefix: prefix, ...options });
    sessions.push(s);
    return s;
  };
  const keys = (sessionId = 's1') => redisSessionKeys(prefix, sessionId);
  /** Every key under this test's prefix, sorted. */
  const allKeys = async () => (await raw.keys(`${prefix}:*`)).sort();
  const entries = async (sessionId = 's1') => (await raw.lrangeBuffer(keys(sessionId).messages, 0, -1)).map((b) => b.toString('utf8'));
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const assertAboutNow = (value: string | null | undefined, what: string) => {
    assert.match(value ?? '', /^\d+$/, `${what} = ${value}`);
    assert.ok(Math.abs(Number(value) - nowSeconds()) <= 5, `${what} = ${value}, now ${nowSeconds()}`);
  };

  describe('what addItems writes', () => {
    it('list entries are json.dumps(item, separators=(",", ":")) (ensure_ascii), byte for byte, under <prefix>:<id>:messages', async () => {
      const s = open();
      await s.addItems([js.user('café ☕ 😀'), js.assistant('Grüße'), js.call('c1')]);
      await s.addItems([
        js.result('c1', 'Sunny ☀'),
        js.raw({ type: 'custom_record', clé: [1, 1.5, 1e-5, 2.5e-7, -3.25, 0.1, true, null, { nested: { deep: 'ß\n"\\' } }] }),
      ]);
      const expected = [
        String.raw`{"role":"user","content":"caf\u00e9 \u2615 \ud83d\ude00"}`,
        String.raw`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Gr\u00fc\u00dfe","annotations":[]}],"status":"completed"}`,
        String.raw`{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}","status":"completed"}`,
        String.raw`{"type":"function_call_output","call_id":"c1","output":"Sunny \u2600","status":"completed"}`,
        String.raw`{"type":"custom_record","cl\u00e9":[1,1.5,1e-05,2.5e-07,-3.25,0.1,true,null,{"nested":{"deep":"\u00df\n\"\\"}}]}`,
      ];
      const rawEntries = await raw.lrangeBuffer(keys().messages, 0, -1);
      assert.deepEqual(
        rawEntries.map((b) => b.toString('latin1')),
        expected,
      );
      assert.deepEqual(await allKeys(), [keys().session, keys().messages].sort());
      assert.equal(await raw.type(keys().session), 'hash');
      assert.equal(await raw.type(keys().messages), 'list');
      assert.equal(await raw.exists(keys().counter), 0, 'add_items never writes the counter key');
      assert.deepEqual((await s.getItems()).slice(0, 4).map(label), [
        'café ☕ 😀',
        'assistant:Grüße',
        'function_call:c1',
        'function_call_result:c1',
      ]);
    });

    it('the hash holds session_id, created_at (first write only) and updated_at (every write), as Unix-second strings', async () => {
      const s = open({ sessionId: 'ü id:with spaces' });
      const k = keys('ü id:with spaces');
      assert.equal(k.session, `${prefix}:ü id:with spaces`);
      await s.addItems([js.user('a')]);
      const first = await raw.hgetall(k.session);
      assert.deepEqual(Object.keys(first).sort(), ['created_at', 'session_id', 'updated_at']);
      assert.equal(first.session_id, 'ü id:with spaces');
      assertAboutNow(first.created_at, 'created_at');
      assertAboutNow(first.updated_at, 'updated_at');
      // Pretend the session is old: the next write keeps created_at (HSETNX) and sets updated_at to now.
      await raw.hset(k.session, 'created_at', '1000', 'updated_at', '1000');
      await s.addItems([js.user('b')]);
      const second = await raw.hgetall(k.session);
      assert.equal(second.created_at, '1000');
      assertAboutNow(second.updated_at, 'updated_at');
      assert.equal(second.session_id, 'ü id:with spaces');
      assert.deepEqual(await entries('ü id:with spaces'), [stored.user('a'), stored.user('b')]);
      // Nothing written for an empty batch.
      await raw.hset(k.session, 'updated_at', '1000');
      await s.addItems([]);
      assert.equal(await raw.hget(k.session, 'updated_at'), '1000');
    });

    it('the default prefix is agents:session', async () => {
      const id = `${prefix.replace(/:/g, '_')}-default`;
      const s = new RedisSession({ sessionId: id, connection: { url: server.url } });
      sessions.push(s);
      try {
        await s.addItems([js.user('x')]);
        assert.deepEqual((await raw.keys(`agents:session:${id}*`)).sort(), [`agents:session:${id}`, `agents:session:${id}:messages`]);
      } finally {
        await raw.del(`agents:session:${id}`, `agents:session:${id}:messages`);
      }
    });

    it('with ttl: every write sets the hash and the list to expire at server time + ttl (the same instant for both)', async () => {
      const s = open({ ttl: 100 });
      await s.addItems([js.user('a')]);
      for (const key of [keys().session, keys().messages]) {
        const pttl = await raw.pttl(key);
        assert.ok(pttl > 95_000 && pttl <= 100_000, `${key}: PTTL ${pttl}`);
      }
      const [at1, at2] = await Promise.all([keys().session, keys().messages].map((k) => raw.call('PEXPIRETIME', k) as Promise<number>));
      assert.equal(at1, at2);
      const [sec, micro] = await raw.time();
      assert.ok(Math.abs(Number(at1) - (Number(sec) * 1000 + Math.floor(Number(micro) / 1000) + 100_000)) < 5_000, `PEXPIRETIME ${at1}`);
      // The counter key is not created by PEXPIREAT.
      assert.equal(await raw.pttl(keys().counter), -2);
      assertAboutNow(await raw.hget(keys().session, 'updated_at'), 'updated_at');
      // A later write renews the expiry.
      await raw.pexpire(keys().session, 3_000);
      await raw.pexpire(keys().messages, 3_000);
      await s.addItems([js.user('b')]);
      assert.ok((await raw.pttl(keys().session)) > 95_000);
      assert.ok((await raw.pttl(keys().messages)) > 95_000);
      // Without a ttl nothing expires.
      const plain = open({ sessionId: 'plain' });
      await plain.addItems([js.user('c')]);
      assert.equal(await raw.pttl(keys('plain').session), -1);
      assert.equal(await raw.pttl(keys('plain').messages), -1);
    });

    it('refuses ttl 0 (Redis deletes a key that expires in 0 s: every write would delete the session), and other non-positive or fractional ttls', async () => {
      await open().addItems([js.user('kept')]);
      for (const ttl of [0, -1, 1.5, Number.NaN]) {
        assert.throws(
          () => open({ ttl }),
          (err: Error) => err instanceof InvalidArgumentError && /ttl must be a positive whole number/.test(err.message),
          `ttl ${ttl}`,
        );
      }
      assert.deepEqual(await entries(), [stored.user('kept')]);
      // null and undefined mean no expiry.
      await open({ ttl: null }).addItems([js.user('more')]);
      assert.equal(await raw.pttl(keys().messages), -1);
    });

    it('refuses a session id holding a lone surrogate (as UTF-8 key names, sid+U+D800 and sid+U+DBFF would both be sid+U+FFFD)', async () => {
      for (const sessionId of ['sid\uD800', 'sid\uDBFF', '\uDC00', 'a\uDE00b']) {
        assert.throws(() => open({ sessionId }), InvalidArgumentError, JSON.stringify(sessionId));
      }
      assert.deepEqual(await allKeys(), []);
      // A whole pair is a character like any other.
      await open({ sessionId: 'sid\uD83D\uDE00' }).addItems([js.user('x')]);
      assert.deepEqual(await allKeys(), [keys('sid😀').session, keys('sid😀').messages].sort());
    });

    it('keys of the wrong type → WRONGTYPE as wrong-schema, and nothing is written', async () => {
      // The messages key is a string; the hash exists from an earlier write.
      await raw.hset(keys().session, 'session_id', 's1', 'created_at', '1000', 'updated_at', '1000');
      await raw.set(keys().messages, 'not a list');
      const err = await remoteFailure(open().addItems([js.user('x')]), 'wrong-schema');
      assert.match(err.message, /WRONGTYPE/);
      assert.deepEqual(await raw.hgetall(keys().session), { session_id: 's1', created_at: '1000', updated_at: '1000' });
      assert.equal(await raw.get(keys().messages), 'not a list');

      // No hash yet and a wrong messages key: the hash is not created.
      await raw.set(keys('s2').messages, 'x');
      await remoteFailure(open({ sessionId: 's2' }).addItems([js.user('x')]), 'wrong-schema');
      assert.equal(await raw.exists(keys('s2').session), 0);

      // The hash key is a string: the list is not created.
      await raw.set(keys('s3').session, 'x');
      await remoteFailure(open({ sessionId: 's3' }).addItems([js.user('x')]), 'wrong-schema');
      assert.equal(await raw.exists(keys('s3').messages), 0);
      assert.equal(await raw.get(keys('s3').session), 'x');

      // Reading a messages key that is not a list is the same class of problem.
      await remoteFailure(open({ sessionId: 's2' }).getItems(), 'wrong-schema');
    });
  });

  describe('a session a Python agent wrote', () => {
    const valid = [
      python.user('A1'),
      python.assistant('msg_1', 'A2'),
      python.user('B1'),
      python.call('call_1', 'get_weather', '{"city":"Paris"}'),
      python.output('call_1', 'Sunny'),
    ];
    /** The keys as Python's RedisSession leaves them, written with plain commands; one corrupt and one non-UTF-8 entry. */
    async function writePythonSession(sessionId = 'py'): Promise<void> {
      const k = keys(sessionId);
      await raw.hset(k.session, 'session_id', sessionId, 'created_at', '1700000000', 'updated_at', '1700000100');
      await raw.rpush(
        k.messages,
        JSON.stringify(valid[0]),
        JSON.stringify(valid[1]),
        '{"role": "user", "content": ',
        Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // {"\xff\xfe"}: not UTF-8
        JSON.stringify(valid[2]),
        JSON.stringify(valid[3]),
        JSON.stringify(valid[4]),
      );
    }

    it('reads it back in list order, skipping the corrupt and the non-UTF-8 entries', async () => {
      await writePythonSession();
      const s = open({ sessionId: 'py' });
      assert.deepEqual(await s.getStoredItems(), valid);
      const items = await s.getItems();
      assert.deepEqual(items.map(label), ['A1', 'assistant:A2', 'B1', 'function_call:call_1', 'function_call_result:call_1']);
      assert.deepEqual(await open({ sessionId: 'nobody' }).getItems(), []);
      // Escaped non-ASCII (as Python writes it) decodes.
      await raw.rpush(keys('esc').messages, String.raw`{"content":"caf\u00e9 \ud83d\ude00","role":"user"}`);
      assert.deepEqual(await open({ sessionId: 'esc' }).getStoredItems(), [{ content: 'café 😀', role: 'user' }]);
    });

    it('skips an entry that starts with a UTF-8 byte order mark, as Python (json.loads: "Unexpected UTF-8 BOM"); popItem drops it', async () => {
      const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(stored.user('with BOM'))]);
      // Inside a string, U+FEFF is text like any other.
      const inner = Buffer.from('{"role":"user","content":"\xef\xbb\xbfinside"}', 'latin1');
      await raw.rpush(keys('bom').messages, stored.user('first'), bom, inner, bom);
      const s = open({ sessionId: 'bom' });
      assert.deepEqual(await s.getStoredItems(), [python.user('first'), python.user('\ufeffinside')]);
      assert.deepEqual(await s.getStoredItems(1), [{ role: 'user', content: '\ufeffinside' }]);
      assert.equal(label(await s.popItem()), '\ufeffinside');
      assert.equal(label(await s.popItem()), 'first');
      assert.equal(await raw.llen(keys('bom').messages), 0);
    });

    it('applies limits: the newest N valid items, the window growing past bad entries; 0 and negative → []', async () => {
      await writePythonSession();
      const s = open({ sessionId: 'py' });
      for (const n of [1, 2, 3, 4, 5]) assert.deepEqual(await s.getStoredItems(n), valid.slice(5 - n), `limit ${n}`);
      assert.deepEqual(await s.getStoredItems(6), valid);
      assert.deepEqual(await s.getStoredItems(100), valid);
      assert.deepEqual(await s.getStoredItems(0), []);
      assert.deepEqual(await s.getStoredItems(-1), []); // Python: session_limit <= 0 → []
      assert.deepEqual(await open({ sessionId: 'py', sessionSettings: { limit: 2 } }).getStoredItems(), valid.slice(3));
    });

    it('popItem RPOPs the newest, dropping entries that do not decode, leaves the hash alone, undefined when empty', async () => {
      await writePythonSession();
      const s = open({ sessionId: 'py' });
      const hash = await raw.hgetall(keys('py').session);
      assert.equal(label(await s.popItem()), 'function_call_result:call_1');
      assert.equal(label(await s.popItem()), 'function_call:call_1');
      assert.equal(label(await s.popItem()), 'B1');
      assert.equal(await raw.llen(keys('py').messages), 4);
      // The non-UTF-8 and the corrupt entries go on the way to A2.
      assert.equal(label(await s.popItem()), 'assistant:A2');
      assert.deepEqual(await entries('py'), [JSON.stringify(valid[0])]);
      assert.equal(label(await s.popItem()), 'A1');
      assert.equal(await s.popItem(), undefined);
      assert.equal(await s.popItem(), undefined);
      assert.equal(await raw.exists(keys('py').messages), 0);
      assert.deepEqual(await raw.hgetall(keys('py').session), hash);
    });

    it('clearSession DELs the hash, the list and the counter key, nothing else', async () => {
      await writePythonSession('py');
      await writePythonSession('other');
      await raw.set(keys('py').counter, '7'); // older versions INCR'd it
      await open({ sessionId: 'py' }).clearSession();
      assert.deepEqual(await allKeys(), [keys('other').session, keys('other').messages].sort());
      await open({ sessionId: 'nobody' }).clearSession();
      assert.equal((await allKeys()).length, 2);
    });
  });

  describe('concurrent writers', () => {
    it('two clients adding 50 batches each in parallel: every entry present, each batch contiguous and in order', async () => {
      const [a, b] = [open({ sessionId: 'shared' }), open({ sessionId: 'shared' })];
      const batch = (w: string, n: number) => [js.user(`${w}${n}-0`), js.user(`${w}${n}-1`), js.user(`${w}${n}-2`)];
      await Promise.all(
        [
          ['a', a],
          ['b', b],
        ].flatMap(([w, s]) => Array.from({ length: 50 }, (_, n) => (s as RedisSession).addItems(batch(w as string, n)))),
      );
      const texts = (await entries('shared')).map((e) => (JSON.parse(e) as { content: string }).content);
      assert.equal(texts.length, 300);
      const seen = new Set<string>();
      for (let i = 0; i < texts.length; i += 3) {
        const key = texts[i]!.replace(/-0$/, '');
        assert.deepEqual(texts.slice(i, i + 3), [`${key}-0`, `${key}-1`, `${key}-2`], `batch at ${i}`);
        assert.ok(!seen.has(key), `${key} twice`);
        seen.add(key);
      }
      assert.equal(seen.size, 100);
      // Each writer's own batches stay in the order it sent them on its connection.
      for (const w of ['a', 'b']) {
        const order = [...seen].filter((k) => k.startsWith(w)).map((k) => Number(k.slice(1)));
        assert.deepEqual(
          order,
          [...order].sort((x, y) => x - y),
          `${w}'s batches out of order`,
        );
      }
      assert.equal(await raw.hget(keys('shared').session, 'session_id'), 'shared');
    });

    it('concurrent popItem calls never return the same entry', async () => {
      const [a, b] = [open({ sessionId: 'shared' }), open({ sessionId: 'shared' })];
      const texts = Array.from({ length: 30 }, (_, i) => `m${i}`);
      await a.addItems(texts.map((t) => js.user(t)));
      const popped = await Promise.all(Array.from({ length: 34 }, (_, i) => (i % 2 ? a : b).popItem()));
      const got = popped.filter((p) => p !== undefined).map(label);
      assert.deepEqual([...got].sort(), [...texts].sort());
    });
  });

  describe('errors', () => {
    it('a wrong password → auth, and the password appears nowhere in the error', async () => {
      const secret = 'Wr0ng-pa55word-r3d1s';
      const bare = new URL(server.url);
      bare.password = '';
      for (const connection of [
        { url: withPassword(server.url, secret) },
        { url: bare.toString(), password: secret },
        // The password option overrides the address's.
        { url: server.url, password: secret },
      ]) {
        const s = open({ connection });
        const err = await remoteFailure(s.getItems(), 'auth');
        // Everything an uncaught error or console.error(err) prints, the cause's own properties included (ioredis's
        // error holds the AUTH command's arguments).
        const printed = inspect(err, { depth: Infinity, showHidden: true });
        for (const text of [err.message, String(err.stack), String((err.cause as Error | undefined)?.message), printed]) {
          assert.ok(!text.includes(secret), `the password leaked: ${text}`);
          assert.ok(!text.includes(server.password!), `the server password leaked: ${text}`);
        }
        await remoteFailure(s.addItems([js.user('x')]), 'auth');
      }
      // With a user name, AUTH's arguments are the user and the password.
      const named = new URL(server.url);
      named.username = 'bob';
      named.password = secret;
      const err = await remoteFailure(open({ connection: { url: named.toString() } }).getItems(), 'auth');
      const printed = inspect(err, { depth: Infinity, showHidden: true });
      assert.ok(!printed.includes(secret), `the password leaked: ${printed}`);
      assert.match(printed, /WRONGPASS/, 'the cause still says what the server answered');
      // No password at all → NOAUTH, also auth.
      await remoteFailure(open({ connection: { url: bare.toString() } }).getItems(), 'auth');
      // The right password given apart from the address works (the extension keeps it in secret storage).
      const ok = open({ connection: { url: bare.toString(), password: server.password } });
      await ok.addItems([js.user('in')]);
      assert.deepEqual((await ok.getItems()).map(label), ['in']);
    });

    it('nothing listening → unreachable', async () => {
      const port = await freePort();
      const s = open({ connection: { url: `redis://:secret-pw@127.0.0.1:${port}/0`, connectTimeoutMs: 3000 } });
      const err = await remoteFailure(s.getItems(), 'unreachable');
      assert.ok(!err.message.includes('secret-pw'), err.message);
      await remoteFailure(s.addItems([js.user('x')]), 'unreachable');
    });

    it('a database the server does not have → missing-database, and nothing is written (ioredis alone stays on db 0)', async () => {
      const at = (db: string) => server.url.replace(/\/0$/, `/${db}`);
      const err = await remoteFailure(open({ connection: { url: at('99') } }).addItems([js.user('meant for db 99')]), 'missing-database');
      assert.match(err.message, /\/99: the server has no such database/);
      assert.ok(!err.message.includes(server.password!), err.message);
      await remoteFailure(open({ connection: { url: at('16') } }).getItems(), 'missing-database');
      assert.deepEqual(await allKeys(), []);
      // One it has: the keys are there, not in db 0.
      const s = open({ connection: { url: at('15') } });
      await s.addItems([js.user('in 15')]);
      assert.deepEqual(await allKeys(), []);
      const db15 = await rawRedis(at('15'));
      clients.push(db15);
      assert.deepEqual(await db15.lrange(keys().messages, 0, -1), [stored.user('in 15')]);
      await db15.del(keys().session, keys().messages);
    });

    it('a database part that is not a number from 0 to 2^31-1 → bad-url, before connecting', async () => {
      // Nothing listens there: connecting would say unreachable.
      const port = await freePort();
      for (const tail of ['/abc', '/-1', '/1.5', '/0x1', '/%31', '/0/1', '/2147483648', '/99999999999999999999', '/?db=abc', '?db=']) {
        const err = await remoteFailure(open({ connection: { url: `redis://:secret-pw@127.0.0.1:${port}${tail}` } }).getItems(), 'bad-url');
        assert.match(err.message, /The database in .* is not a number/, tail);
        assert.ok(!err.message.includes('secret-pw'), err.message);
      }
      // The largest is only refused by the server (which has 16).
      await remoteFailure(open({ connection: { url: server.url.replace(/\/0$/, '/2147483647') } }).getItems(), 'missing-database');
      await remoteFailure(open({ connection: { url: server.url.replace(/\/0$/, '/?db=20') } }).getItems(), 'missing-database');
    });

    it('an address whose password ends it early (user:12/34@host) → bad-url before connecting, the password shown nowhere', async () => {
      const port = await freePort();
      for (const url of [
        `redis://default:12/34@127.0.0.1:${port}/0`,
        `redis://:pa?ss@127.0.0.1:${port}/0`,
        `rediss://bob:x#y@127.0.0.1:${port}`,
      ]) {
        const secret = url.slice(url.lastIndexOf(':', url.indexOf('@')) + 1, url.indexOf('@'));
        const s = open({ connection: { url } });
        const err = await remoteFailure(s.getItems(), 'bad-url');
        assert.match(err.message, /holds a character that ends an address/);
        assert.match(err.message, /:\*\*\*@127\.0\.0\.1/);
        for (const text of [err.message, inspect(err, { depth: Infinity, showHidden: true }), describeRedisUrl(url)])
          assert.ok(!text.includes(secret), `the password leaked: ${text}`);
      }
      // An address that does not parse keeps its password parameter out too (Node's URL error holds its whole input).
      const err = await remoteFailure(open({ connection: { url: 'redis://127.0.0.1:port/0?password=s3cret-q' } }).getItems(), 'bad-url');
      assert.ok(!inspect(err, { depth: Infinity, showHidden: true }).includes('s3cret-q'), inspect(err));
    });

    it('rediss:// to a server without TLS → tls, in about a second rather than at the connect timeout', async () => {
      const url = server.url.replace(/^redis:/, 'rediss:');
      const started = Date.now();
      const err = await remoteFailure(open({ connection: { url, connectTimeoutMs: 10_000 } }).getItems(), 'tls');
      assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
      assert.match(err.message, /does not speak TLS/);
      assert.ok(!err.message.includes(server.password!), err.message);
      // A server that answers the hello at once (Redis does when the hello holds a newline): the TLS error says why.
      const answering = createServer((socket) => {
        socket.on('error', () => undefined);
        socket.once('data', () => socket.end('-ERR unknown command\r\n'));
      });
      await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = answering.address() as AddressInfo;
        const quick = await remoteFailure(open({ connection: { url: `rediss://127.0.0.1:${port}/0` } }).getItems(), 'tls');
        assert.match(quick.message, /may not speak TLS/);
      } finally {
        answering.close();
      }
    });

    it('readOnly refuses addItems, popItem and clearSession before sending anything; reads work', async () => {
      await open().addItems([js.user('a'), js.user('b')]);
      const before = await allKeys();
      const hash = await raw.hgetall(keys().session);
      const s = open({ readOnly: true });
      await remoteFailure(s.addItems([js.user('c')]), 'read-only');
      await remoteFailure(s.popItem(), 'read-only');
      await remoteFailure(s.clearSession(), 'read-only');
      assert.deepEqual((await s.getItems()).map(label), ['a', 'b']);
      assert.deepEqual(await allKeys(), before);
      assert.deepEqual(await raw.hgetall(keys().session), hash);
      assert.deepEqual(await entries(), [stored.user('a'), stored.user('b')]);
      // A read-only session on a new id creates no keys.
      await remoteFailure(open({ readOnly: true, sessionId: 'new' }).addItems([js.user('x')]), 'read-only');
      assert.deepEqual(await allKeys(), before);
    });

    describe('on a private server', () => {
      let own: RedisServer;
      before(async () => {
        own = await startRedis({ password: 'private-pw' });
      });
      after(async () => {
        await own?.stop();
      });

      it('paused with a short commandTimeoutMs → timeout; resume() recovers', async () => {
        const s = open({ connection: { url: own.url, commandTimeoutMs: 300 } });
        await s.addItems([js.user('before')]);
        own.pause();
        const t = Date.now();
        try {
          await remoteFailure(s.getItems(), 'timeout');
          await remoteFailure(s.addItems([js.user('lost?')]), 'timeout');
        } finally {
          own.resume();
        }
        assert.ok(Date.now() - t < 5_000, `took ${Date.now() - t} ms`);
        // The timed-out write may or may not have run once the server woke up; reads work again.
        const after = (await s.getItems()).map(label);
        assert.equal(after[0], 'before');
        await s.addItems([js.user('after')]);
        assert.equal((await s.getItems()).map(label).at(-1), 'after');
      });

      it('stopped mid-use → unreachable or connection-lost', async () => {
        const s = open({ connection: { url: own.url, commandTimeoutMs: 3000, connectTimeoutMs: 3000 } });
        await s.addItems([js.user('x')]);
        await own.stop();
        for (const call of [() => s.getItems(), () => s.addItems([js.user('y')])]) {
          const err = await rejection(call);
          assert.ok(err instanceof RemoteStoreError, `${err.name}: ${err.message}`);
          assert.ok(['unreachable', 'connection-lost'].includes(err.problem), `${err.problem}: ${err.message}`);
        }
      });
    });
  });

  describe('close()', () => {
    it('makes later calls throw SessionClosedError and disconnects the client it made; closing twice is fine', async () => {
      const s = open({ sessionId: 'closing' });
      await s.addItems([js.user('x')]);
      const name = 'agent-session-inspector';
      const connected = async () => ((await raw.client('LIST')) as string).split('\n').filter((l) => l.includes(`name=${name}`)).length;
      const before = await connected();
      assert.ok(before > 0);
      await s.close();
      await s.close();
      for (const call of [() => s.getItems(), () => s.addItems([js.user('y')]), () => s.popItem(), () => s.clearSession()]) {
        const err = await rejection(call);
        assert.ok(err instanceof SessionClosedError, `${err.name}: ${err.message}`);
      }
      for (let i = 0; i < 50 && (await connected()) >= before; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await connected(), before - 1);
      assert.deepEqual(await entries('closing'), [stored.user('x')]);
    });

    it('does not close a client it was given', async () => {
      const client = await rawRedis(server.url);
      clients.push(client);
      const s = new RedisSession({ sessionId: 'given', client, keyPrefix: prefix });
      await s.addItems([js.user('x')]);
      await s.close();
      await assert.rejects(s.getItems(), SessionClosedError);
      assert.equal(client.status, 'ready');
      assert.equal(await client.llen(keys('given').messages), 1);
    });
  });
});
