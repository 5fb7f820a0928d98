/**
 * Child process: `agent-sessions` run in this process after dropping to `nobody` (65534) when started as root, so
 * that a root-owned file is really read-only to it (root writes through chmod 0444). Exits with the command's code.
 *
 * Usage: node --import tsx test/support/cliAsNobody.ts <agent-sessions arguments…>
 */
import { runCli } from '../../src/cli/main';
import { resolveDriver } from '../../src/store';

// Load the driver (and its native addon) while still privileged.
resolveDriver();
if (process.getuid?.() === 0 && process.setgid && process.setuid) {
  process.setgid(65534);
  process.setuid(65534);
}
void runCli([...process.argv.slice(2), '--no-pager', '--no-color']).then((code) => process.exit(code));
