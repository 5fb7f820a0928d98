// The doctor on server stores (docs/doctor.md, "Server stores"), against real PostgreSQL and Redis servers: stores
// written by our PostgresSession/RedisSession give no finding; damage replayed with raw SQL and Redis commands (what a
// killed run, another program or a retention job leaves) is found where it is; nothing is written; and
// `agent-sessions doctor <address>` (the real binary) prints the report, exits 1, and refuses --fix and --backup.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import type Redis from 'ioredis';
import type { Finding } from '../../src/store/doctor/checkContext';
import { checkServerStore, type ServerDoctorReport } from '../../src/store/doctor/server/serverDoctor';
import { PostgresSession } from '../../src/store/remote/postgresSession';
import { RedisSession, redisSessionKeys } from '../../src/store/remote/redisSession';
import { freshPostgresDatabase, freshRedisPrefix, sharedPostgres, sharedRedis } from '../support/servers';
import { TRIP, js, python, rawRedis, remoteFailure, sleep, sql, terminateWaiting, withPg } from './remoteHelpers';
import { buildSharedCli, sharedCliPath } from '../support/cliBundle';

const ROOT = resolve(__dirname, '..', '..');

/** What a test compares of a finding: its kind, session, place and rows. */
function places(report: ServerDoctorReport): unknown[] {
  return report.findings.map((f: Finding) => [f.kind, f.session, f.branch ?? null, f.turn ?? null, f.rows ?? null]);
}

async function writePostgres(url: string, sessions: [string, AgentInputItem[]][]): Promise<void> {
  for (const [id, items] of sessions) {
    const s = new PostgresSession({ sessionId: id, connection: { url }, createTables: true });
    await s.addItems(items);
    await s.close();
  }
}

async function writeRedis(url: string, keyPrefix: string, sessions: [string, AgentInputItem[]][]): Promise<void> {
  for (const [id, items] of sessions) {
    const s = new RedisSession({ sessionId: id, connection: { url }, keyPrefix });
    await s.addItems(items);
    await s.close();
  }
}

/**
 * Stores as our code writes them: a trip with a call and its output, a session ending in an answered call, and items
 * in the shape and field order a Python agent stores (a call answered, then the model's message).
 */
const CLEAN: [string, AgentInputItem[]][] = [
  ['trip', TRIP],
  ['answered', [js.user('Weather?'), js.call('call_ok'), js.result('call_ok', 'sunny')]],
  ['other', [js.user('Hello there')]],
  [
    'python',
    [
      python.user('Weather in Oslo?'),
      python.call('call_py', 'get_weather', '{"city": "Oslo"}'),
      python.output('call_py', 'Oslo: 4°C'),
      python.assistant('msg_py', 'Cold: 4°C.'),
    ].map(js.raw),
  ],
];

/**
 * Sessions that end in a call whose output is stored before it (a writer that stored them out of order): not
 * dangling. One call id is matched by its text first, the other (a slash, non-ASCII: encoders may escape them) by
 * decoding every entry.
 */
const REORDERED: [string, AgentInputItem[]][] = [
  ['reordered', [js.user('Hi'), js.result('call_r', 'done'), js.call('call_r')]],
  ['reordered-escaped', [js.user('Hi'), js.result('call/é', 'done'), js.call('call/é')]],
];

