/**
 * `npm start`: writes a demo session database by running the real `@openai/agents` runner with a scripted offline
 * model through `AdvancedSQLiteSession` (no API key, no network), then prints what the file holds.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { run, setTracingDisabled } from '@openai/agents';
import { createDemoAgent } from '../src/agents/demoAgent';
import { AdvancedSQLiteSession } from '../src/store';
import { printDatabaseReport } from './demo/report';

setTracingDisabled(true);

const out = resolve(process.argv[2] ?? join('dist', 'demo', 'conversations.db'));

async function converse(session: AdvancedSQLiteSession, messages: string[]): Promise<void> {
  const agent = createDemoAgent();
  for (const message of messages) {
    const result = await run(agent, message, { session });
    await session.storeRunUsage(result);
  }
}

async function main(): Promise<void> {
  mkdirSync(resolve(out, '..'), { recursive: true });
  for (const suffix of ['', '-wal', '-shm']) rmSync(out + suffix, { force: true });

  const trip = new AdvancedSQLiteSession({ sessionId: 'weather-trip', dbPath: out, createTables: true });
  await converse(trip, [
    'Hi! What can you do?',
    "What's the weather in Paris?",
    'And in Tokyo, in Fahrenheit please?',
    'Is it colder in Oslo?',
  ]);
  // Fork at turn 3: ask about Lisbon instead of Tokyo, and go on from there.
  await trip.createBranchFromTurn(3, 'lisbon-instead');
  await converse(trip, ['And in Lisbon, in Fahrenheit please?', "Great, what's it like in Paris now?"]);
  await trip.switchToBranch('main');
  await trip.createBranchFromContent('Oslo', 'oslo-retry');
  await converse(trip, ['Is it warmer in Tokyo than in Oslo?']);
  await trip.switchToBranch('main');
  trip.close();

  const support = new AdvancedSQLiteSession({ sessionId: 'support-chat', dbPath: out });
  await converse(support, ['Hello there', "What's the weather in Oslo in Fahrenheit?"]);
  support.close();

  await printDatabaseReport(out);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
