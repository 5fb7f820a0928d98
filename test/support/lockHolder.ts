/**
 * Child process: takes the write lock on a database (BEGIN IMMEDIATE) with the driver the parent forces, says
 * "locked" on stdout, holds it for `ms` milliseconds, then commits and exits. With `exclusive`, it takes an EXCLUSIVE
 * lock instead (BEGIN EXCLUSIVE), which in a rollback-journal database keeps readers out too.
 *
 * Usage: node --import tsx test/support/lockHolder.ts <dbPath> <ms> [exclusive]
 */
import { openDatabase } from '../../src/store';

const [dbPath, msArg, mode] = process.argv.slice(2);
if (!dbPath || !msArg) throw new Error('usage: lockHolder.ts <dbPath> <ms> [exclusive]');
const db = openDatabase(dbPath);
db.exec(mode === 'exclusive' ? 'BEGIN EXCLUSIVE' : 'BEGIN IMMEDIATE');
process.stdout.write('locked\n');
// Block this process (as a long write would) without an event loop turn that could end early.
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(msArg));
db.exec('COMMIT');
db.close();
