/**
 * `doctor --fix` (issue 45): each repairable kind's fixture passes the doctor afterwards and reads back as expected
 * through the session API; the backup is the file before the repair and opens; reported-only kinds, a file that
 * fails integrity_check and a clean file are left byte for byte; a backup path that exists or is the file is refused.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdvancedSQLiteSession, openDatabase } from '../../../../src/store';
import { checkSessionFile, findingCount } from '../../../../src/store/doctor/doctorReport';
import { ADDED_OUTPUT_TEXT, type FindingKind } from '../../../../src/store/doctor/findingKinds';
import { repairSessionFile } from '../../../../src/store/doctor/repairs';
import { SessionDatabaseError } from '../../../../src/store/errors';
import { OutputFileError } from '../../../../src/store/files/outputFileError';
import { makeDoctorFixture } from '../../../support/doctorFixtures';
import { copyWithHotJournal } from '../../../support/hotJournal';
import { tempDir } from '../../../support/tempFiles';
import { countRows } from '../../../support/tableDump';

const holder = join(__dirname, '..', '..', '..', 'support', 'lockHolder.ts');

/** A child process that holds the file's write lock for `ms`; resolves once it holds it. */
async function holdLock(dbPath: string, ms: number): Promise<{ child: ChildProcess; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', holder, dbPath, String(ms)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: join(__dirname, '..', '..', '..', '..'),
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
    void exited.then((code) => reject(new Error(`lock holder exited (${code}) before locking: ${stderr}`)));
  });
  return { child, exited };
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

async function items(file: string, session: string, branch: string): Promise<unknown[]> {
  const s = new AdvancedSQLiteSession({ sessionId: session, dbPath: file });
  try {
    return await s.getItems(null, branch);
  } finally {
    s.close();
  }
}

