/**
 * Sessions whose `main` branch holds no row while other branches hold turns: what pops plus a failed forced
 * `delete_branch` leave in Python ≤ 0.22.0 (PR #5081). Reported only: which branch should become `main` is the
 * user's choice.
 */
import { num, sessionArgs, sessionFilter, type CheckContext } from '../checkContext';

export function checkEmptyMain(ctx: CheckContext): void {
  if (!ctx.tables.structure) return;
  const rows = ctx.db
    .prepare(
      `SELECT session_id, COUNT(DISTINCT branch_id) AS branches, COUNT(*) AS items FROM message_structure s
       WHERE ${sessionFilter('s.session_id')}
         AND NOT EXISTS (SELECT 1 FROM message_structure t WHERE t.session_id = s.session_id AND t.branch_id = 'main')
       GROUP BY session_id ORDER BY session_id`,
    )
    .iterate<{ session_id: string; branches: unknown; items: unknown }>(...sessionArgs(ctx));
  for (const r of rows) {
    ctx.add({
      kind: 'empty-main',
      session: r.session_id,
      branch: 'main',
      detail: `branch 'main' of session '${r.session_id}' is empty; ${num(r.branches)} other branch(es) hold ${num(r.items)} item(s)`,
    });
  }
}
