/**
 * Child process for the control-character id test (spec §12 f): runs every write that walks a session's branch ids on
 * a file whose ids hold U+0000, printing one JSON line per step as it starts and ends, so a parent that has to kill a
 * looping child can say which step looped. Runs on whichever driver AGENT_SESSION_SQLITE_DRIVER selects.
 *
 * Usage: node --import tsx test/support/controlCharIdsChild.ts <dbPath> <sessionId as JSON>
 * (JSON, because a command-line argument cannot hold U+0000).
 */
import { AdvancedSQLiteSession } from '../../src/store';

function log(record: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

async function step(name: string, fn: () => unknown): Promise<void> {
  log({ step: name, phase: 'start' });
  const started = Date.now();
  try {
    const value = await fn();
    log({ step: name, phase: 'done', ok: true, ms: Date.now() - started, value: value === undefined ? null : value });
  } catch (err) {
    log({ step: name, phase: 'done', ok: false, ms: Date.now() - started, error: `${(err as Error).name}: ${(err as Error).message}` });
  }
}

async function main(): Promise<void> {
  const [dbPath, sessionIdJson] = process.argv.slice(2);
  if (!dbPath || !sessionIdJson) throw new Error('usage: controlCharIdsChild.ts <dbPath> <sessionId as JSON>');
  const sessionId = JSON.parse(sessionIdJson) as string;
  let s: AdvancedSQLiteSession | undefined;
  await step('new AdvancedSQLiteSession({ createTables: true })', () => {
    s = new AdvancedSQLiteSession({ sessionId, dbPath, createTables: true });
  });
  if (!s) return;
  const session = s;
  await step('listBranches', async () => (await session.listBranches()).map((b) => b.branchId));
  await step('popItem', () => session.popItem());
  await step('createBranchFromTurn', () => session.createBranchFromTurn(2, 'from-turn'));
  await step('switchToBranch(main)', () => session.switchToBranch('main'));
  await step('createBranchFromContent', () => session.createBranchFromContent('question 2', 'from-content'));
  await step('switchToBranch(a\\u0000b)', () => session.switchToBranch('a\u0000b'));
  await step('getItems on a\\u0000b', async () => (await session.getItems()).length);
  await step('switchToBranch(main) again', () => session.switchToBranch('main'));
  await step('deleteBranch(from-turn)', () => session.deleteBranch('from-turn'));
  await step('deleteBranch(a\\u0000b)', () => session.deleteBranch('a\u0000b'));
  await step('clearSession', () => session.clearSession());
  session.close();
  log({ step: 'end', phase: 'done', ok: true });
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
