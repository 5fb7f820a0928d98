/**
 * The doctor's shared-message-structure kind (#4902 / #4454): a second sessions/messages table pair in the file
 * whose rows went into the shared message_structure. Found where it is, what Python ≤ 0.21.0's reads show because of
 * it, nothing found when another messages-shaped table shares nothing, and `--fix` leaves the file byte for byte.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../../../src/store';
import { checkSessionFile, findingCount } from '../../../../src/store/doctor/doctorReport';
import { FINDING_KINDS } from '../../../../src/store/doctor/findingKinds';
import { repairSessionFile } from '../../../../src/store/doctor/repairs';
import { makeDoctorFixture } from '../../../support/doctorFixtures';
import { tempDir } from '../../../support/tempFiles';

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Python 0.21.0's get_items query (advanced_sqlite_session.py), as store `messages` reads a branch. */
function pythonItems(file: string, messages: string, session: string, branch: string): string[] {
  const db = openDatabase(file, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT m.message_data FROM ${messages} m JOIN message_structure s ON m.id = s.message_id
         WHERE m.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number ASC`,
      )
      .all<{ message_data: string }>(session, branch)
      .map((r) => r.message_data);
  } finally {
    db.close();
  }
}

describe('doctor: shared-message-structure', () => {
  const tmp = tempDir('asi-doctor-shared-');
  after(() => tmp.cleanup());
  let n = 0;
  const fixture = () => {
    const file = join(tmp.dir, `${n++}-shared.db`);
    makeDoctorFixture('shared-message-structure', file);
    return file;
  };

  it('replays what the bug shows: each store reads its messages twice on main', () => {
    const file = fixture();
    // Store A's alice/main: four messages of its own, then 1 and 2 again through store B's rows.
    const a = pythonItems(file, 'agent_messages', 'alice', 'main');
    assert.equal(a.length, 6);
    assert.deepEqual(a.slice(4), a.slice(0, 2));
    // Store B's alice/main: its two messages, each twice (through A's rows 1, 2 and its own).
    const b = pythonItems(file, 'b_messages', 'alice', 'main');
    assert.equal(b.length, 4);
    assert.equal(new Set(b).size, 2);
  });

  it('finds the other store’s rows: per session by what they point at, each message shown twice, its usage', () => {
    const report = checkSessionFile(fixture());
    assert.deepEqual(report.totals, { 'shared-message-structure': 4 });
    const [carol, one, two, usage] = report.findings;
    assert.deepEqual({ session: carol!.session, rows: carol!.rows }, { session: 'carol', rows: { message_structure: [27, 28] } });
    assert.match(carol!.detail, /2 message_structure row\(s\) of session 'carol'.*b_messages/);
    assert.deepEqual(
      [one, two].map((f) => ({ session: f!.session, branch: f!.branch, rows: f!.rows })),
      [
        { session: 'alice', branch: 'main', rows: { message_structure: [1, 25] } },
        { session: 'alice', branch: 'main', rows: { message_structure: [2, 26] } },
      ],
    );
    // Store B's usage for carol (alice's turn-3 row is not told apart from store A's own: alice has messages in both).
    assert.deepEqual({ session: usage!.session, rows: usage!.rows }, { session: 'carol', rows: { turn_usage: [9] } });
    assert.match(usage!.detail, /counted in this store's totals/);
    assert.equal(FINDING_KINDS['shared-message-structure'].repair, null);
  });

  it('checks one session when asked', () => {
    const file = fixture();
    assert.equal(checkSessionFile(file, { session: 'carol' }).totals['shared-message-structure'], 2);
    assert.equal(checkSessionFile(file, { session: 'alice' }).totals['shared-message-structure'], 2);
    assert.equal(findingCount(checkSessionFile(file, { session: 'bob' })), 0);
  });

  it('finds nothing when another messages-shaped table shares no structure row', () => {
    const file = join(tmp.dir, `${n++}-other-table.db`);
    makeDoctorFixture('orphan-usage', file);
    const db = openDatabase(file);
    try {
      db.exec(`CREATE TABLE archive (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT)`);
      db.exec(`INSERT INTO archive (id, session_id, message_data) VALUES (1, 'alice', '{}'), (99, 'zed', '{}')`);
      // Cleared of the fixture's own finding, so only this kind could be found.
      db.exec(`DELETE FROM turn_usage WHERE session_id = 'alice' AND branch_id = 'alt'`);
    } finally {
      db.close();
    }
    assert.deepEqual(checkSessionFile(file).findings, []);
  });

  it('--fix changes nothing and makes no backup: deleting the rows would hide the other store’s conversations', () => {
    const file = fixture();
    const hash = sha(file);
    const backup = join(tmp.dir, 'shared.backup.db');
    const outcome = repairSessionFile(file, { backup });
    assert.equal(outcome.backup, null);
    assert.equal(existsSync(backup), false);
    assert.equal(sha(file), hash);
    assert.equal(findingCount(outcome.after), 4);
  });
});
