/**
 * Branch ids that are empty or only whitespace (structure or usage rows): Python accepts them (PR #5007 closed
 * unmerged) and then cannot delete them by name, since `delete_branch` trims its argument. Reported only: a rename
 * would have to pick a name no reservation holds, and other programs may know the branch by its id.
 */
import { num, sessionArgs, sessionFilter, type CheckContext } from '../checkContext';

export function checkBlankBranchIds(ctx: CheckContext): void {
  if (!ctx.tables.structure) return;
  const rows = ctx.db
    .prepare(
      `SELECT session_id, branch_id, COUNT(*) AS items, MIN(id) AS first_id FROM message_structure s
       WHERE ${sessionFilter('s.session_id')} AND trim(branch_id, ' ' || char(9, 10, 11, 12, 13)) = ''
       GROUP BY session_id, branch_id ORDER BY session_id, branch_id`,
    )
    .iterate<{ session_id: string; branch_id: string; items: unknown; first_id: unknown }>(...sessionArgs(ctx));
  for (const r of rows) {
    ctx.add({
      kind: 'blank-branch-id',
      session: r.session_id,
      branch: r.branch_id,
      rows: { message_structure: [num(r.first_id)] },
      detail: `branch id ${JSON.stringify(r.branch_id)} of session '${r.session_id}' holds ${num(r.items)} item(s)`,
    });
  }
}
