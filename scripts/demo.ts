/**
 * `npm start`: writes a demo session database by running the real `@openai/agents` runner with a scripted offline
 * model through `AdvancedSQLiteSession` (no API key, no network), prints what the file holds, then opens it:
 * in VS Code when `code` is on the PATH (as an extension development host), otherwise in code-server on
 * 127.0.0.1, printing the address to open in a browser.
 *   npm start                 write, print, open
 *   npm start -- --print      write and print only
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { run, setTracingDisabled } from '@openai/agents';
import { createDemoAgent } from '../src/agents/demoAgent';
import { AdvancedSQLiteSession } from '../src/store';
import { openDemo } from './demo/launch';
import { printDatabaseReport } from './demo/report';

setTracingDisabled(true);

const args = process.argv.slice(2);
const printOnly = args.includes('--print');
const out = resolve(args.find((a) => !a.startsWith('--')) ?? join('dist', 'demo', 'conversations.db'));

async function converse(session: AdvancedSQLiteSession, messages: string[]): Promise<void> {
  const agent = createDemoAgent();
  for (const message of messages) {
    const result = await run(agent, message, { session });
    await session.storeRunUsage(result);
  }
}

/** Timestamps have one-second resolution; waiting makes the branches' creation order visible in listings. */
const nextSecond = (): Promise<void> => new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 10));

export async function writeDemoDatabase(path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });

  const trip = new AdvancedSQLiteSession({ sessionId: 'weather-trip', dbPath: path, createTables: true });
  await converse(trip, [
    'Hi! What can you do?',
    "What's the weather in Paris?",
    'And in Tokyo, in Fahrenheit please?',
    'Is it colder in Oslo?',
  ]);
  // Fork at turn 3: ask about Lisbon instead of Tokyo, and go on from there.
  await nextSecond();
  await trip.createBranchFromTurn(3, 'lisbon-instead');
  await converse(trip, ['And in Lisbon, in Fahrenheit please?', "Great, what's it like in Paris now?"]);
  await trip.switchToBranch('main');
  await nextSecond();
  await trip.createBranchFromContent('Oslo', 'oslo-retry');
  await converse(trip, ['Is it warmer in Tokyo than in Oslo?']);
  await trip.switchToBranch('main');
  trip.close();

  const support = new AdvancedSQLiteSession({ sessionId: 'support-chat', dbPath: path });
  await converse(support, ['Hello there', "What's the weather in Oslo in Fahrenheit?"]);
  support.close();
}

async function main(): Promise<void> {
  await writeDemoDatabase(out);
  await printDatabaseReport(out);
  if (!printOnly) await openDemo(out);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  });
}
