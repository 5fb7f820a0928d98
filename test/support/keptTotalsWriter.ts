/**
 * Child process for the kept-totals differential suite: one write of the given kind into session `s1` of an existing
 * file, from another process (so the inspector's connection learns of it only from the file).
 *
 * Usage: node --import tsx test/support/keptTotalsWriter.ts <dbPath> <write>
 */
import { AdvancedSQLiteSession } from '../../src/store';
import { keptTotalsWrites, type KeptTotalsWrite } from './keptTotalsWrites';

async function main(): Promise<void> {
  const [dbPath, write] = process.argv.slice(2);
  if (!dbPath || !write || !(write in keptTotalsWrites)) throw new Error(`usage: keptTotalsWriter.ts <dbPath> <write>, got ${write}`);
  const session = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
  try {
    await keptTotalsWrites[write as KeptTotalsWrite](session);
  } finally {
    session.close();
  }
  process.stdout.write('done\n');
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
