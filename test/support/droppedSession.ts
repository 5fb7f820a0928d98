/**
 * Child process (run with --expose-gc): a session its caller drops without closing must still be collected, its
 * connection closed by the driver, as before sessions watched their path. Prints "collected" once the session's
 * -wal is gone (the last connection's close removes it), "kept" if it is still there after several collections.
 *
 * Usage: node --expose-gc --import tsx test/support/droppedSession.ts <dbPath>
 */
import { existsSync } from 'node:fs';
import { AdvancedSQLiteSession } from '../../src/store';

const [dbPath] = process.argv.slice(2);
if (!dbPath) throw new Error('usage: droppedSession.ts <dbPath>');
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with --expose-gc');

async function write(): Promise<void> {
  const session = new AdvancedSQLiteSession({ sessionId: 'dropped', dbPath, createTables: true });
  await session.addItems([{ role: 'user', content: 'never closed' }]);
}

void write().then(async () => {
  for (let i = 0; i < 20 && existsSync(`${dbPath}-wal`); i++) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.stdout.write(existsSync(`${dbPath}-wal`) ? 'kept\n' : 'collected\n');
});
