/** Prints a session database as text: sessions, branches with fork points, turns, tool usage and tokens. */
import { AdvancedSQLiteSession, openSessionDatabase } from '../../src/store';

const line = (s = ''): void => console.log(s);

export async function printDatabaseReport(path: string): Promise<void> {
  const db = openSessionDatabase(path);
  try {
    line(`Session database: ${path}`);
    for (const summary of db.listSessions()) {
      const sid = summary.sessionId;
      const u = summary.usage;
      line();
      line(
        `Session ${sid}: ${summary.messageCount} items, ${summary.branchCount} branches, ${u ? `${u.totalTokens} tokens in ${u.requests} requests over ${u.totalTurns} turns` : 'no usage'}`,
      );
      const s = new AdvancedSQLiteSession({ sessionId: sid, dbPath: path, readonly: true });
      try {
        for (const b of db.getBranchTree(sid)) {
          const fork = b.parentBranchId ? `, forked from ${b.parentBranchId} at turn ${b.forkTurn}` : '';
          line(`  Branch ${b.branchId}: ${b.userTurns} turns, ${b.messageCount} items${fork}`);
          const tools = await s.getToolUsage(b.branchId);
          for (const t of await s.getConversationTurns(b.branchId)) {
            const usage = await s.getTurnUsage(t.turn, b.branchId);
            const copied = b.forkTurn !== null && b.parentBranchId !== null && t.turn < b.forkTurn;
            const tokens = 'totalTokens' in usage ? `${usage.totalTokens} tokens` : copied ? `shared with ${b.parentBranchId}` : 'no usage';
            const used = tools.filter((x) => x.turn === t.turn).map((x) => `${x.toolName}×${x.count}`);
            line(`    Turn ${t.turn}: ${JSON.stringify(t.content)} (${tokens}${used.length ? `; tools: ${used.join(', ')}` : ''})`);
          }
        }
      } finally {
        s.close();
      }
    }
  } finally {
    db.close();
  }
}
