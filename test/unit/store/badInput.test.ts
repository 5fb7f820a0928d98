/**
 * Files the store cannot use as asked: a path in a missing folder, a file that is not SQLite, a truncated session
 * database, a database locked by another writer beyond the busy timeout, and a read-only file opened for writing.
 * Each must fail with a clear error (SessionDatabaseError with a problem and the path, or SQLite's own error from a
 * method, spec §11) and nothing may be half-written.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AdvancedSQLiteSession,
  SQLiteSession,
  SessionDatabaseError,
  openDatabase,
  type SessionDatabaseProblem,
  type SqliteDatabase,
} from '../../../src/store';
import { Workspace, mk, tables } from '../../support/sessionHelpers';

const sha1 = (p: string) => createHash('sha1').update(readFileSync(p)).digest('hex');

function expectDatabaseError(fn: () => unknown, problems: SessionDatabaseProblem[], path: string): SessionDatabaseError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, 'expected an error');
  const e = caught as { name?: string; message?: string; code?: unknown };
  assert.ok(
    caught instanceof SessionDatabaseError,
    `expected SessionDatabaseError (${problems.join('|')}), got ${e.name} ${String(e.code ?? '')}: ${e.message}`,
  );
  assert.ok(problems.includes(caught.problem), `problem '${caught.problem}', expected ${problems.join('|')}: ${caught.message}`);
  assert.ok(caught.message.includes(path), `the message names the path: ${caught.message}`);
  return caught;
}

/** SQLITE_BUSY as either driver reports it. */
function isBusy(err: unknown): boolean {
  const e = err as { code?: unknown; errcode?: unknown };
  return (typeof e.code === 'string' && e.code.startsWith('SQLITE_BUSY')) || (typeof e.errcode === 'number' && (e.errcode & 0xff) === 5);
}

/** SQLITE_CORRUPT (or SQLITE_NOTADB) as either driver reports it. */
function isCorrupt(err: unknown): boolean {
  const e = err as { code?: unknown; errcode?: unknown };
  if (err instanceof SessionDatabaseError) return err.problem === 'corrupt' || err.problem === 'not-sqlite';
  if (typeof e.code === 'string') return e.code.startsWith('SQLITE_CORRUPT') || e.code.startsWith('SQLITE_NOTADB');
  return typeof e.errcode === 'number' && [11, 26].includes(e.errcode & 0xff);
}

