/**
 * A replaced file's -wal found by whoever opens the path (format spec §11, stale-wal): a process holds A.db open
 * with committed frames in A.db-wal, another file is renamed over A.db, and the holder never calls again. Every
 * fresh open (the library, the CLI) must refuse instead of applying the old frames to the new file, and Move Aside
 * must then open the new file intact. The check must never fire on a -wal that does belong to its file.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AdvancedSQLiteSession,
  SQLiteSession,
  SessionDatabaseError,
  markStaleWal,
  moveStaleWalAside,
  openDatabase,
  openSessionDatabase,
  resolveDriver,
  staleWalAt,
  type SqliteDatabase,
} from '../../../../src/store';
import { waitForWriteLock } from '../../../../src/store/worker/writeLockWait';
import {
  type HolderKind,
  cachedNode22,
  hasPython,
  nextTimestampTick,
  sessionsAt,
  startHolder,
  writeSession,
} from '../../../support/staleWal';
import { tempDir } from '../../../support/tempFiles';

const ROOT = join(__dirname, '..', '..', '..', '..');
const sha256 = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

function expectStaleWal(fn: () => unknown): SessionDatabaseError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SessionDatabaseError, String(err));
    assert.equal(err.problem, 'stale-wal', err.message);
    assert.match(err.message, /-wal belongs to the file that .* replaced/);
    assert.match(err.message, /Move .*-wal aside \(it is kept, renamed\)/);
    return err;
  }
  assert.fail('expected SessionDatabaseError stale-wal');
}

/** Runs the CLI from source (`agent-sessions …`), as a fresh process that opens the path. */
function cli(args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, ['--no-warnings', '--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout + r.stderr };
}

describe('a replaced file whose holder is another process (spec §11, stale-wal)', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('asi-stale-wal-')));
  afterEach(() => tmp.cleanup());

  const kinds: HolderKind[] = ['this node', 'node:sqlite', 'python'];
  for (const kind of kinds) {
    const label = kind === 'this node' ? `${resolveDriver()} (this Node)` : kind;
    it(`held by ${label} that never calls again: every fresh open refuses, nothing is written, Move Aside opens the new file intact`, async function () {
      let node22: string | undefined;
      if (kind === 'node:sqlite') {
        node22 = await cachedNode22();
        if (!node22) {
          console.log('      skipped: no Node 22 in the test tools cache (npm run install:host installs it)');
          this.skip();
        }
      }
      if (kind === 'python' && !hasPython()) {
        console.log('      skipped: python3 with sqlite3 is not installed');
        this.skip();
      }
      const a = join(tmp.dir, 'A.db');
      const b = join(tmp.dir, 'B.db');
      await writeSession(a, 'old', 4);
      await writeSession(b, 'new', 12);
      const jsonl = join(tmp.dir, 'x.jsonl');
      writeFileSync(jsonl, `${JSON.stringify({ role: 'user', content: 'imported' })}\n`);
      const holder = startHolder(kind, a, node22);
      try {
        await holder.ready;
        await nextTimestampTick();
        renameSync(b, a);
        const before = [sha256(a), sha256(`${a}-wal`)];

        expectStaleWal(() => openSessionDatabase(a));
        expectStaleWal(() => openSessionDatabase(a, { readonly: false }));
        expectStaleWal(() => new AdvancedSQLiteSession({ sessionId: 'new', dbPath: a }));
        expectStaleWal(() => new SQLiteSession({ sessionId: 'new', dbPath: a }));
        const ls = cli(['ls', a]);
        assert.equal(ls.code, 4, ls.out); // a bad file until the -wal is moved aside
        assert.match(ls.out, /A\.db-wal belongs to the file that A\.db replaced/);
        assert.doesNotMatch(ls.out, /^old\s/m, 'the old sessions are not listed');
        const imported = cli(['import', jsonl, '--db', a, '--session', 'x']);
        assert.equal(imported.code, 4, imported.out);
        assert.match(imported.out, /A\.db-wal belongs to the file that A\.db replaced/);
        assert.deepEqual([sha256(a), sha256(`${a}-wal`)], before, 'nothing was written to the new file or the -wal');

        const moved = moveStaleWalAside(a);
        assert.ok(moved[0]?.includes('A.db-wal.replaced-'), String(moved));
        assert.deepEqual(sessionsAt(a), ['new:12']);
      } finally {
        await holder.kill();
      }
    });
  }

  it('held by one of our sessions in another process: its watch empties the -wal into its old file, and the new file opens', async () => {
    const a = join(tmp.dir, 'A.db');
    const b = join(tmp.dir, 'B.db');
    await writeSession(b, 'new', 12);
    const holder = startHolder('our session', a);
    try {
      await holder.ready;
      assert.ok(statSync(`${a}-wal`).size > 32);
      await nextTimestampTick();
      renameSync(b, a);
      const newFile = sha256(a);
      // Without the holder's step aside the -wal stays, and the path stays refused.
      const until = Date.now() + 5000;
      while (statSync(`${a}-wal`).size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.equal(statSync(`${a}-wal`).size, 0, 'the holder checkpointed its -wal with TRUNCATE');
      assert.equal(staleWalAt(a), undefined);
      assert.deepEqual(sessionsAt(a), ['new:12']);
      assert.equal(sha256(a), newFile);
    } finally {
      await holder.kill();
    }
  });

  it("the worker's wait for the write lock does not open the path (its close would checkpoint the old frames into the new file)", async () => {
    const a = join(tmp.dir, 'A.db');
    const b = join(tmp.dir, 'B.db');
    await writeSession(a, 'old', 4);
    await writeSession(b, 'new', 12);
    const holder = startHolder('this node', a);
    try {
      await holder.ready;
      await nextTimestampTick();
      renameSync(b, a);
      const before = [sha256(a), sha256(`${a}-wal`)];
      await waitForWriteLock(a, { budgetMs: 1000, cancelled: () => false, onWaiting: () => undefined });
      assert.deepEqual([sha256(a), sha256(`${a}-wal`)], before);
      moveStaleWalAside(a);
      assert.deepEqual(sessionsAt(a), ['new:12']);
    } finally {
      await holder.kill();
    }
  });

  it('a holder never checkpoints frames written into the shared -wal after the replacement, nor records it as stale', async () => {
    const a = join(tmp.dir, 'A.db');
    const b = join(tmp.dir, 'B.db');
    await writeSession(a, 'old', 2);
    await writeSession(b, 'new', 12);
    const keep = openDatabase(a);
    keep.prepare('SELECT count(*) FROM sqlite_master').get();
    const holder = new AdvancedSQLiteSession({ sessionId: 'old', dbPath: a });
    let writer: SqliteDatabase | undefined;
    try {
      await holder.addItems([{ role: 'user', content: 'old' }]);
      // Every frame copied into the old file: the -wal hides nothing from readers, so the check lets the path open.
      const row = keep.prepare('PRAGMA wal_checkpoint(PASSIVE)').get<{ log: number; checkpointed: number }>();
      assert.ok(row && row.checkpointed === row.log, JSON.stringify(row));
      await nextTimestampTick();
      renameSync(b, a);
      await nextTimestampTick();
      // Another program writes the new file through the shared -wal.
      writer = openDatabase(a);
      writer.exec(`INSERT INTO agent_messages (session_id, message_data) VALUES ('new', '{"role":"user","content":"later"}')`);
      await nextTimestampTick();
      const wal = sha256(`${a}-wal`);
      // The holder's next call finds its file replaced. A TRUNCATE checkpoint now would copy the writer's frames
      // into the old file and empty the -wal: the new file would lose them.
      await assert.rejects(() => holder.getItems(), /replaced by another file/);
      assert.equal(sha256(`${a}-wal`), wal, "the holder left the -wal with the writer's frames alone");
      assert.equal(staleWalAt(a), undefined, 'and did not record it as stale');
    } finally {
      writer?.close();
      holder.close();
      keep.close();
    }
  });

  it('the watch does not keep a session its caller dropped without closing: it is collected, its connection closed', () => {
    const a = join(tmp.dir, 'A.db');
    const r = spawnSync(
      process.execPath,
      ['--expose-gc', '--no-warnings', '--import', 'tsx', join(ROOT, 'test', 'support', 'droppedSession.ts'), a],
      { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(r.stdout.trim(), 'collected', r.stderr);
  });

  it("a stale -wal recorded before (a restart restores it) is no longer refused once the new file's connections started it over", async () => {
    const a = join(tmp.dir, 'A.db');
    const b = join(tmp.dir, 'B.db');
    await writeSession(a, 'old', 2);
    await writeSession(b, 'new', 12);
    const oldHolder = openDatabase(a);
    oldHolder.prepare('PRAGMA wal_autocheckpoint = 0').get();
    oldHolder.exec(`INSERT INTO agent_messages (session_id, message_data) VALUES ('old', '{"role":"user","content":"held"}')`);
    const inspector = openSessionDatabase(a);
    let writer: SqliteDatabase | undefined;
    try {
      await nextTimestampTick();
      renameSync(b, a);
      assert.throws(() => inspector.hasChanged(), /belongs to the file that A\.db replaced/);
      const recorded = staleWalAt(a);
      assert.ok(recorded, 'recorded as stale');
      // The old holder empties its -wal into its old file (TRUNCATE keeps the inode), and a program that is not ours
      // then writes the new file through that same -wal.
      oldHolder.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
      writer = openDatabase(a);
      writer.prepare('PRAGMA wal_autocheckpoint = 0').get();
      writer.exec(`INSERT INTO agent_messages (session_id, message_data) VALUES ('new', '{"role":"user","content":"later"}')`);
      assert.ok(statSync(`${a}-wal`).size > 32, "the new file's frames are in the same -wal");
      // The record comes back, as the extension restores it after a restart: the -wal is the new file's now.
      markStaleWal(a, recorded);
      assert.equal(staleWalAt(a), undefined);
      assert.deepEqual(sessionsAt(a), ['new:13']);
    } finally {
      writer?.close();
      inspector.close();
      oldHolder.close();
    }
  });

  it('moveStaleWalAside refuses a -wal that belongs to its file', async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 2);
    const holder = startHolder('this node', a);
    try {
      await holder.ready;
      assert.throws(
        () => moveStaleWalAside(a),
        (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'io',
      );
      assert.ok(statSync(`${a}-wal`).size > 32, 'left where it is');
    } finally {
      await holder.kill();
    }
  });
});

