/**
 * Child process for the cross-process test: writes `turns` turns (user, function_call, function_call_output,
 * assistant, then storeRunUsage) into an existing session file, one addItems per turn, and prints a JSON summary.
 *
 * Usage: node --import tsx test/support/crossProcessWriter.ts <dbPath> <sessionId> <turns>
 */
import { AdvancedSQLiteSession } from '../../src/store';

async function main(): Promise<void> {
  const [dbPath, sessionId, turnsArg] = process.argv.slice(2);
  if (!dbPath || !sessionId || !turnsArg) throw new Error('usage: crossProcessWriter.ts <dbPath> <sessionId> <turns>');
  const turns = Number(turnsArg);
  const logged: string[] = [];
  const session = new AdvancedSQLiteSession({
    sessionId,
    dbPath,
    logger: { error: (m, e) => void logged.push(`${m}: ${String(e)}`), warn: (m) => void logged.push(m) },
  });
  try {
    for (let t = 1; t <= turns; t++) {
      await session.addItems([
        { role: 'user', content: `question ${t}` },
        { type: 'function_call', name: `tool_${t % 3}`, callId: `call_${t}`, arguments: '{}' },
        { type: 'function_call_output', callId: `call_${t}`, output: `result ${t}` },
        { role: 'assistant', type: 'message', status: 'completed', content: [{ type: 'output_text', text: `answer ${t}` }] },
      ] as never);
      await session.storeRunUsage({ state: { usage: { requests: 1, inputTokens: t, outputTokens: 1, totalTokens: t + 1 } } });
    }
  } finally {
    session.close();
  }
  process.stdout.write(JSON.stringify({ turns, logged }));
}

main().catch((err) => {
  process.stderr.write(String(err?.stack ?? err));
  process.exit(1);
});
