/**
 * `message_structure` shared by two sessions/messages table pairs in one file (Python ≤ 0.21.0, fixed by PR #4454):
 * the structure tables have fixed names, `CREATE TABLE IF NOT EXISTS` keeps the first pair's foreign keys, and a
 * second `AdvancedSQLiteSession(sessions_table=…, messages_table=…)` on the same file writes its structure and usage
 * rows into the same tables, with message ids of its own messages table. The owner is the pair the foreign keys
 * name (what every reader, ours and Python's, takes); the other pair's rows are found by what they point at: a
 * message of the same session in another messages-shaped table and none in the owner's, or the same message shown
 * twice on one branch (the two tables' ids collide; one store never puts a message twice on a branch).
 *
 * The other store's usage rows are found too: those of a session whose messages are all in the other table.
 *
 * Runs only when the file holds another table shaped like a messages table (id, session_id, message_data): a file
 * with one pair costs one schema read. Reported only: the rows are the other store's only record of its branches and
 * turns, and no second structure table can hold them (the name is fixed), so deleting them would hide its
 * conversations from every read; the way out is a file per pair (docs/doctor.md).
 */
import { foldIdentifier, tableColumns } from '../../format/schema';
import { quoteIdentifier } from '../../inspector/tableDiscovery';
import { forEachIdGroup, num, sessionArgs, sessionFilter, type CheckContext } from '../checkContext';

/** Tables other than the owner's messages table that a second pair's messages table would be. */
export function otherMessageTables(ctx: Pick<CheckContext, 'db' | 'tables'>): string[] {
  const own = foldIdentifier(ctx.tables.messagesName);
  const fixed = new Set(['message_structure', 'turn_usage', own]);
  return ctx.db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .all<{ name: string }>()
    .map((r) => r.name)
    .filter((name) => {
      if (fixed.has(foldIdentifier(name))) return false;
      const columns = new Set(tableColumns(ctx.db, name).map(foldIdentifier));
      return columns.has('id') && columns.has('session_id') && columns.has('message_data');
    });
}

export function checkSharedMessageStructure(ctx: CheckContext): void {
  if (!ctx.tables.structure) return;
  const others = otherMessageTables(ctx);
  if (others.length === 0) return;
  const m = ctx.tables.messages;
  // Which other table holds each foreign row's message: the first that has it, named in the finding.
  const holder = others
    .map((t) => `WHEN EXISTS (SELECT 1 FROM ${quoteIdentifier(t)} o WHERE o.id = s.message_id AND o.session_id = s.session_id) THEN ?`)
    .join(' ');
  const rows = ctx.db
    .prepare(
      `SELECT s.id, s.session_id, s.branch_id, CASE ${holder} END AS other FROM message_structure s
       WHERE ${sessionFilter('s.session_id')}
         AND NOT EXISTS (SELECT 1 FROM ${m} m WHERE m.id = s.message_id AND m.session_id = s.session_id)
       ORDER BY s.session_id, s.id`,
    )
    .iterate<{ id: unknown; session_id: string; branch_id: string; other: string | null }>(...others, ...sessionArgs(ctx));
  // One finding per session and other table, its rows listed up to MAX_LISTED_IDS and all counted. A row pointing
  // nowhere at all is not this kind (no other store holds its message).
  forEachIdGroup(
    rows,
    (r) => (r.other === null ? null : `${r.session_id}\0${r.other}`),
    (g) =>
      ctx.add({
        kind: 'shared-message-structure',
        session: g.first.session_id,
        rows: { message_structure: g.ids },
        detail:
          `${g.count} message_structure row(s) of session '${g.first.session_id}' (branch(es) ${[...g.tags].map((b) => `'${b}'`).join(', ')}) ` +
          `point at messages of ${g.first.other}, another store's messages table, not at ${ctx.tables.messagesName}${g.more}`,
      }),
    (r) => r.branch_id,
  );
  checkDoubledMessages(ctx);
  if (ctx.tables.usage) checkOtherStoreUsage(ctx, others);
}

/**
 * Usage rows of a session that has messages only in another store's messages table: the other store's
 * `store_run_usage` wrote them into the shared `turn_usage`, and this store's usage totals count them.
 */
function checkOtherStoreUsage(ctx: CheckContext, others: readonly string[]): void {
  const inOther = others.map((t) => `EXISTS (SELECT 1 FROM ${quoteIdentifier(t)} o WHERE o.session_id = u.session_id)`).join(' OR ');
  const rows = ctx.db
    .prepare(
      `SELECT u.id, u.session_id FROM turn_usage u
       WHERE ${sessionFilter('u.session_id')}
         AND NOT EXISTS (SELECT 1 FROM ${ctx.tables.messages} m WHERE m.session_id = u.session_id) AND (${inOther})
       ORDER BY u.session_id, u.id`,
    )
    .iterate<{ id: unknown; session_id: string }>(...sessionArgs(ctx));
  forEachIdGroup(
    rows,
    (r) => r.session_id,
    (g) =>
      ctx.add({
        kind: 'shared-message-structure',
        session: g.first.session_id,
        rows: { turn_usage: g.ids },
        detail:
          `${g.count} turn_usage row(s) of session '${g.first.session_id}', whose messages are all in another store's ` +
          `messages table: that store's usage, counted in this store's totals${g.more}`,
      }),
  );
}

/**
 * A message shown twice on one branch: the other store's row whose message id and session collide with one of the
 * owner's. Which of the two rows is the other store's cannot be told from the rows; both are listed.
 */
function checkDoubledMessages(ctx: CheckContext): void {
  const rows = ctx.db
    .prepare(
      `SELECT session_id, branch_id, message_id, COUNT(*) AS n, MIN(id) AS first_id, MAX(id) AS last_id FROM message_structure
       WHERE ${sessionFilter('session_id')}
       GROUP BY session_id, branch_id, message_id HAVING COUNT(*) > 1
       ORDER BY session_id, branch_id, message_id`,
    )
    .iterate<{ session_id: string; branch_id: string; message_id: unknown; n: unknown; first_id: unknown; last_id: unknown }>(
      ...sessionArgs(ctx),
    );
  for (const r of rows) {
    // The first and the last row of the group (a group is two rows unless the file was damaged further).
    const ids = [num(r.first_id), num(r.last_id)];
    ctx.add({
      kind: 'shared-message-structure',
      session: r.session_id,
      branch: r.branch_id,
      rows: { message_structure: ids },
      detail:
        `message ${num(r.message_id)} shows ${num(r.n)} times on branch '${r.branch_id}' of session '${r.session_id}': ` +
        `one row is another store's whose message id and session collide with this store's`,
    });
  }
}
