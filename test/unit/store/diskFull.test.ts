/**
 * A full disk met by a write (either driver: the store phases run this on node:sqlite too). SQLite's SQLITE_FULL
 * becomes `SessionDatabaseError('disk-full')`, naming the file and saying nothing was written, exit 6, for the session
 * import, the trace store and doctor --fix (which names the backup it leaves); the review store's write passes
 * SQLite's error on, and exits 6 as well. The I/O errors a full disk gives elsewhere (the -shm a WAL reader makes, a
 * write cut short) say they were not reads.
 *
 * A full disk takes root to make (a small tmpfs), so SQLite is made to fail as it fails there: `PRAGMA
 * max_page_count`, capped at the file's pages on the connection that writes, fails a write that needs one more page
 * with SQLite's own SQLITE_FULL, rolled back as on a full disk. The I/O errors come from a child process under a
 * file size limit (`ulimit -f`), which makes the file system refuse what passes it (Node ignores SIGXFSZ).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT, exitCodeOf } from '../../../src/cli/exitCodes';
import { AdvancedSQLiteSession, openDatabase, resolveDriver } from '../../../src/store';
import { checkSessionFile, findingCount } from '../../../src/store/doctor/doctorReport';
import { loadBetterSqlite3 } from '../../../src/store/drivers/betterSqlite3Driver';
import { loadNodeSqlite } from '../../../src/store/drivers/nodeSqliteDriver';
import { SessionDatabaseError, describeDatabaseError, sqliteCodeOf } from '../../../src/store/errors';
import { contentKey } from '../../../src/store/reviews/contentKey';
import { ReviewStore } from '../../../src/store/reviews/reviewStore';
import { TraceStore } from '../../../src/store/traces/traceStore';
import { runCliCaptured } from '../../support/cliCapture';
import { makeDoctorFixture } from '../../support/doctorFixtures';
import { copyFixture, tempDir } from '../../support/tempFiles';
import { countRows } from '../../support/tableDump';

const ROOT = join(__dirname, '..', '..', '..');
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/**
 * While installed, every write transaction the driver begins (`BEGIN IMMEDIATE`, as every writer of ours does) first
 * caps its connection at the pages its file has (`PRAGMA max_page_count`, which never goes below them). On the
 * driver's class, since the connections that write are the commands' own. Returns the function that removes it.
 */
function capPagesOnWrite(): () => void {
  const proto = (
    resolveDriver() === 'better-sqlite3' ? loadBetterSqlite3().Database.prototype : loadNodeSqlite().DatabaseSync.prototype
  ) as { exec(sql: string): unknown };
  const exec = proto.exec;
  proto.exec = function (this: unknown, sql: string) {
    const result = exec.call(this, sql);
    if (/^\s*BEGIN IMMEDIATE/i.test(sql)) exec.call(this, 'PRAGMA max_page_count = 1');
    return result;
  };
  return () => {
    proto.exec = exec;
  };
}

async function withPagesCapped<T>(fn: () => Promise<T>): Promise<T> {
  const uncap = capPagesOnWrite();
  try {
    return await fn();
  } finally {
    uncap();
  }
}

/** The `--json` error a command printed. */
function jsonError(stderr: string): { code: number; name: string; problem: string | null; message: string } {
  return (JSON.parse(stderr.trim().split('\n').pop()!) as { error: ReturnType<typeof jsonError> }).error;
}

