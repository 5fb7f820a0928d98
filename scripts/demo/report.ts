/** Prints a session database as text: sessions, branches, turns, tool usage and tokens. */
import { AdvancedSQLiteSession, type BranchInfo } from '../../src/store';
import { openDatabase } from '../../src/store';

function sessionIds(path: string): string[] {
  const db = openDatabase(path, { readonly: true });
  try {
    return db
      .prepare('SELECT session_id FROM agent_sessions ORDER BY created_at, session_id')
      .all<{ session_id: string }>()
      .map((r) => r.session_id);
  } finally {
    db.close();
  }
}

const line = (s = ''): void => console.log(s);

export async function printDatabaseReport(path: string): Promise<void> {
  line(`Session database: ${path}`);
  for (const sid of sessionIds(path)) {
    const s = new AdvancedSQLiteSession({ sessionId: sid, dbPath: path, readonly: true });
    try {
      const usage = await s.getSessionUsage();
      line();
      line(`Session ${sid}: ${usage ? `${usage.totalTokens} tokens in ${usage.requests} requests over ${usage.totalTurns} turns` : 'no usage'}`);
      const branches: BranchInfo[] = await s.listBranches();
      for (const b of branches) {
        line(`  Branch ${b.branchId}: ${b.userTurns} turns, ${b.messageCount} items, created ${b.createdAt}`);
        const turns = await s.getConversationTurns(b.branchId);
        const tools = await s.getToolUsage(b.branchId);
        for (const t of turns) {
          const u = await s.getTurnUsage(t.turn, b.branchId);
          const tokens = 'totalTokens' in u ? `${u.totalTokens} tokens` : 'no usage';
          const used = tools.filter((x) => x.turn === t.turn).map((x) => `${x.toolName}×${x.count}`);
          line(`    Turn ${t.turn}: ${JSON.stringify(t.content)} (${tokens}${used.length ? `; tools: ${used.join(', ')}` : ''})`);
        }
      }
    } finally {
      s.close();
    }
  }
}
