// `agent-sessions` on PostgreSQL and Redis addresses, run as the real binary (its esbuild bundle, built here with the
// options of dist/cli.js and the package's bin) against real servers: ls, show, branches, usage, search and export
// read a server store as they read a file; the password from $AGENT_SESSIONS_PASSWORD never shows; JSON export and
// import into a server are refused; a refused password, a missing database and an unreachable server exit non-zero.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AgentInputItem } from '@openai/agents';
import { PostgresSession } from '../../src/store/remote/postgresSession';
import { RedisSession } from '../../src/store/remote/redisSession';
import { freshPostgresDatabase, freshRedisPrefix, sharedPostgres, sharedRedis } from '../support/servers';
import { TRIP, js } from './remoteHelpers';
import { buildSharedCli, sharedCliPath } from '../support/cliBundle';

const ROOT = resolve(__dirname, '..', '..');

const SESSIONS: [string, AgentInputItem[]][] = [
  ['trip', TRIP],
  ['other', [js.user('Hello there')]],
];

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('agent-sessions on server stores (the real binary, real servers)', function () {
  this.timeout(120_000);
  let dir: string;
  let cli: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'asi-cli-remote-'));
    cli = sharedCliPath();
    await buildSharedCli();
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function run(args: string[], env: Record<string, string> = {}): Result {
    const r = spawnSync(process.execPath, [cli, ...args], {
      cwd: dir,
      encoding: 'utf8',
      // The bundle lives outside the repository: let it find pg and ioredis in this checkout's node_modules.
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), NO_COLOR: '', PAGER: 'cat', AGENT_SESSIONS_DB: '', ...env },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  const ok = (r: Result): string => {
    assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
    return r.stdout;
  };

  for (const kind of ['PostgreSQL', 'Redis'] as const) {
    describe(kind, () => {
      /** The address without the password, which goes in $AGENT_SESSIONS_PASSWORD. */
      let address: string;
      let password: string;
      let extra: string[] = [];

      before(async () => {
        let url: string;
        if (kind === 'PostgreSQL') {
          url = await freshPostgresDatabase();
          for (const [id, items] of SESSIONS) {
            const s = new PostgresSession({ sessionId: id, connection: { url }, createTables: true });
            await s.addItems(items);
            await s.close();
          }
        } else {
          url = (await sharedRedis()).url;
          const keyPrefix = freshRedisPrefix().replace(/:$/, '');
          extra = ['--key-prefix', keyPrefix];
          for (const [id, items] of SESSIONS) {
            const s = new RedisSession({ sessionId: id, connection: { url }, keyPrefix });
            await s.addItems(items);
            await s.close();
          }
        }
        const u = new URL(url);
        password = decodeURIComponent(u.password);
        u.password = '';
        address = u.toString();
      });

      const env = () => ({ AGENT_SESSIONS_PASSWORD: password });

      it('ls, branches and usage read the store (one branch, no usage), never printing the password', () => {
        const out = ok(run(['ls', address, ...extra], env()));
        assert.match(out, /^SESSION\s+ITEMS\s+TURNS\s+BRANCHES\s+TOKENS\s+UPDATED\n/);
        assert.match(out, /\ntrip\s+6\s+–\s+1\s+–\s+\d{4}-/);
        const rows = JSON.parse(ok(run(['ls', '--db', address, '--json', ...extra], env()))) as { sessionId: string; items: number }[];
        assert.deepEqual(rows.map((r) => [r.sessionId, r.items]).sort(), [
          ['other', 1],
          ['trip', 6],
        ]);
        assert.match(ok(run(['branches', address, 'trip', ...extra], env())), /^main\s+2\+? turns\s+6 items/);
        assert.match(ok(run(['usage', address, 'trip', ...extra], env())), /no usage recorded \(PostgreSQL and Redis stores keep none\)/);
        if (password) {
          for (const args of [
            ['ls', address],
            ['branches', address, 'trip'],
          ])
            assert.doesNotMatch(JSON.stringify(run([...args, ...extra], env())), new RegExp(password));
        }
      });

      it('show prints the transcript (an output named by its call) and one turn; search finds text and tools', () => {
        const transcript = ok(run(['show', address, 'trip', ...extra], env()));
        assert.match(transcript, /^# Session `trip`\n/);
        assert.match(transcript, /\*\*Tool output\*\* `get_weather` \(`call_1`\)/);
        const turn = ok(run(['show', address, 'trip', '--turn', '2', ...extra], env()));
        assert.match(turn, /^## Turn 2\n/);
        assert.doesNotMatch(turn, /Plan a day/);
        assert.match(turn, /\*\*Tool output\*\* `get_weather` \(`call_1`\)/, 'one turn names the output by its call too');
        const hits = JSON.parse(ok(run(['search', address, 'tool:get_weather', '--json', ...extra], env()))) as {
          hits: { sessionId: string; turn: number; itemType: string; toolName: string }[];
        };
        assert.deepEqual(
          hits.hits.map((h) => [h.sessionId, h.turn, h.itemType, h.toolName]),
          [
            ['trip', 2, 'function_call', 'get_weather'],
            ['trip', 2, 'function_call_output', 'get_weather'],
          ],
        );
        assert.match(ok(run(['search', address, 'BELÉM', ...extra], env())), /trip\s+main\s+1\s+assistant\s+Start at Belém/);
      });

      it('exports Markdown and JSONL (to stdout and to a file); refuses JSON and an import into the server', () => {
        const jsonl = ok(run(['export', address, 'trip', '--format', 'jsonl', ...extra], env()));
        assert.deepEqual(
          jsonl
            .trim()
            .split('\n')
            .map((l) => (JSON.parse(l) as { type?: string; role?: string }).type ?? (JSON.parse(l) as { role: string }).role),
          ['user', 'message', 'user', 'function_call', 'function_call_result', 'message'],
        );
        const file = join(dir, `${kind}-trip.md`);
        assert.match(ok(run(['export', address, 'trip', '-o', file, ...extra], env())), /^Exported 6 item\(s\) of trip to /);
        assert.match(readFileSync(file, 'utf8'), /Lisbon: 22°C, sunshine/);
        const json = run(['export', address, 'trip', '--format', 'json', ...extra], env());
        assert.equal(json.code, 2);
        assert.match(json.stderr, /JSON export copies a session file's rows/);
        const imported = run(['import', file, '--db', address, ...extra], env());
        assert.equal(imported.code, 2);
        assert.match(imported.stderr, /PostgreSQL and Redis stores are read here, not written/);
        assert.equal(existsSync(join(dir, `.${kind}-trip.md.partial`)), false);
      });

      it('exits 3 for a missing session, with the store named and no password', () => {
        const r = run(['show', address, 'no-such-session', ...extra], env());
        assert.equal(r.code, 3, r.stderr);
        assert.match(r.stderr, /no session 'no-such-session' in /);
        if (password) assert.doesNotMatch(r.stderr, new RegExp(password));
      });
    });
  }

  it('says why a server cannot be used: a refused password (1), a missing database (3), nothing listening (1)', async () => {
    const pg = await sharedPostgres();
    const u = new URL(pg.url);
    u.password = '';
    const wrong = run(['ls', u.toString()], { AGENT_SESSIONS_PASSWORD: 'not-the-password-xyz' });
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /password/i);
    assert.doesNotMatch(wrong.stderr, /not-the-password-xyz/);
    const missing = new URL(pg.url);
    missing.pathname = '/no_such_database_here';
    const gone = run(['ls', missing.toString()]);
    assert.equal(gone.code, 3, gone.stderr);
    assert.match(gone.stderr, /no_such_database_here/);
    const closed = run(['ls', 'redis://127.0.0.1:1/0']);
    assert.equal(closed.code, 1, closed.stderr);
    assert.match(closed.stderr, /^agent-sessions: Redis 127\.0\.0\.1:1\/0: /);
  });
});
