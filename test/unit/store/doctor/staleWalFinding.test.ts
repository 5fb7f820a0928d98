/**
 * The doctor's stale-wal kind: a -wal beside the file with committed transactions the main file does not hold yet
 * (a writer killed before its checkpoint). Found with what it holds, the claim checked (the main file alone lacks
 * the turn), nothing found once a holder's checkpoint copied every frame, and `--fix` checkpointing through SQLite,
 * after which the main file alone holds everything; a reader that keeps the -wal in use is said to have stopped it.
 * (A replaced file's -wal is another matter, refused at open: test/unit/store/sqlite/staleWal.test.ts.)
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openDatabase } from '../../../../src/store';
import { checkSessionFile, findingCount } from '../../../../src/store/doctor/doctorReport';
import { repairSessionFile } from '../../../../src/store/doctor/repairs';
import { makeDoctorFixture } from '../../../support/doctorFixtures';
import { startHolder } from '../../../support/staleWal';
import { tempDir } from '../../../support/tempFiles';

/** A Python reader that holds a read transaction open (as an agent between two reads of its history). */
const PYTHON_READER = [
  'import sqlite3, sys, time',
  'c = sqlite3.connect(sys.argv[1], isolation_level=None)',
  "c.execute('BEGIN')",
  "c.execute('SELECT COUNT(*) FROM agent_messages').fetchall()",
  "print('reading', flush=True)",
  'time.sleep(60)',
].join('\n');

/** bob's main as a fresh session reads it. */
async function bobMain(file: string): Promise<unknown[]> {
  const s = new AdvancedSQLiteSession({ sessionId: 'bob', dbPath: file, readonly: true });
  try {
    return await s.getItems(null, 'main');
  } finally {
    s.close();
  }
}

describe('doctor: stale-wal', function () {
  this.timeout(30_000);
  const tmp = tempDir('asi-doctor-wal-');
  after(() => tmp.cleanup());
  let n = 0;
  const fixture = () => {
    const dir = join(tmp.dir, String(n++));
    mkdirSync(dir);
    const file = join(dir, 'stale-wal.db');
    makeDoctorFixture('stale-wal', file);
    return file;
  };
  /** The main file alone, copied into a folder of its own (what a copy or backup of the .db alone holds). */
  const mainAlone = (file: string) => {
    const dir = join(tmp.dir, `alone-${n++}`);
    mkdirSync(dir);
    copyFileSync(file, join(dir, 'alone.db'));
    return join(dir, 'alone.db');
  };

  it('says what the -wal holds that the main file does not, from the -shm', async () => {
    const file = fixture();
    const [f, ...rest] = checkSessionFile(file).findings;
    assert.deepEqual(rest, []);
    assert.equal(f!.kind, 'stale-wal');
    assert.match(
      f!.detail,
      /^stale-wal\.db-wal holds 1 committed transaction\(s\) in 12 frame\(s\) \(12 page\(s\) of 4096 bytes, last written /,
    );
    assert.doesNotMatch(f!.detail, /no usable -shm/);
    // The claim: the main file alone lacks bob's last turn, which the -wal holds.
    assert.equal((await bobMain(file)).length, 4);
    assert.equal((await bobMain(mainAlone(file))).length, 2);
  });

  it('counts every committed frame when there is no -shm to say how far a checkpoint got', () => {
    const file = fixture();
    rmSync(`${file}-shm`);
    const [f] = checkSessionFile(file).findings;
    assert.match(f!.detail, /holds 1 committed transaction\(s\) in 12 frame\(s\).*\(no usable -shm: every committed frame counted\)/);
  });

  it('finds nothing once a holder checkpointed every frame, though its -wal stays', async () => {
    const file = join(tmp.dir, `held-${n++}.db`);
    makeDoctorFixture('empty-main', file);
    const holder = startHolder('this node', file, undefined, ['checkpoint']);
    try {
      await holder.ready;
      assert.ok(statSync(`${file}-wal`).size > 0);
      assert.equal(checkSessionFile(file).totals['stale-wal'], undefined);
    } finally {
      await holder.kill();
    }
    const held = join(tmp.dir, `held-${n++}.db`);
    makeDoctorFixture('empty-main', held);
    const writer = startHolder('this node', held);
    try {
      await writer.ready;
      // The same holder before its checkpoint: every page it rewrote is in the -wal only.
      assert.equal(checkSessionFile(held).totals['stale-wal'], 1);
    } finally {
      await writer.kill();
    }
  });

  it('--fix checkpoints through SQLite: the main file alone then holds the turn, and the -wal is empty', async () => {
    const file = fixture();
    const backup = join(tmp.dir, `wal-${n++}.backup.db`);
    const outcome = repairSessionFile(file, { backup });
    assert.equal(outcome.counts.walFramesCheckpointed, 12);
    assert.equal(outcome.counts.walCheckpointComplete, true);
    assert.equal(outcome.backup, backup);
    assert.equal(findingCount(outcome.after), 0);
    assert.equal(statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0, 0);
    assert.equal((await bobMain(mainAlone(file))).length, 4);
    // The backup (VACUUM INTO reads through the -wal) holds the turn too.
    assert.equal((await bobMain(backup)).length, 4);
  });

  it('--fix says when a reader kept the checkpoint from finishing; the frames are in the file once it ends', async () => {
    const file = fixture();
    // Another process in a read transaction: SQLite's TRUNCATE checkpoint waits for it, up to the busy timeout.
    const reader = spawn('python3', ['-c', PYTHON_READER, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((r) => reader.on('close', () => r()));
    try {
      await new Promise<void>((resolve, reject) => {
        reader.stdout.on('data', (d: Buffer) => d.toString().includes('reading') && resolve());
        void exited.then(() => reject(new Error('the python3 reader exited before reading (this test needs python3)')));
      });
      const outcome = repairSessionFile(file, { backup: join(tmp.dir, `busy-${n++}.backup.db`), busyTimeoutMs: 300 });
      assert.equal(outcome.counts.walCheckpointComplete, false);
      // FULL copied the frames (the reader reads the newest snapshot); TRUNCATE could not empty the -wal under it.
      assert.equal(outcome.counts.walFramesCheckpointed, 12);
    } finally {
      reader.kill('SIGKILL');
      await exited;
    }
    assert.equal(checkSessionFile(file).totals['stale-wal'], undefined);
    assert.equal((await bobMain(mainAlone(file))).length, 4);
  });

  it('is not checked while this process has a connection at the path (its -shm must not be read)', () => {
    const file = fixture();
    const held = openDatabase(file, { readonly: true });
    try {
      assert.equal(checkSessionFile(file).totals['stale-wal'], undefined);
    } finally {
      held.close();
    }
    assert.equal(checkSessionFile(file).totals['stale-wal'], 1);
  });
});
