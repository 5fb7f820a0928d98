/**
 * The durable record of applied history operations (spec §14.2): `applyHistoryTransaction` records each operation id
 * with its fingerprint in the same transaction as the change, so a retry from any instance or process is a no-op.
 * The table is ours (Python ignores it) and is created on first use, inside the write that needs it.
 */
import { tablePresent, type SessionContext } from './sessionContext';

/** Created on first use, inside the write that needs it. */
export const HISTORY_OPERATIONS_DDL = `CREATE TABLE IF NOT EXISTS session_history_operations (
  session_id TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  branch_id TEXT NOT NULL,
  transaction_data TEXT NOT NULL,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (session_id, operation_id)
)`;

/**
 * Creates the table if needed and returns the row recorded for `operationId`, if it was applied (its
 * `transaction_data` is the fingerprint of the transaction applied then).
 */
export function appliedOperation(ctx: SessionContext, operationId: string): { transaction_data: string } | undefined {
  ctx.db.exec(HISTORY_OPERATIONS_DDL);
  return ctx.db
    .prepare('SELECT transaction_data FROM session_history_operations WHERE session_id = ? AND operation_id = ?')
    .get<{ transaction_data: string }>(ctx.sessionId, operationId);
}

/** Records an applied operation, on the branch it changed (after `appliedOperation` made the table). */
export function recordOperation(ctx: SessionContext, operationId: string, branch: string, fingerprint: string): void {
  ctx.db
    .prepare('INSERT INTO session_history_operations (session_id, operation_id, branch_id, transaction_data) VALUES (?, ?, ?, ?)')
    .run(ctx.sessionId, operationId, branch, fingerprint);
}

/** A cleared history forgets its applied operation ids, as `MemorySession` does (`branch` null: every branch). */
export function forgetOperations(ctx: SessionContext, branch: string | null): void {
  if (!tablePresent(ctx, 'session_history_operations')) return;
  if (branch === null) ctx.db.prepare('DELETE FROM session_history_operations WHERE session_id = ?').run(ctx.sessionId);
  else ctx.db.prepare('DELETE FROM session_history_operations WHERE session_id = ? AND branch_id = ?').run(ctx.sessionId, branch);
}
