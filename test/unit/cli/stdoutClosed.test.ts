/**
 * `agent-sessions … | head`: when stdout's reader closes it before the output ends, the CLI stops at once and quietly
 * with exit code 141 (src/cli/stdoutClosed.ts), built both ways it ships: one file (the tests' build) and a loader
 * with the CLI beside it (dist/cli.js, the store package's bin). Before, Node's unhandled EPIPE printed a stack trace
 * and exited 1.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { EXIT } from '../../../src/cli/exitCodes';
import { tempDir } from '../../support/tempFiles';
import { ROOT } from '../store/export/exportFixtures';
import { FAITHFUL, checkAgent, seedCheckSession, seedReviews } from '../agents/check/checkAgentKit';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'conformance', 'ref-multisession.db');

/** Runs the CLI with stdout a pipe whose reading end is closed before the CLI writes; its exit code and stderr. */
function runReaderGone(
  cli: string,
  args: string[],
  xdg: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, XDG_CACHE_HOME: xdg, NODE_PATH: join(ROOT, 'node_modules'), ...env },
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

describe('agent-sessions when the reader of its output leaves (| head)', function () {
  this.timeout(120_000);
  const tmp = tempDir('asi-cli-stdout-closed-');
  const builds = { 'one file': join(tmp.dir, 'single', 'cli.js'), 'a loader and the CLI': join(tmp.dir, 'loader', 'cli.js') };

  before(async () => {
    const { cliBuildOptions } = (await import(pathToFileURL(join(ROOT, 'scripts', 'store-package', 'cliBuild.mjs')).href)) as {
      cliBuildOptions: (outfile: string, o?: { codeCache: boolean }) => esbuild.BuildOptions;
    };
    await esbuild.build(cliBuildOptions(builds['one file']));
    await esbuild.build(cliBuildOptions(builds['a loader and the CLI'], { codeCache: true }));
  });
  after(() => tmp.cleanup());

  for (const build of Object.keys(builds) as (keyof typeof builds)[]) {
    it(`stops quietly with exit code 141 (${build})`, async () => {
      const cli = builds[build];
      for (const args of [
        ['show', FIXTURE, 'alice', '--no-pager'],
        ['show', FIXTURE, 'alice', '--json'],
        ['search', FIXTURE, 'book', '--json'],
        ['search', FIXTURE, 'book'],
        ['export', FIXTURE, 'alice', '--format', 'md'],
        ['usage', FIXTURE, 'alice'],
        ['ls', FIXTURE],
        ['--help'],
      ]) {
        const r = await runReaderGone(cli, args, join(tmp.dir, 'xdg'));
        assert.deepEqual(r, { code: EXIT.pipeClosed, signal: null, stderr: '' }, args.join(' '));
      }
    });

    it(`check finishes what it must first: its reports written, its scratch folder removed, then 141 (${build})`, async () => {
      // The loader and the CLI are two bundles, each with its own copy of stdoutClosed.ts: the loader's watch of stdout
      // must hear that check asked to be told, or it exits at the first EPIPE with no report.
      const dir = join(tmp.dir, `check-${build.replace(/\W+/g, '-')}`);
      const scratch = join(dir, 'tmp');
      mkdirSync(scratch, { recursive: true });
      const db = join(dir, 'conversations.db');
      await seedCheckSession(db);
      await seedReviews(join(dir, 'reviews.db'), db);
      const junit = join(dir, 'check.xml');
      const r = await runReaderGone(
        builds[build],
        ['check', db, '--reviews', join(dir, 'reviews.db'), '--command', checkAgent(dir, 'faithful', FAITHFUL), '--junit', junit],
        join(tmp.dir, 'xdg'),
        { TMPDIR: scratch },
      );
      assert.equal(r.code, EXIT.pipeClosed, r.stderr);
      assert.match(readFileSync(junit, 'utf8'), /<testsuites name="agent-sessions check"/);
      assert.deepEqual(
        readdirSync(scratch).filter((f) => f.startsWith('agent-sessions-check-')),
        [],
      );
    });
  }
});
