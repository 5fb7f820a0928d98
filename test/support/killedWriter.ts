/**
 * Child process: a writer killed before any checkpoint (test/support/doctorFixtures.ts, stale-wal). Runs the SQL
 * steps it is given in one transaction on the file (WAL mode, automatic checkpoints off, the driver the parent forces)
 * and SIGKILLs itself with the connection open, so the committed frames stay in the -wal and its index in the -shm,
 * as a Python agent killed mid-conversation leaves them.
 *
 * Usage: node --import tsx test/support/killedWriter.ts <dbPath> <JSON array of SQL steps>
 */
import { openDatabase } from '../../src/store';

const [dbPath, stepsJson] = process.argv.slice(2);
if (!dbPath || !stepsJson) throw new Error('usage: killedWriter.ts <dbPath> <steps JSON>');
const db = openDatabase(dbPath, { fileMustExist: true });
db.prepare('PRAGMA journal_mode = WAL').get();
db.prepare('PRAGMA wal_autocheckpoint = 0').get();
db.exec('BEGIN');
for (const sql of JSON.parse(stepsJson) as string[]) db.exec(sql);
db.exec('COMMIT');
process.kill(process.pid, 'SIGKILL');
