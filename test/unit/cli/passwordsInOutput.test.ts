/**
 * No password given inside an address reaches the CLI's output (the real binary, built from source): `check` and
 * `run` refuse an agent URL with credentials (fetch never sends them) or one that is no http(s) URL as a usage error
 * before any run, and every error the CLI prints (plain, `--json`, `mcp`'s) shows an address as `user:***@host`.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildSharedCli, sharedCliPath } from '../../support/cliBundle';
import { tempDir } from '../../support/tempFiles';
import { ROOT, writeExportFixture } from '../store/export/exportFixtures';
import { seedCheckSession, seedReviews } from '../agents/check/checkAgentKit';

// The bundle lives outside the repository: NODE_PATH lets it find better-sqlite3 in this checkout's node_modules.
const ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', NODE_PATH: join(ROOT, 'node_modules') };

/** The passwords of the tests, each in no other text the CLI prints. */
const SECRETS = ['s3cretpw', 'Pw0rdXyZ', 'Zq9/x#Y'];

describe('agent-sessions: passwords in addresses never reach the output', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-passwords-');
  const db = join(tmp.dir, 'conversations.db');
  const reviews = join(tmp.dir, 'reviews.db');
  const demo = join(tmp.dir, 'demo.db');
  let n = 0;

  before(async () => {
    await buildSharedCli();
    await seedCheckSession(db);
    await seedReviews(reviews, db);
    await writeExportFixture(demo);
  });
  after(() => tmp.cleanup());

  function cli(args: string[]) {
    const r = spawnSync(process.execPath, ['--no-warnings', sharedCliPath(), ...args], {
      cwd: tmp.dir,
      encoding: 'utf8',
      env: ENV,
      input: '',
      timeout: 90_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  function assertNoSecret(r: { stdout: string; stderr: string }, what: string) {
    for (const secret of SECRETS) assert.ok(!`${r.stdout}${r.stderr}`.includes(secret), `${what}: ${r.stdout}${r.stderr}`);
  }

  it('check --url with credentials: exit 2 before any case runs, the URL shown without its password, no report written', () => {
    for (const url of ['http://user:s3cretpw@127.0.0.1:1/x', 'http://user:Zq9/x#Y@127.0.0.1:1/x']) {
      for (const json of [false, true]) {
        const dir = join(tmp.dir, `out${++n}`);
        mkdirSync(dir);
        const junit = join(dir, 'check.xml');
        const markdown = join(dir, 'check.md');
        const reports = ['--junit', junit, '--markdown', markdown];
        const args = ['check', db, '--reviews', reviews, '--url', url, ...reports, ...(json ? ['--json'] : [])];
        const r = cli(args);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        assert.equal(r.stdout, '', 'no case ran');
        assertNoSecret(r, args.join(' '));
        assert.match(
          r.stderr,
          /--url http:\/\/user:\*\*\*@127\.0\.0\.1:1\/x holds a user name or password: credentials in a URL are not sent/,
        );
        if (json) assert.equal((JSON.parse(r.stderr) as { error: { code: number } }).error.code, 2);
        assert.equal(existsSync(junit), false, 'no --junit file');
        assert.equal(existsSync(markdown), false, 'no --markdown file');
      }
    }
    const r = cli(['check', db, '--reviews', reviews, '--url', 'http://user@127.0.0.1:1/x']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /holds a user name or password/);
  });

  it('check --url that is no http(s) URL: one usage error (exit 2), not an ERROR per case', () => {
    for (const url of ['notaurl', 'ftp://x/y']) {
      const r = cli(['check', db, '--reviews', reviews, '--url', url]);
      assert.equal(r.code, 2, `${url}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, new RegExp(`--url takes an http:// or https:// URL, got '${url}'`));
    }
  });

  it('run --url with credentials or no http(s) URL: exit 2 before the agent starts, no password shown', () => {
    const r = cli(['run', db, 's1', '--url', 'http://user:s3cretpw@127.0.0.1:1/x', '--message', 'hi']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(r.stdout, '');
    assertNoSecret(r, 'run --url');
    assert.match(r.stderr, /--url http:\/\/user:\*\*\*@127\.0\.0\.1:1\/x holds a user name or password/);
    const bad = cli(['run', db, 's1', '--url', 'notaurl', '--message', 'hi']);
    assert.equal(bad.code, 2, bad.stdout + bad.stderr);
    assert.match(bad.stderr, /--url takes an http:\/\/ or https:\/\/ URL, got 'notaurl'/);
  });

  it('every error the CLI prints shows an address without its password (plain and --json)', () => {
    const store = 'postgresql://bob:Pw0rdXyZ@127.0.0.1:1/db';
    const shown = 'postgresql://bob:***@127.0.0.1:1/db';
    const cases: [string[], number, string][] = [
      [['review', 'ls', '--store', store], 3, `There is no review store ${shown}.`],
      [['review', 'export', '--store', store, '-o', join(tmp.dir, 'r.json')], 3, `There is no review store ${shown}.`],
      [['dataset', 'sft', '--db', demo, '--store', store, '-o', join(tmp.dir, 'd.jsonl')], 3, `There is no review store ${shown}.`],
      [['search', demo, 'is:good', '--reviews', store], 3, `There is no review store ${shown}.`],
      [['export', demo, 'weather-trip', '--format', 'md', '-o', store], 6, `${shown} cannot be written`],
      [['ls', 'mysql://bob:Pw0rdXyZ@127.0.0.1/db'], 3, 'mysql://bob:***@127.0.0.1/db does not exist.'],
      [['mcp', '--store', 'mysql://bob:Pw0rdXyZ@127.0.0.1/db'], 2, '--store mysql://bob:***@127.0.0.1/db: no such file'],
    ];
    for (const [args, code, message] of cases) {
      for (const json of args[0] === 'mcp' ? [false] : [false, true]) {
        const all = json ? [...args, '--json'] : args;
        const r = cli(all);
        assert.equal(r.code, code, `${all.join(' ')}: ${r.stderr}`);
        assertNoSecret(r, all.join(' '));
        const said = json ? (JSON.parse(r.stderr) as { error: { message: string } }).error.message : r.stderr;
        assert.ok(said.includes(message), `${all.join(' ')}: ${said}`);
      }
    }
  });
});
