/**
 * The store under things other programs do to its file: drop the optional tables, store ids with U+0000, delete the
 * file or rename another over it while it is open, open it read-only, hand it a database that is not a session
 * database, and open a new file from several processes at the same instant. Each must end in a clear error or in
 * success, never in a loop, a lost write or a changed file.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import {
  AdvancedSQLiteSession,
  SQLiteSession,
  SessionDatabaseError,
  TableOwnershipError,
  openDatabase,
  type SessionDatabaseProblem,
} from '../../../src/store';
import { runSupportScript } from '../../support/childProcess';
import { NUL_BRANCH, NUL_SESSION, writeControlCharFile } from '../../support/controlCharFile';
import { Workspace, captureLogger, execSql, mk, query, rejectsWith } from '../../support/sessionHelpers';
import { nextTimestampTick } from '../../support/staleWal';
import { tempDir } from '../../support/tempFiles';

const sha256 = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex').toUpperCase();

function journalMode(p: string): string {
  const db = openDatabase(p, { readonly: true });
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get(); // read the header first: it says whether the file is WAL
    return String(db.prepare('PRAGMA journal_mode').get<{ journal_mode: string }>()?.journal_mode);
  } finally {
    db.close();
  }
}

async function expectProblem(
  fn: () => unknown,
  problem: SessionDatabaseProblem,
  path: string,
  remedy: RegExp,
): Promise<SessionDatabaseError> {
  const err = await rejectsWith(fn, SessionDatabaseError, /./);
  const e = err as SessionDatabaseError;
  assert.equal(e.problem, problem, e.message);
  assert.ok(e.message.includes(path), `the message names the path: ${e.message}`);
  assert.match(e.message, remedy);
  return e;
}

describe('store reliability', () => {
  let ws: Workspace;
  beforeEach(() => (ws = new Workspace('asi-reliable-')));
  afterEach(() => ws.cleanup());

  async function threeTurns(options: Parameters<Workspace['open']>[0] = {}): Promise<AdvancedSQLiteSession> {
    const s = ws.open(options);
    await s.addItems([mk.user('q1'), mk.assistant('a1'), mk.user('q2'), mk.assistant('a2'), mk.user('q3'), mk.assistant('a3')]);
    return s;
  }

  describe('§8.4: table existence is checked per call, never cached', () => {
    it('default reads keep working after another connection drops session_clear_generations', async () => {
      const logger = captureLogger();
      const s = await threeTurns({ logger });
      await s.createBranchFromTurn(3, 'alt');
      await s.getItems(); // the instance has seen the table
      execSql(ws.path(), 'DROP TABLE session_clear_generations');
      assert.equal((await s.getItems()).length, 4);
      assert.equal((await s.listBranches()).length, 2);
      assert.equal((await s.getConversationTurns()).length, 2);
      assert.deepEqual(await s.getTurnUsage(), []);
      assert.equal((await s.getToolUsage()).length, 0);
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.deepEqual(logger.errors, []);
      assert.equal((await s.getTurnUsage()).length, 1);
      assert.equal(s.getCurrentBranchId(), 'alt', 'no table means no clear: the pointer stays');
    });

    it('the next write creates the table again and goes on', async () => {
      const s = await threeTurns();
      await s.addItems([mk.user('q4')]);
      execSql(ws.path(), 'DROP TABLE session_clear_generations');
      await s.addItems([mk.user('q5')]);
      assert.deepEqual(query(ws.path(), 'SELECT session_id, generation FROM session_clear_generations'), [
        { session_id: 's1', generation: 0 },
      ]);
      await s.switchToBranch('main');
      await s.clearSession();
      assert.deepEqual(query(ws.path(), 'SELECT generation FROM session_clear_generations'), [{ generation: 1 }]);
    });

    it('popItem and branch creation keep working after another connection drops branch_reservations', async () => {
      const s = await threeTurns();
      await s.popItem(); // the instance has seen the table
      await s.createBranchFromTurn(2, 'alt');
      execSql(ws.path(), 'DROP TABLE branch_reservations');
      assert.deepEqual(await s.popItem(), mk.assistant('a1'));
      await s.switchToBranch('main');
      await s.createBranchFromTurn(3, 'other');
      await s.deleteBranch('alt');
      assert.deepEqual(
        query<{ branch_id: string }>(ws.path(), 'SELECT branch_id FROM branch_reservations ORDER BY rowid').map((r) => r.branch_id),
        ['alt', 'main', 'other'],
      );
    });

    it('a table another connection drops and re-creates is used again', async () => {
      const s = await threeTurns();
      await s.clearSession();
      await s.addItems([mk.user('again')]);
      execSql(ws.path(), 'DROP TABLE session_clear_generations');
      assert.equal((await s.getItems()).length, 1);
      const b = ws.open({ createTables: false });
      await b.clearSession(); // creates it again, generation 1
      assert.deepEqual(await s.getItems(), []);
      assert.equal(s.getCurrentBranchId(), 'main');
    });
  });

  describe('§12 f: ids holding U+0000, written by another program', function () {
    this.timeout(90000);

    for (const sessionId of ['s1', NUL_SESSION]) {
      it(`every write that walks branch ids ends quickly (session ${JSON.stringify(sessionId)}), in a child process`, async () => {
        const p = ws.path();
        await writeControlCharFile(p, ['s1', NUL_SESSION]);
        const run = runSupportScript('controlCharIdsChild.ts', [p, JSON.stringify(sessionId)], 30000);
        const result = await run.done;
        const records = result.stdout
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { step: string; phase: string; ok?: boolean; ms?: number; value?: unknown; error?: string });
        const started = records.filter((r) => r.phase === 'start').map((r) => r.step);
        const done = records.filter((r) => r.phase === 'done');
        assert.ok(!result.timedOut, `the child did not finish in 30 s; it hung in '${started[started.length - 1]}'`);
        assert.equal(result.code, 0, result.stderr);
        for (const r of done) {
          assert.equal(r.ok, true, `${r.step}: ${r.error}`);
          assert.ok((r.ms ?? 0) < 5000, `${r.step} took ${r.ms} ms`);
        }
        assert.deepEqual(
          done.map((r) => r.step),
          [...started, 'end'],
          'every step ran',
        );
        const branches = done.find((r) => r.step === 'listBranches')?.value as string[];
        assert.deepEqual([...branches].sort(), ['a', NUL_BRANCH, 'main'].sort(), 'listBranches shows the ids whole');
        const reserved = query<{ h: string }>(
          p,
          'SELECT hex(branch_id) AS h FROM branch_reservations WHERE session_id = CAST(? AS TEXT)',
          Buffer.from(sessionId),
        ).map((r) => r.h);
        assert.ok(reserved.includes(hex(NUL_BRANCH)), `the backfill reserved ${JSON.stringify(NUL_BRANCH)} whole: ${reserved.join(', ')}`);
        assert.ok(reserved.includes(hex('a')), 'and a');
      });
    }

    it('listBranches and switchToBranch keep a\\u0000b apart from a (in this process)', async () => {
      const p = ws.path();
      await writeControlCharFile(p, ['s1']);
      const s = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p }));
      const branches = await s.listBranches();
      assert.deepEqual(
        branches.map((b) => [b.branchId, b.messageCount]).sort(),
        [
          ['a', 6],
          ['main', 5],
          [NUL_BRANCH, 5],
        ].sort(),
      );
      await s.switchToBranch(NUL_BRANCH);
      assert.equal((await s.listBranches()).find((b) => b.isCurrent)?.branchId, NUL_BRANCH);
      assert.equal((await s.getItems()).length, 5);
    });
  });

  describe('a file deleted or replaced while open', () => {
    async function otherDatabase(name: string): Promise<string> {
      const p = ws.path(name);
      const o = new AdvancedSQLiteSession({ sessionId: 'other', dbPath: p, createTables: true });
      await o.addItems([mk.user('the new file')]);
      o.close();
      return p;
    }

    const writes = (s: AdvancedSQLiteSession): [string, () => Promise<unknown>][] => [
      ['addItems', () => s.addItems([mk.user('lost')])],
      ['popItem', () => s.popItem()],
      ['clearSession', () => s.clearSession()],
      ['createBranchFromTurn', () => s.createBranchFromTurn(2, 'b')],
      ['switchToBranch', () => s.switchToBranch('main')],
      ['deleteBranch', () => s.deleteBranch('alt')],
    ];

    it('replaced (another database renamed over the path): the session steps aside, every call throws replaced, the new file is untouched and opens', async () => {
      const live = ws.path('live.db');
      const logger = captureLogger();
      const s = await threeTurns({ dbPath: live, logger });
      await s.createBranchFromTurn(3, 'alt');
      await s.switchToBranch('main');
      const other = await otherDatabase('other.db');
      await nextTimestampTick();
      renameSync(other, live);
      const newFile = sha256(live);
      assert.ok(statSync(`${live}-wal`).size > 32, "the old file's committed frames are in the -wal at the path");
      for (const [name, call] of writes(s)) {
        const e = await expectProblem(call, 'replaced', live, /Reopen the file to use the new one/);
        assert.ok(e.message.includes('nothing was read or written'), `${name}: ${e.message}`);
      }
      // Reads refuse too: they would show the old file.
      await expectProblem(() => s.getItems(), 'replaced', live, /Reopen the file/);
      await expectProblem(() => s.listBranches(), 'replaced', live, /Reopen the file/);
      await s.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.equal(logger.errors.length, 1, 'storeRunUsage logs and does not throw');
      assert.ok(logger.errors[0]?.err instanceof SessionDatabaseError);
      assert.equal(sha256(live), newFile, 'nothing was written to the new file');
      // The session checkpointed its own -wal into its old file: the path's -wal no longer hides the new file.
      assert.equal(statSync(`${live}-wal`).size, 0);
      const fresh = ws.track(new AdvancedSQLiteSession({ sessionId: 'other', dbPath: live }));
      assert.deepEqual(
        (await fresh.getItems()).map((i) => (i as { content?: unknown }).content),
        ['the new file'],
      );
    });

    it('deleted: every write throws SessionDatabaseError deleted, and nothing appears at the path', async () => {
      const live = ws.path('live.db');
      const s = await threeTurns({ dbPath: live });
      await s.createBranchFromTurn(3, 'alt');
      await s.switchToBranch('main');
      unlinkSync(live);
      for (const [name, call] of writes(s)) {
        const e = await expectProblem(call, 'deleted', live, /deleted or moved/);
        assert.ok(e.message.includes('nothing was written'), `${name}: ${e.message}`);
      }
      assert.equal(existsSync(live), false);
    });

    it('SQLiteSession refuses the same way', async () => {
      const live = ws.path('plain.db');
      const s = ws.track(new SQLiteSession({ sessionId: 'p', dbPath: live }));
      await s.addItems([mk.user('one')]);
      const other = await otherDatabase('other.db');
      await nextTimestampTick();
      renameSync(other, live);
      const before = sha256(live);
      await expectProblem(() => s.addItems([mk.user('lost')]), 'replaced', live, /Reopen the file/);
      await expectProblem(() => s.popItem(), 'replaced', live, /Reopen the file/);
      await expectProblem(() => s.clearSession(), 'replaced', live, /Reopen the file/);
      await expectProblem(() => s.getItems(), 'replaced', live, /Reopen the file/);
      assert.equal(sha256(live), before);
      assert.equal(statSync(`${live}-wal`).size, 0, 'its -wal went into its old file');
      // Stepped aside for good: even with the path gone, it says what happened to it.
      unlinkSync(live);
      await expectProblem(() => s.addItems([mk.user('lost')]), 'replaced', live, /Reopen the file/);
    });

    it('a restored file (renamed back) is written again', async () => {
      const live = ws.path('live.db');
      const s = await threeTurns({ dbPath: live });
      const aside = ws.path('aside.db');
      renameSync(live, aside);
      await expectProblem(() => s.addItems([mk.user('lost')]), 'deleted', live, /deleted or moved/);
      renameSync(aside, live);
      await s.addItems([mk.user('q4')]);
      assert.equal((await s.getItems()).length, 7);
    });
  });

  describe('writes on a readonly: true session', () => {
    it('throw SessionDatabaseError read-only on both session classes before touching anything', async () => {
      (await threeTurns()).close();
      const hash = sha256(ws.path());
      const logger = captureLogger();
      const ro = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: ws.path(), readonly: true, logger }));
      const calls: [string, () => Promise<unknown>][] = [
        ['addItems', () => ro.addItems([mk.user('no')])],
        ['popItem', () => ro.popItem()],
        ['clearSession', () => ro.clearSession()],
        ['createBranchFromTurn', () => ro.createBranchFromTurn(2, 'x')],
        ['createBranchFromContent', () => ro.createBranchFromContent('q2', 'y')],
        ['switchToBranch', () => ro.switchToBranch('main')],
        ['deleteBranch', () => ro.deleteBranch('alt')],
      ];
      for (const [name, call] of calls) {
        const e = await expectProblem(call, 'read-only', ws.path(), /readonly: true/);
        assert.ok(e.message.length > 0, name);
      }
      await ro.storeRunUsage({ state: { usage: { requests: 1 } } });
      assert.equal(logger.errors.length, 1);
      assert.ok(logger.errors[0]?.err instanceof SessionDatabaseError && logger.errors[0].err.problem === 'read-only');
      assert.equal((await ro.getItems()).length, 6, 'reads still work');
      assert.equal(ro.getCurrentBranchId(), 'main');

      const plain = ws.track(new SQLiteSession({ sessionId: 's1', dbPath: ws.path(), readonly: true }));
      await expectProblem(() => plain.addItems([mk.user('no')]), 'read-only', ws.path(), /readonly: true/);
      await expectProblem(() => plain.popItem(), 'read-only', ws.path(), /readonly: true/);
      await expectProblem(() => plain.clearSession(), 'read-only', ws.path(), /readonly: true/);
      ro.close();
      plain.close();
      assert.equal(sha256(ws.path()), hash);
    });
  });

  describe('§12 h: a constructor that fails changes nothing', () => {
    function usersDatabase(): string {
      const p = ws.path('users.db');
      const db = openDatabase(p);
      db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada'), ('grace')");
      db.close();
      return p;
    }

    it('a database with only a users table: TableOwnershipError, same bytes, same journal mode', () => {
      const p = usersDatabase();
      assert.equal(journalMode(p), 'delete');
      const hash = sha256(p);
      assert.throws(() => new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p }), TableOwnershipError);
      assert.equal(sha256(p), hash, 'the file was rewritten');
      assert.equal(journalMode(p), 'delete');
      assert.equal(existsSync(`${p}-wal`), false);
    });

    it('createTables: true on a file claimed by other base tables: TableOwnershipError, same bytes, same journal mode', () => {
      const p = ws.path('claimed.db');
      new AdvancedSQLiteSession({
        sessionId: 's1',
        dbPath: p,
        createTables: true,
        sessionsTable: 'first_sessions',
        messagesTable: 'first_messages',
      }).close();
      const db = openDatabase(p);
      db.prepare('PRAGMA journal_mode = DELETE').get();
      db.close();
      const hash = sha256(p);
      assert.throws(
        () =>
          new AdvancedSQLiteSession({
            sessionId: 's1',
            dbPath: p,
            createTables: true,
            sessionsTable: 'second_sessions',
            messagesTable: 'second_messages',
          }),
        TableOwnershipError,
      );
      assert.equal(sha256(p), hash);
      assert.equal(journalMode(p), 'delete');
    });

    it('a successful open still switches an existing file to WAL (createTables: true and false)', async () => {
      const p = usersDatabase();
      const s = ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p, createTables: true }));
      await s.addItems([mk.user('hello')]);
      s.close();
      assert.equal(journalMode(p), 'wal');
      const db = openDatabase(p);
      db.prepare('PRAGMA journal_mode = DELETE').get();
      db.close();
      ws.track(new AdvancedSQLiteSession({ sessionId: 's1', dbPath: p })).close();
      assert.equal(journalMode(p), 'wal');
      assert.deepEqual(query(p, 'SELECT name FROM users ORDER BY id'), [{ name: 'ada' }, { name: 'grace' }]);
    });
  });

  describe('opening a new file from several processes at the same instant', function () {
    this.timeout(120000);
    const CHILDREN = 8;
    const ROUNDS = 20;
    const GAP_MS = 150;

    it(`${CHILDREN} processes × ${ROUNDS} rounds, each round a fresh file opened with createTables: true: all succeed`, async () => {
      const { dir, cleanup } = tempDir('asi-open-race-');
      try {
        const runs = Array.from({ length: CHILDREN }, (_, i) =>
          runSupportScript('concurrentOpener.ts', [dir, String(ROUNDS), String(GAP_MS), `p${i}`], 100000),
        );
        await Promise.all(runs.map((r) => r.waitForLine('ready')));
        const start = Date.now() + 300;
        for (const r of runs) r.child.stdin.end(`${start}\n`);
        const results = await Promise.all(runs.map((r) => r.done));
        const failures: string[] = [];
        results.forEach((r, i) => {
          assert.ok(!r.timedOut, `child ${i} did not finish`);
          assert.equal(r.code, 0, r.stderr);
          const outcomes = JSON.parse(r.stdout.trim().split('\n').pop() as string) as {
            round: number;
            ok: boolean;
            ms: number;
            error?: string;
          }[];
          assert.equal(outcomes.length, ROUNDS);
          for (const o of outcomes) if (!o.ok) failures.push(`p${i} round ${o.round} after ${o.ms} ms: ${o.error}`);
        });
        assert.deepEqual(failures, [], `${failures.length} of ${CHILDREN * ROUNDS} opens failed`);
        for (let round = 0; round < ROUNDS; round++) {
          const p = join(dir, `round-${round}.db`);
          assert.equal(journalMode(p), 'wal');
          assert.deepEqual(
            query<{ n: number }>(p, 'SELECT COUNT(DISTINCT session_id) AS n FROM agent_messages').map((r) => Number(r.n)),
            [CHILDREN],
          );
        }
      } finally {
        cleanup();
      }
    });
  });
});
