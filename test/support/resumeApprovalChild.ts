/**
 * Child process of the differential approval scenarios: reads a serialized RunState (written by the parent after a
 * tool-approval interruption), approves or rejects every pending call, resumes the run with the real runner on the
 * given session, and prints a JSON summary. For the MemorySession side the session's items come from, and go back
 * to, a JSON file (a memory session cannot cross processes); the SQLite side opens the same database file.
 *
 * Usage: node --import tsx test/support/resumeApprovalChild.ts <memory|sqlite> <workDir> <approve|reject> <sessionId>
 *   workDir holds state.txt, and items.json (memory) or session.db (sqlite).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemorySession, RunState, run, type AgentInputItem, type Session } from '@openai/agents';
import { AdvancedSQLiteSession } from '../../src/store';
import { approvalAgent } from './differentialAgents';
import { DifferentialModel, say } from './differentialModel';

async function main(): Promise<void> {
  const [kind, workDir, decision, sessionId] = process.argv.slice(2);
  if ((kind !== 'memory' && kind !== 'sqlite') || !workDir || (decision !== 'approve' && decision !== 'reject') || !sessionId) {
    throw new Error('usage: resumeApprovalChild.ts <memory|sqlite> <workDir> <approve|reject> <sessionId>');
  }
  const model = new DifferentialModel([say(decision === 'approve' ? 'Done, the file is gone.' : 'Understood, I kept the file.')], 'child');
  const agent = approvalAgent(model);
  const state = await RunState.fromString(agent, readFileSync(join(workDir, 'state.txt'), 'utf8'));
  const pending = state.getInterruptions();
  for (const item of pending) {
    if (decision === 'approve') state.approve(item);
    else state.reject(item);
  }
  let session: Session;
  let sqlite: AdvancedSQLiteSession | undefined;
  if (kind === 'memory') {
    const initialItems = JSON.parse(readFileSync(join(workDir, 'items.json'), 'utf8')) as AgentInputItem[];
    session = new MemorySession({ sessionId, initialItems });
  } else {
    sqlite = new AdvancedSQLiteSession({ sessionId, dbPath: join(workDir, 'session.db') });
    session = sqlite;
  }
  try {
    const result = await run(agent, state, { session });
    await sqlite?.storeRunUsage(result);
    const u = result.state.usage;
    if (kind === 'memory') writeFileSync(join(workDir, 'items.json'), JSON.stringify(await session.getItems()));
    process.stdout.write(
      JSON.stringify({
        pending: pending.length,
        finalOutput: result.finalOutput ?? null,
        interruptions: result.interruptions.length,
        usage: { requests: u.requests, inputTokens: u.inputTokens, outputTokens: u.outputTokens, totalTokens: u.totalTokens },
        modelInputs: model.requests.map((r) => r.input),
      }),
    );
  } finally {
    sqlite?.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error)?.stack ?? err));
  process.exit(1);
});
