/**
 * The doctor's detection (issue 45): each kind found in its fixture (built here on the driver under test, and the
 * committed copy), nothing found in the clean conformance fixtures and in files our store writes, the bound on
 * findings listed, the session filter, and the typed errors for files that are not session stores.
 */
import { strict as assert } from 'node:assert';
import { copyFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AdvancedSQLiteSession, openDatabase } from '../../../../src/store';
import { SessionDatabaseError } from '../../../../src/store/errors';
import { checkSessionFile, findingCount } from '../../../../src/store/doctor/doctorReport';
import { CONFORMANCE_DIR, FIXTURE_KINDS, doctorFixturePath, fixtureSidecars, makeDoctorFixture } from '../../../support/doctorFixtures';
import { tempDir } from '../../../support/tempFiles';

describe('doctor: detection', () => {
  const tmp = tempDir('asi-doctor-');
  after(() => tmp.cleanup());
  let n = 0;
  const fresh = (name: string) => join(tmp.dir, `${n++}-${name}`);

  for (const kind of FIXTURE_KINDS) {
    it(`finds ${kind} in its fixture, and nothing else`, () => {
      const file = fresh(`${kind}.db`);
      makeDoctorFixture(kind, file);
      const report = checkSessionFile(file);
      assert.deepEqual(Object.keys(report.totals), [kind]);
      assert.ok(report.findings.every((f) => f.kind === kind && f.detail.length > 0));
      assert.equal(report.integrityOk, kind !== 'integrity-check');
    });

    it(`finds the same in the committed fixture ${kind}.db`, () => {
      const file = fresh(`${kind}.db`);
      for (const suffix of ['', ...fixtureSidecars(kind)]) copyFileSync(doctorFixturePath(kind) + suffix, file + suffix);
      const built = fresh(`${kind}.db`);
      makeDoctorFixture(kind, built);
      const a = checkSessionFile(file);
      const b = checkSessionFile(built);
      assert.deepEqual(a.totals, b.totals);
      // The same but for the file names and times in stale-wal's detail.
      const detail = (f: { detail: string }, path: string) =>
        f.detail.replaceAll(basename(path), '<file>').replace(/last written [^)]*\)/, 'last written <time>)');
      assert.deepEqual(
        a.findings.map((f) => detail(f, file)),
        b.findings.map((f) => detail(f, built)),
      );
    });
  }

  it('says where each finding is', () => {
    const file = fresh('t0.db');
    makeDoctorFixture('turn-zero-usage', file);
    const [f] = checkSessionFile(file).findings;
    assert.deepEqual(
      { ...f, detail: undefined },
      {
        kind: 'turn-zero-usage',
        session: 'alice',
        branch: 'fresh',
        turn: 0,
        rows: { turn_usage: [8] },
        detail: undefined,
      },
    );
    const d = fresh('d.db');
    makeDoctorFixture('dangling-tool-call', d);
    const [g] = checkSessionFile(d).findings;
    assert.equal(g!.session, 'bob');
    assert.equal(g!.branch, 'main');
    assert.equal(g!.turn, 2);
    assert.match(g!.detail, /call_b9/);
    const o = fresh('o.db');
    makeDoctorFixture('orphan-messages', o);
    assert.deepEqual(checkSessionFile(o).findings[0]!.rows, { agent_messages: [9, 10] });
  });

  it('names each row the SDKs cannot take as an item, and leaves a bare NaN alone', () => {
    const file = fresh('m.db');
    makeDoctorFixture('malformed-item', file);
    const found = checkSessionFile(file).findings.map((f) => [f.session, f.rows, f.detail.replace(/ \(.*\)/, '')]);
    assert.deepEqual(found, [
      ['alice', { agent_messages: [8] }, 'row 8 of session "alice" is not JSON: get_items skips it'],
      ['alice', { agent_messages: [9] }, found[1]![2]],
      [
        'alice',
        { agent_messages: [10] },
        'row 10 of session "alice" is JSON an array, not an item object: get_items hands it to the runner',
      ],
      ['bob', { agent_messages: [18] }, found[3]![2]],
    ]);
    assert.match(String(found[1]![2]), /bytes that are not UTF-8/);
    // Told by SQLite on both drivers: node:sqlite hands over text only up to the NUL, which then decodes.
    assert.equal(found[3]![2], 'row 18 of session "bob" holds a NUL character');
    assert.match(
      checkSessionFile(file).findings[3]!.detail,
      /\(U\+0000\) at character 167: Python's json\.loads refuses it, so get_items skips it/,
    );
    // Per session too, and a NULL where the schema lets one in.
    assert.deepEqual(
      checkSessionFile(file, { session: 'bob' }).findings.map((f) => f.rows),
      [{ agent_messages: [18] }],
    );
    const db = openDatabase(file);
    try {
      db.exec(`CREATE TABLE loose (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT, created_at TEXT)`);
      db.exec(`INSERT INTO loose SELECT id, session_id, message_data, created_at FROM agent_messages`);
      db.exec(`DROP TABLE agent_messages`);
      db.exec(`ALTER TABLE loose RENAME TO agent_messages`);
      db.exec(`UPDATE agent_messages SET message_data = NULL WHERE id = 17`);
    } finally {
      db.close();
    }
    const nulls = checkSessionFile(file, { session: 'bob' }).findings.filter((f) => f.kind === 'malformed-item');
    assert.deepEqual(
      nulls.map((f) => f.rows),
      [{ agent_messages: [17] }, { agent_messages: [18] }],
    );
    assert.match(nulls[0]!.detail, /is NULL.*TypeError/);
  });

  for (const name of ['ref-basic', 'ref-multisession']) {
    it(`finds nothing in the clean conformance fixture ${name}`, () => {
      const file = fresh(`${name}.db`);
      copyFileSync(join(CONFORMANCE_DIR, `${name}.db`), file);
      const report = checkSessionFile(file);
      assert.deepEqual(report.findings, []);
      assert.equal(report.integrityOk, true);
    });
  }

  it('finds nothing in a file our store wrote: branches, tool calls with outputs, usage, pops, deleted branches', async () => {
    const file = fresh('ours.db');
    // The warning for the usage skipped on 'empty-start' is collected (and checked), not printed.
    const warnings: string[] = [];
    const logger = { error: (m: string) => warnings.push(m), warn: (m: string) => warnings.push(m) };
    const s = new AdvancedSQLiteSession({ sessionId: 's1', dbPath: file, createTables: true, logger });
    const usage = { state: { usage: { requests: 1, inputTokens: 5, outputTokens: 2, totalTokens: 7 } } };
    try {
      await s.addItems([
        { role: 'user', content: 'weather?' },
        { type: 'function_call', callId: 'c1', name: 'get_weather', arguments: '{}' },
        { type: 'function_call_result', callId: 'c1', name: 'get_weather', status: 'completed', output: { type: 'text', text: 'sun' } },
        { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Sunny.' }] },
      ] as never);
      await s.storeRunUsage(usage as never);
      await s.addItems([
        { role: 'user', content: 'and tomorrow?' },
        { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Rain.' }] },
      ] as never);
      await s.storeRunUsage(usage as never);
      await s.createBranchFromTurn(2, 'b2');
      await s.addItems([{ role: 'user', content: 'other' }] as never);
      await s.storeRunUsage(usage as never);
      await s.createBranchFromTurn(1, 'empty-start');
      await s.storeRunUsage(usage as never);
      await s.switchToBranch('b2');
      await s.popItem();
      await s.deleteBranch('b2', true);
    } finally {
      s.close();
    }
    assert.deepEqual(warnings, ["No usage stored for session s1: branch 'empty-start' has no user turn yet"]);
    // The usage was written (else the usage checks would have nothing to pass over).
    const db = openDatabase(file, { readonly: true });
    try {
      assert.equal(Number(db.prepare('SELECT COUNT(*) AS n FROM turn_usage').get<{ n: number }>()!.n), 2);
    } finally {
      db.close();
    }
    assert.deepEqual(checkSessionFile(file).findings, []);
  });

  it('lists at most maxPerKind findings of a kind and counts the rest', () => {
    const file = fresh('many.db');
    makeDoctorFixture('orphan-usage', file);
    const db = openDatabase(file);
    try {
      for (let t = 10; t < 15; t++) {
        db.prepare(`INSERT INTO turn_usage (session_id, branch_id, user_turn_number) VALUES ('alice', 'main', ?)`).run(t);
      }
    } finally {
      db.close();
    }
    const report = checkSessionFile(file, { maxPerKind: 2 });
    assert.equal(report.findings.length, 2);
    assert.equal(report.totals['orphan-usage'], 6);
    assert.equal(findingCount(report), 6);
  });

  it('checks one session when asked', () => {
    const file = fresh('one.db');
    makeDoctorFixture('dangling-tool-call', file);
    assert.equal(findingCount(checkSessionFile(file, { session: 'alice' })), 0);
    assert.equal(findingCount(checkSessionFile(file, { session: 'bob' })), 1);
  });

  it('says whether the file holds the session asked for (sessionFound), by a row in any session table', () => {
    const file = fresh('found.db');
    makeDoctorFixture('dangling-tool-call', file);
    const db = openDatabase(file);
    db.exec(
      "INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens) VALUES ('usage-only', 'main', 1, 1, 1, 1, 2)",
    );
    db.close();
    assert.equal(checkSessionFile(file, { session: 'alice' }).sessionFound, true);
    assert.equal(checkSessionFile(file, { session: 'usage-only' }).sessionFound, true, 'usage rows alone are something to check');
    const missing = checkSessionFile(file, { session: 'alcie' });
    assert.equal(missing.sessionFound, false);
    assert.equal(findingCount(missing), 0);
    assert.equal('sessionFound' in checkSessionFile(file), false, 'no session asked, none to find');
  });

  it('refuses a SQLite file that is no session store, and a file that is not SQLite, with typed errors', () => {
    const other = fresh('other.db');
    const db = openDatabase(other);
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)');
    db.close();
    assert.throws(
      () => checkSessionFile(other),
      (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'not-session-database',
    );
    const text = fresh('text.db');
    writeFileSync(text, 'x'.repeat(4096));
    assert.throws(
      () => checkSessionFile(text),
      (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'not-sqlite',
    );
    assert.throws(
      () => checkSessionFile(fresh('missing.db')),
      (e: unknown) => e instanceof SessionDatabaseError && e.problem === 'not-found',
    );
  });
});
