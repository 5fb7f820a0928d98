/**
 * `agent-sessions` through V8's code cache (issue 43, the CLI's own start; src/cli/cliLoader.ts, codeCacheDir.ts):
 * built as dist/cli.js is (a loader and dist/cliMain.js), run as a child process with its own cache and temporary
 * folders. The first run of a command writes that command's cache, the next reads it; a folder that cannot be
 * written, a folder someone else could write to and a damaged cache never change what the command does.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { codeCacheDir } from '../../../src/cli/codeCacheDir';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';

describe('agent-sessions through V8 code cache', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-code-cache-');
  const cli = join(tmp.dir, 'dist', 'cli.js');
  let version = '';

  before(async function () {
    const { cliBuildOptions } = (await import(pathToFileURL(join(ROOT, 'scripts', 'store-package', 'cliBuild.mjs')).href)) as {
      cliBuildOptions: (outfile: string, o: { codeCache: boolean }) => esbuild.BuildOptions;
    };
    await esbuild.build(cliBuildOptions(cli, { codeCache: true }));
    version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  });
  after(() => tmp.cleanup());

  /** Runs the CLI with `XDG_CACHE_HOME` and `TMPDIR` of the test's own. */
  function run(args: string[], env: { xdg: string; tmp: string; off?: boolean }) {
    const r = spawnSync(process.execPath, [cli, ...args], {
      encoding: 'utf8',
      env: {
        ...process.env,
        XDG_CACHE_HOME: env.xdg,
        TMPDIR: env.tmp,
        NODE_PATH: join(ROOT, 'node_modules'),
        AGENT_SESSIONS_CODE_CACHE: env.off ? 'off' : '',
      },
      timeout: 60_000,
    });
    return { status: r.status, out: r.stdout, err: r.stderr };
  }
  const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.bin')) : []);

  it("writes each command's cache on its first run under $XDG_CACHE_HOME, reads it on the next, never rewriting it", () => {
    const xdg = join(tmp.dir, 'a', 'xdg');
    const dir = join(xdg, 'agent-session-inspector', 'code-cache');
    const env = { xdg, tmp: join(tmp.dir, 'a', 'tmp') };
    mkdirSync(env.tmp, { recursive: true });
    assert.deepEqual(run(['--version'], env), { status: 0, out: `${version}\n`, err: '' });
    const [shared, ...more] = cacheFiles(dir);
    assert.ok(shared !== undefined && more.length === 0, `one cache: ${cacheFiles(dir).join(', ')}`);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, shared)).mode & 0o777, 0o600);

    // `run` gets its own (the code `--version` ran is not what run runs).
    const help = run(['run', '--help'], env);
    assert.equal(help.status, 0);
    assert.match(help.out, /agent-sessions run/);
    assert.equal(cacheFiles(dir).length, 2);
    const before = new Map(cacheFiles(dir).map((n) => [n, statSync(join(dir, n)).mtimeMs]));
    assert.deepEqual(run(['run', '--help'], env), help);
    assert.deepEqual(run(['--version'], env).out, `${version}\n`);
    assert.deepEqual(new Map(cacheFiles(dir).map((n) => [n, statSync(join(dir, n)).mtimeMs])), before);
    // Nothing in the temporary folder: the cache folder was usable.
    assert.deepEqual(readdirSync(env.tmp), []);
  });

  it('runs the commands that load more code on first use (search, usage, show, export) as the bundle alone does', () => {
    const env = { xdg: join(tmp.dir, 'lazy', 'xdg'), tmp: join(tmp.dir, 'lazy', 'tmp') };
    mkdirSync(env.tmp, { recursive: true });
    const file = join(ROOT, 'test', 'fixtures', 'conformance', 'ref-multisession.db');
    for (const args of [
      ['search', file, 'hello'],
      ['usage', file, 'alice'],
      ['show', file, 'alice'],
      ['export', file, 'alice', '--format', 'md'],
    ]) {
      const through = run(args, env);
      assert.equal(through.status, 0, `${args[0]}: ${through.err}`);
      // Without the cache the bundle is required as Node requires it: the same output.
      assert.deepEqual(run(args, { ...env, off: true }), through, args[0]);
    }
  });

  it('keeps the cache of each command that holds its heap small: V8 takes it on the next runs', () => {
    // These commands set V8 flags (heapSizing.ts); V8 refuses a cache written under flags other than its own at the
    // next start, and the loader deletes a refused cache: each run wrote a cache the next one threw away.
    const xdg = join(tmp.dir, 'held', 'xdg');
    const dir = join(xdg, 'agent-session-inspector', 'code-cache');
    const env = { xdg, tmp: join(tmp.dir, 'held', 'tmp') };
    mkdirSync(env.tmp, { recursive: true });
    const file = join(ROOT, 'test', 'fixtures', 'conformance', 'ref-multisession.db');
    // A search reports how long it took: the rest of its output must be the same.
    const same = (r: ReturnType<typeof run>) => ({ ...r, out: r.out.replace(/"elapsedMs": [\d.e-]+/, '"elapsedMs": 0') });
    for (const args of [
      ['show', file, 'alice'],
      ['export', file, 'alice', '--format', 'json'],
      ['usage', file, 'alice'],
      ['search', file, 'book', '--json'],
      ['context', file, 'alice', '--turn', '1'],
    ]) {
      const first = run(args, env);
      assert.equal(first.status, 0, `${args[0]}: ${first.err}`);
      const name = cacheFiles(dir).find((n) => n.endsWith(`-${args[0]}.bin`));
      assert.ok(name !== undefined, `${args[0]} wrote its cache: ${cacheFiles(dir).join(', ')}`);
      const path = join(dir, name);
      const written = statSync(path);
      for (const again of [1, 2]) {
        assert.deepEqual(same(run(args, env)), same(first), `${args[0]}, run ${again + 1}`);
        assert.ok(existsSync(path), `${args[0]}'s cache was refused and deleted by run ${again + 1}`);
        const now = statSync(path);
        assert.deepEqual([now.ino, now.mtimeMs], [written.ino, written.mtimeMs], `${args[0]}'s cache rewritten by run ${again + 1}`);
      }
    }
  });

  it('runs the same when the cache is damaged, and replaces a damaged cache', () => {
    const xdg = join(tmp.dir, 'b', 'xdg');
    const dir = join(xdg, 'agent-session-inspector', 'code-cache');
    const env = { xdg, tmp: join(tmp.dir, 'b', 'tmp') };
    assert.equal(run(['--version'], env).status, 0);
    const [name] = cacheFiles(dir);
    const bytes = readFileSync(join(dir, name!));
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 50) ^ 0xff, bytes.length - 50);
    writeFileSync(join(dir, name!), bytes);
    assert.deepEqual(run(['--version'], env), { status: 0, out: `${version}\n`, err: '' });
    assert.equal(existsSync(join(dir, name!)), false, 'the damaged cache is still there');
    assert.deepEqual(run(['--version'], env).out, `${version}\n`);
    assert.deepEqual(cacheFiles(dir), [name]);
  });

  it('falls back to a folder of its own in the temporary folder when the cache folder cannot be made', () => {
    const base = join(tmp.dir, 'c');
    mkdirSync(base, { recursive: true });
    const xdg = join(base, 'xdg');
    writeFileSync(xdg, 'a file where the cache root would be');
    const env = { xdg, tmp: join(base, 'tmp') };
    mkdirSync(env.tmp);
    assert.deepEqual(run(['--version'], env), { status: 0, out: `${version}\n`, err: '' });
    const uid = process.getuid?.() ?? 'user';
    const dir = join(env.tmp, `agent-session-inspector-${uid}`, 'code-cache');
    assert.equal(cacheFiles(dir).length, 1);
    assert.equal(statSync(join(env.tmp, `agent-session-inspector-${uid}`)).mode & 0o777, 0o700);
    assert.equal(readFileSync(xdg, 'utf8'), 'a file where the cache root would be');
  });

  it('uses no folder that others could write to, and runs without a cache', () => {
    const base = join(tmp.dir, 'd');
    const xdg = join(base, 'xdg');
    const env = { xdg, tmp: join(base, 'tmp') };
    // Both candidates exist and are open to everyone: neither is used, nothing is written.
    const open = [
      join(xdg, 'agent-session-inspector', 'code-cache'),
      join(env.tmp, `agent-session-inspector-${process.getuid!()}`, 'code-cache'),
    ];
    for (const dir of open) {
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o777);
    }
    assert.equal(codeCacheDir({ XDG_CACHE_HOME: xdg }, env.tmp), undefined);
    assert.deepEqual(run(['--version'], env), { status: 0, out: `${version}\n`, err: '' });
    for (const dir of open) assert.deepEqual(cacheFiles(dir), []);
  });

  it('writes nothing with AGENT_SESSIONS_CODE_CACHE=off', () => {
    const xdg = join(tmp.dir, 'e', 'xdg');
    const env = { xdg, tmp: join(tmp.dir, 'e', 'tmp'), off: true };
    assert.deepEqual(run(['--version'], env), { status: 0, out: `${version}\n`, err: '' });
    assert.equal(existsSync(xdg), false);
  });
});
