/**
 * Launcher B for the integration suite: runs test/integration (bundled as dist/test/integration.js) inside
 * code-server's real Node extension host, the way @vscode/test-electron runs it in desktop VS Code: the workbench
 * URL's payload names the extension development path and the tests path; the workbench calls back with the exit
 * code. Exit code = result; 2 on timeout (logs kept), 3 when code-server cannot start.
 *   node --import tsx test/host/runInHost.ts [--timeout 300]
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launchBrowser, type Browser } from './browser';
import { CodeServer } from './codeServer';
import { startPostgres, startRedis, type PostgresServer, type RedisServer } from '../../scripts/host/servers.mjs';

const ROOT = resolve(__dirname, '..', '..');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const timeoutS = Number(arg('timeout', '300'));
const testsPath = resolve(ROOT, arg('tests', 'dist/test/integration.js'));
const t0 = Date.now();
// The workbench's own start-up chatter, relayed through the same hook as the tests' output.
const WORKBENCH_NOISE =
  /^(Resolving connection token|Resolved connection token|Creating a socket|Ignoring fetching additional builtin|\[Service Worker\]|ChatSessionStore)/;
const elapsed = (): string => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

async function main(): Promise<number> {
  if (!existsSync(testsPath)) {
    console.error(`${testsPath} is missing: run \`node esbuild.mjs\` first.`);
    return 3;
  }
  // The folder the workbench opens; tests create their own databases in temp folders.
  const folder = mkdtempSync(join(tmpdir(), 'asi-host-ws-'));
  workspaceToRemove = folder;
  writeFileSync(join(folder, 'README.txt'), 'Workspace for the in-host integration tests.\n');
  // Real PostgreSQL and Redis servers for the server-store tests (test/integration/remoteStores.test.ts); their
  // addresses, with the passwords, reach the extension host through its environment only.
  const servers = await startTestServers();
  const doneFile = join(folder, '.suite-finished');
  stopServers = async () => {
    await servers.postgres?.stop();
    await servers.redis?.stop();
  };
  let server: CodeServer;
  try {
    server = await CodeServer.start({
      folder,
      env: {
        ASI_TEST_COUNTS: process.env.ASI_TEST_COUNTS ?? '',
        ASI_TEST_PHASE: process.env.ASI_TEST_PHASE ?? 'integration (extension host)',
        ASI_FIXTURES: join(ROOT, 'test', 'fixtures'),
        ASI_TEST_PG_URL: servers.postgres?.url ?? '',
        ASI_TEST_REDIS_URL: servers.redis?.url ?? '',
        ASI_TEST_SERVERS_ERROR: servers.error ?? '',
        ASI_TEST_DONE_FILE: doneFile,
      },
    });
  } catch (err) {
    console.error(`code-server could not start: ${err instanceof Error ? err.message : String(err)}`);
    return 3;
  }
  console.log(`[${elapsed()}] code-server ${server.url} (state ${server.stateDir})`);
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const done = new Promise<number>((resolveExit) => {
      // The workbench calls these two hooks when it runs extension tests (VS Code's own web test hooks).
      void page.exposeFunction('codeAutomationLog', (type: string, args: unknown) => {
        const list = Array.isArray(args) ? args : [args];
        if (WORKBENCH_NOISE.test(String(list[0]))) return;
        (type === 'error' ? console.error : console.log)(...list);
      });
      void page.exposeFunction('codeAutomationExit', (code: number) => resolveExit(code));
    });
    page.on('pageerror', (e) => console.log(`[pageerror] ${e.message}`));
    const payload: [string, string][] = [
      ['extensionDevelopmentPath', server.remoteUri(ROOT)],
      ['extensionTestsPath', server.remoteUri(testsPath)],
      ['skipWelcome', 'true'],
    ];
    await page.goto(server.workbenchUrl(payload));
    console.log(`[${elapsed()}] workbench opened; waiting for the extension host tests`);
    const timeout = new Promise<number>((r) => setTimeout(() => r(-1), timeoutS * 1000).unref());
    const code = await Promise.race([done, timeout]);
    if (code === -1) {
      console.error(`[${elapsed()}] the workbench did not report a result within ${timeoutS}s; code-server log: ${server.logPath}`);
      await browser.close();
      await server.stop({ keepState: true });
      return 2;
    }
    console.log(`[${elapsed()}] extension host tests exited with ${code}`);
    if (code === 0 && !existsSync(doneFile)) {
      console.error(`[${elapsed()}] the suite never finished (the extension host stopped or hung mid-run): failing`);
      await browser.close();
      await server.stop({ keepState: true });
      return 5;
    }
    await browser.close();
    await server.stop({ keepState: code !== 0 });
    if (code !== 0) console.error(`code-server state and log kept in ${server.stateDir}`);
    return code;
  } catch (err) {
    console.error(`in-host run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    await browser?.close().catch(() => undefined);
    await server.stop({ keepState: true });
    return 4;
  }
}

/** Both servers, or the reason they could not start (the remote-store tests then fail with it). */
async function startTestServers(): Promise<{ postgres?: PostgresServer; redis?: RedisServer; error?: string }> {
  try {
    const [postgres, redis] = await Promise.all([startPostgres(), startRedis({ password: `r-${process.pid}-${Date.now()}` })]);
    console.log(`[${elapsed()}] PostgreSQL ${postgres.version} on :${postgres.port}, Redis ${redis.version} on :${redis.port}`);
    return { postgres, redis };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    console.error(`test servers could not start: ${error}`);
    return { error };
  }
}

let workspaceToRemove: string | undefined;
let stopServers: () => Promise<void> = async () => undefined;
main().then(
  async (code) => {
    await stopServers().catch(() => undefined);
    // The workspace holds only what the tests wrote there (agent modules); keep it only when something failed.
    if (workspaceToRemove && code === 0) rmSync(workspaceToRemove, { recursive: true, force: true });
    process.exit(code);
  },
  async (err: unknown) => {
    await stopServers().catch(() => undefined);
    // A failure before main's own try (starting code-server): say why and fail, as an unhandled rejection would.
    console.error(`in-host run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
