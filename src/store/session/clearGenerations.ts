/**
 * The session's clear generation (spec §8.4): a counter in `session_clear_generations` that `clearSession` raises,
 * so an instance notices that another one cleared the session. These functions read and write the counter; what an
 * instance does when it moved (its branch pointer goes back to `main`) stays with the instance.
 */
import { CLEAR_GENERATIONS_DDL } from '../format/schema';
import { tablePresent, type SessionContext } from './sessionContext';

/** Creates the table if it is missing and the session's row with 0 if it has none (inside a write). */
export function ensureGenerationRow(ctx: SessionContext): void {
  if (!tablePresent(ctx, 'session_clear_generations')) ctx.db.exec(CLEAR_GENERATIONS_DDL);
  ctx.stmt('ensureGeneration', 'INSERT OR IGNORE INTO session_clear_generations (session_id, generation) VALUES (?, 0)').run(ctx.sessionId);
}

/** The session's row, if it has one (the table must exist). */
export function generationRow(ctx: SessionContext): number | undefined {
  return ctx
    .stmt('generation', 'SELECT generation FROM session_clear_generations WHERE session_id = ?')
    .get<{ generation: number }>(ctx.sessionId)?.generation;
}

/** The stored clear generation without writing: undefined without the table, 0 without a row (spec §8.4). */
export function readGeneration(ctx: SessionContext): number | undefined {
  if (!tablePresent(ctx, 'session_clear_generations')) return undefined;
  try {
    return generationRow(ctx) ?? 0;
  } catch (err) {
    // Outside a transaction another connection may drop the table between the check and the read.
    if (!tablePresent(ctx, 'session_clear_generations')) return undefined;
    throw err;
  }
}

/** The write-side read (spec §8.4): the row is made if missing, then read. */
export function generationForWrite(ctx: SessionContext): number {
  ensureGenerationRow(ctx);
  return generationRow(ctx) ?? 0;
}

/** Adds 1 to the session's counter (`clearSession`, inside its write, after `ensureGenerationRow`). */
export function raiseGeneration(ctx: SessionContext): void {
  ctx.db.prepare('UPDATE session_clear_generations SET generation = generation + 1 WHERE session_id = ?').run(ctx.sessionId);
}
