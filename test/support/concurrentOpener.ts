/**
 * Child process for the concurrent-open test. Loads the store, prints `ready`, then reads the start time (epoch ms)
 * from stdin, so every child starts at the same instant however long it took to load. For each round it waits for
 * `start + round * gap`, opens the fresh file `<dir>/round-<n>.db` with createTables: true, adds one item and closes.
 * Prints a JSON array with one outcome per round.
 *
 * Usage: node --import tsx test/support/concurrentOpener.ts <dir> <rounds> <gapMs> <sessionId>
 */
import { join } from 'node:path';
import { AdvancedSQLiteSession } from '../../src/store';

const cell = new Int32Array(new SharedArrayBuffer(4));

function sleepUntil(epochMs: number): void {
  // Sleep most of the way, then spin the last milliseconds so the children start within about a millisecond.
  for (;;) {
    const left = epochMs - Date.now();
    if (left <= 0) return;
    if (left > 3) Atomics.wait(cell, 0, 0, left - 3);
  }
}

function readStartTime(): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) {
        process.stdin.pause();
        resolve(Number(text.trim()));
      }
    });
    process.stdin.on('error', reject);
  });
}

async function main(): Promise<void> {
  const [dir, roundsArg, gapArg, sessionId] = process.argv.slice(2);
  if (!dir || !roundsArg || !gapArg || !sessionId) throw new Error('usage: concurrentOpener.ts <dir> <rounds> <gapMs> <sessionId>');
  process.stdout.write('ready\n');
  const start = await readStartTime();
  const outcomes: { round: number; ok: boolean; ms: number; error?: string }[] = [];
  for (let round = 0; round < Number(roundsArg); round++) {
    sleepUntil(start + round * Number(gapArg));
    const started = Date.now();
    try {
      const session = new AdvancedSQLiteSession({ sessionId, dbPath: join(dir, `round-${round}.db`), createTables: true });
      try {
        await session.addItems([{ role: 'user', content: `hello from ${sessionId}` } as never]);
      } finally {
        session.close();
      }
      outcomes.push({ round, ok: true, ms: Date.now() - started });
    } catch (err) {
      outcomes.push({ round, ok: false, ms: Date.now() - started, error: `${(err as Error).name}: ${(err as Error).message}` });
    }
  }
  process.stdout.write(`${JSON.stringify(outcomes)}\n`);
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
