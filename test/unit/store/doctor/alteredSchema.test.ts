/**
 * The doctor's altered-schema kind: each hand change found with what it breaks (a dropped index, a changed type, a
 * lost default, a trigger, a dropped UNIQUE, a NOT NULL column added), the SDKs' older messages index not taken for
 * one, and `--fix` recreating only a missing index, with the SDKs' exact statement.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../../../src/store';
import { checkSessionFile, findingCount } from '../../../../src/store/doctor/doctorReport';
import { repairSessionFile } from '../../../../src/store/doctor/repairs';
import { SOURCE_FIXTURE, makeDoctorFixture } from '../../../support/doctorFixtures';
import { copyFixture, tempDir } from '../../../support/tempFiles';

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('doctor: altered-schema', () => {
  const tmp = tempDir('asi-doctor-schema-');
  after(() => tmp.cleanup());
  let n = 0;
  /** A clean copy of the Python fixture with `sql` run on it. */
  const altered = (...sql: string[]) => {
    const file = join(tmp.dir, `${n++}-altered.db`);
    makeDoctorFixture('orphan-messages', file);
    const db = openDatabase(file);
    try {
      // Undo the fixture's own finding (messages 9 and 10 that no branch shows), so only the change is found.
      db.exec('DELETE FROM agent_messages WHERE id IN (9, 10)');
      for (const s of sql) db.exec(s);
    } finally {
      db.close();
    }
    return file;
  };
  const details = (file: string) => checkSessionFile(file).findings.map((f) => `${f.kind}: ${f.detail}`);

  it('finds nothing in the unaltered copy', () => {
    assert.deepEqual(details(altered()), []);
  });

  it('finds a dropped index, repairable', () => {
    const [f, ...rest] = checkSessionFile(altered('DROP INDEX idx_structure_branch_seq')).findings;
    assert.deepEqual(rest, []);
    assert.equal(f!.kind, 'altered-schema');
    assert.match(f!.detail, /index idx_structure_branch_seq on message_structure is missing: reads .* scan the whole table/);
    assert.equal(f!.repairable, undefined);
  });

  it('finds a trigger on a session table, with its statement, reported only', () => {
    const [f] = checkSessionFile(
      altered(
        `CREATE TRIGGER stamp AFTER INSERT ON message_structure BEGIN UPDATE message_structure SET tool_name = 'x' WHERE id = new.id; END`,
      ),
    ).findings;
    assert.match(f!.detail, /^trigger stamp on message_structure \(the SDKs create none\).*CREATE TRIGGER stamp AFTER INSERT/);
    assert.equal(f!.repairable, false);
  });

  it('ignores a trigger on a table of another program', () => {
    assert.deepEqual(details(altered('CREATE TABLE notes (body TEXT)', 'CREATE TRIGGER n AFTER INSERT ON notes BEGIN SELECT 1; END')), []);
  });

  it('finds a changed type, a lost default and a dropped key, each reported only; not columns the SDKs can leave out', () => {
    const file = altered(
      `CREATE TABLE r (session_id TEXT NOT NULL, branch_id TEXT NOT NULL)`,
      `INSERT INTO r SELECT session_id, branch_id FROM branch_reservations`,
      `DROP TABLE branch_reservations`,
      `ALTER TABLE r RENAME TO branch_reservations`,
      `CREATE TABLE g (session_id TEXT PRIMARY KEY, generation TEXT NOT NULL)`,
      `INSERT INTO g SELECT * FROM session_clear_generations`,
      `DROP TABLE session_clear_generations`,
      `ALTER TABLE g RENAME TO session_clear_generations`,
      `ALTER TABLE agent_sessions ADD COLUMN owner TEXT NOT NULL DEFAULT 'x'`,
      `ALTER TABLE agent_messages ADD COLUMN note TEXT`,
    );
    const found = checkSessionFile(file).findings;
    assert.ok(found.every((f) => f.kind === 'altered-schema' && f.repairable === false));
    const text = found.map((f) => f.detail).join('\n');
    assert.match(text, /column session_clear_generations\.generation is declared TEXT, not INTEGER/);
    assert.match(text, /column session_clear_generations\.generation has no default, not default 0/);
    assert.match(text, /branch_reservations has no UNIQUE \(session_id, branch_id\): .*duplicates are stored/);
    // Extra columns the SDKs' inserts can leave out (a default, or nullable) change nothing they do.
    assert.doesNotMatch(text, /owner|note/);
    assert.equal(found.length, 3);
  });

  it('finds an added NOT NULL column without a default', () => {
    // SQLite refuses ADD COLUMN NOT NULL without a default: the table is rebuilt, as a migration script would.
    const file = altered(
      `CREATE TABLE s2 (session_id TEXT PRIMARY KEY, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
         updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tenant TEXT NOT NULL)`,
      `INSERT INTO s2 SELECT session_id, created_at, updated_at, 't' FROM agent_sessions`,
      `PRAGMA legacy_alter_table = ON`,
      `DROP TABLE agent_sessions`,
      `ALTER TABLE s2 RENAME TO agent_sessions`,
    );
    assert.deepEqual(details(file), [
      'altered-schema: column agent_sessions.tenant was added NOT NULL without a default: every insert by the SDKs fails (reported only)',
    ]);
  });

  it('takes the messages index on (session_id, created_at), as Python wrote it before 0.6.6, for the SDKs’ own', () => {
    const file = altered(
      'DROP INDEX idx_agent_messages_session_id',
      'CREATE INDEX idx_agent_messages_session_id ON agent_messages (session_id, created_at)',
    );
    assert.deepEqual(details(file), []);
    const other = altered(
      'DROP INDEX idx_agent_messages_session_id',
      'CREATE INDEX idx_agent_messages_session_id ON agent_messages (created_at)',
    );
    assert.match(
      details(other).join('\n'),
      /index idx_agent_messages_session_id is on agent_messages \(created_at\), not on agent_messages \(session_id, id\)/,
    );
  });

  it('checks a file whose table names the SDKs’ DDL cannot spell, comparing the tables it can', () => {
    const file = join(tmp.dir, `${n++}-odd-names.db`);
    const db = openDatabase(file);
    try {
      db.exec(`CREATE TABLE "my sessions" (session_id TEXT PRIMARY KEY, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                 updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`);
      db.exec(`CREATE TABLE "my messages" (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, message_data TEXT NOT NULL,
                 created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, FOREIGN KEY (session_id) REFERENCES "my sessions" (session_id) ON DELETE CASCADE)`);
      db.exec(
        `INSERT INTO "my sessions" (session_id) VALUES ('s'); INSERT INTO "my messages" (session_id, message_data) VALUES ('s', '{}')`,
      );
      db.exec(`CREATE TRIGGER t AFTER INSERT ON "my messages" BEGIN SELECT 1; END`);
    } finally {
      db.close();
    }
    // The tables no SDK DDL could create are not compared (their trigger included): no finding, and no failure.
    assert.deepEqual(details(file), []);
  });

  it('--fix recreates the missing index with the SDKs’ exact statement and reports the rest again', () => {
    const file = join(tmp.dir, 'fixture.db');
    makeDoctorFixture('altered-schema', file);
    const backup = join(tmp.dir, 'fixture.backup.db');
    const outcome = repairSessionFile(file, { backup });
    assert.equal(outcome.counts.indexesCreated, 1);
    assert.equal(outcome.backup, backup);
    assert.equal(outcome.before.totals['altered-schema'], 4);
    assert.equal(outcome.after.totals['altered-schema'], 3);
    assert.ok(outcome.after.findings.every((f) => f.repairable === false));
    // The statement sqlite_master keeps is the one the Python-written file holds.
    const indexSql = (path: string) => {
      const db = openDatabase(path, { readonly: true });
      try {
        return db.prepare("SELECT sql FROM sqlite_master WHERE name = 'idx_structure_turn'").get<{ sql: string }>()!.sql;
      } finally {
        db.close();
      }
    };
    assert.equal(indexSql(file), indexSql(copyFixture(SOURCE_FIXTURE, tmp.dir)));
    assert.equal(checkSessionFile(backup).totals['altered-schema'], 4);
  });

  it('--fix of a dropped index alone leaves a file that passes the doctor', () => {
    const file = altered('DROP INDEX idx_turn_usage_session_turn');
    const outcome = repairSessionFile(file, { backup: join(tmp.dir, 'index.backup.db') });
    assert.equal(outcome.counts.indexesCreated, 1);
    assert.equal(findingCount(outcome.after), 0);
  });

  it('--fix leaves a file whose changes are all reported only byte for byte, with no backup', () => {
    const file = altered(`CREATE TRIGGER t AFTER DELETE ON agent_messages BEGIN SELECT 1; END`);
    const hash = sha(file);
    const backup = join(tmp.dir, 'trigger.backup.db');
    const outcome = repairSessionFile(file, { backup });
    assert.equal(outcome.backup, null);
    assert.equal(existsSync(backup), false);
    assert.equal(sha(file), hash);
    assert.equal(findingCount(outcome.after), 1);
  });
});
