/**
 * Messages no structure row references, in sessions that have structure rows (a session with none at all was
 * written by a plain `SQLiteSession`, whose reads show every message: those are not orphans). `NOT IN` over the
 * structure's message ids is one ephemeral index SQLite builds once (spilling to its temp store), not a scan per
 * message: there is no index on `message_structure.message_id`.
 */
import { num, sessionArgs, sessionFilter, type CheckContext } from '../checkContext';

export function checkOrphanMessages(ctx: CheckContext): void {
  if (!ctx.tables.structure) return;
  const m = ctx.tables.messages;
  const rows = ctx.db
    .prepare(
      `SELECT m.id, m.session_id FROM ${m} m
       WHERE ${sessionFilter('m.session_id')}
         AND m.id NOT IN (SELECT message_id FROM message_structure)
         AND m.session_id IN (SELECT session_id FROM message_structure)
       ORDER BY m.session_id, m.id`,
    )
    .iterate<{ id: unknown; session_id: string }>(...sessionArgs(ctx));
  // One finding per session: its ids are listed up to the same bound as findings (a delete_branch can leave thousands).
  let current: { session: string; ids: number[]; count: number } | undefined;
  const flush = () => {
    if (!current) return;
    const more = current.count > current.ids.length ? ` (ids listed: the first ${current.ids.length})` : '';
    ctx.add({
      kind: 'orphan-messages',
      session: current.session,
      rows: { [ctx.tables.messagesName]: current.ids },
      detail: `${current.count} message(s) of session '${current.session}' that no branch references${more}`,
    });
  };
  for (const r of rows) {
    if (current?.session !== r.session_id) {
      flush();
      current = { session: r.session_id, ids: [], count: 0 };
    }
    current.count++;
    if (current.ids.length < MAX_IDS) current.ids.push(num(r.id));
  }
  flush();
}

/** Row ids listed per finding. */
const MAX_IDS = 50;
