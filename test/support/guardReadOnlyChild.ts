/**
 * Child process for the history guard's read-only test: run as root, it drops to `nobody` (65534) so a root-owned
 * folder is really not writable, then opens a guard store there and prints what happened as JSON on stdout.
 *
 * Usage: node --import tsx test/support/guardReadOnlyChild.ts <guardStorePath>
 */
import { HistoryGuardError } from '../../src/store/guard/guardErrors';
import { HistoryGuardStore } from '../../src/store/guard/guardStore';

const [path] = process.argv.slice(2);
if (!path) throw new Error('usage: guardReadOnlyChild.ts <guardStorePath>');
if (process.getuid?.() === 0) process.setuid?.(65534);
try {
  HistoryGuardStore.open(path).close();
  process.stdout.write(JSON.stringify({ ok: true }));
} catch (err) {
  const e = err as Error;
  process.stdout.write(
    JSON.stringify({ ok: false, name: e.name, problem: err instanceof HistoryGuardError ? err.problem : undefined, message: e.message }),
  );
}
