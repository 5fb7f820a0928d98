/** Prints a session database as text: sessions, branches with fork points, turns, tool usage and tokens. */
import { AdvancedSQLiteSession, openSessionDatabase } from '../../src/store';
import { counted } from '../../src/shared/countNoun';

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
        `Session ${sid}: ${counted(summary.messageCount, 'item')}, ${counted(summary.branchCount, 'branch', 'branches')}, ${u ? `${counted(u.totalTokens, 'token')} in ${counted(u.requests, 'request')} over ${counted(u.totalTurns, 'turn')}` : 'no usage'}`,
      );
      const s = new AdvancedSQLiteSession({ sessionId: sid, dbPath: path, readonly: true });
      try {
        for (const b of db.getBranchTree(sid)) {
          const fork = b.parentBranchId ? `, forked from ${b.parentBranchId} at turn ${b.forkTurn}` : '';
          line(`  Branch ${b.branchId}: ${counted(b.userTurns, 'turn')}, ${counted(b.messageCount, 'item')}${fork}`);
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
