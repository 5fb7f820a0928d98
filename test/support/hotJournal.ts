/**
 * A session file with a hot rollback journal, as a writer killed in the middle of a transaction leaves a DELETE-mode
 * file: changed pages already in the file, their originals in `<file>-journal`, and no process holding the lock.
 * Made without killing anything: a writer whose page cache is too small for its transaction spills changed pages into
 * the file (their originals go to the -journal, synced first), and the file and its -journal are copied while that
 * transaction is still open; then the writer rolls back, so the source stays as it was.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { openDatabase } from '../../src/store';

/**
 * Copies `source` (a closed session file in DELETE journal mode, with the default tables) to `target` with a hot
 * journal holding an unfinished transaction of `rows` messages of session `sessionId`.
 */
export function copyWithHotJournal(source: string, target: string, sessionId: string, rows = 3000): void {
  const db = openDatabase(source, { fileMustExist: true });
  try {
    db.exec('PRAGMA synchronous = FULL');
    db.exec('PRAGMA cache_size = 1');
    db.exec('BEGIN IMMEDIATE');
    const insert = db.prepare('INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)');
    for (let i = 0; i < rows; i++) insert.run(sessionId, JSON.stringify({ role: 'user', content: `never committed ${'y'.repeat(500)}` }));
    if (!existsSync(`${source}-journal`)) throw new Error(`${source} has no -journal: is it in DELETE journal mode?`);
    copyFileSync(source, target);
    copyFileSync(`${source}-journal`, `${target}-journal`);
    db.exec('ROLLBACK');
  } finally {
    db.close();
  }
}
