/**
 * Child process: one of our own sessions held by a long-lived script that never calls again. It writes a turn, says
 * "holding" on stdout and idles; the session's own watch must notice when another file replaces its path.
 *
 * Usage: node --import tsx test/support/sessionHolder.ts <dbPath>
 */
import { AdvancedSQLiteSession } from '../../src/store';

const [dbPath] = process.argv.slice(2);
if (!dbPath) throw new Error('usage: sessionHolder.ts <dbPath>');
const session = new AdvancedSQLiteSession({ sessionId: 'held', dbPath, createTables: true });
void session.addItems([{ role: 'user', content: 'written by the holder' }]).then(() => {
  process.stdout.write('holding\n');
  // Kept alive by this timer alone (the session's watch is unref'd, as a library's must be), which also keeps the
  // session referenced: a collected connection is closed by its driver.
  setInterval(() => session.getCurrentBranchId(), 60_000);
});
