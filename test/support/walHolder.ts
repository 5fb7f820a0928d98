/**
 * Child process: a program that holds a session database open in WAL mode with committed frames not yet copied into
 * the file (a Python agent, another window, a long-lived script), then never calls again. It rewrites every page
 * through the -wal (VACUUM), says "holding" on stdout and idles until killed. The driver is the one the parent
 * forces (AGENT_SESSION_SQLITE_DRIVER: better-sqlite3 on Node 20, node:sqlite on Node 22+).
 *
 * With `checkpoint`, it then copies every frame into the file (PASSIVE), keeping the -wal and its index open.
 *
 * Usage: node --import tsx test/support/walHolder.ts <dbPath> [checkpoint]
 */
import { openDatabase } from '../../src/store';

const [dbPath, option] = process.argv.slice(2);
if (!dbPath) throw new Error('usage: walHolder.ts <dbPath> [checkpoint]');
const db = openDatabase(dbPath);
db.prepare('PRAGMA journal_mode = WAL').get();
// No automatic checkpoint: the frames stay in the -wal as they would between a holder's checkpoints.
db.prepare('PRAGMA wal_autocheckpoint = 0').get();
db.exec('VACUUM');
if (option === 'checkpoint') db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get();
process.stdout.write(`holding ${db.driver}\n`);
// The timer keeps the connection referenced: a collected connection is closed (and checkpointed) by its driver.
setInterval(() => db.driver, 60_000);
