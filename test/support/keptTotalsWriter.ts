/**
 * Child process for the kept-totals differential suite: writes of the given kinds into session `s1` of an existing
 * file, from another process (so the inspector's connection learns of them only from the file). One process for the
 * suite's whole sequence: it reads one kind a line from stdin and, for each, opens the session, writes, closes it and
 * prints `done <kind>`. A process a write cost the suite about 2 s each (starting Node and compiling the store
 * through tsx), 30 s of each of five test phases; what the suite tests, a write the reader did not make, is the same.
 *
 * Usage: node --import tsx test/support/keptTotalsWriter.ts <dbPath>   (then one kind a line on stdin)
 */
import { createInterface } from 'node:readline';
import { AdvancedSQLiteSession } from '../../src/store';
import { keptTotalsWrites, type KeptTotalsWrite } from './keptTotalsWrites';

async function main(): Promise<void> {
  const [dbPath] = process.argv.slice(2);
  if (!dbPath) throw new Error('usage: keptTotalsWriter.ts <dbPath>, then one write a line on stdin');
  for await (const write of createInterface({ input: process.stdin })) {
    if (!(write in keptTotalsWrites)) throw new Error(`unknown write: ${write}`);
    const session = new AdvancedSQLiteSession({ sessionId: 's1', dbPath });
    try {
      await keptTotalsWrites[write as KeptTotalsWrite](session);
    } finally {
      session.close();
    }
    process.stdout.write(`done ${write}\n`);
  }
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
