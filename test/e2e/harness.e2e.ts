/**
 * The harness's own bad cases: each must end in a clear message and a failed run, never a hang.
 */
import { strict as assert } from 'node:assert';
import type { EventEmitter } from 'node:events';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CodeServer, currentHost } from '../host/codeServer';
import { HOSTS } from '../../scripts/host/hostTools.mjs';
import { VIEWPORT } from '../host/browser';
import { useWorkbench } from './suite';
import type { Workbench } from './workbench';

const ROOT = resolve(__dirname, '..', '..');

describe('test harness bad cases', function () {
  it('reports a missing code-server install with the remedy, without starting anything', async () => {
    const saved = process.env.CODE_SERVER_BIN;
    process.env.CODE_SERVER_BIN = '/nonexistent/code-server';
    try {
      await assert.rejects(
        CodeServer.start(),
        /not installed at \/nonexistent\/code-server\. Run `node scripts\/host\/hostTools\.mjs host vscode-1\.\d+`/,
      );
    } finally {
      if (saved === undefined) delete process.env.CODE_SERVER_BIN;
      else process.env.CODE_SERVER_BIN = saved;
    }
  });

  it('fails clearly, and fast, when its port is taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const started = Date.now();
    try {
      await assert.rejects(CodeServer.start({ port, startTimeoutMs: 30_000 }), /code-server (exited while starting|did not answer)/);
      assert.ok(Date.now() - started < 30_000, 'not a hang');
    } finally {
      blocker.close();
    }
  });

  // The in-host runner's own time limit: the same code on every host, and a whole code-server and browser for 15 s,
  // so on the newest host only (the in-host suites run there too).
  const newest = currentHost().id === HOSTS[HOSTS.length - 1]?.id;
  if (newest)
    it('fails the run with its logs kept when the workbench never reports a result', function () {
      this.timeout(90_000);
      const dir = mkdtempSync(join(tmpdir(), 'asi-never-'));
      try {
        const tests = join(dir, 'never.js');
        writeFileSync(tests, 'exports.run = () => new Promise(() => {});\n');
        const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/host/runInHost.ts', '--tests', tests, '--timeout', '8'], {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: 80_000,
          env: { ...process.env, ASI_TEST_COUNTS: '' },
        });
        assert.equal(r.status, 2, `exit code 2 on timeout; got ${r.status}\n${r.stdout}\n${r.stderr}`);
        assert.match(r.stderr, /did not report a result within 8s; code-server log: (\S+)/);
        const kept = /state and log kept in (\S+)|code-server log: (\S+)/.exec(r.stderr);
        assert.ok(kept, 'says where the logs are');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
});

describe('a workbench shared by two suites', function () {
  const PROBE = 'asi-harness-probe';
  let first: Workbench | undefined;

  describe('the first suite', function () {
    const suite = useWorkbench({ name: 'share-first', theme: 'light' });

    it('leaves storage, a listener, a console line and a viewport behind', async () => {
      first = suite.wb;
      const { page } = suite.wb;
      await page.locator('.monaco-workbench.vs').waitFor();
      await page.evaluate(`localStorage.setItem('${PROBE}', '1'); indexedDB.open('${PROBE}')`);
      page.on('dialog', () => undefined);
      await page.evaluate(`console.log('${PROBE}')`);
      await page.setViewportSize({ width: 600, height: 500 });
      assert.equal(await page.evaluate(`localStorage.getItem('${PROBE}')`), '1');
    });
  });

  describe('the next suite', function () {
    const suite = useWorkbench({ name: 'share-next', theme: 'dark' });

    it('gets the same server and browser, in a new window with none of that and its own settings', async () => {
      const { page } = suite.wb;
      // Sharing is what saves the time: a new workbench here would mean it stopped working.
      assert.equal(suite.wb, first, 'the same Workbench');
      assert.equal(await page.evaluate(`localStorage.getItem('${PROBE}')`), null);
      const dbs = (await page.evaluate('indexedDB.databases().then((l) => l.map((d) => d.name))')) as string[];
      assert.ok(!dbs.includes(PROBE), dbs.join(', '));
      // Playwright's Page is an EventEmitter, though its types do not say so.
      assert.equal((page as unknown as EventEmitter).listenerCount('dialog'), 0);
      assert.ok(!suite.wb.console.some((l) => l.includes(PROBE)), suite.wb.console.join('\n'));
      assert.deepEqual(page.viewportSize(), VIEWPORT);
      // Its folder and its settings: the dark theme after the first suite's light one.
      await page.locator('.monaco-workbench.vs-dark').waitFor();
      assert.match(await page.title(), /asi-e2e-share-next-dark-/);
    });
  });
});
