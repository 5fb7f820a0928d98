/**
 * `doctor --fix` on a file that another file is renamed over (or that is moved away) during the run: the repairs must
 * go into the file whose findings were checked, or nowhere. SQLite keeps writing the file it opened, so without the
 * checks a COMMIT landed in the old, unlinked file ("Repaired…", the backup of the old file, the old -wal left beside
 * the new one), and a swap before the write lock had the replacement repaired without being checked.
 *
 * The doctor runs as the CLI in another process (as the tester ran it), and the swap is made while it waits for a
 * lock this test holds, seen from /proc or from the lock itself: the write lock of the file (it waits at BEGIN
 * IMMEDIATE, its write connection open); the lock of an empty file put at the backup path once the path was checked
 * free (VACUUM INTO waits for it under the write lock, before the repairs); and, in a rollback-journal file, another
 * process's read lock (its repairs wait to spill their pages into the file, after the first writes).
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type SqliteDatabase } from '../../../../src/store';
import { checkSessionFile } from '../../../../src/store/doctor/doctorReport';
import { makeDoctorFixture } from '../../../support/doctorFixtures';
import { holdReadTransaction } from '../../../support/staleWal';
import { tempDir } from '../../../support/tempFiles';

const ROOT = join(__dirname, '..', '..', '..', '..');
const sha256 = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const kinds = (path: string) => [...new Set(checkSessionFile(path).findings.map((f) => f.kind))].sort();

/** The files process `pid` has open, and whether for writing (O_RDWR or O_WRONLY), from /proc. */
function openFiles(pid: number): { path: string; writable: boolean }[] {
  const out: { path: string; writable: boolean }[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const path = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const flags = parseInt(/^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))![1]!, 8);
      out.push({ path, writable: (flags & 3) !== 0 });
    } catch {
      // Closed meanwhile.
    }
  }
  return out;
}