describe('the stale -wal check never fires on a -wal that belongs to its file', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir('asi-own-wal-')));
  afterEach(() => tmp.cleanup());

  /** The path opens, and the check stays quiet. */
  function opensClean(path: string, expected: string[]): void {
    assert.equal(staleWalAt(path), undefined, `${path}: the -wal belongs to its file`);
    assert.deepEqual(sessionsAt(path), expected);
  }

  function raw(path: string): SqliteDatabase {
    const db = openDatabase(path);
    db.prepare('PRAGMA wal_autocheckpoint = 0').get();
    return db;
  }

  it('a writer in another process with committed frames not yet checkpointed', async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 4);
    const holder = startHolder('this node', a);
    try {
      await holder.ready;
      await nextTimestampTick();
      opensClean(a, ['old:4']);
    } finally {
      await holder.kill();
    }
  });

  for (const mode of ['PASSIVE', 'FULL', 'RESTART', 'TRUNCATE']) {
    it(`a ${mode} checkpoint while a connection stays open, then more writes`, async () => {
      const a = join(tmp.dir, 'A.db');
      await writeSession(a, 'old', 4);
      const keep = raw(a);
      const s = new AdvancedSQLiteSession({ sessionId: 'old', dbPath: a });
      try {
        await s.addItems([{ role: 'user', content: 'more' }]);
        await nextTimestampTick();
        keep.prepare(`PRAGMA wal_checkpoint(${mode})`).get();
        await nextTimestampTick();
        opensClean(a, ['old:5']);
        await s.addItems([{ role: 'user', content: 'after' }]);
        await nextTimestampTick();
        opensClean(a, ['old:6']);
      } finally {
        s.close();
        keep.close();
      }
    });
  }

  it('a partial checkpoint: a reader holds a snapshot while frames are copied, so some stay behind', async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 4);
    const reader = raw(a);
    const s = new AdvancedSQLiteSession({ sessionId: 'old', dbPath: a });
    const checkpointer = raw(a);
    try {
      await s.addItems([{ role: 'user', content: 'seen by the reader' }]);
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM agent_messages').get();
      await s.addItems([{ role: 'user', content: 'past the snapshot' }]);
      await nextTimestampTick();
      const row = checkpointer.prepare('PRAGMA wal_checkpoint(PASSIVE)').get<{ log: number; checkpointed: number }>();
      assert.ok(row && row.checkpointed < row.log, `a partial checkpoint: ${JSON.stringify(row)}`);
      await nextTimestampTick();
      opensClean(a, ['old:6']);
      reader.exec('COMMIT');
    } finally {
      s.close();
      checkpointer.close();
      reader.close();
    }
  });

  it('a chmod of the database while another process holds it: after a full checkpoint, and followed by more writes', async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 4);
    // The holder copies every frame into the file and keeps the -wal (and its index) open.
    const holder = startHolder('this node', a, undefined, ['checkpoint']);
    try {
      await holder.ready;
      await nextTimestampTick();
      // A metadata-only change after the last write, as a rename would make; every frame is in the file already.
      chmodSync(a, 0o640);
      await nextTimestampTick();
      assert.ok(statSync(`${a}-wal`).size > 32, 'the -wal still holds its (copied) frames');
      opensClean(a, ['old:4']);
      // A write after the chmod: the -wal is newer than the main file's change.
      const s = new AdvancedSQLiteSession({ sessionId: 'old', dbPath: a });
      await s.addItems([{ role: 'user', content: 'after the chmod' }]);
      await nextTimestampTick();
      opensClean(a, ['old:5']);
      s.close();
    } finally {
      await holder.kill();
    }
  });

  it("this process never reads the -shm of a path it has a connection at (closing it would drop SQLite's locks)", async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 4);
    // Opened (and its -wal with it) before the holder writes: run as root, SQLite chowns the -wal at each open.
    const here = openDatabase(a);
    here.prepare('SELECT count(*) FROM sqlite_master').get();
    const holder = startHolder('this node', a, undefined, ['checkpoint']);
    try {
      await holder.ready;
      await nextTimestampTick();
      chmodSync(a, 0o640);
      await nextTimestampTick();
      // The index says every frame is copied, but reading it here would release `here`'s locks: all frames count.
      assert.ok(staleWalAt(a), 'refused rather than read the -shm under our own connection');
      here.close();
      assert.equal(staleWalAt(a), undefined, 'with no connection here, the index is read');
    } finally {
      here.close();
      await holder.kill();
    }
  });

  it('VACUUM through the -wal, with and without a checkpoint after it', async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 4);
    const db = raw(a);
    try {
      db.exec('VACUUM');
      await nextTimestampTick();
      opensClean(a, ['old:4']);
      db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get();
      await nextTimestampTick();
      opensClean(a, ['old:4']);
    } finally {
      db.close();
    }
  });

  const copies: [string, string[], string[]][] = [
    ['cp, main file first', [], ['', '-shm', '-wal']],
    ['cp, -wal first', [], ['-wal', '-shm', '']],
    ['cp -a, main file first', ['-a'], ['', '-shm', '-wal']],
    ['cp -a, -wal first', ['-a'], ['-wal', '-shm', '']],
    ['cp -a, -wal first, no -shm', ['-a'], ['-wal', '']],
  ];
  for (const [name, flags, order] of copies) {
    it(`a copy with ${name} of a file whose holder has frames in its -wal`, async () => {
      const a = join(tmp.dir, 'A.db');
      await writeSession(a, 'old', 4);
      const holder = startHolder('this node', a);
      const copy = join(tmp.dir, 'copy', 'A.db');
      mkdirSync(join(tmp.dir, 'copy'));
      try {
        await holder.ready;
        assert.ok(statSync(`${a}-wal`).size > 32, 'the frames are in the -wal');
        await nextTimestampTick();
        for (const suffix of order) {
          const r = spawnSync('cp', [...flags, `${a}${suffix}`, `${copy}${suffix}`]);
          assert.equal(r.status, 0, String(r.stderr));
          await nextTimestampTick();
        }
        opensClean(copy, ['old:4']);
      } finally {
        await holder.kill();
      }
    });
  }

  it('the file and its -wal moved together (mv), in either order', async () => {
    for (const walFirst of [false, true]) {
      const a = join(tmp.dir, `A${walFirst ? 1 : 2}.db`);
      await writeSession(a, 'old', 4);
      const holder = startHolder('this node', a);
      const dest = join(tmp.dir, `moved${walFirst ? 1 : 2}`);
      mkdirSync(dest);
      try {
        await holder.ready;
        await holder.kill(); // a moved database's holder would go on writing the old path's -wal
        await nextTimestampTick();
        for (const suffix of walFirst ? ['-wal', '-shm', ''] : ['', '-shm', '-wal']) {
          renameSync(`${a}${suffix}`, join(dest, `A.db${suffix}`));
          await nextTimestampTick();
        }
        opensClean(join(dest, 'A.db'), ['old:4']);
      } finally {
        await holder.kill();
      }
    }
  });

  it('several writers, in this process and in others, one after another and at once', async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 2);
    const holders = [startHolder('this node', a), startHolder('this node', a)];
    const s1 = new AdvancedSQLiteSession({ sessionId: 'old', dbPath: a });
    const s2 = new AdvancedSQLiteSession({ sessionId: 'other', dbPath: a });
    try {
      await Promise.all(holders.map((h) => h.ready));
      for (let i = 0; i < 5; i++) {
        await Promise.all([s1.addItems([{ role: 'user', content: `a${i}` }]), s2.addItems([{ role: 'user', content: `b${i}` }])]);
        await nextTimestampTick();
        assert.equal(staleWalAt(a), undefined, `round ${i}`);
      }
      opensClean(a, ['old:7', 'other:5']);
    } finally {
      s1.close();
      s2.close();
      for (const h of holders) await h.kill();
    }
  });

  it('a writer killed (kill -9) with committed frames not yet checkpointed', async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 4);
    const holder = startHolder('this node', a);
    await holder.ready;
    await holder.kill();
    await nextTimestampTick();
    assert.ok(statSync(`${a}-wal`).size > 32, 'the frames are still in the -wal');
    opensClean(a, ['old:4']);
  });

  it('a copy of the main file alone (cp, no -wal) beside a stale-free path', async () => {
    const a = join(tmp.dir, 'A.db');
    await writeSession(a, 'old', 4);
    const copy = join(tmp.dir, 'B.db');
    copyFileSync(a, copy);
    await nextTimestampTick();
    opensClean(copy, ['old:4']);
  });
});