describe('bad input', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-bad-')));
  afterEach(() => ws.cleanup());

  describe('a path in a folder that does not exist', () => {
    it('fails with SessionDatabaseError (io / not-found) naming the path, creating nothing', () => {
      const folder = join(ws.dir, 'missing');
      const p = join(folder, 'session.db');
      for (const open of [
        () => new AdvancedSQLiteSession({ sessionId: 's', dbPath: p, createTables: true }),
        () => new AdvancedSQLiteSession({ sessionId: 's', dbPath: p }),
        () => new SQLiteSession({ sessionId: 's', dbPath: p }),
      ]) {
        expectDatabaseError(open, ['io', 'not-found'], p);
      }
      assert.ok(!existsSync(folder));
    });

    it('read-only: fails with not-found', () => {
      const p = join(ws.dir, 'missing', 'session.db');
      expectDatabaseError(() => new AdvancedSQLiteSession({ sessionId: 's', dbPath: p, readonly: true }), ['not-found'], p);
    });

    it('a missing file in an existing folder: read-only fails with not-found and creates nothing', () => {
      const p = ws.path('absent.db');
      expectDatabaseError(() => new AdvancedSQLiteSession({ sessionId: 's', dbPath: p, readonly: true }), ['not-found'], p);
      assert.ok(!existsSync(p));
    });
  });

  describe('a file that is not SQLite', () => {
    it('fails with not-sqlite for every way of opening, leaving the file as it was', () => {
      const p = ws.path('notes.db');
      const text = 'These are my notes, not a database.\n'.repeat(50);
      writeFileSync(p, text);
      for (const open of [
        () => new AdvancedSQLiteSession({ sessionId: 's', dbPath: p, createTables: true }),
        () => new AdvancedSQLiteSession({ sessionId: 's', dbPath: p }),
        () => new AdvancedSQLiteSession({ sessionId: 's', dbPath: p, readonly: true }),
        () => new SQLiteSession({ sessionId: 's', dbPath: p }),
      ]) {
        expectDatabaseError(open, ['not-sqlite'], p);
      }
      assert.equal(readFileSync(p, 'utf8'), text);
    });

    it('a short text file fails the same way', () => {
      const p = ws.path('short.txt');
      writeFileSync(p, 'hi');
      expectDatabaseError(() => new AdvancedSQLiteSession({ sessionId: 's', dbPath: p, createTables: true }), ['not-sqlite', 'corrupt'], p);
      assert.equal(readFileSync(p, 'utf8'), 'hi');
    });
  });

  describe('a truncated session database', () => {
    async function truncated(): Promise<{ p: string; hash: string }> {
      const p = ws.path('big.db');
      const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p, createTables: true });
      for (let i = 0; i < 150; i++) {
        await s.addItems([mk.user(`question ${i} ${'x'.repeat(400)}`), mk.assistant(`answer ${i} ${'y'.repeat(400)}`)]);
      }
      s.close(); // checkpoints the WAL into the file
      const size = statSync(p).size;
      assert.ok(size > 100_000, `size ${size}`);
      truncateSync(p, Math.floor(size / 2));
      return { p, hash: sha1(p) };
    }

    it('fails clearly at open or on the first read, for writing and read-only, and the file is not modified', async () => {
      const { p, hash } = await truncated();
      for (const readonly of [false, true]) {
        let session: AdvancedSQLiteSession | undefined;
        try {
          session = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p, readonly });
        } catch (err) {
          expectDatabaseError(
            () => {
              throw err;
            },
            ['corrupt'],
            p,
          );
          continue;
        }
        try {
          let failure: unknown;
          try {
            await session.getItems();
            await session.getConversationTurns();
            await session.listBranches();
          } catch (err) {
            failure = err;
          }
          assert.ok(failure !== undefined, 'reading a truncated file must not succeed silently');
          assert.ok(isCorrupt(failure), `expected a corruption error, got ${String(failure)}`);
        } finally {
          session.close();
        }
      }
      assert.equal(sha1(p), hash);
    });
  });

  describe('a database locked by another writer beyond the busy timeout', () => {
    let holder: SqliteDatabase | undefined;
    afterEach(() => {
      if (holder?.inTransaction) holder.exec('ROLLBACK');
      holder?.close();
      holder = undefined;
    });

    let logged: string[] = [];
    async function lockedFile(): Promise<{ p: string; session: AdvancedSQLiteSession }> {
      const p = ws.path('locked.db');
      logged = [];
      const session = ws.open({ dbPath: p, busyTimeoutMs: 200, logger: { error: (m) => void logged.push(m), warn: () => undefined } });
      await session.addItems([mk.user('q1'), mk.assistant('a1')]);
      holder = openDatabase(p);
      holder.exec('BEGIN EXCLUSIVE');
      return { p, session };
    }

    it('opening a session for writing fails with SessionDatabaseError locked, after about the busy timeout', async () => {
      const { p } = await lockedFile();
      for (const createTables of [false, true]) {
        const started = Date.now();
        expectDatabaseError(
          () => new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p, createTables, busyTimeoutMs: 200 }),
          ['locked'],
          p,
        );
        const waited = Date.now() - started;
        assert.ok(waited >= 150 && waited < 4000, `waited ${waited} ms`);
      }
    });

    it('write methods fail with SQLite BUSY (passed through) and write nothing', async () => {
      const { p, session } = await lockedFile();
      const before = tables(p);
      const calls: [string, () => Promise<unknown>][] = [
        ['addItems', () => session.addItems([mk.user('never stored')])],
        ['popItem', () => session.popItem()],
        ['clearSession', () => session.clearSession()],
        ['createBranchFromTurn', () => session.createBranchFromTurn(1, 'b')],
        ['switchToBranch', () => session.switchToBranch('main')],
      ];
      for (const [name, call] of calls) {
        let failure: unknown;
        try {
          await call();
        } catch (err) {
          failure = err;
        }
        assert.ok(failure !== undefined, `${name} must fail while the file is locked`);
        assert.ok(
          isBusy(failure) || (failure instanceof SessionDatabaseError && failure.problem === 'locked'),
          `${name}: expected SQLITE_BUSY, got ${String(failure)}`,
        );
        assert.equal(session.getCurrentBranchId(), 'main', name);
      }
      holder?.exec('ROLLBACK');
      assert.deepEqual(tables(p), before, 'nothing was half-written');
      // The session works again once the lock is gone.
      await session.addItems([mk.user('q2')]);
      assert.equal((await session.getItems()).length, 3);
    });

    it('storeRunUsage does not throw; it logs the failure and writes nothing', async () => {
      const { p, session } = await lockedFile();
      const before = tables(p);
      await session.storeRunUsage({ state: { usage: { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 } } });
      assert.equal(logged.length, 1);
      assert.equal(logged[0], 'Failed to store session usage');
      holder?.exec('ROLLBACK');
      assert.deepEqual(tables(p), before);
    });

    it('reads keep working during the lock (WAL), and a read-only session opens', async () => {
      const { p, session } = await lockedFile();
      assert.equal((await session.getItems()).length, 2);
      assert.equal((await session.listBranches()).length, 1);
      const ro = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p, readonly: true, busyTimeoutMs: 200 }));
      assert.deepEqual(await ro.getItems(), [mk.user('q1'), mk.assistant('a1')]);
    });
  });

  describe('a read-only file opened for writing', function () {
    // Root writes through chmod 0444, so the file's owner must differ from the process: a child process drops to
    // `nobody` (when root) before opening it; otherwise the file (and folder) are simply made read-only.
    this.timeout(60000);
    const ROOT = process.getuid?.() === 0;
    let rw: Workspace;
    const CHILD = join(__dirname, '..', '..', 'support', 'readOnlyChild.ts');

    interface Outcome {
      ok: boolean;
      value?: unknown;
      name?: string;
      problem?: string;
      message?: string;
      code?: unknown;
    }
    interface ChildReport {
      uid: number;
      openForWriting: Outcome;
      openForWritingCreateTables: Outcome;
      plainForWriting: Outcome;
      openReadOnly: Outcome;
      getItems?: Outcome;
      listBranches?: Outcome;
      writes?: Record<string, Outcome>;
      usageErrors?: string[];
      getItemsAfter?: Outcome;
    }

    async function sessionFile(dir: string): Promise<string> {
      const p = join(dir, 'ro.db');
      const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p, createTables: true });
      await s.addItems([mk.user('q1'), mk.assistant('a1'), mk.user('q2')]);
      await s.createBranchFromTurn(2, 'alt');
      await s.addItems([mk.user('alt q2')]);
      s.close();
      return p;
    }

    function runChild(p: string): ChildReport {
      const out = execFileSync(process.execPath, ['--no-warnings', '--import', 'tsx', CHILD, p], {
        cwd: join(__dirname, '..', '..', '..'),
        encoding: 'utf8',
        timeout: 45000,
        env: process.env,
      });
      return JSON.parse(out) as ChildReport;
    }

    function assertReadOnlyOpenError(o: Outcome, p: string, what: string): void {
      assert.equal(o.ok, false, `${what}: opening a read-only file for writing must fail`);
      assert.equal(o.name, 'SessionDatabaseError', `${what}: got ${o.name} ${String(o.code ?? '')}: ${o.message}`);
      assert.equal(o.problem, 'read-only', `${what}: ${o.message}`);
      assert.ok(o.message?.includes(p), `${what}: the message names the path: ${o.message}`);
      assert.match(o.message ?? '', /read-only|readonly/i);
    }

    describe('in a folder the user can write', () => {
      let p: string;
      let hash: string;
      let report: ChildReport;
      before(async function () {
        rw = new Workspace('asi-ro-');
        chmodSync(rw.dir, 0o1777);
        p = await sessionFile(rw.dir);
        if (ROOT) chmodSync(p, 0o644);
        else chmodSync(p, 0o444);
        hash = sha1(p);
        report = runChild(p);
      });
      after(() => {
        chmodSync(rw.dir, 0o700);
        rw.cleanup();
      });
      it('runs the child without write permission on the file', () => {
        if (ROOT) assert.equal(report.uid, 65534);
      });

      it('opening for writing fails with SessionDatabaseError read-only (AdvancedSQLiteSession)', () => {
        assertReadOnlyOpenError(report.openForWriting, p, 'createTables: false');
      });

      it('opening with createTables: true fails with SessionDatabaseError read-only', () => {
        assertReadOnlyOpenError(report.openForWritingCreateTables, p, 'createTables: true');
      });

      it('opening a SQLiteSession for writing fails with SessionDatabaseError read-only', () => {
        assertReadOnlyOpenError(report.plainForWriting, p, 'SQLiteSession');
      });

      it('readonly: true opens and reads', () => {
        assert.equal(report.openReadOnly.ok, true, report.openReadOnly.message);
        assert.deepEqual(report.getItems?.value, [mk.user('q1'), mk.assistant('a1'), mk.user('q2')]);
        assert.deepEqual(((report.listBranches?.value as string[]) ?? []).slice().sort(), ['alt', 'main']);
      });

      it('write methods of the read-only session fail; storeRunUsage only logs; the file is unchanged', () => {
        for (const name of ['addItems', 'popItem', 'clearSession', 'createBranchFromTurn', 'switchToBranch', 'deleteBranch']) {
          const o = report.writes?.[name];
          assert.equal(o?.ok, false, `${name} must fail on a read-only session`);
          assert.match(o?.message ?? '', /read-?only/i, `${name}: ${o?.message}`);
        }
        assert.equal(report.writes?.storeRunUsage?.ok, true);
        assert.deepEqual(report.usageErrors, ['Failed to store session usage']);
        assert.deepEqual(report.getItemsAfter?.value, report.getItems?.value);
        assert.equal(sha1(p), hash);
        const wal = `${p}-wal`;
        if (existsSync(wal)) assert.equal(statSync(wal).size, 0, 'nothing went to the WAL either');
      });
    });

    describe('in a folder the user cannot write either', () => {
      let p: string;
      let hash: string;
      let report: ChildReport;
      before(async function () {
        rw = new Workspace('asi-ro2-');
        p = await sessionFile(rw.dir);
        chmodSync(p, ROOT ? 0o644 : 0o444);
        chmodSync(rw.dir, ROOT ? 0o755 : 0o555);
        hash = sha1(p);
        report = runChild(p);
      });
      after(() => {
        chmodSync(rw.dir, 0o700);
        rw.cleanup();
      });

      it('opening for writing fails with SessionDatabaseError read-only', () => {
        assertReadOnlyOpenError(report.openForWriting, p, 'createTables: false');
        assertReadOnlyOpenError(report.plainForWriting, p, 'SQLiteSession');
        assert.equal(sha1(p), hash);
      });

      it('readonly: true reads the file, or fails with an accurate message (not "open it read-only")', () => {
        const o = report.openReadOnly;
        if (o.ok) {
          assert.deepEqual(report.getItems?.value, [mk.user('q1'), mk.assistant('a1'), mk.user('q2')]);
        } else {
          assert.equal(o.name, 'SessionDatabaseError', o.message);
          assert.ok(o.message?.includes(p), o.message);
          assert.doesNotMatch(o.message ?? '', /open it read-only/i, 'the session was already opened read-only');
          assert.match(o.message ?? '', /folder|director/i, 'the cause is the folder');
        }
        assert.equal(sha1(p), hash);
      });
    });
  });
});