/** Polls until `cond` holds; the deadline only turns a hang into a failure. */
async function until(cond: () => boolean, what: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!cond()) {
    if (exited()) assert.fail(`the doctor exited before ${what}`);
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** `agent-sessions doctor <file> --fix --backup <backup>` from source, in another process. */
function startDoctor(file: string, backup: string) {
  const child = spawn(
    process.execPath,
    ['--no-warnings', '--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'doctor', file, '--fix', '--backup', backup],
    { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number | null; out: string }>((resolve) => child.on('close', (code) => resolve({ code, out })));
  return { pid: child.pid!, exited: () => child.exitCode !== null || child.signalCode !== null, done, kill: () => child.kill('SIGKILL') };
}

/** A connection holding the write lock of `path` (BEGIN IMMEDIATE; EXCLUSIVE for a file with no WAL yet). */
function lock(path: string, mode: 'IMMEDIATE' | 'EXCLUSIVE'): SqliteDatabase {
  const db = openDatabase(path);
  db.exec(`BEGIN ${mode}`);
  return db;
}

function release(db: SqliteDatabase): void {
  if (db.inTransaction) db.exec('ROLLBACK');
  db.close();
}

function setJournalMode(path: string, mode: 'WAL' | 'DELETE'): void {
  const db = openDatabase(path);
  try {
    db.prepare(`PRAGMA journal_mode = ${mode}`).get();
  } finally {
    db.close();
  }
}

/** Whether a reader is kept out of `path` now: its writer holds PENDING, waiting for the readers to finish. */
function readersKeptOut(path: string): boolean {
  const probe = openDatabase(path, { readonly: true, busyTimeoutMs: 0 });
  try {
    probe.prepare('SELECT count(*) FROM sqlite_master').get();
    return false;
  } catch (err) {
    if ((err as Error).message.includes('locked')) return true;
    throw err;
  } finally {
    probe.close();
  }
}

describe('doctor --fix: a file replaced or moved away during the repair', function () {
  this.timeout(90_000);
  let tmp: ReturnType<typeof tempDir>;
  let dir: string;
  beforeEach(function () {
    if (process.platform !== 'linux') this.skip(); // the test sees the doctor's waits in /proc
    tmp = tempDir('asi-doctor-replaced-');
    // As /proc names the doctor's files.
    dir = realpathSync(tmp.dir);
  });
  afterEach(() => tmp?.cleanup());

  /**
   * Starts the doctor on `file` (orphan-usage) and holds it in VACUUM INTO, past its check under the write lock,
   * before its repairs; then runs `swap` and lets it go on.
   */
  async function swapDuringBackup(file: string, backup: string, swap: () => void) {
    const writeLock = lock(file, 'IMMEDIATE');
    let backupLock: SqliteDatabase | undefined;
    const doctor = startDoctor(file, backup);
    try {
      // Its write connection is open: the backup path was checked free, and it waits for our write lock.
      await until(() => openFiles(doctor.pid).some((f) => f.path === file && f.writable), 'it opened the file for writing', doctor.exited);
      writeFileSync(backup, ''); // VACUUM INTO writes into an empty file, once it can lock it
      backupLock = lock(backup, 'EXCLUSIVE');
      release(writeLock);
      await until(() => openFiles(doctor.pid).some((f) => f.path === backup), 'it began the backup', doctor.exited);
      swap();
      release(backupLock);
      return await doctor.done;
    } finally {
      if (writeLock.isOpen) release(writeLock);
      if (backupLock?.isOpen) release(backupLock);
      doctor.kill();
    }
  }

  for (const mode of ['WAL', 'DELETE'] as const) {
    it(`${mode} journal: another file renamed over the path during the backup: replaced, nothing repaired, the new file untouched`, async () => {
      const file = join(dir, 'd.db');
      const other = join(dir, 'other.db');
      const backup = join(dir, 'bk.db');
      makeDoctorFixture('orphan-usage', file);
      makeDoctorFixture('dangling-tool-call', other);
      // A rollback-journal file: SQLite itself refuses to write it once moved, in words that blame its permissions.
      if (mode === 'DELETE') for (const f of [file, other]) setJournalMode(f, mode);
      const newFile = sha256(other);
      const r = await swapDuringBackup(file, backup, () => renameSync(other, file));
      assert.equal(r.code, 1, r.out);
      assert.match(r.out, /d\.db was replaced by another file while the repair ran, so nothing was repaired/);
      assert.match(r.out, /rolled back before its COMMIT\. Run the doctor again on the file now at .*d\.db\./);
      assert.match(r.out, /The backup .*bk\.db, made before the change was noticed, is kept\./);
      assert.doesNotMatch(r.out, /Repaired|cannot be written/);
      assert.equal(sha256(file), newFile, 'the new file was not written');
      const wal = `${file}-wal`;
      assert.ok(!existsSync(wal) || statSync(wal).size === 0, 'the old file left no frames in the -wal beside the new one');
      assert.deepEqual(kinds(file), ['dangling-tool-call'], 'the new file reads as itself, with its finding');
      assert.deepEqual(kinds(backup), ['orphan-usage'], 'the backup is of the checked file');
    });
  }

  it('the file moved away during the backup: deleted, the moved file not repaired', async () => {
    const file = join(dir, 'd.db');
    const moved = join(dir, 'moved.db');
    const backup = join(dir, 'bk.db');
    makeDoctorFixture('orphan-usage', file);
    const r = await swapDuringBackup(file, backup, () => renameSync(file, moved));
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /d\.db was deleted or moved while the repair ran, so nothing was repaired/);
    assert.match(r.out, /Put the file back, or run the doctor on it where it is now\./);
    assert.equal(existsSync(file), false);
    assert.deepEqual(kinds(moved), ['orphan-usage'], 'the finding is still there: nothing was repaired');
  });

  it('another file renamed over the path before the write lock: the replacement, never checked, is not repaired', async () => {
    const file = join(dir, 'd.db');
    const other = join(dir, 'other.db');
    const backup = join(dir, 'bk.db');
    makeDoctorFixture('orphan-usage', file);
    // Repairable too: without the check it was repaired in the checked file's place.
    makeDoctorFixture('dangling-tool-call', other);
    const newFile = sha256(other);
    const writeLock = lock(file, 'IMMEDIATE');
    const doctor = startDoctor(file, backup);
    let r: { code: number | null; out: string };
    try {
      await until(() => openFiles(doctor.pid).some((f) => f.path === file && f.writable), 'it opened the file for writing', doctor.exited);
      renameSync(other, file);
      release(writeLock);
      r = await doctor.done;
    } finally {
      if (writeLock.isOpen) release(writeLock);
      doctor.kill();
    }
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /d\.db was replaced by another file while the repair ran, so nothing was repaired\./);
    assert.doesNotMatch(r.out, /rolled back|backup/, 'refused before anything was written, the backup included');
    assert.equal(existsSync(backup), false);
    assert.equal(sha256(file), newFile);
    assert.deepEqual(kinds(file), ['dangling-tool-call']);
  });
  it('a rollback-journal file renamed over after the first writes: the last look before COMMIT refuses it', async () => {
    const file = join(dir, 'd.db');
    const other = join(dir, 'other.db');
    makeDoctorFixture('orphan-messages', file);
    // Orphan messages enough that deleting them dirties more pages than the page cache holds (better-sqlite3's 16
    // MB): the repair must spill pages into the file mid-statement, which takes the EXCLUSIVE lock, and waits.
    const db = openDatabase(file);
    db.exec(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 24000)
      INSERT INTO agent_messages (session_id, message_data)
      SELECT 'alice', '{"role": "user", "content": "' || hex(randomblob(500)) || '"}' FROM c`);
    db.close();
    setJournalMode(file, 'DELETE');
    makeDoctorFixture('dangling-tool-call', other);
    setJournalMode(other, 'DELETE');
    const newFile = sha256(other);
    const reader = holdReadTransaction(file, { readonly: true });
    let doctor: ReturnType<typeof startDoctor> | undefined;
    try {
      await reader.ready;
      doctor = startDoctor(file, join(dir, 'bk.db'));
      // It has written (its -journal holds the pages it changed) and waits for our reader to spill the rest.
      await until(() => readersKeptOut(file), 'it waited to spill its repairs', doctor.exited);
      renameSync(other, file);
      await reader.kill();
      const r = await doctor.done;
      assert.equal(r.code, 1, r.out);
      assert.match(
        r.out,
        /d\.db was replaced by another file while the repair ran, so nothing was repaired: the transaction was rolled back before its COMMIT/,
      );
      assert.equal(sha256(file), newFile, 'the new file was not written');
      assert.equal(existsSync(`${file}-journal`), false, "the rollback removed the old file's -journal from beside the new one");
      assert.deepEqual(kinds(file), ['dangling-tool-call']);
    } finally {
      await reader.kill();
      doctor?.kill();
    }
  });
});
