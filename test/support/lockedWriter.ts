/**
 * Child process: another writer mid-transaction, as a Python agent is between its BEGIN IMMEDIATE and its COMMIT.
 * Takes the write lock, runs the SQL steps it is given, says "locked" on stdout, holds the lock (uncommitted) for `ms`
 * milliseconds, then commits and exits. The driver is the one the parent forces.
 *
 * Usage: node --import tsx test/support/lockedWriter.ts <dbPath> <ms> <JSON array of SQL steps>
 */
import { openDatabase } from '../../src/store';

const [dbPath, msArg, stepsJson] = process.argv.slice(2);
if (!dbPath || !msArg || !stepsJson) throw new Error('usage: lockedWriter.ts <dbPath> <ms> <steps JSON>');
const db = openDatabase(dbPath, { fileMustExist: true });
db.exec('BEGIN IMMEDIATE');
for (const sql of JSON.parse(stepsJson) as string[]) db.exec(sql);
process.stdout.write('locked\n');
// Block this process (as a long write would) without an event loop turn that could end early.
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(msArg));
db.exec('COMMIT');
db.close();
