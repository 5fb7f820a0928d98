/**
 * Branches whose last item is a function or custom tool call with no output for its `call_id` on the branch: a run
 * that stopped between the call and its output leaves it. Both SDKs' runners drop such a call from later requests (so
 * the model never learns it asked), and a client sending the stored items as they are is refused by the APIs (the
 * kind's text in findingKinds.ts says so). The tips are found with one pass over the structure
 * rows, each tested with a lookup on `idx_structure_branch_seq`; only a tip that is a call has its branch's outputs read.
 */
import { pythonJsonLoads } from '../../format/pythonJson';
import { num, sessionArgs, sessionFilter, type CheckContext } from '../checkContext';

/** Call types whose output the doctor can write, with that output's type (both have `call_id` and a string `output`). */
export const OUTPUT_TYPE_OF: Readonly<Record<string, string>> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
};

/** A branch tip that is a call without its output. */
export interface DanglingCall {
  session: string;
  branch: string;
  structureId: number;
  messageId: number;
  turn: number | null;
  branchTurn: number | null;
  callType: string;
  callId: string;
  name: string | null;
}

/** The dangling calls of the file (or session); `onCall` sees each. Reads only. */
export function findDanglingCalls(ctx: Pick<CheckContext, 'db' | 'tables' | 'session'>, onCall: (c: DanglingCall) => void): void {
  if (!ctx.tables.structure) return;
  const m = ctx.tables.messages;
  const tips = ctx.db
    .prepare(
      `SELECT s.id, s.session_id, s.branch_id, s.message_id, s.message_type, s.user_turn_number, s.branch_turn_number, m.message_data
       FROM message_structure s JOIN ${m} m ON m.id = s.message_id
       WHERE ${sessionFilter('s.session_id')}
         AND s.message_type IN (${Object.keys(OUTPUT_TYPE_OF)
           .map((t) => `'${t}'`)
           .join(', ')})
         AND s.sequence_number = (SELECT MAX(t.sequence_number) FROM message_structure t
                                  WHERE t.session_id = s.session_id AND t.branch_id = s.branch_id)
       ORDER BY s.session_id, s.branch_id`,
    )
    .all<{
      id: unknown;
      session_id: string;
      branch_id: string;
      message_id: unknown;
      message_type: string;
      user_turn_number: unknown;
      branch_turn_number: unknown;
      message_data: string;
    }>(...sessionArgs(ctx));
  // At most one tip per branch: the list is bounded by the number of branches, never by the number of items.
  for (const t of tips) {
    const decoded = pythonJsonLoads(t.message_data);
    if (!decoded.ok || typeof decoded.value !== 'object' || decoded.value === null) continue;
    const item = decoded.value as { call_id?: unknown; name?: unknown };
    if (typeof item.call_id !== 'string') continue;
    if (hasOutput(ctx, t.session_id, t.branch_id, OUTPUT_TYPE_OF[t.message_type]!, item.call_id)) continue;
    onCall({
      session: t.session_id,
      branch: t.branch_id,
      structureId: num(t.id),
      messageId: num(t.message_id),
      turn: t.user_turn_number === null ? null : num(t.user_turn_number),
      branchTurn: t.branch_turn_number === null ? null : num(t.branch_turn_number),
      callType: t.message_type,
      callId: item.call_id,
      name: typeof item.name === 'string' ? item.name : null,
    });
  }
}

/** Whether the branch holds an output for `callId` (read one row at a time: a branch can hold many outputs). */
function hasOutput(ctx: Pick<CheckContext, 'db' | 'tables'>, session: string, branch: string, outputType: string, callId: string): boolean {
  const rows = ctx.db
    .prepare(
      `SELECT m.message_data FROM message_structure s JOIN ${ctx.tables.messages} m ON m.id = s.message_id
       WHERE s.session_id = ? AND s.branch_id = ? AND s.message_type = ?`,
    )
    .iterate<{ message_data: string }>(session, branch, outputType);
  for (const r of rows) {
    const d = pythonJsonLoads(r.message_data);
    if (d.ok && typeof d.value === 'object' && d.value !== null && (d.value as { call_id?: unknown }).call_id === callId) {
      // Leave the iterator closed before the next statement runs (better-sqlite3 allows one open statement).
      rows.return?.();
      return true;
    }
  }
  return false;
}

export function checkDanglingToolCalls(ctx: CheckContext): void {
  findDanglingCalls(ctx, (c) =>
    ctx.add({
      kind: 'dangling-tool-call',
      session: c.session,
      branch: c.branch,
      ...(c.turn === null ? {} : { turn: c.turn }),
      rows: { message_structure: [c.structureId], [ctx.tables.messagesName]: [c.messageId] },
      detail: `branch '${c.branch}' ends in ${c.callType} ${c.name ?? ''} (call_id ${c.callId}) with no output`.replace('  ', ' '),
    }),
  );
}
