/** Opens the demo database in an editor with the extension loaded: VS Code if available, else code-server. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensureCodeServer } from '../host/hostTools.mjs';
import { CodeServer, codeServerBin, currentHost, projectRoot } from '../../test/host/codeServer';

const ROOT = projectRoot();

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

export async function openDemo(dbPath: string): Promise<void> {
  const folder = dirname(dbPath);
  if (onPath('code')) {
    console.log(`\nOpening ${folder} in VS Code with the extension (development host)…`);
    spawn('code', ['--new-window', `--extensionDevelopmentPath=${ROOT}`, folder], { stdio: 'inherit', detached: true }).unref();
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
