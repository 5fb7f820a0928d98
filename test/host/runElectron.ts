/**
 * Launcher A for the integration suite: the same `dist/test/integration.js` under @vscode/test-electron (2.x runs
 * on Node 20), for machines that can download VS Code. CI here uses launcher B (code-server, runInHost.ts), since
 * VS Code cannot be downloaded on these machines.
 *   npm run test:electron
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '@vscode/test-electron';
import { projectRoot } from './codeServer';

async function main(): Promise<void> {
  const root = projectRoot();
  const workspace = mkdtempSync(join(tmpdir(), 'asi-electron-ws-'));
  await runTests({
    extensionDevelopmentPath: root,
    extensionTestsPath: join(root, 'dist', 'test', 'integration.js'),
    launchArgs: [
      workspace,
      '--disable-extensions',
      '--disable-workspace-trust',
      `--user-data-dir=${mkdtempSync(join(tmpdir(), 'asi-electron-ud-'))}`,
    ],
    extensionTestsEnv: { ASI_FIXTURES: join(root, 'test', 'fixtures') },
  });
}

main().catch((err: unknown) => {
  console.error(`The integration suite under VS Code (Electron) failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