describe('doctor on server stores (real servers)', function () {
  this.timeout(120_000);

  describe('PostgreSQL', () => {
    let clean: string;
    let damaged: string;
    const ids: Record<string, number[]> = {};

    before(async () => {
      clean = await freshPostgresDatabase();
      await writePostgres(clean, CLEAN);
      damaged = await freshPostgresDatabase();
      await writePostgres(damaged, [
        ...CLEAN,
        // A run killed after the model's call was stored and before its output was.
        ['killed', [js.user('Plan a day.'), js.assistant('Sure.'), js.user('Weather?'), js.call('call_k')]],
        ['garbled', [js.user('Hi')]],
        ['cut-after-call', [js.user('Weather?'), js.call('call_c')]],
        ['orphaned', [js.user('Keep me')]],
        ...REORDERED,
      ]);
      // Another program's rows: JSON cut short, and JSON that is not an object; a cut row after a call (the SDK skips
      // it, so the call is still the session's last item).
      await sql(
        damaged,
        `INSERT INTO agent_messages (session_id, message_data) VALUES ('garbled', '{"role":"user","content":"cut'), ('garbled', '[1, 2]')`,
      );
      await sql(damaged, `INSERT INTO agent_messages (session_id, message_data) VALUES ('cut-after-call', 'not json')`);
      // A schema from migrations without the foreign key, and a retention job that deleted a session row.
      await sql(damaged, 'ALTER TABLE agent_messages DROP CONSTRAINT agent_messages_session_id_fkey');
      await sql(damaged, `DELETE FROM agent_sessions WHERE session_id = 'orphaned'`);
      for (const r of await sql<{ session_id: string; id: number }>(damaged, 'SELECT session_id, id FROM agent_messages ORDER BY id'))
        (ids[r.session_id] ??= []).push(r.id);
    });

    it('a store written by our PostgresSession gives no finding', async () => {
      const report = await checkServerStore({ url: clean });
      assert.deepEqual(report.findings, []);
      assert.deepEqual(report.totals, {});
      assert.equal(report.server, 'postgres');
      assert.match(report.path, /^PostgreSQL /);
    });

    it('finds each kind the format can hold, where it is', async () => {
      const report = await checkServerStore({ url: damaged });
      const last = (s: string) => ids[s]!.at(-1)!;
      assert.deepEqual(places(report), [
        ['dangling-tool-call', 'cut-after-call', 'main', 1, { agent_messages: [ids['cut-after-call']![1]] }],
        ['dangling-tool-call', 'killed', 'main', 2, { agent_messages: [last('killed')] }],
        ['malformed-item', 'cut-after-call', null, null, { agent_messages: [last('cut-after-call')] }],
        ['malformed-item', 'garbled', null, null, { agent_messages: [ids['garbled']![1]] }],
        ['malformed-item', 'garbled', null, null, { agent_messages: [ids['garbled']![2]] }],
        ['messages-without-session', 'orphaned', null, null, { agent_messages: ids['orphaned'] }],
      ]);
      const details = report.findings.map((f) => f.detail);
      assert.match(details[1]!, /session "killed" ends in function_call get_weather \(call_id call_k\) with no output/);
      assert.match(details[3]!, /^row \d+ of session "garbled" is not JSON \(.*\): get_items skips it$/);
      assert.match(details[4]!, /is JSON an array, not an item object/);
      assert.match(details[5]!, /1 row\(s\) of agent_messages have session_id "orphaned", which agent_sessions does not hold/);
    });

    it('--session checks one session; the list is bounded per kind and the count stays exact', async () => {
      const one = await checkServerStore({ url: damaged, session: 'garbled' });
      assert.equal(one.sessionFound, true);
      // Messages without their session row are a session to check; an id with neither is not held at all.
      assert.equal((await checkServerStore({ url: damaged, session: 'orphaned' })).sessionFound, true);
      const none = await checkServerStore({ url: damaged, session: 'no-such-session' });
      assert.equal(none.sessionFound, false);
      assert.deepEqual(none.findings, []);
      assert.equal((await checkServerStore({ url: damaged })).sessionFound, undefined);
      assert.deepEqual(
        one.findings.map((f) => [f.kind, f.session]),
        [
          ['malformed-item', 'garbled'],
          ['malformed-item', 'garbled'],
        ],
      );
      const bounded = await checkServerStore({ url: damaged, maxPerKind: 1 });
      assert.equal(bounded.findings.filter((f) => f.kind === 'malformed-item').length, 1);
      assert.equal(bounded.totals['malformed-item'], 3);
    });

    it('writes nothing (its transactions are read-only)', async () => {
      const dump = () => sql(damaged, 'SELECT id, session_id, message_data, created_at::text FROM agent_messages ORDER BY id');
      const sessions = () => sql(damaged, 'SELECT session_id, created_at::text, updated_at::text FROM agent_sessions ORDER BY session_id');
      const before = [await dump(), await sessions()];
      await checkServerStore({ url: damaged });
      assert.deepEqual([await dump(), await sessions()], before);
    });

    it('a NULL message_data (a schema without NOT NULL) is a malformed-item that says it is NULL', async () => {
      const url = await freshPostgresDatabase();
      await writePostgres(url, [['nulls', [js.user('Hi'), js.assistant('Hello')]]]);
      await sql(url, 'ALTER TABLE agent_messages ALTER COLUMN message_data DROP NOT NULL');
      await sql(url, `INSERT INTO agent_messages (session_id, message_data) VALUES ('nulls', NULL)`);
      const [nullRow] = await sql<{ id: number }>(url, 'SELECT id FROM agent_messages WHERE message_data IS NULL');
      const report = await checkServerStore({ url });
      assert.deepEqual(places(report), [['malformed-item', 'nulls', null, null, { agent_messages: [nullRow!.id] }]]);
      assert.equal(
        report.findings[0]!.detail,
        `row ${nullRow!.id} of session "nulls" has a NULL message_data, no text at all: PostgresSession skips it, Python’s get_items fails on it (TypeError)`,
      );
    });

    it('a connection lost mid-check (backend terminated) is a connection-lost error, not a crash', async () => {
      const uncaught: unknown[] = [];
      const record = (err: unknown) => uncaught.push(err);
      process.on('uncaughtException', record);
      try {
        await withPg(clean, async (locker) => {
          // A lock the check's first read waits for, inside its transaction, when its backend goes.
          await locker.query('BEGIN');
          await locker.query('LOCK TABLE agent_messages IN ACCESS EXCLUSIVE MODE');
          const pending = remoteFailure(checkServerStore({ url: clean }), 'connection-lost');
          await terminateWaiting(clean);
          const err = await pending;
          assert.match(err.message, /terminating connection due to administrator command/);
          await locker.query('ROLLBACK');
        });
        await sleep(50); // the connection's 'end' comes after the failed statement
        assert.deepEqual(uncaught, []);
      } finally {
        process.removeListener('uncaughtException', record);
      }
      assert.deepEqual((await checkServerStore({ url: clean })).findings, []);
    });

    it('an unreachable server and refused credentials are typed errors without the password', async () => {
      await remoteFailure(checkServerStore({ url: 'postgresql://u@127.0.0.1:1/db', connectTimeoutMs: 2_000 }), 'unreachable');
      const u = new URL((await sharedPostgres()).url);
      const err = await remoteFailure(checkServerStore({ url: u.toString(), password: 'not-the-password-xyz' }), 'auth');
      assert.doesNotMatch(err.message, /not-the-password-xyz/);
    });
  });

  describe('Redis', () => {
    let url: string;
    let clean: string;
    let damaged: string;
    let raw: Redis;

    before(async () => {
      url = (await sharedRedis()).url;
      raw = await rawRedis(url);
      clean = freshRedisPrefix().replace(/:$/, '');
      await writeRedis(url, clean, CLEAN);
      damaged = freshRedisPrefix().replace(/:$/, '');
      await writeRedis(url, damaged, [
        ...CLEAN,
        ['killed', [js.user('Plan a day.'), js.user('Weather?'), js.call('call_k')]],
        ['garbled', [js.user('Hi')]],
        ['list-only', [js.user('Keep me')]],
        ['a:messages', [js.user('My id ends in :messages')]],
        ...REORDERED,
      ]);
      const keys = (id: string) => redisSessionKeys(damaged, id);
      // Another program's entries: bytes that are not UTF-8, text that is not JSON, a JSON number, and an item after a
      // UTF-8 byte order mark (Python's json.loads refuses it: "Unexpected UTF-8 BOM").
      await raw.rpush(
        keys('garbled').messages,
        Buffer.from([0xff, 0xfe, 0x7b]),
        'not json',
        '42',
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"role":"user","content":"BOM"}')]),
      );
      // The session hash deleted apart from its list.
      await raw.del(keys('list-only').session);
      // A hash for session "a", whose messages key is session "a:messages"'s hash (an older writer checked no types),
      // and a session whose messages key another program set as a string.
      await raw.hset(keys('a').session, 'session_id', 'a', 'created_at', '1700000000', 'updated_at', '1700000000');
      await raw.hset(keys('typed').session, 'session_id', 'typed', 'created_at', '1700000000', 'updated_at', '1700000000');
      await raw.set(keys('typed').messages, 'not a list');
    });
    after(() => raw?.disconnect());

    it('a store written by our RedisSession gives no finding', async () => {
      const report = await checkServerStore({ url, keyPrefix: clean });
      assert.deepEqual(report.findings, []);
      assert.equal(report.server, 'redis');
    });

    it('finds each kind the format can hold, where it is (entries by list position)', async () => {
      const report = await checkServerStore({ url, keyPrefix: damaged });
      const list = (id: string) => redisSessionKeys(damaged, id).messages;
      const sorted = places(report).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      assert.deepEqual(sorted, [
        ['dangling-tool-call', 'killed', 'main', 2, { [list('killed')]: [3] }],
        ['malformed-item', 'garbled', null, null, { [list('garbled')]: [2] }],
        ['malformed-item', 'garbled', null, null, { [list('garbled')]: [3] }],
        ['malformed-item', 'garbled', null, null, { [list('garbled')]: [4] }],
        ['malformed-item', 'garbled', null, null, { [list('garbled')]: [5] }],
        ['messages-without-session', 'list-only', null, null, null],
        ['wrong-key-type', 'a', null, null, null],
        ['wrong-key-type', 'typed', null, null, null],
      ]);
      const detail = (kind: string, session: string) => report.findings.find((f) => f.kind === kind && f.session === session)!.detail;
      assert.match(detail('wrong-key-type', 'a'), /key ".*:a:messages" of session "a" holds a hash, not a list/);
      assert.match(detail('wrong-key-type', 'typed'), /holds a string, not a list: get_items and add_items fail/);
      assert.match(detail('messages-without-session', 'list-only'), /holds 1 entry, and there is no hash/);
      assert.deepEqual(
        report.findings.filter((f) => f.session === 'garbled').map((f) => f.detail.replace(/\(.*\)/, '(…)')),
        [
          'entry 2 of session "garbled" is not UTF-8 text: get_items skips it',
          'entry 3 of session "garbled" is not JSON (…): get_items skips it',
          'entry 4 of session "garbled" is JSON a number, not an item object: get_items hands it to the runner',
          'entry 5 of session "garbled" is not JSON (…): get_items skips it',
        ],
      );
    });

    it('--session reads that session alone; nothing is written', async () => {
      const before = await raw.dump(redisSessionKeys(damaged, 'killed').messages);
      const one = await checkServerStore({ url, keyPrefix: damaged, session: 'killed' });
      assert.deepEqual(
        one.findings.map((f) => [f.kind, f.session]),
        [['dangling-tool-call', 'killed']],
      );
      assert.deepEqual(await raw.dump(redisSessionKeys(damaged, 'killed').messages), before);
      assert.equal(one.sessionFound, true);
      // A list without its hash, a hash whose list key is another type: held; neither key: not held.
      for (const id of ['list-only', 'a', 'typed'])
        assert.equal((await checkServerStore({ url, keyPrefix: damaged, session: id })).sessionFound, true, id);
      const none = await checkServerStore({ url, keyPrefix: damaged, session: 'no-such-session' });
      assert.equal(none.sessionFound, false);
      assert.deepEqual(none.findings, []);
    });
  });

  describe('agent-sessions doctor <address> (the real binary)', () => {
    let dir: string;
    let cli: string;
    let pgUrl: string;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'asi-doctor-remote-'));
      cli = sharedCliPath();
      await buildSharedCli();
      pgUrl = await freshPostgresDatabase();
      await writePostgres(pgUrl, [...CLEAN, ['killed', [js.user('Weather?'), js.call('call_k')]]]);
    });
    after(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    function run(args: string[], env: Record<string, string> = {}) {
      const r = spawnSync(process.execPath, [cli, ...args], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '', PAGER: 'cat', AGENT_SESSIONS_DB: '', ...env },
        timeout: 60_000,
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    }
    /** The address without its password, which goes in $AGENT_SESSIONS_PASSWORD. */
    function split(url: string): [string, Record<string, string>] {
      const u = new URL(url);
      const password = decodeURIComponent(u.password);
      u.password = '';
      return [u.toString(), { AGENT_SESSIONS_PASSWORD: password }];
    }

    it('prints the report and exits 1; --json has the same findings; --session narrows', () => {
      const [address, env] = split(pgUrl);
      const r = run(['doctor', address], env);
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stdout,
        /^dangling-tool-call: branch ends in a tool call without its output\n {2}where: {4}session "killed", branch "main", turn 1, agent_messages row \d+\n/,
      );
      assert.match(r.stdout, /\n {2}repair: {3}none \(server stores are checked read-only\)\n/);
      assert.match(r.stdout, /\nPostgreSQL .*: 1 finding\(s\)\n$/);
      if (env.AGENT_SESSIONS_PASSWORD) assert.doesNotMatch(r.stdout + r.stderr, new RegExp(env.AGENT_SESSIONS_PASSWORD));
      const json = run(['doctor', address, '--json'], env);
      assert.equal(json.code, 1, json.stderr);
      const parsed = JSON.parse(json.stdout) as {
        server: string;
        count: number;
        findings: { kind: string; session: string; repair: unknown }[];
      };
      assert.equal(parsed.server, 'postgres');
      assert.equal(parsed.count, 1);
      assert.deepEqual(
        parsed.findings.map((f) => [f.kind, f.session, f.repair]),
        [['dangling-tool-call', 'killed', null]],
      );
      const trip = run(['doctor', address, '--session', 'trip'], env);
      assert.equal(trip.code, 0, trip.stderr);
      assert.match(trip.stdout, /\(session "trip"\): no findings\n$/);
      const typo = run(['doctor', address, '--session', 'tirp'], env);
      assert.equal(typo.code, 3, typo.stdout);
      assert.match(typo.stderr, /There is no session 'tirp' in PostgreSQL /);
      assert.equal(typo.stdout, '');
    });

    it('a Redis --session the store does not hold exits 3, not "no findings"', async () => {
      const prefix = freshRedisPrefix().replace(/:$/, '');
      const redisUrl = (await sharedRedis()).url;
      await writeRedis(redisUrl, prefix, CLEAN);
      const [address, env] = split(redisUrl);
      const typo = run(['doctor', address, '--key-prefix', prefix, '--session', 'tirp'], env);
      assert.equal(typo.code, 3, typo.stdout);
      assert.match(typo.stderr, /There is no session 'tirp' in Redis /);
      assert.equal(run(['doctor', address, '--key-prefix', prefix, '--session', 'trip'], env).code, 0);
    });

    it('a clean Redis store exits 0 (its key prefix from --key-prefix)', async () => {
      const prefix = freshRedisPrefix().replace(/:$/, '');
      const redisUrl = (await sharedRedis()).url;
      await writeRedis(redisUrl, prefix, CLEAN);
      const [address, env] = split(redisUrl);
      const r = run(['doctor', address, '--key-prefix', prefix], env);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^Redis .*: no findings\n$/);
    });

    it('refuses --fix and --backup with a usage error (exit 2) saying why, before connecting', () => {
      for (const args of [['--fix'], ['--fix', '--backup', join(dir, 'b.db')], ['--backup', join(dir, 'b.db')]]) {
        // Nothing listens on port 1: a refusal that connected first would exit 1 instead.
        const r = run(['doctor', 'postgresql://u@127.0.0.1:1/db', ...args]);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, /server stores are checked read-only: --fix and --backup repair session files only/);
      }
    });

    it('an unreachable server exits 1 and a refused password exits 1, the password never shown', async () => {
      const closed = run(['doctor', 'redis://127.0.0.1:1/0']);
      assert.equal(closed.code, 1, closed.stderr);
      assert.match(closed.stderr, /^agent-sessions: Redis 127\.0\.0\.1:1\/0: /);
      const [address] = split((await sharedPostgres()).url);
      const wrong = run(['doctor', address], { AGENT_SESSIONS_PASSWORD: 'not-the-password-xyz' });
      assert.equal(wrong.code, 1, wrong.stderr);
      assert.match(wrong.stderr, /password/i);
      assert.doesNotMatch(wrong.stderr, /not-the-password-xyz/);
    });
  });
});
