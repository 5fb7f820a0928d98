/**
 * `npm start`: writes a demo session database by running the real `@openai/agents` runner with a scripted offline
 * model through `AdvancedSQLiteSession` (no API key, no network), and the runs' traces into a trace store the way the
 * extension's own runs record theirs (so the first Timeline a newcomer opens has a waterfall), and a few reviews of its
 * turns where the extension keeps reviews (so there is something to check: docs/check.md), prints what the file holds,
 * then opens it:
 * in VS Code when `code` is on the PATH (as an extension development host), otherwise in code-server on
 * 127.0.0.1, printing the address to open in a browser.
 *   npm start                 write, print, open
 *   npm start -- --print      write and print only
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Runner } from '@openai/agents';
import { createDemoAgent } from '../src/agents/demoAgent';
import { startRunTrace } from '../src/agents/runTracing';
import { AdvancedSQLiteSession, TraceStore, type SpanRecord } from '../src/store';
import { demoReviewStorePath, demoTraceStorePath, openDemo } from './demo/launch';
import { DEMO_REVIEWS, writeDemoReviews } from './demo/reviews';
import { printDatabaseReport } from './demo/report';
import { writeDemoAgentModule } from './demo/agentModule';

const args = process.argv.slice(2);
const printOnly = args.includes('--print');
const out = resolve(args.find((a) => !a.startsWith('--')) ?? join('dist', 'demo', 'conversations.db'));

/**
 * Runs each message as one turn on `branchId` (the session's current branch), traced as the extension traces its own
 * runs (src/agents/runTracing.ts: our collector the only processor, nothing sent anywhere); the turn's spans, linked
 * to the session, branch and turn the run wrote, are added to `spans`.
 */
async function converse(session: AdvancedSQLiteSession, branchId: string, messages: string[], spans: SpanRecord[]): Promise<void> {
  const agent = createDemoAgent();
  for (const message of messages) {
    const trace = startRunTrace({ sink: () => Promise.resolve() });
    const runner = new Runner({ traceId: trace.traceId, groupId: session.sessionId, workflowName: 'Agent Session Inspector demo' });
    // Each model request's input recorded, as our runs record it: the demo's Context section shows it as recorded.
    const result = await runner.run(trace.agent(agent), message, { session });
    await session.storeRunUsage(result);
    const turn = (await session.getConversationTurns(branchId)).at(-1)?.turn ?? null;
    spans.push(...trace.finish({ sessionId: session.sessionId, branchId, turnNumber: turn }));
  }
}

/** Timestamps have one-second resolution; waiting makes the branches' creation order visible in listings. */
const nextSecond = (): Promise<void> => new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 10));

/** Removes a SQLite file and the files SQLite keeps beside it. */
function removeDatabase(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

/**
 * Writes the demo's session file at `path` and, when `tracesPath` is given, a trace store there (written afresh) with
 * the spans of every demo turn. The two are different files: a trace store is never a session file (docs/traces.md).
 */
export async function writeDemoDatabase(path: string, tracesPath?: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  removeDatabase(path);
  const spans: SpanRecord[] = [];

  const trip = new AdvancedSQLiteSession({ sessionId: 'weather-trip', dbPath: path, createTables: true });
  await converse(
    trip,
    'main',
    ['Hi! What can you do?', "What's the weather in Paris?", 'And in Tokyo, in Fahrenheit please?', 'Is it colder in Oslo?'],
    spans,
  );
  // Fork at turn 3: ask about Lisbon instead of Tokyo, and go on from there.
  await nextSecond();
  await trip.createBranchFromTurn(3, 'lisbon-instead');
  await converse(trip, 'lisbon-instead', ['And in Lisbon, in Fahrenheit please?', "Great, what's it like in Paris now?"], spans);
  await trip.switchToBranch('main');
  await nextSecond();
  await trip.createBranchFromContent('Oslo', 'oslo-retry');
  await converse(trip, 'oslo-retry', ['Is it warmer in Tokyo than in Oslo?'], spans);
  await trip.switchToBranch('main');
  trip.close();

  const support = new AdvancedSQLiteSession({ sessionId: 'support-chat', dbPath: path });
  await converse(support, 'main', ['Hello there', "What's the weather in Oslo in Fahrenheit?"], spans);
  support.close();

  if (tracesPath === undefined) return;
  mkdirSync(dirname(tracesPath), { recursive: true });
  removeDatabase(tracesPath);
  const traces = TraceStore.open(tracesPath);
  try {
    traces.addSpans(spans);
  } finally {
    traces.close();
  }
}

async function main(): Promise<void> {
  // The trace store goes where the extension will look for it: the global storage of the profile the demo opens.
  const tracesPath = demoTraceStorePath();
  await writeDemoDatabase(out, tracesPath);
  await printDatabaseReport(out);
  const traces = TraceStore.open(tracesPath, { readonly: true });
  try {
    const { traces: count, spans } = traces.counts();
    console.log(`\nTraces: ${count} runs, ${spans} spans (each turn's Timeline) in ${tracesPath}`);
  } finally {
    traces.close();
  }
  // The reviews go where the extension keeps them by default: its global storage in the demo profile.
  const reviewsPath = demoReviewStorePath();
  await writeDemoReviews(out, reviewsPath);
  console.log(`Reviews: ${DEMO_REVIEWS.length} reviewed turns of weather-trip (check them: docs/check.md) in ${reviewsPath}`);
  // The demo's agent as the folder's agent module: in the demo the built-in agent answers offline (docs/check.md).
  const agentModule = await writeDemoAgentModule(dirname(out), join(__dirname, '..'));
  console.log(`Agent module: ${agentModule} (the built-in agent of the demo folder: the scripted weather assistant, no key)`);
  if (!printOnly) await openDemo(out);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  });
}
