/**
 * Messages no structure row references, in sessions that have structure rows (a session with none at all was
 * written by a plain `SQLiteSession`, whose reads show every message: those are not orphans). `NOT IN` over the
 * structure's message ids is one ephemeral index SQLite builds once (spilling to its temp store), not a scan per
 * message: there is no index on `message_structure.message_id`.
 */
import { forEachIdGroup, sessionArgs, sessionFilter, type CheckContext } from '../checkContext';

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
  // One finding per session, its ids listed up to MAX_LISTED_IDS.
  forEachIdGroup(
    rows,
    (r) => r.session_id,
    (g) =>
      ctx.add({
        kind: 'orphan-messages',
        session: g.first.session_id,
        rows: { [ctx.tables.messagesName]: g.ids },
        detail: `${g.count} message(s) of session '${g.first.session_id}' that no branch references${g.more}`,
      }),
  );
}
