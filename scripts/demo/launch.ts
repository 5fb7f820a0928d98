/**
 * Opens the demo database in an editor with the extension loaded: VS Code if available, else code-server. Both get a
 * profile of the demo's own (user data folder), so the demo's traces are in the global storage the extension reads
 * and the user's own VS Code state is left alone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureCodeServer } from '../host/hostTools.mjs';
import { CodeServer, codeServerBin, currentHost, projectRoot } from '../../test/host/codeServer';

const ROOT = projectRoot();

/** The demo's VS Code profile: outside the folder the demo opens, so discovery and the file watcher never see it. */
const DEMO_PROFILE = join(ROOT, 'dist', 'demo-profile');

/** The extension's global storage folder in a user data folder (VS Code names it by the lower-case extension id). */
function globalStorage(userDataDir: string): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { publisher: string; name: string };
  return join(userDataDir, 'User', 'globalStorage', `${pkg.publisher}.${pkg.name}`.toLowerCase());
}

/** The extension's trace store (`traces.db`, src/extension/traces/traceService.ts) in a user data folder. */
export function traceStorePathIn(userDataDir: string): string {
  return join(globalStorage(userDataDir), 'traces.db');
}

/** Where the demo writes its trace store: the extension's `traces.db` in the demo profile. */
export function demoTraceStorePath(): string {
  return traceStorePathIn(DEMO_PROFILE);
}

/** The extension's review store in a user data folder (src/extension/reviews/reviewService.ts, the default location). */
export function reviewStorePathIn(userDataDir: string): string {
  return join(globalStorage(userDataDir), 'reviews.db');
}

/** Where the demo writes its review store: the extension's `reviews.db` in the demo profile. */
export function demoReviewStorePath(): string {
  return reviewStorePathIn(DEMO_PROFILE);
}

/** A code-server's user data folder (its `--user-data-dir`), where the demo's traces go before the first window. */
export function codeServerUserDataDir(server: CodeServer): string {
  return join(server.stateDir, 'ud');
}

/** Puts the demo's trace and review stores into a user data folder the demo did not choose (code-server's state folder). */
function copyTraces(userDataDir: string): void {
  const stores: [string, string][] = [
    [demoTraceStorePath(), traceStorePathIn(userDataDir)],
    [demoReviewStorePath(), reviewStorePathIn(userDataDir)],
  ];
  for (const [from, to] of stores) {
    if (!existsSync(from)) continue;
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
  }
}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

export async function openDemo(dbPath: string): Promise<void> {
  const folder = dirname(dbPath);
  if (onPath('code')) {
    console.log(`\nOpening ${folder} in VS Code with the extension (development host)…`);
    spawn('code', ['--new-window', `--user-data-dir=${DEMO_PROFILE}`, `--extensionDevelopmentPath=${ROOT}`, folder], {
      stdio: 'inherit',
      detached: true,
    }).unref();
    return;
  }
  if (!existsSync(codeServerBin())) {
    const host = currentHost();
    console.log(
      `\nVS Code is not on the PATH; installing code-server ${host.codeServer} (VS Code ${host.vscode}) to open the demo in a browser…`,
    );
    try {
      ensureCodeServer(host);
    } catch (err) {
      console.log(
        `\n${err instanceof Error ? err.message : String(err)}\nCould not install code-server. Open ${dbPath} from VS Code with "Agent Sessions: Open Session Database…".`,
      );
      return;
    }
  }
  const server = await CodeServer.start({ folder, startTimeoutMs: 60_000 });
  // Before the browser connects: the extension host (and its trace store) starts with the first window.
  copyTraces(codeServerUserDataDir(server));
  const url = server.workbenchUrl([
    ['extensionDevelopmentPath', server.remoteUri(ROOT)],
    ['skipWelcome', 'true'],
  ]);
  console.log(
    `\ncode-server is serving the demo on 127.0.0.1 (the database appears in the Agent Sessions view):\n\n  ${url}\n\nPress Ctrl+C to stop.`,
  );
  const stop = async (): Promise<void> => {
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  await new Promise(() => undefined);
}