describe('doctor: repairs', () => {
  const tmp = tempDir('asi-doctor-fix-');
  after(() => tmp.cleanup());
  let n = 0;
  const fixture = (kind: FindingKind) => {
    const file = join(tmp.dir, `${n++}-${kind}.db`);
    makeDoctorFixture(kind, file);
    return file;
  };

  for (const kind of ['turn-zero-usage', 'orphan-usage', 'orphan-messages', 'dangling-tool-call'] as const) {
    it(`repairs ${kind}: the file passes the doctor, the backup holds the file as it was`, async () => {
      const file = fixture(kind);
      const before = checkSessionFile(file);
      const aliceMain = await items(file, 'alice', 'main');
      const backup = join(tmp.dir, `${n}-${kind}.backup.db`);
      const outcome = repairSessionFile(file, { backup });
      assert.equal(outcome.backup, backup);
      assert.equal(findingCount(outcome.after), 0);
      assert.equal(findingCount(checkSessionFile(file)), 0);
      // The backup opens and is the file before the repair: the same findings.
      assert.ok(existsSync(backup));
      assert.deepEqual(checkSessionFile(backup).totals, before.totals);
      // What branches show is unchanged, except the added output.
      assert.deepEqual(await items(file, 'alice', 'main'), aliceMain);
    });
  }

  it('deletes exactly the usage rows no turn holds', () => {
    const file = fixture('turn-zero-usage');
    const rows = countRows(file, 'SELECT COUNT(*) FROM turn_usage');
    const outcome = repairSessionFile(file, { backup: join(tmp.dir, 'u.backup.db') });
    assert.equal(outcome.counts.usageRowsDeleted, 1);
    assert.equal(countRows(file, 'SELECT COUNT(*) FROM turn_usage'), rows - 1);
    assert.equal(countRows(file, "SELECT COUNT(*) FROM turn_usage WHERE branch_id = 'fresh'"), 0);
  });

  it('deletes only messages no structure row references; every branch reads the same', async () => {
    const file = fixture('orphan-messages');
    const alt = await items(file, 'alice', 'alt');
    const messages = countRows(file, 'SELECT COUNT(*) FROM agent_messages');
    const outcome = repairSessionFile(file, { backup: join(tmp.dir, 'm.backup.db') });
    assert.equal(outcome.counts.messagesDeleted, 2);
    assert.equal(countRows(file, 'SELECT COUNT(*) FROM agent_messages'), messages - 2);
    assert.equal(countRows(file, 'SELECT COUNT(*) FROM agent_messages WHERE id IN (9, 10)'), 0);
    assert.deepEqual(await items(file, 'alice', 'alt'), alt);
  });

  it("closes a dangling call with an output that says the doctor added it, in Python's JSON", async () => {
    const file = fixture('dangling-tool-call');
    const outcome = repairSessionFile(file, { backup: join(tmp.dir, 'd.backup.db') });
    assert.equal(outcome.counts.outputsAdded, 1);
    const s = new AdvancedSQLiteSession({ sessionId: 'bob', dbPath: file });
    try {
      const stored = await s.getStoredItems(null, 'main');
      assert.deepEqual(stored.at(-1), { type: 'function_call_output', call_id: 'call_b9', output: ADDED_OUTPUT_TEXT });
      assert.equal((stored.at(-2) as { call_id: string }).call_id, 'call_b9');
      const turns = await s.getConversationByTurns('main');
      assert.deepEqual(
        turns.get(2)!.map((t) => t.type),
        ['user', 'function_call', 'function_call_output'],
      );
    } finally {
      s.close();
    }
    const db = openDatabase(file, { readonly: true });
    try {
      const row = db
        .prepare(
          `SELECT m.message_data, s.sequence_number, s.user_turn_number, s.branch_turn_number, s.tool_name
           FROM message_structure s JOIN agent_messages m ON m.id = s.message_id WHERE s.session_id = 'bob' ORDER BY s.sequence_number DESC LIMIT 1`,
        )
        .get<Record<string, unknown>>()!;
      assert.deepEqual(
        {
          ...row,
          sequence_number: Number(row.sequence_number),
          user_turn_number: Number(row.user_turn_number),
          branch_turn_number: Number(row.branch_turn_number),
        },
        {
          message_data: `{"type": "function_call_output", "call_id": "call_b9", "output": "${ADDED_OUTPUT_TEXT}"}`,
          sequence_number: 5,
          user_turn_number: 2,
          branch_turn_number: 2,
          tool_name: null,
        },
      );
    } finally {
      db.close();
    }
  });

  for (const kind of ['empty-main', 'blank-branch-id', 'integrity-check'] as const) {
    it(`leaves ${kind} (reported only) byte for byte, with no backup`, () => {
      const file = fixture(kind);
      const hash = sha(file);
      const backup = join(tmp.dir, `${n}-${kind}.backup.db`);
      const outcome = repairSessionFile(file, { backup });
      assert.equal(outcome.backup, null);
      assert.equal(findingCount(outcome.after), findingCount(outcome.before));
      assert.ok(findingCount(outcome.after) > 0);
      assert.equal(sha(file), hash);
      assert.equal(existsSync(backup), false);
    });
  }

  it("repairs only the targeted finding (VS Code's Quick Fix), leaving the others of its kind and session", () => {
    const file = fixture('turn-zero-usage');
    const db = openDatabase(file, { fileMustExist: true });
    try {
      // A second turn-0 row on another empty branch, and an orphan-usage row: the same repair's condition holds both.
      const insert = db.prepare(
        `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens)
         VALUES ('alice', ?, ?, 1, 5, 5, 10)`,
      );
      insert.run('other', 0);
      insert.run('main', 9);
    } finally {
      db.close();
    }
    const target = { kind: 'turn-zero-usage', session: 'alice', branch: 'fresh', turn: 0 } as const;
    const outcome = repairSessionFile(file, { backup: join(tmp.dir, 'target.backup.db'), target });
    assert.equal(outcome.counts.usageRowsDeleted, 1);
    assert.equal(countRows(file, "SELECT COUNT(*) FROM turn_usage WHERE branch_id = 'fresh'"), 0);
    assert.deepEqual(outcome.after.totals, { 'turn-zero-usage': 1, 'orphan-usage': 1 });
    assert.equal(outcome.after.session, 'alice');

    // A target no finding matches repairs nothing and makes no backup.
    const hash = sha(file);
    const none = join(tmp.dir, 'target-none.backup.db');
    const missed = repairSessionFile(file, { backup: none, target: { kind: 'orphan-messages', session: 'alice' } });
    assert.equal(missed.backup, null);
    assert.equal(sha(file), hash);
    assert.equal(existsSync(none), false);
  });

  it('refuses a backup path that exists or is the file (or its -wal), changing nothing', () => {
    const file = fixture('orphan-usage');
    const hash = sha(file);
    const taken = join(tmp.dir, 'taken.db');
    writeFileSync(taken, 'keep me');
    for (const backup of [taken, file, `${file}-wal`]) {
      assert.throws(
        () => repairSessionFile(file, { backup }),
        (e: unknown) => e instanceof OutputFileError && (e.problem === 'exists' || e.problem === 'is-input'),
      );
    }
    assert.equal(readFileSync(taken, 'utf8'), 'keep me');
    assert.equal(sha(file), hash);
    assert.equal(findingCount(checkSessionFile(file)), 1);
  });

  it('refuses a backup SQLite cannot write (a missing folder), naming the backup and repairing nothing', () => {
    const file = fixture('orphan-usage');
    const hash = sha(file);
    const backup = join(tmp.dir, 'no-such-folder', 'b.db');
    assert.throws(
      () => repairSessionFile(file, { backup }),
      (e: unknown) =>
        e instanceof OutputFileError && e.problem === 'io' && e.message.includes(backup) && /Nothing was repaired/.test(e.message),
    );
    assert.equal(sha(file), hash);
    assert.equal(findingCount(checkSessionFile(file)), 1);
  });

  it('never repairs without a backup on disk: an empty name is refused, `:memory:` and a `file:` URI are files', () => {
    const file = fixture('orphan-usage');
    const hash = sha(file);
    assert.throws(
      () => repairSessionFile(file, { backup: '' }),
      (e: unknown) => e instanceof OutputFileError && e.problem === 'not-a-file',
    );
    assert.equal(sha(file), hash);
    // SQLite reads these names as no file (memory, a URI), so VACUUM INTO "succeeded" with the copy thrown away.
    const cwd = process.cwd();
    process.chdir(tmp.dir);
    try {
      for (const backup of [':memory:', 'file:uri-backup.db?mode=memory']) {
        const damaged = fixture('orphan-usage');
        const outcome = repairSessionFile(damaged, { backup });
        assert.equal(outcome.counts.usageRowsDeleted, 1, backup);
        assert.equal(outcome.backup, backup);
        assert.ok(existsSync(join(tmp.dir, backup)), `${backup} is a file in the working folder`);
        assert.equal(findingCount(checkSessionFile(join(tmp.dir, backup))), 1, `${backup} holds the file as it was`);
      }
    } finally {
      process.chdir(cwd);
    }
  });

  it('writes its default backup beside the file', () => {
    const file = fixture('orphan-usage');
    const outcome = repairSessionFile(file);
    assert.ok(outcome.backup!.startsWith(`${file}.doctor-backup-`));
    assert.ok(existsSync(outcome.backup!));
    assert.equal(findingCount(checkSessionFile(outcome.backup!)), 1);
  });

  it('rolls back a hot -journal the read-only check cannot get past, then checks and repairs as usual', () => {
    const source = fixture('orphan-usage');
    const db = openDatabase(source);
    db.prepare('PRAGMA journal_mode = DELETE').get();
    db.close();
    const file = join(tmp.dir, 'hot-journal.db');
    copyWithHotJournal(source, file, 'alice');
    assert.throws(
      () => checkSessionFile(file),
      (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'hot-journal',
    );
    const backup = join(tmp.dir, 'hot-journal.backup.db');
    const outcome = repairSessionFile(file, { backup });
    assert.equal(outcome.journalRolledBack, true);
    assert.equal(existsSync(`${file}-journal`), false);
    assert.equal(outcome.counts.usageRowsDeleted, 1);
    assert.equal(findingCount(outcome.after), 0);
    assert.equal(findingCount(checkSessionFile(backup)), 1, 'the backup is the rolled-back file before the repair');
    for (const path of [file, backup])
      assert.equal(countRows(path, "SELECT count(*) FROM agent_messages WHERE message_data LIKE '%never committed%'"), 0);
    assert.equal(repairSessionFile(source, { backup: join(tmp.dir, 'plain.backup.db') }).journalRolledBack, false);
  });

  it('repairs nothing for a session the file does not hold, not even the file-wide stale -wal', () => {
    const file = fixture('stale-wal');
    const backup = join(tmp.dir, 'no-session.backup.db');
    const outcome = repairSessionFile(file, { session: 'alcie', backup });
    assert.equal(outcome.before.sessionFound, false);
    assert.equal(outcome.backup, null);
    assert.equal(outcome.counts.walFramesCheckpointed, 0);
    assert.equal(existsSync(backup), false);
    assert.equal(checkSessionFile(file).totals['stale-wal'], 1);
  });

  it('waits for a writer that holds the lock, then repairs', async () => {
    const file = fixture('orphan-usage');
    const { exited } = await holdLock(file, 400);
    const outcome = repairSessionFile(file, { backup: join(tmp.dir, 'waited.backup.db'), busyTimeoutMs: 10_000 });
    assert.equal(await exited, 0);
    assert.equal(outcome.counts.usageRowsDeleted, 1);
    assert.equal(findingCount(outcome.after), 0);
  });

  it('says the file is locked when the writer keeps it past the busy timeout, and changes nothing', async () => {
    const file = fixture('orphan-usage');
    const backup = join(tmp.dir, 'locked.backup.db');
    const { child, exited } = await holdLock(file, 3000);
    try {
      assert.throws(
        () => repairSessionFile(file, { backup, busyTimeoutMs: 200 }),
        (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'locked' && /locked/.test(e.message),
      );
    } finally {
      child.kill();
      await exited;
    }
    assert.equal(existsSync(backup), false);
    assert.equal(findingCount(checkSessionFile(file)), 1);
  });
});
