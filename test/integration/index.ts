/**
 * The integration suite's entry, loaded by the extension host as `extensionTestsPath` (by code-server through
 * test/host/runInHost.ts, or by @vscode/test-electron through test/host/runElectron.ts). Must export `run()`.
 */
import { writeFileSync } from 'node:fs';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    timeout: 30_000,
    color: false,
    // ASI_TEST_GREP runs only the tests whose titles match (while working on one file; npm test runs them all).
    ...(process.env.ASI_TEST_GREP ? { grep: process.env.ASI_TEST_GREP } : {}),
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    reporter: require('../support/countingReporter.js'),
  });
  // Test files are bundled into this file; requiring them after `pre-require` gives them mocha's globals.
  mocha.suite.emit('pre-require', globalThis, 'integration', mocha);
  /* eslint-disable @typescript-eslint/no-require-imports */
  require('./storeCanary.test');
  require('./sessionTree.test');
  require('./workspaceDiscovery.test');
  require('./branchActions.test');
  require('./readOnlyAndBadInput.test');
  require('./notices.test');
  require('./liveRefresh.test');
  require('./changeNotices.test');
  require('./sharedTurns.test');
  require('./compareView.test');
  require('./agentRuns.test');
  require('./pricing.test');
  require('./whatIf.test');
  require('./agentCommands.test');
  require('./remoteStores.test');
  require('./jsonDocuments.test');
  require('./exportImport.test');
  require('./search.test');
  require('./reviews.test');
  require('./check.test');
  require('./doctor.test');
  require('./codingAgents.test');
  require('./historyGuard.test');
  require('./workspaceTrust.test');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return new Promise((resolve, reject) => {
    mocha.run((failures) => {
      // The launcher checks this file: a host that dies mid-suite can still make the workbench report exit code 0.
      if (process.env.ASI_TEST_DONE_FILE) writeFileSync(process.env.ASI_TEST_DONE_FILE, `${failures}\n`);
      if (failures > 0) reject(new Error(`${failures} integration test(s) failed`));
      else resolve();
    });
  });
}