/** A JSONL export of `n` user messages of `chars` characters each: more than the pages a small file has free. */
function bigJsonl(path: string, n: number, chars: number): string {
  const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ content: `${i} ${'x'.repeat(chars)}`, role: 'user' }));
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('a full disk', function () {
  this.timeout(60_000);
  const tmp = tempDir('asi-disk-full-');
  after(() => tmp.cleanup());
  let n = 0;
  const file = (name: string) => join(tmp.dir, `${n++}-${name}`);

  describe('SQLITE_FULL', () => {
    it('is disk-full, naming the file and saying nothing was written; exit 6, and 6 as SQLite raised it', async () => {
      const path = file('raw.db');
      const db = openDatabase(path);
      let raised: unknown;
      try {
        db.exec('CREATE TABLE t (x TEXT)');
        await withPagesCapped(async () => {
          db.exec('BEGIN IMMEDIATE');
          try {
            db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(20_000));
          } catch (err) {
            raised = err;
          }
          if (db.inTransaction) db.exec('ROLLBACK');
        });
      } finally {
        db.close();
      }
      assert.equal(sqliteCodeOf(raised), 'SQLITE_FULL', String(raised));
      const described = describeDatabaseError(raised, path);
      assert.ok(described instanceof SessionDatabaseError, String(described));
      assert.equal(described.problem, 'disk-full');
      assert.ok(described.message.includes(path), described.message);
      assert.match(described.message, /disk is full.*nothing of it was written/);
      assert.equal(exitCodeOf(described), EXIT.cannotWrite);
      // The review, replay and experiment stores pass SQLite's error on as it is.
      assert.equal(exitCodeOf(raised), EXIT.cannotWrite);
      assert.equal(countRows(path, 'SELECT count(*) FROM t'), 0);
    });

    it('import: exit 6, the database named, the session not there', async () => {
      const db = file('sessions.db');
      new AdvancedSQLiteSession({ sessionId: 'other', dbPath: db, createTables: true }).close();
      const input = bigJsonl(file('big.jsonl'), 4, 10_000);
      const r = await withPagesCapped(() => runCliCaptured('import', input, '--db', db, '--session', 'big', '--json'));
      assert.equal(r.code, EXIT.cannotWrite, r.stderr);
      const e = jsonError(r.stderr);
      assert.equal(e.code, EXIT.cannotWrite);
      assert.equal(e.problem, 'disk-full');
      assert.ok(e.message.includes(db), e.message);
      assert.match(e.message, /nothing of it was written/);
      assert.equal(countRows(db, "SELECT count(*) FROM agent_messages WHERE session_id = 'big'"), 0);
      assert.equal(countRows(db, "SELECT count(*) FROM agent_sessions WHERE session_id = 'big'"), 0);
    });

    it('traces import: exit 6, the store named', async () => {
      const store = file('traces.db');
      TraceStore.open(store).close();
      const spans = Array.from({ length: 200 }, (_, i) => ({
        traceId: (Math.floor(i / 10) + 1).toString(16).padStart(32, '0'),
        spanId: (i + 1).toString(16).padStart(16, '0'),
        name: `span ${i}`,
        kind: 1,
        startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) * 1000n),
        endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) * 1000n + 500n),
        attributes: [{ key: 'note', value: { stringValue: 'z'.repeat(400) } }],
      }));
      const input = file('otlp.json');
      writeFileSync(
        input,
        JSON.stringify({
          resourceSpans: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
              scopeSpans: [{ scope: { name: 's' }, spans }],
            },
          ],
        }),
      );
      const r = await withPagesCapped(() => runCliCaptured('traces', 'import', input, '--store', store, '--json'));
      assert.equal(r.code, EXIT.cannotWrite, r.stderr);
      const e = jsonError(r.stderr);
      assert.equal(e.problem, 'disk-full');
      assert.ok(e.message.includes(store), e.message);
      assert.equal(countRows(store, 'SELECT count(*) FROM spans'), 0);
    });

    it('review import: exit 6', async () => {
      const source = ReviewStore.open(file('source-reviews.db'));
      const key = contentKey({ role: 'user', content: 'one' });
      for (let turn = 1; turn <= 10; turn++)
        source.setTurnReview(
          { sessionId: 's', branchId: 'main', turn, turnKey: key },
          { verdict: 'good', note: 'n'.repeat(9000) },
          {},
          100,
        );
      const input = file('reviews.json');
      writeFileSync(input, JSON.stringify(source.exportData()));
      source.close();
      const store = file('reviews.db');
      ReviewStore.open(store).close();
      const r = await withPagesCapped(() => runCliCaptured('review', 'import', input, '--store', store, '--json'));
      assert.equal(r.code, EXIT.cannotWrite, r.stderr);
      assert.equal(countRows(store, 'SELECT count(*) FROM turn_reviews'), 0);
    });

    it('doctor --fix: exit 6, nothing repaired, the complete backup named', async () => {
      // A missing index, whose repair creates it: a new page, since VACUUM left the file none free.
      const path = file('altered-schema.db');
      makeDoctorFixture('altered-schema', path);
      const db = openDatabase(path);
      db.exec('VACUUM');
      db.close();
      assert.equal(countRows(path, 'PRAGMA freelist_count'), 0);
      const hash = sha(path);
      const findings = findingCount(checkSessionFile(path));
      const backup = file('backup.db');
      const r = await withPagesCapped(() => runCliCaptured('doctor', path, '--fix', '--backup', backup, '--json'));
      assert.equal(r.code, EXIT.cannotWrite, r.stderr);
      const e = jsonError(r.stderr);
      assert.equal(e.problem, 'disk-full');
      assert.ok(e.message.includes(path), e.message);
      assert.match(e.message, /nothing was repaired/);
      assert.ok(e.message.includes(`stays, complete: ${backup}`), e.message);
      assert.equal(sha(path), hash);
      assert.equal(findingCount(checkSessionFile(path)), findings);
      assert.ok(existsSync(backup), 'the backup stays');
      assert.equal(findingCount(checkSessionFile(backup)), findings, 'the backup is the file as it still is');
    });
  });

  describe('what a full disk fails elsewhere', function () {
    before(function () {
      if (process.platform === 'win32') this.skip();
    });

    /** The CLI from the sources in a child process whose files may not grow past `blocks` (sh's `ulimit -f`). */
    function cliUnderFileLimit(blocks: number, ...args: string[]): { status: number | null; error: ReturnType<typeof jsonError> } {
      const r = spawnSync(
        'sh',
        [
          '-c',
          `ulimit -f ${blocks} && exec "$@"`,
          'sh',
          process.execPath,
          '--no-warnings',
          '--import',
          'tsx',
          'src/cli/main.ts',
          ...args,
          '--json',
        ],
        // No cache of tsx's: its files would meet the limit too.
        { cwd: ROOT, env: { ...process.env, TSX_DISABLE_CACHE: '1' }, encoding: 'utf8', timeout: 50_000 },
      );
      return { status: r.status, error: jsonError(r.stderr) };
    }

    it("a WAL file whose -shm the disk has no room for: the -shm named and the disk suspected, not 'Reading … failed'", () => {
      const path = copyFixture(join(ROOT, 'test', 'fixtures', 'conformance', 'ref-multisession.db'), join(tmp.dir));
      // SQLite makes a 32 KiB -shm for a reader; 16 blocks are 8 or 16 KiB.
      const { status, error } = cliUnderFileLimit(16, 'ls', path);
      assert.equal(status, EXIT.error, error.message);
      assert.equal(error.problem, 'io');
      assert.ok(error.message.startsWith(`${path}-shm`), error.message);
      assert.match(error.message, /SQLITE_IOERR_SHMSIZE\): its disk may be full/);
    });

    it("a write the file system cuts short: 'Writing … failed', the disk suspected", () => {
      const db = file('cut.db');
      new AdvancedSQLiteSession({ sessionId: 'other', dbPath: db, createTables: true }).close();
      // Room for the -shm (32 KiB), none for the -wal a 1 MB import needs.
      const { status, error } = cliUnderFileLimit(100, 'import', bigJsonl(file('cut.jsonl'), 100, 10_000), '--db', db, '--session', 'big');
      assert.equal(status, EXIT.error, error.message);
      assert.equal(error.problem, 'io');
      assert.ok(error.message.startsWith(`Writing ${db} failed`), error.message);
      assert.match(error.message, /SQLITE_IOERR_WRITE\): its disk may be full/);
      assert.equal(countRows(db, "SELECT count(*) FROM agent_messages WHERE session_id = 'big'"), 0);
    });
  });
});
