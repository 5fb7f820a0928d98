/**
 * Usage rows whose turn has no structure rows on their branch: turn 0 on a branch with no turn
 * (`turn-zero-usage`, Python ≤ 0.22.0 writes it when `store_run_usage` runs before the first user message) and any
 * other turn (`orphan-usage`, rows a pop or delete left behind). One pass over `turn_usage`; each row's test is a
 * lookup on `idx_structure_turn`.
 */
import { num, sessionArgs, sessionFilter, type CheckContext } from '../checkContext';

export function checkUsageWithoutTurn(ctx: CheckContext): void {
  if (!ctx.tables.structure || !ctx.tables.usage) return;
  const rows = ctx.db
    .prepare(
      `SELECT u.id, u.session_id, u.branch_id, u.user_turn_number, u.total_tokens FROM turn_usage u
       WHERE ${sessionFilter('u.session_id')}
         AND NOT EXISTS (SELECT 1 FROM message_structure s
                         WHERE s.session_id = u.session_id AND s.branch_id = u.branch_id AND s.user_turn_number = u.user_turn_number)
       ORDER BY u.id`,
    )
    .iterate<{ id: unknown; session_id: string; branch_id: string; user_turn_number: unknown; total_tokens: unknown }>(...sessionArgs(ctx));
  for (const r of rows) {
    const turn = num(r.user_turn_number);
    ctx.add({
      kind: turn === 0 ? 'turn-zero-usage' : 'orphan-usage',
      session: r.session_id,
      branch: r.branch_id,
      turn,
      rows: { turn_usage: [num(r.id)] },
      detail: `turn_usage row ${num(r.id)} (${String(r.total_tokens)} tokens) for turn ${turn}, which branch '${r.branch_id}' does not hold`,
    });
  }
}
